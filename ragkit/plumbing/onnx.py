"""The ONNX path of the embedding model: a one-time export in a child process, and an encoder on onnxruntime.

The export needs torch, so it runs once in a child process and is stored in the cache folder
(the shared one first) with a record of the size and sha256 of every file in it, checked before
every load: a changed tokenizer is as wrong as a changed graph. A shared export is used only when
nobody but root and the reader can change it; a private one that does not check out is moved
aside and exported again. After
it, a mean-pooled model runs on onnxruntime and its own ``tokenizers`` tokenizer alone, so a
notebook's kernel never imports torch.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

from ragkit.plumbing.cache import CacheWarning
from ragkit.plumbing.models import file_sha256
from ragkit.plumbing.storage import changeable_by_others, move_aside

__all__ = [
    "BATCH",
    "CFS_QUOTA",
    "CPU_MAX",
    "EXPORT_RECORD",
    "OnnxEncoder",
    "env_threads",
    "export_in_child",
    "export_problem",
    "mean_pooled",
    "onnx_export",
    "quiet_load",
    "readable_by_all",
    "shared_export_problem",
    "usable_cores",
]

BATCH = 4
"""Texts per onnxruntime call: about as fast as 8 on CPU, with a smaller peak (a batch's attention grows with it)."""


def quiet_load(source: str, backend: str):
    """A SentenceTransformer on the CPU, its libraries' log lines below errors kept quiet."""
    from sentence_transformers import SentenceTransformer

    for name in ("sentence_transformers", "transformers", "optimum"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return SentenceTransformer(source, backend=backend, device="cpu")


EXPORT_RECORD = "ragkit-export.json"
"""Written beside an ONNX export: the size and sha256 of every file in it, checked before every load."""
_GRAPH = "onnx/model.onnx"
EXPORT_LOCK_S = 600.0
"""How long an export waits for another process exporting the same model before it exports its own."""


def _export_files(target: Path) -> list[str]:
    """The export's files as relative POSIX paths (its record left out); a link or device in it is an OSError."""
    found = []
    for folder, dirs, files in os.walk(target):
        for name in dirs + files:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise OSError(f"{path.relative_to(target)} is not a plain file or folder")
            if stat.S_ISREG(mode):
                found.append(path.relative_to(target).as_posix())
    return sorted(f for f in found if f != EXPORT_RECORD)


def _write_record(target: Path, weights: str) -> None:
    files = {
        rel: {"size": (target / rel).stat().st_size, "sha256": file_sha256(target / rel)}
        for rel in _export_files(target)
    }
    (target / EXPORT_RECORD).write_text(json.dumps({"weights": weights, "files": files}, indent=1), encoding="utf-8")


def export_problem(target: Path, graph: str = _GRAPH) -> str | None:
    """What is wrong with an export folder (no record, a file changed, missing or added), or None if all checks out."""
    try:
        record = json.loads((target / EXPORT_RECORD).read_text(encoding="utf-8"))
        files = record["files"]
        _ = [(want["size"], want["sha256"]) for want in files.values()]
    except FileNotFoundError:
        return f"it has no {EXPORT_RECORD}"
    except (OSError, ValueError) as exc:
        return f"its {EXPORT_RECORD} cannot be read ({exc})"
    except (KeyError, TypeError, AttributeError):
        return f"its {EXPORT_RECORD} does not list every file (an older ragkit checked model.onnx only)"
    try:
        found = _export_files(target)
        if set(found) != set(files) or graph not in files:
            missing, added = sorted(set(files) - set(found)), sorted(set(found) - set(files))
            return "; ".join(
                [
                    *(["missing " + ", ".join(missing)] if missing else []),
                    *(["not in its record: " + ", ".join(added)] if added else []),
                    *([f"its record lists no {graph}"] if graph not in files else []),
                ]
            )
        for rel in found:
            if (target / rel).stat().st_size != files[rel]["size"] or file_sha256(target / rel) != files[rel]["sha256"]:
                return f"{rel} is not the file its record describes"
    except OSError as exc:
        return str(exc)
    return None


def shared_export_problem(folder: Path, graph: str = _GRAPH) -> str | None:
    """``export_problem`` for a shared export, after checking nobody but root and the reader can change any of it."""
    for path in [folder, *(Path(d) / n for d, dirs, files in os.walk(folder) for n in dirs + files)]:
        why = changeable_by_others(path)
        if why:
            return f"{why}; a shared export must belong to root and be writable by nobody else"
    return export_problem(folder, graph)


def onnx_export(
    source: Path,
    weights: str,
    root: Path,
    shared: Path | None = None,
    kind: str = "onnx",
    graph: str = _GRAPH,
    child: Callable[[Path, Path], None] | None = None,
) -> Path:
    """The model's ONNX export: a verified one from the shared or private cache, else exported into the private one.

    ``kind`` is the cache's folder for this kind of export, ``graph`` the file every export of it holds, and ``child``
    what exports (the embedding model's export by default; the generator's conversion passes its own).
    """
    if shared is not None and (shared / kind / weights[:16]).is_dir():
        offered = (shared / kind / weights[:16]).resolve()  # checked and loaded by that path, not through a link
        why = shared_export_problem(offered, graph)
        if why is None:
            return offered
        warnings.warn(
            f"the shared ONNX export {offered} is not used ({why}): using a private one; the teacher fills "
            f"the shared cache again with `python -m ragkit warm --cache {shared}`",
            CacheWarning,
            stacklevel=4,
        )
    target = root / kind / weights[:16]
    why = export_problem(target, graph) if target.exists() else None
    if target.exists() and why is None:
        return target
    if target.exists():
        aside = move_aside(target)
        warnings.warn(
            f"the ONNX export in {target} does not match its record ({why}); moved aside to {aside.name} "
            "and exported again",
            CacheWarning,
            stacklevel=4,
        )
    made = [folder for folder in (target.parent, *target.parent.parents) if not folder.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    for folder in made:  # the folders above the export (``generator/<recipe>``) listable by a shared cache's students
        folder.chmod(folder.stat().st_mode | 0o555)
    # one export at a time per target: a notebook that needs the model while a warmer converts it waits for that
    # export and reads it (two at once cost twice the cores and memory); a holder stuck past the bound is not waited for
    lock = FileLock(str(root / f".{kind.replace('/', '-')}-{target.name}.export.lock"))  # beside, not in, ``kind``
    try:
        lock.acquire(timeout=EXPORT_LOCK_S)
        held = True
    except Timeout:
        held = False
    except OSError as exc:  # not a file one can lock (a folder, no permission): export all the same, and say so
        held = False
        warnings.warn(
            f"the export's lock {lock.lock_file} cannot be used ({exc.strerror or exc}): exporting without it; "
            "remove it to export one at a time again",
            CacheWarning,
            stacklevel=4,
        )
    try:
        if held and target.exists() and export_problem(target, graph) is None:
            return target  # exported by the process that held the lock
        tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
        try:
            (child or export_in_child)(source, tmp)
            _write_record(tmp, weights)  # it refuses a link before anything is made readable
            readable_by_all(tmp)
            try:
                os.replace(tmp, target)
            except OSError:
                if export_problem(target, graph) is not None:  # else another process finished first
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if held:
            lock.release()
    return target


def readable_by_all(folder: Path) -> None:
    """Every file under ``folder`` readable, every folder listable, by everyone: a shared cache's students read the
    teacher's export (onnx writes a model's weights file private, whatever the umask)."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))


_EXPORT = "import sys; from ragkit.plumbing.onnx import quiet_load; quiet_load(sys.argv[1], 'onnx').save(sys.argv[2])"


def export_in_child(source: Path, into: Path) -> None:
    """Export with torch in a child process: the caller never imports torch, the largest thing it would hold."""
    done = subprocess.run([sys.executable, "-c", _EXPORT, str(source), str(into)], capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise OSError(f"exporting {source} to ONNX failed: {lines[-1]}")


def mean_pooled(folder: Path) -> bool:
    """True when a sentence-transformers folder is a transformer, mean pooling and at most a normalisation."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    mean = pooling.get("pooling_mode") == "mean" or (
        pooling.get("pooling_mode_mean_tokens") is True
        and not any(v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens")
    )
    return modules in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) and mean


def env_threads() -> int | None:
    """The threads ``OMP_NUM_THREADS`` asks for, at most one per usable core; None unless a whole number above 0.

    onnxruntime does not read the variable itself; a value beyond the cores (a typo, 100000) would have it start that
    many threads and hang, so it is capped.
    """
    try:
        wanted = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return min(wanted, usable_cores()) if wanted > 0 else None


CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
"""cgroup v2's CPU quota of this process's group: "max 100000" (none), or "100000 100000" (one core's worth)."""
CFS_QUOTA = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
"""cgroup v1's CPU quota in microseconds per period (-1: none), beside ``cpu.cfs_period_us``."""


def _quota(cpu_max: Path, cfs_quota: Path) -> int | None:
    """The CPU quota of this process's cgroup in whole cores, rounded up (v2's cpu.max, else v1's CFS files)."""
    try:
        quota, period = cpu_max.read_text(encoding="ascii").split()[:2]
    except (OSError, ValueError):
        try:
            quota = cfs_quota.read_text(encoding="ascii").strip()
            period = (cfs_quota.parent / "cpu.cfs_period_us").read_text(encoding="ascii").strip()
        except OSError:
            return None
    try:
        if quota in ("max", "-1") or int(period) <= 0 or int(quota) <= 0:
            return None
        return -(-int(quota) // int(period))
    except ValueError:
        return None


def usable_cores(cpu_max: Path | None = None, cfs_quota: Path | None = None) -> int:
    """The cores this process may use: those it may run on (its CPU affinity, else every core), at most its cgroup's
    CPU quota and JupyterHub's ``CPU_LIMIT``, each rounded up (a spawner that limits a student to one core of many)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    quota = _quota(cpu_max or CPU_MAX, cfs_quota or CFS_QUOTA)
    if quota is not None:
        cores = min(cores, quota)
    try:
        limit = float(os.environ.get("CPU_LIMIT", ""))
        if 0 < limit < cores:
            cores = math.ceil(limit)
    except ValueError:
        pass
    return max(1, cores)


class OnnxEncoder:
    """A mean-pooled model's ONNX graph on onnxruntime with its own tokenizer: what sentence-transformers computes."""

    def __init__(self, folder: Path, window: int, threads: int | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # the tokenizers library raises a bare Exception for a file it cannot parse
            raise OSError(
                f"{folder / 'tokenizer.json'} cannot be read as a tokenizer ({exc}): delete {folder} "
                "so that it is exported again"
            ) from None
        self.tokenizer.enable_truncation(max_length=window)  # the window counts the two special tokens
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        # the arena keeps its largest batch's memory for good, and a memory pattern is planned and kept for every
        # new batch shape; a kernel embeds batches of many shapes, and memory it holds is memory a notebook lacks
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        options.log_severity_level = 3
        # onnxruntime takes a thread per core unless told, whatever OMP_NUM_THREADS says; the grader's sandbox and a
        # hub's spawner set that variable so that the notebooks run beside each other share the cores
        threads = threads or env_threads()
        if threads:
            options.intra_op_num_threads = threads
        try:
            self.session = ort.InferenceSession(str(folder / _GRAPH), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's own error types, one per way a graph can be broken
            raise OSError(f"{folder / _GRAPH} cannot be loaded by onnxruntime ({exc})") from None
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
            rows = order[start : start + batch_size]
            lengths = [len(encodings[i].ids) for i in rows]
            ids, mask, types = (np.zeros((len(rows), max(lengths)), dtype=np.int64) for _ in range(3))
            for r, (i, n) in enumerate(zip(rows, lengths)):
                ids[r, :n], mask[r, :n], types[r, :n] = encodings[i].ids, 1, encodings[i].type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            (hidden,) = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})
            yield rows, hidden, lengths

    def token_embeddings(
        self, texts: Sequence[str], progress: bool = False, batch_size: int = BATCH
    ) -> list[np.ndarray]:
        """The last layer's vector for every token (special tokens included), one array per text."""
        out: list[np.ndarray] = [np.zeros(0)] * len(texts)
        for rows, hidden, lengths in self._batches(texts, progress, batch_size):
            for r, (i, n) in enumerate(zip(rows, lengths)):
                out[i] = np.array(hidden[r, :n], dtype=np.float32)  # a copy: a view would keep the whole batch alive
        return out

    def encode(self, texts: Sequence[str], progress: bool = False, batch_size: int = BATCH) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors, shape (len(texts), dimensions), pooled batch by batch."""
        return self.encode_with_tokens(texts, progress, batch_size, keep=False)[0]

    def encode_with_tokens(
        self, texts: Sequence[str], progress: bool = False, batch_size: int = BATCH, keep: bool = True
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``encode``'s vectors and, from the same pass, ``token_embeddings``' arrays (empty unless ``keep``)."""
        pooled = np.zeros((0, 0), dtype=np.float32)
        tokens: list[np.ndarray] = [np.zeros(0)] * len(texts) if keep else []
        for rows, hidden, lengths in self._batches(texts, progress, batch_size):
            if not len(pooled):
                pooled = np.zeros((len(texts), hidden.shape[-1]), dtype=np.float32)
            for r, (i, n) in enumerate(zip(rows, lengths)):
                pooled[i] = hidden[r, :n].mean(axis=0)
                if keep:
                    tokens[i] = np.array(hidden[r, :n], dtype=np.float32)  # a copy, as in token_embeddings
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12), tokens
