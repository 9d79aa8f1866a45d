"""The guides' computed figures as values, each written once per language by the catalogue (issue 62).

A figure is a template (the catalogue's key, ``ragkit.teach.language``) and the values that fill it: a number, a
word, another figure, a run of figures, or a verdict. ``written`` renders a set of them in one language, and
``check_or_write`` compares a page's marked figures (``<!--fig:name-->value<!--/fig-->``) with them, English and
Dutch alike, or writes them in. The Dutch guide takes its figures by name from here; nothing translates an English
value back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.statistics import Verdict
from ragkit.teach.classroom.figures import quoted, render
from ragkit.teach.language import LANGUAGES, say, speaking, word
from ragkit.teach.lesson.paired import verdict_text

__all__ = ["Figure", "check_or_write", "figure", "listing", "rendered_by", "series", "term", "verbatim", "written"]


@dataclass(frozen=True)
class Figure:
    """A template and the values that fill it, rendered in the kernel's language when asked."""

    template: str
    fields: tuple[tuple[str, object], ...] = ()

    def text(self) -> str:
        """The figure in the language ``speaking`` chose."""
        return say(self.template, **{name: _filled(value) for name, value in self.fields})


def figure(template: str, /, **fields: object) -> Figure:
    """A figure: ``template`` is English and the catalogue's key; a template without fields is a word to translate."""
    return Figure(template, tuple(fields.items()))


def verbatim(value: object) -> Figure:
    """A value written as it is in every language: a run's label, a verdict word the student types, a count."""
    return figure("{value}", value=value)


@dataclass(frozen=True)
class _Run:
    """Figures in a row, joined by commas."""

    items: tuple[Figure, ...]


@dataclass(frozen=True)
class _Term:
    """A word chosen at run time (a setting's name), translated where the catalogue has it."""

    text: str


def term(text: str) -> Figure:
    """A name the code chose at run time (a tuning setting), in the language's words where the catalogue has them."""
    return figure("{value}", value=_Term(text))


@dataclass(frozen=True)
class _Rendered:
    """A value the teaching layer's own renderer writes, called in the language being written."""

    renderer: Callable[[Any], str]
    value: object


def rendered_by(renderer: Callable[[Any], str], value: object) -> Figure:
    """A value as the notebooks write it (``settings.setting_value``): one renderer for the notebook and the guide."""
    return figure("{value}", value=_Rendered(renderer, value))


def series(items: list[Figure]) -> Figure:
    """``a, b, c``: figures joined by commas."""
    return figure("{items}", items=_Run(tuple(items)))


def listing(items: list[Figure], empty: Figure) -> Figure:
    """``a, b and c`` in the kernel's language; ``empty`` when there is nothing to list."""
    if not items:
        return empty
    if len(items) == 1:
        return items[0]
    return figure("{rest} and {last}", rest=_Run(tuple(items[:-1])), last=items[-1])


def _filled(value: object) -> object:
    if isinstance(value, Figure):
        return value.text()
    if isinstance(value, _Run):
        return ", ".join(item.text() for item in value.items)
    if isinstance(value, _Rendered):
        return value.renderer(value.value)
    if isinstance(value, _Term):
        return word(value.text)
    if isinstance(value, Verdict):
        return verdict_text(value)
    return value  # a number: the template's format spec writes it the language's way


def written(figures: Mapping[str, Figure], language: str) -> dict[str, str]:
    """Every figure as ``language`` writes it."""
    with speaking(language):
        return {name: f.text() for name, f in figures.items()}


def check_or_write(
    pages: Mapping[str, Path],
    values: Mapping[str, dict[str, str]],
    write: bool,
    root: Path,
    measured_elsewhere: tuple[str, ...] = (),
) -> int:
    """Print each page's figures that drift from ``values`` (by language); with ``write``, write them in (0), else
    1 when any drifts. A figure of ``measured_elsewhere`` keeps what the page says; a marked figure nothing computes
    fails the run, in either mode, before anything is written."""
    texts = {language: pages[language].read_text(encoding="utf-8") for language in LANGUAGES}
    unknown = {
        language: sorted(set(quoted(text)) - set(values[language]) - set(measured_elsewhere))
        for language, text in texts.items()
    }
    if any(unknown.values()):  # nothing is written: both languages stay as they were, and the run fails
        for language, names in unknown.items():
            if names:
                print(f"{pages[language].relative_to(root)} marks figures nothing computes: {', '.join(names)}")
        return 1
    drifted = 0
    for language, text in texts.items():
        path, computed, marked = pages[language], values[language], quoted(text)
        drift = sorted(n for n, v in computed.items() if n in marked and marked[n] != {v})
        for name in drift:
            said = " / ".join(sorted(marked[name]))
            print(f"{path.relative_to(root)}: {name} says {said}, the computation {computed[name]}")
        if write and drift:
            kept = {name: next(iter(marked[name])) for name in measured_elsewhere if name in marked}
            path.write_text(render(text, {**kept, **computed}), encoding="utf-8")
            print(f"wrote {len(drift)} figure(s) into {path.relative_to(root)}")
        drifted += len(drift)
    return 0 if write or not drifted else 1
