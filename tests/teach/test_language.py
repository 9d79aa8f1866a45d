"""The Dutch edition's strings: every catalogue entry translates a template the code still writes, every template of
the pilot notebooks has its Dutch, and what the teaching layer writes there in Dutch carries the English figures."""

import ast
import importlib
import json
import re
import string
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from IPython.display import HTML, Markdown

from ragkit.errors import RagkitError
from ragkit.teach import language
from ragkit.teach.classroom.edition import COURSE, twin_path

import reach
from conftest import NOTEBOOKS, ROOT
from dutch import dutch_share, exponents

TEACH = ROOT / "ragkit" / "teach"
CALLS = {"say", "_"}
TOOLS = ROOT / "teacher"
"""The teacher's tools: their guides' figures are templates too, ``figure(...)`` (teacher/rendering.py renders them)."""
TOOL_CALLS = CALLS | {"figure"}


@pytest.fixture(autouse=True)
def english_again():
    """Every test starts in English and leaves the kernel as it found it, whatever it switched to."""
    with language.speaking("en"):
        yield


# The catalogue against the source


def _called(call: ast.Call, calls: set[str] = CALLS) -> str | None:
    """``say`` or ``_`` for a call of the language module's functions (bare or as ``language.say``), else None."""
    f = call.func
    if isinstance(f, ast.Name) and f.id in calls:
        return f.id
    if isinstance(f, ast.Attribute) and f.attr in calls and isinstance(f.value, ast.Name) and f.value.id == "language":
        return f.attr
    return None


def templates(path: Path, calls: set[str] = CALLS) -> dict[str, list[object]]:
    """Each function's say()/_() first arguments in ``path`` (qualified name: templates), constants resolved.

    A first argument that is a name or an attribute (``_(TIGHTER)``, ``_(plots.LOOSER)``) is looked up in the
    imported module; anything else (an f-string, an expression) is kept as its ast node, which the tests refuse.
    A function with a parameter named ``say`` or ``_`` (``course.warm``'s reporter) calls that, not the catalogue.
    """
    module = importlib.import_module(_module(path))
    found: dict[str, list[object]] = {}

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                shadowed = {a.arg for a in child.args.args + child.args.kwonlyargs} & calls
                if not shadowed:
                    visit(child, scope + [child.name])
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, scope + [child.name])
                continue
            if isinstance(child, ast.Call) and _called(child, calls) and child.args:
                first = child.args[0]
                if isinstance(first, ast.Constant):
                    value: object = first.value
                elif isinstance(first, ast.Name | ast.Attribute):
                    value = eval(ast.unparse(first), vars(module))
                else:
                    value = first
                found.setdefault(".".join(scope), []).append(value)
            visit(child, scope)

    visit(ast.parse(path.read_text(encoding="utf-8")), [])
    return found


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_templates() -> dict[str, dict[str, list[object]]]:
    """Templates by module, named from ``ragkit.teach`` on (``lesson.plots``); a package also holds its modules'."""
    found: dict[str, dict[str, list[object]]] = {}
    for p in sorted(TEACH.rglob("*.py")):
        if p.stem == "language":
            continue
        name = _module(p).removeprefix("ragkit.teach.")
        parts = name.split(".")
        for key in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}:
            for function, ts in templates(p).items():
                found.setdefault(key, {}).setdefault(function, []).extend(ts)
    return found


def tool_templates() -> dict[str, list[object]]:
    """The teacher's tools' templates by function (of teacher/rendering.py, whose ``say`` renders any figure, only
    the figures it writes itself)."""
    found: dict[str, list[object]] = {}
    for p in sorted(TOOLS.glob("*.py")):
        for function, ts in templates(p, {"figure"} if p.stem == "rendering" else TOOL_CALLS).items():
            found.setdefault(f"{p.stem}.{function}", []).extend(ts)
    return found


def in_source() -> set[str]:
    teach = {t for functions in all_templates().values() for ts in functions.values() for t in ts}
    tools = {t for ts in tool_templates().values() for t in ts}
    return {t for t in teach | tools if isinstance(t, str)}


def fields(template: str) -> Counter:
    """The {fields} of a template with their conversion and format: a translation must fill the same ones."""
    return Counter(
        (name, conversion, spec) for _, name, spec, conversion in string.Formatter().parse(template) if name is not None
    )


def test_every_template_is_a_literal_the_tests_can_find():
    odd = {
        f"{module}.{function}": ast.unparse(t)
        for module, functions in all_templates().items()
        for function, ts in functions.items()
        for t in ts
        if not isinstance(t, str)
    } | {
        f"teacher.{function}": ast.unparse(t)
        for function, ts in tool_templates().items()
        for t in ts
        if not isinstance(t, str)
    }
    assert not odd, f"say()/_() must take a literal English template (or a module constant) first: {odd}"


