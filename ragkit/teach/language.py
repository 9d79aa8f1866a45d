"""The notebook's language: English is the source and the fallback, Dutch comes from a catalogue beside this module.

A kernel speaks one language, set by the first cell of a Dutch notebook (``language.use("nl")``). Every sentence
the teaching layer writes for people goes through ``say`` (a template with named fields) or ``_`` (a fixed string):
the English template is the key into ``locale/<lang>.toml``, so a changed English template finds no translation and
falls back to English, which the Dutch edition's tests catch.
"""

from __future__ import annotations

import os
import re
import string
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.errors import RagkitError

__all__ = [
    "LANGUAGES",
    "SOURCE",
    "Message",
    "_",
    "catalogue",
    "current",
    "files",
    "listed",
    "number",
    "problems",
    "read",
    "say",
    "speaking",
    "translated",
    "use",
    "word",
]

LANGUAGES = ("en", "nl")
SOURCE = "en"
# The kernel's default before any ``use``: RAGKIT_LANGUAGE, so a teacher's tool (a grader, a book build) can choose.
_ENV = "RAGKIT_LANGUAGE"
_LOCALE = Path(__file__).parent / "locale"


@dataclass(frozen=True)
class Message:
    """One entry of a catalogue: the English template and its translation."""

    en: str
    translated: str


class _State:
    language: str | None = None


def use(language: str) -> None:
    """Speak ``language`` from now on in this kernel."""
    if language not in LANGUAGES:
        raise RagkitError(f"language {language!r} is not one of {', '.join(LANGUAGES)}: pick one of those")
    _State.language = language


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """Speak ``language`` inside a ``with`` block only, then as before (a teacher's table stays in its language)."""
    before = _State.language
    use(language)
    try:
        yield
    finally:
        _State.language = before


def current() -> str:
    """The language this kernel speaks: the last ``use``, else RAGKIT_LANGUAGE, else English."""
    if _State.language is not None:
        return _State.language
    chosen = os.environ.get(_ENV, SOURCE)
    return chosen if chosen in LANGUAGES else SOURCE


@cache
def catalogue(language: str) -> Mapping[str, Message]:
    """The usable messages of ``language``, keyed by their English template (empty for English itself).

    A broken entry is left out, so that a student's cell shows its English instead of failing: ``problems`` names it.
    """
    return {} if language == SOURCE else _gathered(language)[0]


def problems(language: str) -> tuple[str, ...]:
    """What is wrong with the catalogue of ``language`` (a test keeps it empty), each with what to do."""
    return () if language == SOURCE else _gathered(language)[1]


def files(language: str) -> tuple[Path, ...]:
    """The catalogue files of ``language``: ``locale/<lang>.toml`` and every ``locale/<lang>/*.toml`` (one per part)."""
    return (_LOCALE / f"{language}.toml", *sorted((_LOCALE / language).glob("*.toml")))


@cache
def _gathered(language: str) -> tuple[dict[str, Message], tuple[str, ...]]:
    """The messages of every catalogue file of ``language``, and what is wrong with them (a template twice, too)."""
    messages: dict[str, Message] = {}
    found: list[str] = []
    for path in files(language):
        read_messages, read_problems = read(path, language)
        found += read_problems
        for en, message in read_messages.items():
            if en in messages:
                found.append(
                    f"{path} translates {en[:60]!r} again (another file of locale/{language}/ has it): keep one entry"
                )
            else:
                messages[en] = message
    return messages, tuple(found)


