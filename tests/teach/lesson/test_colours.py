"""Colours named as drawn: the prose, the text alternatives and the plots share one palette (plots.PALETTE), whose
words are what a reader sees ("orange" for Okabe and Ito's vermillion). A word for a colour the palette does not
draw, in a notebook's markdown or in a figure's text alternative, fails here. Quick: random distances, seeded."""

import re
from pathlib import Path

import jupytext
import pandas as pd
import pytest
from test_cut_axes import sweep  # noqa: F401  (the seeded sweep fixture, shared with test_cut_axes)

from ragkit.errors import InputError
from ragkit.teach import language
from ragkit.teach.exercises import cost_table
from ragkit.teach.lesson import plots

ROOT = Path(__file__).resolve().parents[3]
COLOURS = {
    "en": (
        "red",
        "orange",
        "amber",
        "yellow",
        "green",
        "blue",
        "light blue",
        "sky blue",
        "purple",
        "pink",
        "violet",
        "brown",
        "grey",
        "gray",
        "black",
        "vermillion",
        "vermilion",
        "magenta",
        "cyan",
        "teal",
    ),
    "nl": (
        "rood",
        "rode",
        "oranje",
        "amber",
        "geel",
        "gele",
        "groen",
        "groene",
        "blauw",
        "blauwe",
        "lichtblauw",
        "lichtblauwe",
        "paars",
        "paarse",
        "roze",
        "bruin",
        "bruine",
        "grijs",
        "grijze",
        "zwart",
        "zwarte",
        "violet",
        "magenta",
        "cyaan",
    ),
}
"""Every word for a colour the tests look for, in either language (a Dutch adjective also with its -e)."""


def colour_words_in(text: str, spoken: str) -> list[str]:
    """The colour words of ``text``, longest first so that "light blue" is one word, not "blue"."""
    words = sorted(COLOURS[spoken], key=len, reverse=True)
    return [m.group(0).lower() for m in re.finditer(r"\b(" + "|".join(words) + r")\b", text, re.IGNORECASE)]


def inflected(words: set[str], spoken: str) -> set[str]:
    """``words`` and, in Dutch, each adjective with its -e (blauw, blauwe; geel, gele)."""
    if spoken != "nl":
        return words
    return words | {re.sub(r"([aeou])\1([^aeiou]+)$", r"\1\2", w) + "e" for w in words if not w.endswith("e")}


def drawn(spoken: str) -> set[str]:
    """The words of the palette's colours in one language, a Dutch adjective also with its -e."""
    with language.speaking(spoken):
        return inflected(set(plots.colour_words().values()), spoken)


def off_palette(text: str, spoken: str, allowed: set[str] | None = None) -> list[str]:
    """The colour words of ``text`` that name no colour in ``allowed`` (default: every colour of the palette)."""
    allowed = drawn(spoken) if allowed is None else allowed
    return [w for w in colour_words_in(text, spoken) if w not in allowed]


def twins() -> list[Path]:
    return sorted((ROOT / "notebooks" / "twins").rglob("*.py"))


def test_every_colour_of_the_palette_has_a_word_in_both_languages():
    assert set(plots.colour_words()) == set(plots.PALETTE)
    assert plots.colour_word(plots.OKABE_ITO["vermillion"]) == "orange" == plots.colour_word(plots.OUT_OF_DOMAIN_COLOUR)
    with language.speaking("nl"):
        assert plots.colour_word(plots.OUT_OF_DOMAIN_COLOUR) == "oranje"
        assert plots.colour_word(plots.IN_DOMAIN_COLOUR) == "blauw"
    for code in (
        plots.IN_DOMAIN_COLOUR,
        plots.OUT_OF_DOMAIN_COLOUR,
        plots.KEPT_COLOUR,
        plots.DESTROYED_COLOUR,
        *plots.COLOURS.values(),
    ):
        assert plots.colour_word(code) in plots.PALETTE
    assert len(set(plots.PALETTE.values())) == len(plots.PALETTE), "two words for one colour"


def test_a_colour_outside_the_palette_has_no_word():
    with pytest.raises(InputError, match="not a colour of the palette"):
        plots.colour_word("#FF0000")