def test_every_catalogue_entry_translates_a_template_the_code_writes_with_the_same_fields():
    source = in_source()
    catalogue = language.catalogue("nl")
    engine = engine_templates()  # what the engine writes: test_the_engine_templates_are_what_the_engine_writes
    stale = [en for en in catalogue if en not in source and en not in engine]
    assert not stale, (
        "stale entries of ragkit/teach/locale/nl.toml (their English template is no longer in the code: "
        f"update `en` to the new template and its Dutch): {stale}"
    )
    unlike = mismatched(catalogue)
    assert not unlike, f"Dutch templates with other fields than their English: {unlike}"


def engine_templates() -> dict[str, language.Message]:
    """The catalogue's part that translates what the engine writes (``language.translated`` matches them)."""
    return language.read(TEACH / "locale" / "nl" / language.ENGINE, "nl")[0]


def test_the_engine_templates_are_what_the_engine_writes():
    """Each engine template's words are the engine's: a reworded report would no longer be recognised (and show
    English), so every piece of a template between its fields is in ragkit's own code outside the teaching layer."""
    engine = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "ragkit").rglob("*.py") if TEACH not in p.parents)
    engine = re.sub(r"\"\s*\n\s*f?\"", "", engine)  # a message written over lines as adjacent literals, joined
    missing = {}
    for en in engine_templates():
        pieces = [literal for literal, *_ in string.Formatter().parse(en) if len(literal.strip(" (),:.")) > 3]
        lost = [piece for piece in pieces if piece.strip() not in engine]
        if lost:
            missing[en] = lost
    assert not missing, f"engine templates whose words the engine no longer writes: {missing}"
    assert engine_templates(), "no engine templates: language.ENGINE moved?"


def test_what_the_engine_writes_comes_out_dutch_reasons_and_all(tmp_path):
    """08's reports and errors: a folder with a broken and an empty file, and an index stale for two reasons."""
    from ragkit import default_embedder, index, load_corpus

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "01-good.md").write_text("# Good\n\n## One\n\nA sentence.\n", encoding="utf-8")
    (folder / "14-broken.md").write_bytes("# Café\n\nCafé au lait.\n".encode("latin-1"))
    (folder / "15-empty.md").write_text("")
    report = index.status(load_corpus(folder), tmp_path / "index", index.current_stamp(default_embedder()))
    english = report.lines()
    with language.speaking("nl"):
        dutch = language.translated(english).splitlines()
        stale = language.translated(
            "index /x is stale for: 04-a (changed since it was indexed), 12-b (embedded under another stamp "
            "(differs in model)). Run `python -m ragkit index update --corpus c --out /x`"
        )
    assert len(dutch) == len(english) and all(d != e for d, e in zip(dutch, english, strict=True)), dutch
    assert any("MISLUKT 14-broken: geen geldige UTF-8 bij byte" in d for d in dutch), dutch
    assert any("MISLUKT 15-empty: leeg bestand" in d for d in dutch), dutch
    assert stale == (
        "index /x is stale voor: 04-a (gewijzigd sinds het werd geïndexeerd), 12-b (geëmbed onder een andere stempel "
        "(verschilt in model)). Voer `python -m ragkit index update --corpus c --out /x` uit"
    )
    assert language.translated(english) == "\n".join(english)  # English kernel: as the engine wrote it
    with language.speaking("nl"):
        assert language.translated("something the engine never wrote (really)") == (
            "something the engine never wrote (really)"
        )


def mismatched(catalogue) -> dict[str, object]:
    """The entries whose translation fills other fields than its English template, or cannot be parsed at all."""
    unlike: dict[str, object] = {}
    for en, message in catalogue.items():
        try:
            theirs = fields(message.translated)
        except ValueError as exc:  # a stray brace
            unlike[en] = str(exc)
            continue
        if fields(en) != theirs:
            unlike[en] = (sorted(fields(en)), sorted(theirs))
    return unlike


BROKEN = {
    "{n} of {k}": "{n} van de {m}",
    "{cut:.3f} here": "{cut:.3f hier",
    "at {cut}": "bij {cut:.1f}",
    "{a} and {b}": "{a} en {}",
}
"""Translations a careless edit could write: a renamed field, a stray brace, another format, a positional field."""


def test_the_catalogue_has_no_broken_entry():
    assert language.problems("nl") == ()


def test_a_broken_entry_or_file_is_left_out_and_named_not_raised(tmp_path):
    path = tmp_path / "nl.toml"
    path.write_text(
        '[[message]]\nen = "yes"\nnl = "ja"\n\n[[message]]\nen = "no"\n\n'
        '[[message]]\nnl = "geen"\n\n[[message]]\nen = "yes"\nnl = "jawel"\n',
        encoding="utf-8",
    )
    messages, found = language.read(path, "nl")
    assert messages == {"yes": language.Message("yes", "ja")}  # the first of two entries for one template
    assert len(found) == 3 and "'no' needs `en` and `nl`" in found[0] and "number 3 needs" in found[1]
    assert "translates 'yes' twice" in found[2]
    path.write_text("[[message]\n", encoding="utf-8")
    messages, found = language.read(path, "nl")
    assert messages == {} and len(found) == 1 and "cannot be read" in found[0]


