"""Distances: on unit vectors, half the squared L2 distance IS the cosine distance; without normalisation it is not."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["IdentityCheck", "identity_check", "max_identity_gap"]


@dataclass(frozen=True)
class IdentityCheck:
    """The identity ``||a - b||^2 / 2 = 1 - cos(a, b)`` checked on one pair of vectors."""

    norm_a: float
    norm_b: float
    l2: float
    half_l2_squared: float
    cosine_distance: float

    @property
    def difference(self) -> float:
        """``|L2^2/2 - (1 - cos)|``: float noise on unit vectors, anything at all otherwise."""
        return abs(self.half_l2_squared - self.cosine_distance)


def identity_check(a: np.ndarray, b: np.ndarray) -> IdentityCheck:
    """Norms, L2, L2^2/2 and 1 - cos for two vectors, in float64 from the given values."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    l2 = float(np.linalg.norm(a - b))
    cos = float(a @ b / (na * nb))
    return IdentityCheck(na, nb, l2, l2 * l2 / 2, 1 - cos)


def max_identity_gap(vectors: np.ndarray, n: int = 200) -> float:
    """Largest ``|L2^2/2 - (1 - cos)|`` over all pairs of the first n vectors, computed as stored (float32)."""
    v = np.asarray(vectors[:n], dtype=np.float32)
    l2 = np.linalg.norm(v[:, None, :] - v[None, :, :], axis=2)
    norms = np.linalg.norm(v, axis=1)
    cosine_distance = 1 - (v @ v.T) / np.outer(norms, norms)
    return float(np.abs(l2 * l2 / 2 - cosine_distance).max())
