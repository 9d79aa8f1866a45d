"""Embeddings: all-MiniLM-L6-v2 (verified), ONNX Runtime or torch, through the content-keyed vector cache.

Vectors are looked up in ``ragkit.cache`` by the model's stamp and the sha256 of the exact
text; only the texts the cache lacks are computed. The ONNX export of the model lives in the
cache folder too (the shared one first), with a checksum that is verified before it is used.
The export needs torch and runs once, in a child process; after it, a mean-pooled model runs on
onnxruntime and its own tokenizer alone, so a notebook's kernel never imports torch.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ragkit.cache import CacheWarning, VectorCache, shared_cache_dir, text_key
from ragkit.errors import InputError, ModelUnavailable
from ragkit.models import EMBEDDING_MODEL, WINDOW, verified_embedding_dir, weights_hash
from ragkit.storage import move_aside
from ragkit.tokens import TruncationWarning, count_pieces

BACKENDS = ("onnx", "torch")
BATCH = 4
"""Texts per onnxruntime call: about as fast as 8 on CPU, with a smaller peak (a batch's attention grows with it)."""


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


EXPORT_RECORD = "ragkit-export.json"
"""Written beside an ONNX export: the size and sha256 of its model.onnx, checked before every load."""


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _export_ok(target: Path) -> bool:
    """True when an export folder holds the model.onnx its record describes (a truncated file fails)."""
    model = target / "onnx" / "model.onnx"
    try:
        record = json.loads((target / EXPORT_RECORD).read_text(encoding="utf-8"))
        return model.stat().st_size == record["size"] and _file_sha256(model) == record["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _onnx_export(source: Path, weights: str, root: Path, shared: Path | None = None) -> Path:
    """The model's ONNX export: a verified one from the shared or private cache, else exported into the private one."""
    if shared is not None and _export_ok(shared / "onnx" / weights[:16]):
        return shared / "onnx" / weights[:16]
    target = root / "onnx" / weights[:16]
    if _export_ok(target):
        return target
    if target.exists():
        aside = move_aside(target)
        warnings.warn(f"the ONNX export in {target} does not match its record (damaged, interrupted, or made by an "
                      f"older ragkit); moved aside to {aside.name} and exported again", CacheWarning, stacklevel=4)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; a shared cache's export must be readable by every student
    try:
        _export_in_child(source, tmp)
        model = tmp / "onnx" / "model.onnx"
        record = {"size": model.stat().st_size, "sha256": _file_sha256(model), "weights": weights}
        (tmp / EXPORT_RECORD).write_text(json.dumps(record), encoding="utf-8")
        try:
            os.replace(tmp, target)
        except OSError:
            if not _export_ok(target):  # else another process (the warmer, a second notebook) finished first
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


_EXPORT = "import sys; from ragkit.embedding import _quiet_load; _quiet_load(sys.argv[1], 'onnx').save(sys.argv[2])"


def _export_in_child(source: Path, into: Path) -> None:
    """Export with torch in a child process: the caller never imports torch, the largest thing it would hold."""
    done = subprocess.run([sys.executable, "-c", _EXPORT, str(source), str(into)], capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise OSError(f"exporting {source} to ONNX failed: {lines[-1]}")


def _mean_pooled(folder: Path) -> bool:
    """True when a sentence-transformers folder is a transformer, mean pooling and at most a normalisation."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    mean = pooling.get("pooling_mode") == "mean" or (
        pooling.get("pooling_mode_mean_tokens") is True
        and not any(v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"))
    return modules in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) and mean


class OnnxEncoder:
    """A mean-pooled model's ONNX graph on onnxruntime with its own tokenizer: what sentence-transformers computes."""

    def __init__(self, folder: Path, window: int):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=window)  # the window counts the two special tokens
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        # the arena keeps its largest batch's memory for good, and a memory pattern is planned and kept for every
        # new batch shape; a kernel embeds batches of many shapes, and memory it holds is memory a notebook lacks
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(folder / "onnx" / "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def _batches(self, texts: Sequence[str], progress: bool, batch_size: int):
        """(indices into texts, the batch's last-layer output, each text's token count), batches of similar lengths."""
        encodings = self.tokenizer.encode_batch(list(texts))
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        starts = range(0, len(order), batch_size)
        if progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc="embedding", unit="batch")
        for start in starts:
            rows = order[start:start + batch_size]
            lengths = [len(encodings[i].ids) for i in rows]
            ids, mask, types = (np.zeros((len(rows), max(lengths)), dtype=np.int64) for _ in range(3))
            for r, (i, n) in enumerate(zip(rows, lengths)):
                ids[r, :n], mask[r, :n], types[r, :n] = encodings[i].ids, 1, encodings[i].type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            (hidden,) = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})
            yield rows, hidden, lengths

    def token_embeddings(self, texts: Sequence[str], progress: bool = False, batch_size: int = BATCH
                         ) -> list[np.ndarray]:
        """The last layer's vector for every token (special tokens included), one array per text."""
        out: list[np.ndarray] = [np.zeros(0)] * len(texts)
        for rows, hidden, lengths in self._batches(texts, progress, batch_size):
            for r, (i, n) in enumerate(zip(rows, lengths)):
                out[i] = np.array(hidden[r, :n], dtype=np.float32)  # a copy: a view would keep the whole batch alive
        return out

    def encode(self, texts: Sequence[str], progress: bool = False, batch_size: int = BATCH) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors, shape (len(texts), dimensions), pooled batch by batch."""
        pooled = np.zeros((0, 0), dtype=np.float32)
        for rows, hidden, lengths in self._batches(texts, progress, batch_size):
            if not len(pooled):
                pooled = np.zeros((len(texts), hidden.shape[-1]), dtype=np.float32)
            for r, (i, n) in enumerate(zip(rows, lengths)):
                pooled[i] = hidden[r, :n].mean(axis=0)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


class _Sentence:
    """sentence-transformers behind the same two calls (the torch backend and models that are not mean-pooled)."""

    def __init__(self, model):
        self.model = model

    def token_embeddings(self, texts: Sequence[str], progress: bool = False, batch_size: int = 8) -> list[np.ndarray]:
        out = self.model.encode(list(texts), output_value="token_embeddings", batch_size=batch_size,
                                convert_to_numpy=False, show_progress_bar=progress)
        return [np.asarray(t.float().numpy() if hasattr(t, "numpy") else t, dtype=np.float32) for t in out]

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        vectors = self.model.encode(list(texts), batch_size=8, normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=progress)
        return np.asarray(vectors, dtype=np.float32)


def _dimensions(folder: Path) -> int:
    """Output dimensions of a sentence-transformers folder, read from its configuration (no model load)."""
    pooling = folder / "1_Pooling" / "config.json"
    if pooling.is_file():
        return int(json.loads(pooling.read_text())["word_embedding_dimension"])
    return int(json.loads((folder / "config.json").read_text())["hidden_size"])


class Embedder:
    """A sentence-embedding model: mean-pooled, L2-normalised vectors, cached on disk by content."""

    def __init__(self, model: str | Path | None = None, backend: str = "onnx",
                 window: int = WINDOW, cache: Path | None = None):
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
        dims = _dimensions(source) if source.is_dir() else self._sentence().get_embedding_dimension()
        self.stamp = ModelStamp(name, weights, dims, True, window, backend)
        self.cache = VectorCache(root, self.stamp.namespace, dims, shared=shared)

    @property
    def model(self) -> OnnxEncoder | _Sentence:
        """The encoder, loaded (and exported to ONNX) only when something must be computed."""
        if self._model is None:
            try:
                if self._backend == "onnx" and self._source.is_dir():
                    weights = weights_hash(self._source)
                    export = _onnx_export(self._source, weights, self._root, self._shared)
                    if _mean_pooled(export):
                        self._model = OnnxEncoder(export, self._window)
                    else:
                        self._model = _Sentence(_quiet_load(str(export), "onnx"))
                else:
                    self._model = _Sentence(_quiet_load(str(self._source), self._backend))
            except (OSError, ValueError) as exc:
                raise ModelUnavailable(
                    f"cannot load embedding model {self._name!r} offline ({exc}): pass a local "
                    "sentence-transformers folder, or omit model for the bundled one") from exc
            if isinstance(self._model, _Sentence):
                self._model.model.max_seq_length = self._window
        return self._model

    def _sentence(self):
        """The sentence-transformers model itself (a model named on the hub, found in the local HF cache)."""
        model = self.model
        assert isinstance(model, _Sentence)
        return model.model

    def _compute(self, texts: Sequence[str], progress: bool) -> np.ndarray:
        return self.model.encode(list(texts), progress)

    def _warn_truncation(self, texts: Sequence[str]) -> None:
        """Say how many texts the encoder will cut at its window (counted with special tokens, no model load)."""
        if (self._source / "tokenizer.json").is_file():
            lengths = [n + 2 for n in count_pieces(texts, self._source)]
        else:
            lengths = [len(ids) for ids in self._sentence().tokenizer(list(texts), truncation=False)["input_ids"]]
        over = sum(n > self.stamp.window for n in lengths)
        if over:
            warnings.warn(f"{over} of {len(texts)} texts exceed the encoder's {self.stamp.window}-piece window: "
                          "the encoder embeds only their beginning. Use smaller chunks or a shorter header.",
                          TruncationWarning, stacklevel=3)

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

    def _token_embeddings(self, texts: list[str]) -> list[np.ndarray]:
        return self.model.token_embeddings(texts)

    def encode(self, texts: Sequence[str], progress: bool = True, cache: bool = True) -> np.ndarray:
        """Unit vectors for texts, shape (len(texts), dimensions), computing only what the cache lacks."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.stamp.dimensions), dtype=np.float32)
        self._warn_truncation(texts)
        if not cache:
            return self._compute(texts, progress and len(texts) > 64)
        found = self._through("unit", texts, lambda todo: self._compute(todo, progress and len(todo) > 64))
        return np.stack(found).astype(np.float32, copy=False)

    def pooled(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled vectors WITHOUT the final normalisation (what the identity fails on); cached."""
        def mean(todo: list[str]) -> np.ndarray:
            return np.stack([t.mean(axis=0) for t in self._token_embeddings(todo)])

        return np.stack(self._through("pooled", list(texts), mean))

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per-token unit vectors (special tokens included) for late interaction; cached, stored as float16."""
        def unit(todo: list[str]) -> list[np.ndarray]:
            return [(v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float16)
                    for v in self._token_embeddings(todo)]

        return [v.astype(np.float32) for v in self._through("tokens", list(texts), unit)]


@functools.lru_cache(maxsize=4)
def default_embedder(backend: str = "onnx") -> Embedder:
    """The bundled all-MiniLM-L6-v2, loaded once per process."""
    return Embedder(backend=backend)