def test_a_broken_translation_falls_back_to_english_and_the_field_check_names_it(monkeypatch):
    broken = {en: language.Message(en, nl) for en, nl in BROKEN.items()}
    monkeypatch.setattr(language, "catalogue", lambda lang: broken if lang == "nl" else {})
    with language.speaking("nl"):
        # English words, the kernel's numbers: the sentence a student sees when its translation is broken
        assert language.say("{n} of {k}", n=3, k=4) == "3 of 4"
        assert language.say("{cut:.3f} here", cut=0.675) == "0,675 here"
        assert language.say("at {cut}", cut="none") == "at none"
        assert language.say("{a} and {b}", a=1, b=2) == "1 and 2"
        with pytest.raises(KeyError):  # the English template itself unfilled: the caller's bug, not hidden
            language.say("{n} of {k}", n=3)
    assert set(mismatched(broken)) == set(BROKEN)


DUTCH_TWINS = [twin_path(NOTEBOOKS, name) for name in COURSE]
"""The Dutch notebooks (their py:percent twins): every sentence ragkit writes in them must have its Dutch."""


@pytest.fixture(scope="module")
def shown_in_dutch() -> dict[str, list[str]]:
    """The functions whose sentences a Dutch notebook shows, found by reading the notebooks and ragkit with ast:
    what their cells use of ragkit.teach (narrate.*, plots.*, widgets.*, tables.*, claims.*, reminders.*, Quiz,
    check_threshold_choice, course.truncation_note) and every helper those use; by module, as all_templates names it."""
    found: dict[str, list[str]] = {}
    for twin in DUTCH_TWINS:
        for obj in reach.reached(twin):
            module, name = reach.qualified(obj)
            found.setdefault(module, []).append(name)
    return found


def templates_of(found: dict[str, dict[str, list[object]]], module: str, function: str) -> list[object]:
    """The templates a function writes, those of the functions nested in it included."""
    return [
        t
        for name, ts in found.get(module, {}).items()
        if name == function or name.startswith(function + ".")
        for t in ts
    ]


def wordless(template: str) -> bool:
    """A template with no word outside its fields, tags, entities and code fences (``{cut:.3f}``, a quoted chunk's
    ```` ```text ````): nothing to translate."""
    rest = "".join(literal for literal, *_ in string.Formatter().parse(template))
    return not re.search(r"[A-Za-z]", re.sub(r"<[^>]*>|&\w+;|```\w*", "", rest))


def test_every_template_a_dutch_notebook_shows_has_its_dutch(shown_in_dutch):
    found = all_templates()
    catalogue = language.catalogue("nl")
    untranslated = {
        f"{m}.{f}": t
        for m, names in shown_in_dutch.items()
        for f in names
        for t in templates_of(found, m, f)
        if isinstance(t, str) and not wordless(t) and t not in catalogue
    }
    assert not untranslated, f"templates the Dutch notebooks show without a Dutch entry in nl.toml: {untranslated}"


def test_what_the_dutch_notebooks_show_is_found_through_helpers_classes_and_the_quiz(shown_in_dutch):
    """The derivation reaches what a cell never names (a figure's caption, its display hook, the quiz's builders, a
    narrator's helper, the check's feedback), in every notebook of the course."""
    expected = {
        "lesson.plots.figure": {"caption", "Described._ipython_display_", "share"},
        "lesson.plots.costs": {"_cost_words"},
        "lesson.quiz.asking": {"Quiz.check"},
        "lesson.quiz.retrieving": {"start_here_questions"},
        "lesson.quiz.answering": {"thresholds_questions", "_at_the_cut"},
        "lesson.quiz.question": {"yes_no"},
        "lesson.narrate.thresholds": {"_quoted", "near_miss"},
        "frames": {"truth"},
        "lesson.widgets": {"ThresholdExplorer.update", "kind_of"},
        "course": {"Course.truncation_note"},
        "exercises.feedback": {"Feedback.outcome", "Feedback._lines", "record"},
        "exercises.ex2_threshold": {"check_threshold_choice"},
        "lesson.tables": {"_headings", "no_cut"},
    }
    missing = {m: names - set(shown_in_dutch.get(m, ())) for m, names in expected.items()}
    assert not any(missing.values()), f"the derivation misses: {missing}"
    # the whole course is Dutch: every notebook's narrators and quiz are reached, 01's and 04's among them
    assert (
        "chunking_questions" in shown_in_dutch["lesson.quiz.retrieving"] and "lesson.narrate.chunking" in shown_in_dutch
    )
    assert "lesson.narrate.reranking" in shown_in_dutch and "lesson.narrate.phrasing" in shown_in_dutch


