"""Vectors lent by the grader: a kernel in the grader's sandbox asks for them instead of computing them itself.

A submission's kernel and the grader's check embed the same texts (ex4 embeds the whole corpus
with the student's header). The sandbox names a Unix socket in ``RAGKIT_EMBEDDING_SERVICE``, and the
kernel's startup gives its embedder a ``Borrower`` of it (an embedder without one asks no one): the
embedder sends the texts it lacks and receives the grader's vectors. The grader computes them
once, from the texts alone, with its own model, and keeps them in its own cache, where its check
finds them. A kernel chooses only texts, never a vector, so nothing it sends can change what a
text is judged to mean. The service lends to one run, within a budget of characters and one of
texts (a flood of short texts costs the model per text, not per character), and waits
at most ``wait`` seconds for the grader's model (another run may hold it): a kernel that is
refused (busy, over budget, any error) computes locally, as without a service, so no submission
waits long for another one's texts.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragkit.errors import InputError

__all__ = [
    "BUDGET",
    "LENT_SLICE",
    "MAX_REQUEST",
    "MAX_TEXTS",
    "READ_SECONDS",
    "SERVICE_ENV",
    "Borrower",
    "Lender",
    "service_path",
]

SERVICE_ENV = "RAGKIT_EMBEDDING_SERVICE"
MAX_REQUEST = 32 * 2**20
"""Bytes of one request (the texts as JSON): a few corpora; a larger request is refused, never read."""
MAX_TEXTS = 20_000
"""Texts of one request; also the texts one run may have embedded where the grader sizes no budget of its own."""
BUDGET = 2_000_000
"""Characters one run may have embedded by the grader (the course's chunks are 0.44 M): beyond, the kernel computes.

It also bounds the grader's time on a run whose kernel was stopped mid-request: a few corpora, never more."""
READ_SECONDS = 30.0
LENT_SLICE = 128
"""Texts embedded between two looks at whether the run is still on: a stopped run costs the grader one slice."""
_LENGTH = 8


def service_path() -> Path | None:
    """The socket named by ``RAGKIT_EMBEDDING_SERVICE``, if any."""
    value = os.environ.get(SERVICE_ENV, "").strip()
    return Path(value) if value else None


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        block = conn.recv(min(n - len(data), 2**20))
        if not block:
            raise ConnectionError("the other side closed the connection")
        data += block
    return bytes(data)


def _message(conn: socket.socket, limit: int) -> bytes:
    n = int.from_bytes(_read_exactly(conn, _LENGTH), "big")
    if n > limit:
        raise InputError(f"a message of {n:,} bytes (at most {limit:,})")  # what the other side sent: refused unread
    return _read_exactly(conn, n)


def _send(conn: socket.socket, data: bytes) -> None:
    conn.sendall(len(data).to_bytes(_LENGTH, "big") + data)


@dataclass(frozen=True)
class Borrower:
    """A kernel's side: asks the grader's socket for vectors; an embedder that holds one asks it before its model."""

    path: Path

    def borrowed(self, texts: Sequence[str], namespace: str, dimensions: int) -> np.ndarray | None:
        """The service's vectors for these texts (one row each), or None when it refuses or cannot be reached."""
        if not texts:
            return None
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(str(self.path))
                _send(conn, json.dumps({"namespace": namespace, "texts": list(texts)}).encode("utf-8"))
                reply = _message(conn, len(texts) * dimensions * 4 + 1)
        except (OSError, ValueError, ConnectionError):
            return None
        if reply[:1] != b"V" or len(reply) != 1 + len(texts) * dimensions * 4:
            return None
        return np.frombuffer(reply[1:], dtype=np.float32).reshape(len(texts), dimensions).copy()


class Lender:
    """The grader's side: one socket for one run, answering with ``encode``'s vectors when ``lock`` gives a turn."""

    def __init__(
        self,
        path: Path,
        namespace: str,
        encode: Callable[[list[str]], np.ndarray],
        lock: threading.Lock | threading.Semaphore,
        owner: tuple[int, int] | None = None,
        wait: float = 0.0,
        budget: int = BUDGET,
        texts: int = MAX_TEXTS,
    ):
        self.path, self.namespace, self.encode, self.lock, self.left = path, namespace, encode, lock, budget
        self.wait, self.left_texts = wait, texts
        self.lent = 0
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        if owner is not None:
            os.chown(path, *owner)
        os.chmod(path, 0o600)
        self._sock.listen(2)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(READ_SECONDS)
                    _send(conn, self._answer(_message(conn, MAX_REQUEST)))
                except (OSError, ValueError, ConnectionError):
                    continue

    def _answer(self, request: bytes) -> bytes:
        """Vectors for a hostile request (validated first), or a refusal that sends the kernel to compute itself."""
        try:
            asked = json.loads(request.decode("utf-8"))
        except (ValueError, RecursionError):
            return b"Enot JSON"
        texts = asked.get("texts") if isinstance(asked, dict) else None
        if (
            not isinstance(texts, list)
            or not texts
            or len(texts) > MAX_TEXTS
            or not all(isinstance(t, str) for t in texts)
        ):
            return b"Enot a list of texts"
        if asked.get("namespace") != self.namespace:
            return b"Eanother model"
        chars = sum(len(t) for t in texts)
        if chars > self.left or len(texts) > self.left_texts:
            return b"Eover budget"
        if self._closed.is_set() or not self.lock.acquire(timeout=self.wait):
            return b"Ebusy"
        try:
            parts = []
            for start in range(0, len(texts), LENT_SLICE):
                if self._closed.is_set():  # the run ended (its time limit, a crash): stop computing for it
                    return b"Eclosed"
                parts.append(np.asarray(self.encode(texts[start : start + LENT_SLICE]), dtype=np.float32))
            vectors = np.concatenate(parts)
        except Exception:  # whatever fails here, the kernel computes the vectors itself
            return b"Ecould not embed"
        finally:
            self.lock.release()
        self.left -= chars
        self.left_texts -= len(texts)
        self.lent += len(texts)
        return b"V" + vectors.tobytes()

    def close(self) -> None:
        """Stop lending (a request being answered finishes), and remove the socket."""
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._thread.join(timeout=5)
        self.path.unlink(missing_ok=True)