def read(path: Path, language: str) -> tuple[dict[str, Message], tuple[str, ...]]:
    """The usable messages of one catalogue file, and a sentence for each entry (or the file) that is not usable."""
    try:
        with path.open("rb") as f:
            entries = tomllib.load(f).get("message", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, (f"{path} cannot be read ({exc}): fix it; until then every sentence stays English",)
    messages: dict[str, Message] = {}
    found = []
    for number, entry in enumerate(entries if isinstance(entries, list) else [entries], start=1):
        en = entry.get("en") if isinstance(entry, dict) else None
        translated = entry.get(language) if isinstance(entry, dict) else None
        if not (isinstance(en, str) and isinstance(translated, str)):
            which = repr(en[:60]) if isinstance(en, str) else f"number {number}"
            found.append(
                f"{path}: the [[message]] {which} needs `en` and `{language}`, both strings: "
                "add the one missing (its English shows until then)"
            )
        elif en in messages:
            found.append(f"{path} translates {en[:60]!r} twice: keep one entry (the first one is used)")
        else:
            messages[en] = Message(en, translated)
    return messages, tuple(found)


def _(en: str) -> str:
    """``en`` in the kernel's language (English where no translation exists)."""
    message = catalogue(current()).get(en)
    return en if message is None else message.translated


def word(text: str) -> str:
    """A word chosen at run time (an option a notebook passes, such as a prediction's "yes"), in the kernel's
    language where the catalogue has it, else as given: unlike ``_``, not a template the code writes itself."""
    return _(text)


class _Numbers(string.Formatter):
    """Formats numbers the way the language writes them: Dutch swaps the decimal point and the thousands comma."""

    def __init__(self, language: str) -> None:
        self.language = language

    def format_field(self, value: Any, format_spec: str) -> str:
        if _is_number(value) and value == 0 and format_spec[-1:] in ("e", "E"):
            return "0"  # a power of ten of nothing (0.0e+00, 0,0 · 10⁰) says less than the digit
        text = super().format_field(value, format_spec)
        if self.language == "nl" and _is_number(value):
            text = text.translate(str.maketrans({".": ",", ",": "."}))
            # a power of ten as Dutch prose writes it: 8,30 · 10⁻⁷, not 8,30e-07
            text = _EXPONENT.sub(lambda m: f"{m[1]} · 10{_raised(m[2] + m[3])}", text)
        return text


_EXPONENT = re.compile(r"^([-+]?\d[\d.,]*)[eE]([-+]?)0*(\d+)$")
_RAISED = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "+")


def _raised(exponent: str) -> str:
    """An exponent's sign and digits raised (a plus sign left out)."""
    return exponent.translate(_RAISED)


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int | float | np.integer | np.floating)


def say(en: str, /, **fields: object) -> str:
    """The template ``en`` in the kernel's language, filled with ``fields`` (numbers written as that language does).

    A translation that cannot be filled (a field it names that ``en`` does not, a stray brace) falls back to ``en``:
    a bad catalogue entry must not crash a student's cell; test_language's field check names the entry.
    """
    numbers = _Numbers(current())
    translated = _(en)
    if translated != en:
        try:
            return numbers.format(translated, **fields)
        except (KeyError, IndexError, AttributeError, ValueError, TypeError):
            pass  # English below: an error there is the caller's, and raises
    return numbers.format(en, **fields)


ENGINE = "engine.toml"
"""The part of a language's catalogue (``locale/<lang>/engine.toml``) that translates what the engine writes: its
reports and errors are English templates it fills itself, which ``translated`` recognises in the filled text."""


@cache
def _engine_patterns(language: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each engine template of ``language`` as a pattern over filled text (a field: any text), with its translation."""
    path = _LOCALE / language / ENGINE
    if not path.is_file():
        return ()
    found = []
    for en, message in read(path, language)[0].items():
        parts, names = [], []
        for literal, name, _spec, _conversion in string.Formatter().parse(en):
            parts.append(re.escape(literal))
            if name is not None:
                if not name.isidentifier() or name in names:
                    break
                names.append(name)
                parts.append(f"(?P<{name}>.+?)")
        else:
            if names:
                found.append((re.compile("".join(parts), re.S), message.translated))
    return tuple(found)


def translated(text: str | Sequence[str]) -> str:
    """What the engine wrote (a line, or lines to join), in the kernel's language: each line matched against the
    engine templates, its fields translated in turn (a reason inside a report); English where nothing matches."""
    if not isinstance(text, str):
        return "\n".join(translated(line) for line in text)
    language = current()
    if language == SOURCE or not text.strip():
        return text
    exact = catalogue(language).get(text.strip())
    if exact is not None:
        return text.replace(text.strip(), exact.translated)
    for pattern, dutch in _engine_patterns(language):
        match = pattern.fullmatch(text)
        if match:
            try:
                return dutch.format(**{k: _engine_field(v) for k, v in match.groupdict().items()})
            except (KeyError, IndexError, ValueError):
                return text
    return text


_SWAPPED = str.maketrans(".,", ",.")
_ENGLISH_NUMBER = re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?|\d+\.\d+")


def _engine_field(value: str) -> str:
    """A field of an engine's line in the kernel's language: a number as the language writes it, else translated."""
    if _ENGLISH_NUMBER.fullmatch(value):
        return value.translate(_SWAPPED) if current() == "nl" else value
    return translated(value)


def listed(items: Iterable[str]) -> str:
    """Numbers (or words) in a row as the kernel's language separates them: a comma, but a semicolon in Dutch, whose
    numbers carry a comma themselves (0,5; 0,9 and not 0,5, 0,9)."""
    return ("; " if current() == "nl" else ", ").join(items)


def number(value: float, format_spec: str = "") -> str:
    """One number written as the kernel's language writes it."""
    return _Numbers(current()).format_field(value, format_spec)