def test_a_template_without_words_needs_no_entry_and_one_with_words_does():
    assert wordless("{cut:.3f}") and wordless("<li><code>{d:.3f}</code> {q} <i>({k})</i> &rarr; {x}</li>")
    assert not wordless("{k} of {n}") and not wordless("<b>right</b>")
    assert wordless("\n\n```text\n{content}\n```") and not wordless("```text\nthe {content}\n```")


def test_every_figure_the_teachers_tools_write_has_its_dutch():
    """A figure's template with words and no Dutch would write English into the Dutch guide (teacher/rendering.py)."""
    catalogue = language.catalogue("nl")
    templates = {t for ts in tool_templates().values() for t in ts if isinstance(t, str)}
    assert {"over the ceiling", "{rest} and {last}"} <= templates, "the scan no longer finds the tools' figures"
    missing = sorted(t for t in templates if not wordless(t) and t not in catalogue)
    assert not missing, f"figures of teacher/ without their Dutch in ragkit/teach/locale/nl/: {missing}"


def test_a_pair_of_settings_is_written_with_a_semicolon_in_dutch():
    """(1,2; 0,75), not (1,2, 0,75): with decimal commas a comma cannot also part the two values (03b, the guide)."""
    from ragkit.teach.lesson.settings import setting_value

    assert setting_value((1.2, 0.75)) == "(1.2, 0.75)"
    with language.speaking("nl"):
        assert setting_value((1.2, 0.75)) == "(1,2; 0,75)"


def test_speaking_restores_the_language_it_found_even_after_an_error():
    language.use("nl")
    with pytest.raises(ZeroDivisionError), language.speaking("en"):
        assert language.current() == "en"
        raise ZeroDivisionError("inside the block")
    assert language.current() == "nl"
    with pytest.raises(RagkitError, match="pick one of"), language.speaking("fr"):
        pass
    assert language.current() == "nl"


# What the pilot's functions write, in both languages

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
FENCE = re.compile(r"```.*?```", re.S)
QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|(?<!\*)\*(?!\*)[^*\n]+(?<!\*)\*(?!\*)|<li>.*?</li>')
"""Quoted corpus text and queries (in quotes, in italics as the narrators set them, or listed as the explorer's
bluffing queries with their sections): English in both editions."""


def shown(value) -> str:
    """The text a student sees of a function's result."""
    if isinstance(value, Markdown | HTML):
        return value.data
    if hasattr(value, "value"):  # an ipywidgets HTML
        return value.value
    return str(value)


def numbers(text: str, dutch: bool = False) -> Counter:
    """The numbers of a text outside its fenced blocks (quoted chunks), Dutch ones written back the English way.

    A number in a code span is what a student types into Python, so it keeps its decimal point in Dutch too.
    """
    text = re.sub(r"<[^>]*>|&#?\w+;", " ", FENCE.sub(" ", text))  # tags and entities carry none
    if dutch:
        text = exponents(text)  # 1,94 · 10⁻⁵ is 1.94e-05
    code = [n for span in re.findall(r"`([^`]*)`", text) for n in NUMBER.findall(span)] if dutch else []
    found = NUMBER.findall(re.sub(r"`[^`]*`", " ", text) if dutch else text)
    if dutch:
        found = [n.translate(str.maketrans({".": ",", ",": "."})) for n in found]
    return Counter(found + code)


def both(render) -> tuple[str, str]:
    """``render()`` shown in English and in Dutch."""
    with language.speaking("en"):
        english = shown(render())
    with language.speaking("nl"):
        dutch = shown(render())
    return english, dutch


def assert_dutch(english: str, dutch: str, name: str) -> None:
    """The Dutch carries the English figures and quotes, differs from it, and is Dutch where it is long enough."""
    assert dutch != english, f"{name}: still English under use('nl'): {dutch[:120]}"
    assert numbers(dutch, dutch=True) == numbers(english), f"{name}: other numbers in Dutch\n{english}\n{dutch}"
    assert FENCE.findall(dutch) == FENCE.findall(english), f"{name}: the quoted chunk changed"
    share = dutch_share(QUOTED.sub(" ", dutch))
    assert share is None or share >= 0.8, f"{name}: only {share:.0%} of its function words are Dutch: {dutch}"


