"""Embeddings: all-MiniLM-L6-v2 (verified), ONNX Runtime or torch, with a content-keyed disk cache.

The cache keeps vectors in pack files under ``<cache>/vectors/<namespace>/``; the namespace
names the weights' hash, the backend and the window, and every row is keyed by the sha256
of that namespace and the exact text. A pack is written to a temporary file and renamed,
so an interrupted run leaves either a whole pack or none. Rows whose key, shape, checksum
or norm do not check out are dropped and recomputed, never returned.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import tempfile
import uuid
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ragkit.errors import InputError, ModelUnavailable
from ragkit.models import EMBEDDING_MODEL, WINDOW, verified_embedding_dir, weights_hash
from ragkit.tokens import TruncationWarning, count_pieces

BACKENDS = ("onnx", "torch")
log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Where ragkit keeps exported models and vectors (see ragkit.locations for the order)."""
    from ragkit import locations

    return locations.cache_dir()


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


def _quiet_load(source: str, backend: str):
    from sentence_transformers import SentenceTransformer

    for name in ("sentence_transformers", "transformers", "optimum"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return SentenceTransformer(source, backend=backend, device="cpu")


def _onnx_export(source: Path, weights: str, root: Path) -> Path:
    """Export a model to ONNX once, into the cache (never into site-packages); atomic."""
    target = root / "onnx" / weights[:16]
    if (target / "onnx" / "model.onnx").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        _quiet_load(str(source), "onnx").save(str(tmp))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _pack_keys(keys: Sequence[bytes]) -> np.ndarray:
    """32-byte keys as a (n, 32) uint8 array: numpy's bytes dtype would drop trailing zero bytes."""
    return np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 32)


def _dimensions(folder: Path) -> int:
    """Output dimensions of a sentence-transformers folder, read from its configuration (no model load)."""
    import json

    pooling = folder / "1_Pooling" / "config.json"
    if pooling.is_file():
        return int(json.loads(pooling.read_text())["word_embedding_dimension"])
    return int(json.loads((folder / "config.json").read_text())["hidden_size"])