def test_the_scan_finds_a_colour_the_palette_does_not_draw():
    assert off_palette("the red bars and the light blue line", "en") == ["red"]
    assert off_palette("de rode staven en de oranje lijn", "nl") == ["rode"]
    assert off_palette("de gele markering en de blauwe lijn", "nl") == []
    assert off_palette("the orange bars (hatched x) and the blue ones", "en") == []


@pytest.mark.parametrize("twin", twins(), ids=lambda p: str(p.relative_to(ROOT / "notebooks" / "twins")))
def test_a_notebooks_prose_names_only_colours_the_palette_draws(twin):
    spoken = "nl" if "nl" in twin.relative_to(ROOT / "notebooks" / "twins").parts else "en"
    notebook = jupytext.read(twin)
    wrong = {w for cell in notebook.cells if cell.cell_type == "markdown" for w in off_palette(cell.source, spoken)}
    assert not wrong, (
        f"{twin.name} names colours no figure draws: {sorted(wrong)} (plots.PALETTE's words: {sorted(drawn(spoken))})"
    )


def colours_of(fig) -> set[str]:
    """The words of every palette colour a figure draws (lines, markers, fills, colour scales, shapes)."""
    codes: set[str] = set()

    def walk(value):
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            codes.add(value.upper())

    walk(fig.to_plotly_json())
    names = {"BLACK": "#000000"}
    words = {code.upper(): word for word, code in plots.PALETTE.items()}
    return {words[names.get(c, c)] for c in codes if names.get(c, c) in words}


def figures(sweep) -> dict:  # noqa: F811
    """The course's figures whose text alternatives could name a colour, drawn from the seeded sweep."""
    costs = cost_table(sweep)
    return {
        "histogram": plots.distance_histogram(sweep),
        "static slider": plots.threshold_slider(sweep),
        "what each cut costs": plots.bluffs_and_refusals(sweep),
        "ex2's cost": plots.cost_curve(costs),
        "ex2's two halves": plots.cost_halves(pd.concat([costs.assign(half="tune"), costs.assign(half="judge")])),
        "needle cuts": plots.needle_cuts([("q01", 10, 40), ("q02", 500, 40)]),
    }


@pytest.mark.parametrize("spoken", ["en", "nl"])
def test_every_text_alternative_names_only_colours_its_figure_draws(sweep, spoken):  # noqa: F811
    with language.speaking(spoken):
        shown = figures(sweep)
        for name, fig in shown.items():
            allowed = inflected({plots.colour_word(plots.PALETTE[c]) for c in colours_of(fig)}, spoken)
            text = fig.description + " " + str(fig.layout.title.text or "")
            assert not off_palette(text, spoken, allowed), f"{name}: {text}"
    with language.speaking(spoken):
        histogram = plots.distance_histogram(sweep).description
        assert (
            plots.colour_word(plots.OUT_OF_DOMAIN_COLOUR) in histogram
            and plots.colour_word(plots.IN_DOMAIN_COLOUR) in histogram
        )


def test_no_catalogue_message_names_a_colour_the_palette_does_not_draw():
    wrong = {
        en: found
        for en, message in language.catalogue("nl").items()
        for found in [off_palette(en, "en") + off_palette(message.translated, "nl")]
        if found
    }
    assert not wrong, f"messages of ragkit/teach/locale/nl.toml naming colours no figure draws: {wrong}"


def sentences_in_code() -> dict[str, str]:
    """Every sentence the teaching layer writes for people: the templates of say() and _() and the f-strings."""
    import ast

    found: dict[str, str] = {}
    for path in sorted((ROOT / "ragkit" / "teach").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            parts: list[ast.AST] = []
            called = getattr(node.func, "id", getattr(node.func, "attr", None)) if isinstance(node, ast.Call) else None
            if isinstance(node, ast.Call) and called in ("say", "_"):
                parts = node.args[:1]
            elif isinstance(node, ast.JoinedStr):
                parts = list(node.values)
            for part in parts:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found[part.value] = f"{path.relative_to(ROOT)}:{part.lineno}"
    return found


def test_no_sentence_in_the_code_names_a_colour_the_palette_does_not_draw():
    sentences = sentences_in_code()
    assert any("The plot's" in s and "bars are exactly" in s for s in sentences), "the scan misses the narrators"
    wrong = {where: s for s, where in sentences.items() if off_palette(s, "en")}
    assert not wrong, f"sentences naming a colour no figure draws (take it from plots.colour_word): {wrong}"