def test_the_quick_sentences_come_out_dutch_with_the_same_figures(tmp_path, monkeypatch):
    from ragkit.teach.course import Course
    from ragkit.teach.exercises import Feedback, check_threshold_choice, record
    from ragkit.teach.lesson import reminders

    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    truncated = SimpleNamespace(truncated={"E": (3, 1068, 256), "F": (12, 1068, 256)})
    cases = {
        "strategy_letters": reminders.strategy_letters,
        "truncation_note": lambda: Course.truncation_note(truncated),  # type: ignore[arg-type]
        "check_threshold_choice, no answer yet": lambda: check_threshold_choice(None, None),  # type: ignore[arg-type]
        "check_threshold_choice, not a course": lambda: check_threshold_choice("course", 0.6),  # type: ignore[arg-type]
        "Feedback": lambda: Feedback(False, ("a note",), hints=("a hint",))._repr_markdown_(),
    }
    for name, render in cases.items():
        assert_dutch(*both(render), name)
    english, dutch = both(lambda: str(check_threshold_choice(None, None)))  # type: ignore[arg-type]
    # the bounds are what a Dutch student types into Python: a decimal point, and why (0,5 would be a tuple)
    assert "between 0.3 and 1.0" in english and "tussen `0.3` en `1.0`" in dutch and dutch.startswith("NOG NIET")
    assert "met een punt" in dutch and "tuple" in dutch
    # a results file that cannot be written is a note, in the kernel's language
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "missing" / "deeper" / "results.jsonl"))
    (tmp_path / "missing").write_text("a file where a folder should be")
    english, dutch = both(lambda: record("ex2", Feedback(False)).notes[-1])
    assert english.startswith("your result was not recorded") and dutch.startswith("je resultaat is niet vastgelegd")


def test_the_sentences_moved_out_of_the_notebooks_code_cells_come_out_dutch(tmp_path, monkeypatch):
    from ragkit.data import OutOfDomain
    from ragkit.plumbing.models import HubModel
    from ragkit.teach.lesson import narrate
    from ragkit.threshold import SweepRow

    model = HubModel("nobody/no-such-model", "0" * 40, "RAGKIT_NO_SUCH_MODEL")
    ood = [
        OutOfDomain("o1", "how do i stream tokens", "adjacent", "streaming"),
        OutOfDomain("o2", "best paella rice", "absurd", "cooking"),
    ]
    half = SimpleNamespace(questions=[0] * 16, queries=[0] * 32, out_of_domain=[0] * 15)
    row = SweepRow(
        cut=0.675,
        bluffs=3,
        out_of_domain=15,
        refused=5,
        answered_with_needle=20,
        answered_without_needle=7,
        in_domain=32,
    )
    cases = {
        "model_here, missing": lambda: narrate.model_here(model),
        "out_of_domain_kinds": lambda: narrate.out_of_domain_kinds(ood),
        "ground_truth_problems": lambda: narrate.ground_truth_problems(["a problem"]),
        "chapter_figure": narrate.chapter_figure,
        "query_line": lambda: narrate.query_line(ood[1]),
        "gate_kept": lambda: narrate.gate_kept({None: 4, 0.675: 1, 0.525: 0}),
        "ex2_rules": lambda: narrate.ex2_rules(half, half),
        "cost_on_tune": lambda: narrate.cost_on_tune(row),
    }
    for name, render in cases.items():
        assert_dutch(*both(render), name)
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setenv(model.env, str(tmp_path))
    english, dutch = both(lambda: narrate.model_here(model))
    assert f"found at `{tmp_path}`" in english and f"gevonden in `{tmp_path}`" in dutch  # a path keeps its dots
    english, dutch = both(lambda: narrate.gate_kept({None: 4, 0.675: 1}))
    assert "**4** with no cut, **1** at cut 0.675" in english and "**4** zonder cut, **1** bij cut 0,675" in dutch
    english, dutch = both(lambda: narrate.out_of_domain_kinds(ood))
    assert "**1** adjacent, **1** absurd" in english and "**1** aangrenzend, **1** absurd" in dutch


def test_the_headings_of_the_tables_for_people_come_out_dutch_and_the_data_stay():
    import pandas as pd

    from ragkit.teach.lesson import tables

    with language.speaking("en"):
        headings = list(tables._headings())
    frame = pd.DataFrame([range(len(headings))], columns=headings).set_index(["kind", "topic"])
    with language.speaking("en"):
        english = tables.for_people(frame).data
        assert english.equals(frame) and list(english.columns) == list(frame.columns)
        assert list(english.index.names) == ["kind", "topic"] and tables.no_cut() == "none"
    with language.speaking("nl"):
        dutch = tables.for_people(frame).data
        assert tables.no_cut() == "geen"
    assert (dutch.to_numpy() == frame.to_numpy()).all() and list(dutch.index.names) == ["soort", "onderwerp"]
    kept = {"needles", "needle", "document", "queries"}  # the chapter's own words, or the same word in Dutch
    same = [c for c, d in zip(frame.columns, dutch.columns) if c == d and c not in kept]
    assert not same, f"headings still English under use('nl'): {same}"
    assert {"cosine-afstand", "supportticket", "sectie", "rang", "tekens"} <= set(dutch.columns)
    untouched = pd.DataFrame({"doc_id": [1], "cut": [0.5]}).set_index("doc_id")
    with language.speaking("nl"):
        assert tables.for_people(untouched).data.equals(untouched.rename_axis(index="document"))  # formats.header


