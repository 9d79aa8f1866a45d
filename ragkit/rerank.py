"""Rerankers: a cross-encoder that reads query and chunk together, and an offline late-interaction one.

The cross-encoder (``cross-encoder/ms-marco-MiniLM-L-6-v2``) exists only on the Hugging
Face hub: ragkit loads it from a local folder (``make models`` puts it there) and says
what to run when it is missing. Late interaction (MaxSim, the shape of ColBERT) needs
nothing but the bundled embedding model: each query token takes its best match among the
chunk's tokens, and the matches add up. The bundled model was never trained for that, so
it is a middle ground to measure, not a promise.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ragkit.errors import ModelUnavailable
from ragkit.plumbing.models import RERANKER, hub_model_path

if TYPE_CHECKING:
    import torch

__all__ = ["CrossEncoderReranker", "LateInteractionReranker", "TokenEncoder", "available_reranker", "quantize_int8"]


class TokenEncoder(Protocol):
    """What late interaction needs: one unit vector per token of each text."""

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]: ...


class CrossEncoderReranker:
    """Scores (query, chunk text) pairs with a cross-encoder; higher is more relevant."""

    name = "rerank"

    def __init__(
        self, model: str | Path | None = None, batch_size: int = 4, max_length: int = 512, quantize: bool = False
    ):
        path = Path(model) if model else hub_model_path(RERANKER)
        if not (path / "config.json").is_file():
            raise ModelUnavailable(
                f"no cross-encoder in {path}: run `make models` on a machine with internet, "
                f"or set {RERANKER.env} to a folder holding {RERANKER.name}"
            )
        from sentence_transformers import CrossEncoder

        logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
        self.path = path
        self.model = CrossEncoder(str(path), device="cpu", max_length=max_length)
        self.batch_size = batch_size
        if quantize:
            quantize_int8(self.model.model)
            self.name = "rerank-int8"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text (``predict`` itself batches pairs of similar length)."""
        if not texts:
            return np.zeros(0)
        scores = self.model.predict(
            [(query, text) for text in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(scores, dtype=np.float64).reshape(-1)


def quantize_int8(module: torch.nn.Module) -> None:
    """Dynamic int8 weights for every Linear layer of a module, in place, for the CPU.

    torch 2.13 deprecates ``torch.ao.quantization`` in favour of torchao's ``quantize_``; on this
    CPU, without ``torch.compile``, torchao 0.18's int8 dynamic path ran a small MLP 13x slower than
    fp32, where the eager route is about 2x faster. So the eager route stays, and only its own two
    deprecation notices are silenced, here and nowhere else.
    """
    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"torch\.ao\.quantization is deprecated", DeprecationWarning)
        warnings.filterwarnings("ignore", r"torch\.quantize_per_tensor, torch\.quantize_per_channel", UserWarning)
        torch.ao.quantization.quantize_dynamic(module, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


class LateInteractionReranker:
    """MaxSim over the bundled model's token vectors: sum over query tokens of the best chunk-token cosine."""

    name = "maxsim"

    def __init__(self, embedder: TokenEncoder | None = None):
        if embedder is None:
            from ragkit.embedding import default_embedder

            embedder = default_embedder()
        self.embedder = embedder

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One MaxSim score per text (token vectors come from the embedder's disk cache when it has them)."""
        q, *docs = self.embedder.token_vectors([query, *texts])
        return np.array([float((q @ d.T).max(axis=1).sum()) for d in docs])


def available_reranker() -> CrossEncoderReranker | None:
    """The cross-encoder when its weights are on this machine, else None (callers say what is missing)."""
    try:
        return CrossEncoderReranker()
    except ModelUnavailable:
        return None
