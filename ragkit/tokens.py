"""Token accounting: what the header costs, and which chunks the encoder's window truncates."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragkit.chunking import Chunk
from ragkit.plumbing.models import WINDOW, verified_embedding_dir

__all__ = [
    "COUNTS_KEPT",
    "SPECIAL_TOKENS",
    "TokenReport",
    "TruncationWarning",
    "count_pieces",
    "over_window",
    "token_report",
    "tokenizer",
    "truncated",
]

SPECIAL_TOKENS = 2
"""``[CLS]`` and ``[SEP]``: the encoder adds them to every text, inside its window."""


def truncated(pieces: int, window: int) -> bool:
    """True when a text of ``pieces`` word pieces (special tokens excluded) is truncated by a window of ``window``."""
    return pieces + SPECIAL_TOKENS > window


def over_window(pieces: Iterable[int], window: int) -> int:
    """How many texts, given their word pieces (special tokens excluded), the window truncates."""
    return sum(truncated(n, window) for n in pieces)


class TruncationWarning(UserWarning):
    """Some texts are longer than the encoder's window, which embeds only their beginning: how many, of how many.

    Raised with its counts as values (``over`` of ``texts``, the ``window`` in word pieces); ``embedding`` says when it
    was raised: True while embedding (any texts), False when chunks were counted before (``token_report``). A notebook
    says it again in its own language from these values; ``str()`` is the warning's English.
    """

    def __init__(self, over: int, texts: int, window: int, embedding: bool = True) -> None:
        self.over, self.texts, self.window, self.embedding = over, texts, window, embedding
        super().__init__(self.sentence())

    def sentence(self) -> str:
        """The warning in English."""
        if self.embedding:
            return (
                f"{self.over} of {self.texts} texts exceed the encoder's {self.window}-piece window: "
                "the encoder embeds only their beginning. Use smaller chunks or a shorter header."
            )
        return (
            f"{self.over} of {self.texts} chunks are longer than the encoder's {self.window}-piece window and will be "
            "truncated when embedded: use smaller chunks or a shorter header"
        )

    def __reduce__(self) -> tuple:
        return type(self), (self.over, self.texts, self.window, self.embedding)


@dataclass(frozen=True)
class TokenReport:
    """Word pieces a strategy embeds, the header's share, and the chunks over the window."""

    chunks: int
    pieces: int
    header_pieces: int
    over_window: int
    window: int

    @property
    def header_share(self) -> float:
        """Fraction of embedded word pieces spent on headers."""
        return self.header_pieces / self.pieces if self.pieces else 0.0


@functools.lru_cache(maxsize=4)
def tokenizer(model_dir: Path | None = None):
    """The model's fast word-piece tokenizer, with truncation and padding switched off."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_dir or verified_embedding_dir()) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


COUNTS_KEPT = 50_000
"""Texts whose word pieces a process remembers per tokenizer (the bundled course has about 6,000 distinct texts)."""


@functools.lru_cache(maxsize=1)
def _bundled() -> Path:
    return verified_embedding_dir().resolve()


@functools.lru_cache(maxsize=4)
def _counted(model_dir: Path) -> dict[str, int]:
    """The word pieces of the texts this process has counted with the tokenizer of ``model_dir``."""
    return {}


def count_pieces(texts: Sequence[str], model_dir: Path | None = None) -> list[int]:
    """Word pieces per text, special tokens excluded; each distinct text is tokenized once per process."""
    if not texts:
        return []
    folder = Path(model_dir).resolve() if model_dir is not None else _bundled()  # one memory, however it is named
    known = _counted(folder)
    counts = {t: known[t] for t in dict.fromkeys(texts) if t in known}  # this call's answers, whatever memory forgets
    todo = [t for t in dict.fromkeys(texts) if t not in counts]
    if todo:
        tok = tokenizer(folder)
        encode = getattr(tok, "encode_batch_fast", tok.encode_batch)  # tokenizers 0.20+: the same ids, no offsets
        fresh = dict(zip(todo, (len(e.ids) for e in encode(todo, add_special_tokens=False))))
        if len(known) + len(fresh) > COUNTS_KEPT:
            known.clear()
        known.update(fresh)
        counts.update(fresh)
    return [counts[t] for t in texts]


def token_report(
    chunks: Sequence[Chunk], window: int = WINDOW, model_dir: Path | None = None, warn: bool = True
) -> TokenReport:
    """Count embedded word pieces; warn when chunks exceed the window (``[CLS]`` and ``[SEP]`` included)."""
    pieces = count_pieces([c.text for c in chunks], model_dir)
    headers = count_pieces([c.header for c in chunks if c.header], model_dir)
    over = over_window(pieces, window)
    if over and warn:
        warnings.warn(TruncationWarning(over, len(chunks), window, embedding=False), stacklevel=2)
    return TokenReport(len(chunks), sum(pieces), sum(headers), over, window)