def test_the_truncation_note_stays_empty_when_nothing_was_truncated():
    from ragkit.teach.course import Course

    assert both(lambda: Course.truncation_note(SimpleNamespace(truncated={}))) == ("", "")  # type: ignore[arg-type]


# On the course's own results (the warm cache: its vectors are read, not computed)


@pytest.fixture(scope="module")
def course():
    import ragkit.teach.course

    return ragkit.teach.course.load(progress=False)


@pytest.fixture(scope="module")
def sweep(course):
    return course.sweep("E", "dense")


@pytest.mark.slow
def test_the_narrators_of_the_pilot_come_out_dutch_with_the_same_figures(course, sweep):
    import pandas as pd

    from ragkit.corpus import corpus_stats
    from ragkit.data import validate
    from ragkit.teach.exercises import cost_table, threshold_halves
    from ragkit.teach.lesson import claims, narrate
    from ragkit.threshold import DEFAULT_CUT, STRICT_CUT

    s = sweep
    tune, _judge = threshold_halves(s)
    stats = pd.DataFrame(corpus_stats(course.corpus)).set_index("id")
    france = next(b for b in s.bluffs(None) if b.query.query == "what is the capital of france")
    cases = {
        "corpus_loaded": lambda: narrate.corpus_loaded(course.corpus, stats.loc["total"]),
        "read_a_file": lambda: narrate.read_a_file(course.corpus),
        "ground_truth": lambda: narrate.ground_truth(course.questions, course.queries, course.corpus),
        "distributions": lambda: narrate.distributions(s),
        "crossings": lambda: narrate.crossings(s),
        "strict_cut": lambda: narrate.strict_cut(s),
        "sweep_shape": lambda: narrate.sweep_shape(s),
        "near_miss": lambda: narrate.near_miss(s, s.bluffs(None)[0]),
        "literal_match": lambda: narrate.literal_match(s, france),
        "literal_match, refused": lambda: narrate.literal_match(s, france, (None, STRICT_CUT)),
        "perfect_cut": lambda: narrate.perfect_cut(tune),
        "cost_valleys": lambda: narrate.cost_valleys(cost_table(tune), tune),
        "guessing_sentence": lambda: claims.guessing_sentence(claims.guessing(s.rows())),
        "out_of_domain_kinds": lambda: narrate.out_of_domain_kinds(course.out_of_domain),
        "query_line": lambda: narrate.query_line(s.out_of_domain[int(s.nearest_out.argmax())]),
        "ex2_rules": lambda: narrate.ex2_rules(tune, _judge),
        "cost_on_tune": lambda: narrate.cost_on_tune(tune.at(DEFAULT_CUT)),
        "ground_truth_problems": lambda: narrate.ground_truth_problems(
            validate(course.corpus, course.questions, course.out_of_domain)
        ),
    }
    for name, render in cases.items():
        assert_dutch(*both(render), name)
    english, dutch = both(lambda: claims.guessing(s.rows([None, DEFAULT_CUT])).to_string())
    assert "binary accuracy" in english and "binaire accuracy" in dutch and "geen" in dutch


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["notebooks", "notebooks/nl"])
@pytest.mark.parametrize("spoken", ["en", "nl"])
def test_the_read_a_file_link_opens_the_file_from_the_notebooks_folder_in_either_language(
    course, folder, spoken, monkeypatch
):
    """The link is found from the kernel's folder, the notebook's: the Dutch 00 lives one folder deeper
    (notebooks/nl/), and an English 00 may run in a kernel that speaks Dutch (RAGKIT_LANGUAGE=nl)."""
    from ragkit.teach.lesson import narrate

    monkeypatch.chdir(ROOT / folder)
    with language.speaking(spoken):
        link = re.search(r"\]\(([^)]+)\)", narrate.read_a_file(course.corpus).data).group(1)
    assert (Path.cwd() / link).resolve().is_file(), link