class TokenCache:
    """Per-token vectors by content key, in atomically written packs; rows that do not check out are dropped."""

    def __init__(self, folder: Path, dimensions: int):
        self.folder, self.dimensions = Path(folder), dimensions
        self._rows: dict[bytes, np.ndarray] | None = None

    def _load(self) -> dict[bytes, np.ndarray]:
        if self._rows is None:
            self._rows = {}
            for pack in sorted(self.folder.glob("tok-*.npz")):
                try:
                    with np.load(pack, allow_pickle=False) as data:
                        keys, offsets, rows, crc = data["keys"], data["offsets"], data["rows"], data["crc"]
                except Exception as exc:
                    log.warning("ignoring unreadable token pack %s (%s)", pack, exc)
                    pack.unlink(missing_ok=True)
                    continue
                if rows.ndim != 2 or rows.shape[1] != self.dimensions or len(offsets) != len(keys) + 1:
                    continue
                if keys.ndim != 2 or keys.shape[1] != 32:
                    continue
                for i, key in enumerate(keys):
                    block = rows[offsets[i]:offsets[i + 1]]
                    if zlib.crc32(block.tobytes()) == int(crc[i]):
                        self._rows[key.tobytes()] = block
        return self._rows

    def get(self, keys: Sequence[bytes]) -> list[np.ndarray | None]:
        rows = self._load()
        return [rows.get(k) for k in keys]

    def put(self, keys: Sequence[bytes], blocks: Sequence[np.ndarray]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        offsets = np.cumsum([0] + [len(b) for b in blocks])
        crc = np.array([zlib.crc32(np.ascontiguousarray(b).tobytes()) for b in blocks], dtype=np.uint32)
        fd, tmp = tempfile.mkstemp(prefix=".tok-", suffix=".npz", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, keys=_pack_keys(keys), offsets=offsets, rows=np.vstack(blocks), crc=crc)
            os.replace(tmp, self.folder / f"tok-{uuid.uuid4().hex}.npz")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._load().update(zip(keys, blocks))


class VectorCache:
    """Content-keyed vectors on disk for one model stamp."""

    def __init__(self, folder: Path, dimensions: int, unit: bool = True):
        self.folder = Path(folder)
        self.dimensions = dimensions
        self.unit = unit
        self._rows: dict[bytes, np.ndarray] | None = None

    def _load(self) -> dict[bytes, np.ndarray]:
        if self._rows is None:
            self._rows, dropped = {}, 0
            for pack in sorted(self.folder.glob("pack-*.npz")):
                rows = self._read(pack)
                if rows is None:  # torn, foreign or of another format: its rows get recomputed
                    pack.unlink(missing_ok=True)
                    dropped += 1
                else:
                    self._rows.update(rows)
            if dropped:
                log.warning("removed %d unreadable cache pack(s) in %s; their vectors will be recomputed",
                            dropped, self.folder)
        return self._rows

    def _read(self, pack: Path) -> dict[bytes, np.ndarray] | None:
        try:
            with np.load(pack, allow_pickle=False) as data:
                keys, vectors, sums = data["keys"], data["vectors"], data["crc"]
        except Exception:
            return None
        if (vectors.ndim != 2 or vectors.shape[1] != self.dimensions or len(keys) != len(vectors)
                or keys.ndim != 2 or keys.shape[1] != 32):
            return None
        good = {}
        for key, vec, crc in zip(keys, vectors, sums):
            if zlib.crc32(vec.tobytes()) == int(crc) and (not self.unit or abs(float(np.linalg.norm(vec)) - 1) < 1e-3):
                good[key.tobytes()] = vec
        return good

    def get(self, keys: Sequence[bytes]) -> list[np.ndarray | None]:
        """Vectors for keys, None where the cache has no valid row."""
        rows = self._load()
        return [rows.get(k) for k in keys]

    def put(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Write one new pack atomically and remember its rows."""
        if not len(keys):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        crc = np.array([zlib.crc32(v.tobytes()) for v in vectors], dtype=np.uint32)
        fd, tmp = tempfile.mkstemp(prefix=".pack-", suffix=".npz", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, keys=_pack_keys(keys), vectors=vectors, crc=crc)
            os.replace(tmp, self.folder / f"pack-{uuid.uuid4().hex}.npz")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        rows = self._load()
        rows.update(zip(keys, vectors))


class Embedder:
    """A sentence-embedding model: mean-pooled, L2-normalised vectors, cached on disk by content."""

    def __init__(self, model: str | Path | None = None, backend: str = "onnx",
                 window: int = WINDOW, cache: Path | None = None):
        if backend not in BACKENDS:
            raise InputError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
        root = Path(cache) if cache else cache_dir()
        if model is None:
            source, name = verified_embedding_dir(), EMBEDDING_MODEL
            weights = weights_hash(source)
        else:
            source, name = Path(model), str(model)
            if source.is_dir():
                weights = weights_hash(source)
            else:
                weights = hashlib.sha256(name.encode()).hexdigest()
        self._source, self._root, self._model = source, root, None
        self._backend, self._window, self._name = backend, window, name
        dims = _dimensions(source) if source.is_dir() else self.model.get_embedding_dimension()
        self.stamp = ModelStamp(name, weights, dims, True, window, backend)
        self.cache = VectorCache(root / "vectors" / self.stamp.namespace, dims)
        self.tokens = TokenCache(root / "tokens" / self.stamp.namespace, dims)
        self.raw = VectorCache(root / "pooled" / self.stamp.namespace, dims, unit=False)

    @property
    def model(self):
        """The sentence-transformers model, loaded (and exported to ONNX) only when something must be computed."""
        if self._model is None:
            try:
                if self._backend == "onnx" and self._source.is_dir():
                    weights = weights_hash(self._source)
                    self._model = _quiet_load(str(_onnx_export(self._source, weights, self._root)), "onnx")
                else:
                    self._model = _quiet_load(str(self._source), self._backend)
            except (OSError, ValueError) as exc:
                raise ModelUnavailable(
                    f"cannot load embedding model {self._name!r} offline ({exc}): pass a local "
                    "sentence-transformers folder, or omit model for the bundled one") from exc
            self._model.max_seq_length = self._window
        return self._model

    def key(self, text: str) -> bytes:
        """Cache key of one text under this model stamp."""
        return hashlib.sha256(f"{self.stamp.namespace}\0{text}".encode("utf-8")).digest()

    def _compute(self, texts: Sequence[str], progress: bool) -> np.ndarray:
        vectors = self.model.encode(list(texts), batch_size=8, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=progress)
        return np.asarray(vectors, dtype=np.float32)

    def _warn_truncation(self, texts: Sequence[str]) -> None:
        """Say how many texts the encoder will cut at its window (counted with special tokens, no model load)."""
        if (self._source / "tokenizer.json").is_file():
            lengths = [n + 2 for n in count_pieces(texts, self._source)]
        else:
            lengths = [len(ids) for ids in self.model.tokenizer(list(texts), truncation=False)["input_ids"]]
        over = sum(n > self.stamp.window for n in lengths)
        if over:
            warnings.warn(f"{over} of {len(texts)} texts exceed the encoder's {self.stamp.window}-piece window: "
                          "the encoder embeds only their beginning. Use smaller chunks or a shorter header.",
                          TruncationWarning, stacklevel=3)

    def _through(self, cache, texts: list[str], compute) -> list[np.ndarray]:
        """Values for texts from a cache; ``compute`` runs once on the distinct texts it lacks, and fills it."""
        keys = [self.key(t) for t in texts]
        found = cache.get(keys)
        todo = list(dict.fromkeys(k for k, v in zip(keys, found) if v is None))
        if todo:
            first = {k: t for t, k in zip(texts, keys)}
            fresh = compute([first[k] for k in todo])
            cache.put(todo, fresh)
            done = dict(zip(todo, fresh))
            found = [v if v is not None else done[k] for v, k in zip(found, keys)]
        return found

    def _token_embeddings(self, texts: list[str]) -> list[np.ndarray]:
        out = self.model.encode(texts, output_value="token_embeddings", batch_size=8, convert_to_numpy=False,
                                show_progress_bar=False)
        return [np.asarray(t.float().numpy() if hasattr(t, "numpy") else t, dtype=np.float32) for t in out]

    def encode(self, texts: Sequence[str], progress: bool = True, cache: bool = True) -> np.ndarray:
        """Unit vectors for texts, shape (len(texts), dimensions), computing only what the cache lacks."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.stamp.dimensions), dtype=np.float32)
        self._warn_truncation(texts)
        if not cache:
            return self._compute(texts, progress and len(texts) > 64)
        found = self._through(self.cache, texts, lambda todo: self._compute(todo, progress and len(todo) > 64))
        return np.stack(found).astype(np.float32, copy=False)

    def pooled(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled vectors WITHOUT the final normalisation (what the identity fails on); cached."""
        mean = lambda todo: np.stack([t.mean(axis=0) for t in self._token_embeddings(todo)])
        return np.stack(self._through(self.raw, list(texts), mean))

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per-token unit vectors (special tokens included) for late interaction; cached, stored as float16."""
        def unit(todo: list[str]) -> list[np.ndarray]:
            return [(v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float16)
                    for v in self._token_embeddings(todo)]

        return [v.astype(np.float32) for v in self._through(self.tokens, list(texts), unit)]


@functools.lru_cache(maxsize=4)
def default_embedder(backend: str = "onnx") -> Embedder:
    """The bundled all-MiniLM-L6-v2, loaded once per process."""
    return Embedder(backend=backend)
