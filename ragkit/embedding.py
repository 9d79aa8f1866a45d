"""Embeddings: all-MiniLM-L6-v2 (verified), ONNX Runtime or torch, through the content-keyed vector cache.

Vectors are looked up in ``ragkit.plumbing.cache`` by the model's stamp and the sha256 of the exact
text; only the texts the cache lacks are computed. The ONNX export of the model lives in the
cache folder too (the shared one first), with a checksum that is verified before it is used.
The export needs torch and runs once, in a child process; after it, a mean-pooled model runs on
onnxruntime and its own tokenizer alone, so a notebook's kernel never imports torch.
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragkit.errors import InputError, ModelUnavailable
from ragkit.plumbing.cache import VectorCache, shared_cache_dir, text_key
from ragkit.plumbing.locations import cache_dir
from ragkit.plumbing.models import EMBEDDING_MODEL, WINDOW, verified_embedding_dir, weights_hash
from ragkit.plumbing.onnx import OnnxEncoder, env_threads, mean_pooled, onnx_export, quiet_load
from ragkit.tokens import TruncationWarning, count_pieces, over_window

if TYPE_CHECKING:
    from ragkit.plumbing.service import Borrower

__all__ = ["BACKENDS", "Embedder", "ModelStamp", "default_embedder"]

BACKENDS = ("onnx", "torch")


@dataclass(frozen=True)
class ModelStamp:
    """What an embedding depends on; vectors with different stamps are not comparable."""

    model: str
    weights: str
    dimensions: int
    normalised: bool
    window: int
    backend: str

    @property
    def namespace(self) -> str:
        """Short name of this configuration, used as the cache folder."""
        return f"{self.weights[:16]}-{self.backend}-w{self.window}-d{self.dimensions}"


class _Sentence:
    """sentence-transformers behind the same two calls (the torch backend and models that are not mean-pooled)."""

    def __init__(self, model):
        self.model = model

    def token_embeddings(self, texts: Sequence[str], progress: bool = False, batch_size: int = 8) -> list[np.ndarray]:
        out = self.model.encode(
            list(texts),
            output_value="token_embeddings",
            batch_size=batch_size,
            convert_to_numpy=False,
            show_progress_bar=progress,
        )
        return [np.asarray(t.float().numpy() if hasattr(t, "numpy") else t, dtype=np.float32) for t in out]

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        vectors = self.model.encode(
            list(texts), batch_size=8, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=progress
        )
        return np.asarray(vectors, dtype=np.float32)


def _dimensions(folder: Path) -> int:
    """Output dimensions of a sentence-transformers folder, read from its configuration (no model load)."""
    pooling = folder / "1_Pooling" / "config.json"
    if pooling.is_file():
        return int(json.loads(pooling.read_text())["word_embedding_dimension"])
    return int(json.loads((folder / "config.json").read_text())["hidden_size"])


class Embedder:
    """A sentence-embedding model: mean-pooled, L2-normalised vectors, cached on disk by content."""

    def __init__(
        self,
        model: str | Path | None = None,
        backend: str = "onnx",
        window: int = WINDOW,
        cache: Path | None = None,
        threads: int | None = None,
        borrower: Borrower | None = None,
    ):
        if backend not in BACKENDS:
            raise InputError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
        root = Path(cache) if cache else cache_dir()
        shared = shared_cache_dir()
        if model is None:
            source, name = verified_embedding_dir(), EMBEDDING_MODEL
            weights = weights_hash(source)
        else:
            source, name = Path(model), str(model)
            if source.is_dir():
                weights = weights_hash(source)
            else:
                weights = hashlib.sha256(name.encode()).hexdigest()
        self._source, self._root, self._shared = source, root, shared
        self._model: OnnxEncoder | _Sentence | None = None
        self._backend, self._window, self._name = backend, window, name
        self._threads = threads  # the ONNX encoder's threads (None: OMP_NUM_THREADS, else one per core)
        self.borrower = borrower  # asked for vectors before the model computes them: the grader, in its sandbox
        dims = _dimensions(source) if source.is_dir() else self._sentence().get_embedding_dimension()
        self.stamp = ModelStamp(name, weights, dims, True, window, backend)
        self.cache = VectorCache(root, self.stamp.namespace, dims, shared=shared)

    @property
    def threads(self) -> int | None:
        """The ONNX encoder's threads: the number given, else ``OMP_NUM_THREADS``, else None (one per core)."""
        return self._threads or env_threads()

    @property
    def model(self) -> OnnxEncoder | _Sentence:
        """The encoder, loaded (and exported to ONNX) only when something must be computed."""
        if self._model is None:
            try:
                if self._backend == "onnx" and self._source.is_dir():
                    # every file of the export is checked against its record here, and nothing computes a vector
                    # (so nothing is stored in the private cache) without this encoder: a vector kept is one
                    # computed from inputs that all checked out
                    weights = weights_hash(self._source)
                    export = onnx_export(self._source, weights, self._root, self._shared)
                    if mean_pooled(export):
                        self._model = OnnxEncoder(export, self._window, self._threads)
                    else:
                        self._model = _Sentence(quiet_load(str(export), "onnx"))
                else:
                    self._model = _Sentence(quiet_load(str(self._source), self._backend))
            except (OSError, ValueError) as exc:
                raise ModelUnavailable(
                    f"cannot load embedding model {self._name!r} offline ({exc}): pass a local "
                    "sentence-transformers folder, or omit model for the bundled one"
                ) from exc
            if isinstance(self._model, _Sentence):
                self._model.model.max_seq_length = self._window
        return self._model

    def _sentence(self):
        """The sentence-transformers model itself (a model named on the hub, found in the local HF cache)."""
        model = self.model
        assert isinstance(model, _Sentence)
        return model.model

    def _compute(self, texts: Sequence[str], progress: bool) -> np.ndarray:
        # in the grader's sandbox the grader lends the vectors it needs for its own check (see plumbing.service);
        # an embedder nobody lends to asks no one
        lent = (
            None
            if self.borrower is None
            else self.borrower.borrowed(texts, self.stamp.namespace, self.stamp.dimensions)
        )
        return lent if lent is not None else self.model.encode(list(texts), progress)

    def _warn_truncation(self, texts: Sequence[str]) -> None:
        """Say how many texts the encoder will truncate at its window (counted with special tokens, no model load)."""
        if (self._source / "tokenizer.json").is_file():
            pieces = count_pieces(texts, self._source)
        else:
            encoded = self._sentence().tokenizer(list(texts), truncation=False, add_special_tokens=False)
            pieces = [len(ids) for ids in encoded["input_ids"]]
        over = over_window(pieces, self.stamp.window)
        if over:
            warnings.warn(TruncationWarning(over, len(texts), self.stamp.window), stacklevel=3)

    def _through(self, kind: str, texts: list[str], compute) -> list[np.ndarray]:
        """Arrays of one kind for texts; ``compute`` runs once on the distinct texts the cache lacks, and fills it."""
        keys = [text_key(t) for t in texts]
        found = self.cache.get(kind, keys)
        todo = list(dict.fromkeys(k for k, v in zip(keys, found) if v is None))
        done: dict[bytes, np.ndarray] = {}
        if todo:
            first = {k: t for t, k in zip(texts, keys)}
            fresh = compute([first[k] for k in todo])
            self.cache.put(kind, todo, fresh)
            done = dict(zip(todo, fresh))
        return [v if v is not None else done[k] for v, k in zip(found, keys)]

    def encode(self, texts: Sequence[str], progress: bool = True, cache: bool = True, warn: bool = True) -> np.ndarray:
        """Unit vectors for texts, shape (len(texts), dimensions), computing only what the cache lacks; ``warn=False``
        for a caller that reports truncation itself (no process-global warning filter is touched)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.stamp.dimensions), dtype=np.float32)
        if warn:
            self._warn_truncation(texts)
        if not cache:
            return self._compute(texts, progress and len(texts) > 64)
        found = self._through("unit", texts, lambda todo: self._compute(todo, progress and len(todo) > 64))
        return np.stack(found).astype(np.float32, copy=False)

    def pooled(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled vectors WITHOUT the final normalisation (what the identity fails on); cached."""

        def mean(todo: list[str]) -> np.ndarray:
            return np.stack([t.mean(axis=0) for t in self.model.token_embeddings(todo)])

        return np.stack(self._through("pooled", list(texts), mean))

    def token_vectors(
        self, texts: Sequence[str], cache: bool = True, batch_size: int | None = None
    ) -> list[np.ndarray]:
        """Per-token unit vectors (special tokens included) for late interaction; cached, stored as float16.

        ``cache=False`` computes every text with the model, ``batch_size`` at a time (what a timing measures).
        """

        def unit(todo: list[str]) -> list[np.ndarray]:
            return _token_units(
                self.model.token_embeddings(todo)
                if batch_size is None
                else self.model.token_embeddings(todo, batch_size=batch_size)
            )

        found = unit(list(texts)) if not cache else self._through("tokens", list(texts), unit)
        return [v.astype(np.float32) for v in found]

    def encode_with_tokens(self, texts: Sequence[str]) -> None:
        """Cache unit, pooled and token vectors for texts, all from one pass of the model where it can (ONNX).

        What a warmer does for the strategy late interaction reranks (notebook 04, whose chunks notebook 05 pools):
        its shortlists then cost no model run in a kernel. Vectors come from the model, never lent by a grader (a
        sandbox runs no warmer).
        """
        texts = list(texts)
        self._warn_truncation(texts)
        keys = [text_key(t) for t in texts]
        kinds = ("unit", "pooled", "tokens")
        have = {kind: {k for k, v in zip(keys, self.cache.get(kind, keys)) if v is not None} for kind in kinds}
        first = dict(zip(keys, texts))
        todo = [k for k in first if any(k not in have[kind] for kind in kinds)]
        if not todo:
            return
        model, todo_texts = self.model, [first[k] for k in todo]
        if isinstance(model, OnnxEncoder):
            units, raw = model.encode_with_tokens(todo_texts)
        else:  # sentence-transformers (torch): two passes, as encode and token_vectors make
            units, raw = model.encode(todo_texts), model.token_embeddings(todo_texts)
        computed = {"unit": list(units), "pooled": [t.mean(axis=0) for t in raw], "tokens": _token_units(raw)}
        for kind in kinds:
            self.cache.put(
                kind,
                [k for k in todo if k not in have[kind]],
                [v for k, v in zip(todo, computed[kind]) if k not in have[kind]],
            )


def _token_units(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each token's vector scaled to unit length, as float16 (what the cache stores for late interaction)."""
    return [(v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float16) for v in raw]


@functools.lru_cache(maxsize=4)
def default_embedder(backend: str = "onnx") -> Embedder:
    """The bundled all-MiniLM-L6-v2, loaded once per process."""
    return Embedder(backend=backend)