@pytest.mark.slow
def test_the_threshold_explorer_and_the_cut_plots_come_out_dutch(sweep):
    from ragkit.teach.exercises import threshold_halves
    from ragkit.teach.lesson import plots, widgets

    tune, _judge = threshold_halves(sweep)

    def explorer(half, cut):
        def render():
            e = widgets.ThresholdExplorer(half, cut)
            return "\n".join(
                [
                    e.slider.description,
                    e.direction.value,
                    e.bluffs.value,
                    e.refused.value,
                    e.answered.value,
                    e.bluff_list.value,
                    e.widget().children[5].value,
                ]
            )

        return render

    def figure(make):
        def render():
            fig = make()
            layout = fig.layout
            names = " / ".join(trace.name for trace in fig.data)
            steps = " / ".join(
                str(a["text"])
                for step in (layout.sliders[0].steps if layout.sliders else ())
                for a in step.args[0]["annotations"]
            )
            return "\n".join(
                [
                    str(layout.title.text),
                    str(layout.xaxis.title.text),
                    str(layout.yaxis.title.text),
                    names,
                    steps,
                    plots.caption(fig.description),
                ]
            )

        return render

    import pandas as pd

    from ragkit.teach.exercises import EX2, cost_table

    costs = cost_table(tune)
    halves = pd.concat([costs.assign(half="tune"), cost_table(_judge).assign(half="judge")])
    cases = {
        "ThresholdExplorer": explorer(sweep, 0.675),
        "ThresholdExplorer on tune": explorer(tune, 0.7),
        "ThresholdExplorer, nothing bluffs": explorer(sweep, 0.3),
        "distance_histogram": figure(lambda: plots.distance_histogram(sweep)),
        "threshold_slider": figure(lambda: plots.threshold_slider(sweep)),
        "bluffs_and_refusals": figure(lambda: plots.bluffs_and_refusals(tune)),
        "cost_curve": figure(lambda: plots.cost_curve(costs)),
        "cost_halves": figure(lambda: plots.cost_halves(halves)),
    }
    for name, render in cases.items():
        english, dutch = both(render)
        assert_dutch(english, dutch, name)
        if not name.startswith("ThresholdExplorer"):  # a figure's first line is its title
            assert english.splitlines()[0] != dutch.splitlines()[0], f"{name}: its title is English"
    english, dutch = both(figure(lambda: plots.bluffs_and_refusals(tune)))
    assert "What each cut costs" in english and "Wat elke cut kost" in dutch and "strengere cut" in dutch
    with language.speaking("nl"):
        fig = plots.cost_curve(costs)
    assert (fig.layout.legend.title.text, fig.layout.yaxis.title.text) == ("weigeringen", "kosten")
    legend = {trace.name for trace in fig.data if trace.showlegend is not False}
    assert legend >= {"binnen het plafond voor weigeringen", "boven het plafond voor weigeringen"}, legend
    assert not legend & {"ja", "nee", "True", "False"}  # the legend says in words what a colour means
    too_strict = costs[costs.refused > EX2.max_refused * len(tune.queries)]
    english, dutch = both(lambda: plots.cost_curve(too_strict).description)
    assert english.endswith("No cut of these stays within the refusal ceiling.") and "nan" not in english
    assert dutch.endswith("Geen van deze cuts blijft binnen het plafond voor weigeringen.")


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["00", "06"])
def test_the_quiz_comes_out_dutch_with_the_same_figures_and_the_same_order(course, notebook, tmp_path, monkeypatch):
    from ragkit.teach.lesson.quiz import Quiz

    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))

    def quiz():
        q = Quiz(notebook, course, student="ana")
        for question, choice in zip(q.questions, q.choices):
            choice.value = next(o.text for o in question.options if not o.right)  # a wrong answer each: all feedback
        q.check()
        return q

    with language.speaking("en"):
        english = quiz()
    with language.speaking("nl"):
        dutch = quiz()
    assert [[o.right for o in q.options] for q in dutch.questions] == [
        [o.right for o in q.options] for q in english.questions
    ]  # the same student sees the same order
    assert dutch.button.description != english.button.description
    for i, (en, nl) in enumerate(zip(english.questions, dutch.questions)):
        assert_dutch(en.prompt, nl.prompt, f"quiz {notebook}, question {i + 1}")
        for a, b in zip(en.options, nl.options):
            if not a.text.isdigit():
                assert_dutch(a.text, b.text, f"quiz {notebook}, question {i + 1}, option")
            assert_dutch(a.why, b.why, f"quiz {notebook}, question {i + 1}, feedback")
    for en, nl in zip(english.feedback, dutch.feedback):
        assert_dutch(en.value, nl.value, f"quiz {notebook}, feedback")
    assert_dutch(english.score.value, dutch.score.value, f"quiz {notebook}, score")


# Exercise 2's check, in the student's language; the grader's table in English


def _cheapest_within_ceiling(course) -> float:
    from ragkit.teach.exercises import EX2, cost_table, threshold_halves

    tune, _judge = threshold_halves(course.sweep(EX2.strategy, EX2.retriever))
    costs = cost_table(tune)
    allowed = costs[costs["within ceiling"]]
    return float(allowed.cut[allowed.cost.idxmin()])


@pytest.mark.slow
def test_ex2s_check_speaks_dutch_on_a_wrong_and_a_right_answer(course, tmp_path, monkeypatch):
    from ragkit.teach.exercises import check_threshold_choice

    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "results.jsonl"))
    answers = {"too strict": 0.3, "too loose": 1.0, "right": _cheapest_within_ceiling(course)}
    for name, cut in answers.items():
        with language.speaking("en"):
            english = check_threshold_choice(course, cut)
        with language.speaking("nl"):
            dutch = check_threshold_choice(course, cut)
        assert english.passed == dutch.passed == (name == "right") and english.numbers == dutch.numbers
        assert len(english.notes) == len(dutch.notes) and len(english.hints) == len(dutch.hints)
        assert (name == "right") or english.hints, name  # both wrong answers get a hint
        for a, b in zip(english.notes + english.hints, dutch.notes + dutch.hints):
            assert_dutch(a, b, f"ex2 {name}")
        with language.speaking("nl"):
            text, markdown = str(dutch), dutch._repr_markdown_()
        head = "GESLAAGD" if name == "right" else "NOG NIET"
        assert text.startswith(head) and f">{head}</b>" in markdown, text
        assert ("- tip: " in text) == bool(dutch.hints)
        with language.speaking("en"):
            assert str(english).startswith("PASSED" if name == "right" else "NOT YET")


@pytest.mark.slow
def test_the_graders_table_stays_english_whatever_the_kernel_speaks(course, monkeypatch, tmp_path):
    from ragkit.teach.grading.handed_in import Submission
    from ragkit.teach.grading.judging import judged
    from ragkit.teach.grading.sandbox import SandboxRun

    submission = Submission("ana", "ex2", Path("ex2-choose-a-threshold.ipynb"))
    answers = SandboxRun(answers=json.dumps({"my_cut": {"value": 0.3}}))
    # each judgement with a results file of its own, as grade() gives its checks: a check's note counts the attempts
    # in its results file, and the run's shared file holds every other test's attempts
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "english.jsonl"))
    english = judged(submission, answers, course)
    assert english.reason.startswith("the rules: bluff cost")
    monkeypatch.setenv("RAGKIT_RESULTS", str(tmp_path / "dutch.jsonl"))
    monkeypatch.setenv("RAGKIT_LANGUAGE", "nl")
    language.use("nl")  # as a Dutch notebook does, should the grader ever run in its kernel
    dutch_kernel = judged(submission, answers, course)
    assert (dutch_kernel.grade, dutch_kernel.reason, dutch_kernel.numbers) == (
        english.grade,
        english.reason,
        english.numbers,
    )
    assert language.current() == "nl"  # the grader spoke English for its table only


def test_a_students_text_cut_short_in_feedback_says_so_in_the_kernels_language():
    from ragkit.teach.untrusted import readable
    from ragkit.terminal import shown as engine_shown

    long = "ticket " * 300 + "\x1b[2J"
    english, dutch = both(lambda: readable(long))
    assert english == engine_shown(long) and english.endswith("... (2,104 characters)")
    assert dutch.endswith("... (2.104 tekens)") and dutch.startswith("ticket ticket")
    assert both(lambda: readable("a\x1bb")) == ("a\\x1bb", "a\\x1bb")  # short: escaped, nothing added


def test_dutch_writes_a_power_of_ten_and_an_interval_the_dutch_way():
    """8,30 · 10⁻⁷, not 8,30e-07; an interval [0,671; 0,855], never a comma between two decimal-comma numbers."""
    with language.speaking("nl"):
        assert language.say("{x:.2e}", x=8.3e-7) == "8,30 · 10⁻⁷"
        assert language.say("{x:.3g}", x=1.94e-05) == "1,94 · 10⁻⁵" and language.say("{x:.3g}", x=0.0123) == "0,0123"
        assert language.say("{x:.1e}", x=12345.0) == "1,2 · 10⁴"
        assert language.say("{x:.1e}", x=0.0) == "0"  # not 0,0 · 10⁰
    assert language.say("{x:.2e}", x=8.3e-7) == "8.30e-07" and language.say("{x:.1e}", x=0) == "0"
    comma = re.compile(r"\{[a-z_]+:\.\d+[fg]\}\**, \**\{[a-z_]+:\.\d+[fg]\}\**\]")
    between = [m.translated for m in language.catalogue("nl").values() if comma.search(m.translated)]
    assert not between, f"Dutch intervals written with a comma between two decimal-comma numbers: {between}"


def test_dutch_separates_a_list_of_decimal_comma_numbers_with_semicolons():
    """0,5; 0,9 and not 0,5, 0,9 (03b's swept values, the quiz's Holm list): English keeps its commas."""
    from ragkit.teach.lesson.narrate import tuning

    with language.speaking("nl"):
        assert language.listed(["0,5", "0,9"]) == "0,5; 0,9"
        assert tuning._values([0.5, 0.9]) == "0,5; 0,9"
        grid = tuning._values([(0.5, 0.3), (0.5, 0.75), (1.2, 0.3), (1.2, 0.75)])
        assert "k1 uit 0,5; 1,2 met b uit 0,3; 0,75" in grid
    assert tuning._values([0.5, 0.9]) == "0.5, 0.9"
