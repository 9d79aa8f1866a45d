"""The classroom layer: the notebooks' from-scratch cells agree with ragkit and the libraries; objectives; quizzes."""

import ast
import math
import random
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from scipy.stats import binomtest

from ragkit.chunking import pack, sections
from ragkit.fusion import rrf, rrf_many
from ragkit.lexical import BM25, tokenize

from conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
TWINS = NOTEBOOKS / "twins"
MAIN = sorted(TWINS.glob("0*.py"))


def by_hand(notebook: str, what: str) -> tuple[dict, str]:
    """Run the notebook cell that starts with '# by hand: <what>'; return what it defined, and its source."""
    nb = jupytext.read(TWINS / f"{notebook}.py")
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(f"# by hand: {what}"))
    namespace: dict = {}
    exec(compile(cell.source, f"{notebook}: by hand: {what}", "exec"), namespace)
    return namespace, cell.source


def code_lines(source: str, name: str) -> int:
    """Lines of a function's body in a cell: no def line, docstring, comment-only or blank lines."""
    fn = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) else fn.body
    lines = source.splitlines()[body[0].lineno - 1 : fn.end_lineno]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def scratch(notebook: str, what: str, name: str, limit: int):
    namespace, source = by_hand(notebook, what)
    assert code_lines(source, name) <= limit, f"{name} is longer than {limit} lines"
    return namespace[name]


def test_boundaries_by_hand_matches_ragkit_chunk_for_chunk(corpus):
    fn = scratch("01-chunking", "the boundaries rule", "boundaries_by_hand", 25)
    bodies = [doc.text[s.start : s.end] for doc in corpus.documents for s in sections(doc.text)]
    tricky = [
        "one.\n\n" + "A long sentence that goes on. " * 40 + "\n\nshort tail",
        "x" * 1300,
        "",
        "\n\n\n",
        "a\nb\n\nc" * 200,
        "No full stop at all " * 60,
    ]
    for body in bodies + tricky:
        for size in (512, 120, 2000):
            assert fn(body, size) == pack(body, size), (body[:60], size)
    for size in (512, 120):  # a paragraph of exactly the budget still packs as a paragraph
        body = "a b.\n\n" + "w" * size + "\n\nnext one."
        assert fn(body, size) == pack(body, size)


def test_sign_test_by_hand_matches_scipy():
    fn = scratch("02-dense-retrieval", "the sign test", "sign_test_by_hand", 5)
    for n in range(1, 61):
        for w in range(n + 1):
            assert fn(w, n - w) == pytest.approx(binomtest(w, n, 0.5).pvalue, abs=1e-12)
    assert fn(0, 0) == 1.0


class ChapterBM25(BM25Okapi):
    def _calc_idf(self, nd):
        self.idf = {w: math.log(1 + (self.corpus_size - f + 0.5) / (f + 0.5)) for w, f in nd.items()}


def test_bm25_by_hand_matches_ragkit_and_rank_bm25(corpus):
    fn = scratch("03-bm25-and-hybrid", "BM25", "bm25_by_hand", 20)
    texts = [d.text[i : i + 700] for d in corpus.documents for i in range(0, len(d.text), 2500)]
    hand, ours, library = fn(texts), BM25(texts), ChapterBM25([tokenize(t) for t in texts], k1=1.2, b=0.75)
    for query in ["gradient descent learning rate", "the the the", "softmax attention kv cache", "zzz", "BM25 idf"]:
        expected = ours.scores(query)
        assert np.abs(np.array(hand(query)) - expected).max() < 1e-9
        assert np.abs(library.get_scores(tokenize(query)) - expected).max() < 1e-9


def test_rrf_by_hand_matches_ragkit():
    fn = scratch("03-bm25-and-hybrid", "RRF", "rrf_by_hand", 5)
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 40)
        a, b = rng.sample(range(n), n), rng.sample(range(n), n)
        assert fn([a, b]) == rrf([a, b]).tolist() == rrf_many(np.array([a]), np.array([b]))[0].tolist()
        short = [rng.sample(range(60), rng.randint(0, 10)) for _ in range(3)]
        assert fn(short) == rrf(short).tolist()


def test_the_from_scratch_cells_assert_their_agreement_in_the_notebook():
    for name, asserted in (
        ("01-chunking", "by_hand == by_ragkit"),
        ("02-dense-retrieval", "worst < 1e-9"),
        ("03-bm25-and-hybrid", "diff_hand < 1e-9 and diff_library < 1e-9"),
        ("03-bm25-and-hybrid", "same == len(texts)"),
    ):
        assert re.search(rf"^assert {re.escape(asserted)}", (TWINS / f"{name}.py").read_text(), re.M), name


def objectives_in_guide() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "teacher-guide.md").read_text()
    out = {}
    for m in re.finditer(r"^### (\d\d[a-z]?-[a-z0-9-]+)\n(.*?)(?=^### |\Z)", text, re.M | re.S):
        block = m.group(2).split("**Learning objectives.**", 1)
        if len(block) == 2:
            out[m.group(1)] = re.findall(r"^- (.+)$", block[1].split("\n\n", 2)[1], re.M)
    return out


@pytest.mark.parametrize("path", MAIN, ids=lambda p: p.stem)
def test_the_title_then_the_guides_learning_objectives_open_the_notebook(path):
    title, first = jupytext.read(path).cells[:2]  # title first, as the book shows it (book.prepare)
    assert title.cell_type == "markdown" and title.source.startswith("# ")
    assert first.cell_type == "markdown" and "Learning objectives" in first.source
    bullets = re.findall(r"^- (.+)$", first.source, re.M)
    assert 3 <= len(bullets) <= 5
    assert objectives_in_guide()[path.stem] == bullets


@pytest.mark.parametrize("path", MAIN, ids=lambda p: p.stem)
def test_the_knowledge_check_is_the_last_cell_before_the_sources(path):
    check, sources = jupytext.read(path).cells[-2:]  # the sources cell is test_sources.py's
    number = path.stem.split("-")[0]  # every notebook asks its own questions (02b reused 02's until issue 66)
    assert check.cell_type == "code" and f'Quiz("{number}", course).widget()' in check.source
    assert sources.cell_type == "markdown" and sources.source.startswith("## Sources\n")


@pytest.fixture(scope="module")
def course():
    import ragkit.teach.course

    return ragkit.teach.course.load(progress=False)


@pytest.mark.slow
def test_every_quiz_has_three_to_five_questions_one_right_option_and_reasons(course):
    from ragkit.teach.lesson import quiz

    for notebook in quiz.BUILDERS:
        questions = quiz.questions(notebook, course)
        assert 3 <= len(questions) <= 5, notebook
        for q in questions:
            assert sum(o.right for o in q.options) == 1 and len(q.options) >= 2
            assert all(o.why.strip() for o in q.options)
            assert len({o.text for o in q.options}) == len(q.options)


@pytest.mark.slow
def test_computed_quiz_answers_follow_the_course(course):
    from ragkit.answer import DEFAULT_CUT
    from ragkit.teach.lesson import quiz

    def right(nb: str, i: int) -> str:
        return next(o.text for o in quiz.questions(nb, course)[i].options if o.right)

    assert right("01", 0) == str(len(course.evaluation().destroyed["A"]))
    assert right("06", 0) == str(course.sweep().at(DEFAULT_CUT).bluffs)
    c = course.evaluation().compare("E/dense", "C/dense", "Hit@20").test
    assert right("02", 2) == ("yes" if c.p < 0.05 else "no")


@pytest.mark.slow
def test_quiz_widget_explains_every_option(course):
    from ragkit.teach.lesson.quiz import Quiz

    z = Quiz("06", course)
    first = z.questions[0]
    wrong = next(o for o in first.options if not o.right)
    z.choices[0].value = wrong.text
    z.choices[1].value = next(o.text for o in z.questions[1].options if o.right)
    assert z.check() == 1
    assert "not quite" in z.feedback[0].value and all(
        o.why[1:30] in z.feedback[0].value.replace("&#x27;", "'") for o in first.options
    )  # [1:]: the reason is capitalised
    assert "right" in z.feedback[1].value and "choose an option first" in z.feedback[2].value
    assert f"1 of {len(z.questions)} right" in z.score.value


@pytest.fixture()
def results(tmp_path, monkeypatch):
    from ragkit.teach.exercises import results as res

    path = tmp_path / "results.jsonl"
    monkeypatch.setenv("RAGKIT_RESULTS", str(path))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(res, "_student", None)
    return path


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_clicking_the_same_position_everywhere_scores_chance_on_average_over_students(course):
    from ragkit.teach.lesson import quiz

    built = {nb: build(course) for nb, build in quiz.BUILDERS.items()}
    chance = np.mean([1 / len(q.options) for qs in built.values() for q in qs])
    students = [f"student {i}" for i in range(300)]
    for position in range(max(len(q.options) for qs in built.values() for q in qs)):
        scores = [
            np.mean(
                [
                    q.options[min(position, len(q.options) - 1)].right
                    for nb, qs in built.items()
                    for q in quiz.shuffled(qs, nb, name)
                ]
            )
            for name in students
        ]
        assert abs(np.mean(scores) - chance) < 0.03, (position, np.mean(scores), chance)


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_a_student_sees_the_same_order_on_every_reload_and_students_differ(course, results):
    from ragkit.teach.lesson import quiz

    def order(name):
        return [tuple(o.text for o in q.options) for q in quiz.questions("06", course, name)]

    assert order("ana") == order("ana") and order("ana") != order("ben")
    assert order(None) == order("tester")


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_every_notebook_applies_its_idea_to_a_new_case_computed_from_the_course(course):
    from ragkit.statistics import sign_test
    from ragkit.teach.lesson import quiz

    for notebook, build in quiz.BUILDERS.items():
        assert any(q.applies for q in build(course)), notebook

    def applied(nb):
        return next(q for q in quiz.BUILDERS[nb](course) if q.applies)

    def right(q):
        return next(o.text for o in q.options if o.right)

    boundary = applied("01")
    _start, end, window = map(
        int, re.findall(r"\d+", boundary.prompt)[:2] + re.findall(r"starts at (\d+)", boundary.prompt)
    )
    assert right(boundary).startswith("it is destroyed") == (end > window + 512)
    wins, losses = map(int, re.findall(r"(\d+) times", applied("02").prompt))
    detected = sign_test([1] * wins + [0] * losses, [0] * wins + [1] * losses).p < 0.05
    assert right(applied("02")) == (
        "a difference the test detects" if detected else "no difference the test can detect"
    )
    d = float(re.search(r"L2 distance (\d\.\d+)", applied("05").prompt).group(1))
    assert abs(float(right(applied("05"))) - d * d / 2) < 0.002


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_every_worded_distractor_is_a_common_wrong_answer_the_guide_lists(course):
    """A distractor of more than one word, not computed (no digits), is quoted under its notebook in the guide."""
    from ragkit.teach.lesson import quiz

    text = GUIDE.read_text(encoding="utf-8")
    checked = 0
    for notebook, build in quiz.BUILDERS.items():
        name = next(p.stem for p in MAIN if p.stem.startswith(f"{notebook}-"))
        section = text[text.index(f"### {name}\n") :].split("\n### ", 1)[0].split("\n## ", 1)[0]
        listed = " ".join(section[section.index("**Common wrong answers**") :].split())
        for q in build(course):
            for o in q.options:
                if not o.right and len(o.text.split()) > 1 and not re.search(r"\d", o.text):
                    assert f'"{o.text}"' in listed, (notebook, o.text)
                    checked += 1
    assert checked >= 40


@pytest.mark.slow  # the course's vectors, which an empty cache computes (conftest.QUICK_TEXTS)
def test_quiz_scores_are_recorded_like_the_exercises_results(course, results):
    import json

    from ragkit.teach.lesson.quiz import Quiz

    z = Quiz("03", course)
    for q, choice in zip(z.questions, z.choices):
        choice.value = next(o.text for o in q.options if o.right)
    assert z.check() == len(z.questions)
    z.check()
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["exercise"], r["student"], r["attempt"], r["passed"]) for r in rows] == [
        ("quiz 03", "tester", 1, True),
        ("quiz 03", "tester", 2, True),
    ]
    n = len(z.questions)
    assert rows[0]["numbers"] == {"right": n, "answered": n, "questions": n}


GUIDE = ROOT / "docs" / "teacher-guide.md"


def test_the_guides_class_times_are_the_notebooks_at_the_stated_pace():
    from ragkit.teach.classroom.pace import class_minutes, notebook_sections

    text = GUIDE.read_text(encoding="utf-8")
    for path in MAIN:
        block = text[text.index(f"### {path.stem}\n") :]
        found = re.search(
            r"\*\*Class time\.\*\* <!--fig:full_\S+-->(\d+)<!--/fig--> min in full, "
            r"<!--fig:core_\S+-->(\d+)<!--/fig--> min core\.",
            block,
        )
        full, core = map(int, found.groups())
        assert (full, core) == (class_minutes(path), class_minutes(path, core_only=True)), path.stem
        assert any(optional for _, optional, _, _ in notebook_sections(path)), f"{path.stem} marks no section optional"


@pytest.mark.parametrize("slot, minutes", [("A 90-minute session", 90), ("A 3-hour lab", 180)])
def test_each_lesson_plan_adds_up_to_its_slot_from_the_class_times(slot, minutes):
    from ragkit.teach.classroom.pace import EXERCISE_WORK, class_minutes

    text = GUIDE.read_text(encoding="utf-8")
    plan = text[text.index(f"### {slot}") :].split("\n### ", 1)[0].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+)-(\d+) \| (.+?) \| (\d+) \|$", plan, re.M)
    assert rows and rows[0][0] == "0" and rows[-1][1] == str(minutes)
    for (start, end, what, length), following in zip(rows, rows[1:] + [(str(minutes),)]):
        assert int(end) - int(start) == int(length) and end == following[0], what
        if m := re.match(r"(0\d) core", what):
            assert int(length) == class_minutes(TWINS / next(p.name for p in MAIN if p.stem.startswith(m[1])), True)
        if m := re.match(r"Exercise (\d)", what):
            assert int(length) == class_minutes(next((TWINS / "exercises").glob(f"ex{m[1]}-*.py"))) + EXERCISE_WORK
        assert re.match(r"(0\d core|Exercise \d)", what) or "allowance" in what or what.startswith("Questions"), what
    assert f"= {minutes}." in plan


NOTEBOOK_NAMED = r"0\d[a-z]?(?:-[a-z0-9-]+)?: "
"""How a guide's table names a notebook before its sections: ``03: `` or ``03-bm25-and-hybrid: ``."""


def sections_named(rows: list[str], twins: Path, optional: str, everything: str, exercise: str) -> list[tuple]:
    """Each (notebook, section) a guide's table cells name, and whether a heading of that notebook's twin in
    ``twins`` (a ``## `` or ``### ``, its ``optional`` mark aside) is it or starts with it; ``everything`` and an
    ``exercise`` are not sections."""
    found = []
    for row in rows:
        for part in re.split(f"; (?={NOTEBOOK_NAMED})", row):
            notebook, _, sections = part.partition(": ")
            twin = next(twins.glob(f"{notebook.split('-')[0]}-*.py"))
            headings = {
                h.strip().removesuffix(optional)
                for h in re.findall(r"^# #{2,3} (.+)$", twin.read_text(encoding="utf-8"), re.M)
            }
            for name in sections.split("; "):
                name = name.strip().removesuffix(optional)
                if name != everything and not name.startswith(exercise):
                    found.append((notebook, name, any(h == name or h.startswith(name) for h in headings)))
    return found


def test_every_section_the_chapter_map_points_at_exists_in_its_notebook():
    text = GUIDE.read_text(encoding="utf-8")
    table = text[text.index("## Map of the Dutch chapter") : text.index("## Glossary")]
    rows = re.findall(r"^\| \".+?\| .+? \| (.+) \|$", table, re.M)
    named = sections_named(rows, TWINS, " (optional)", "all sections", "exercise")
    assert named and not [(n, s) for n, s, found in named if not found]


def test_every_section_the_dutch_guide_names_is_a_heading_of_its_dutch_notebook():
    """The Dutch guide's map and claims tables name each section by the Dutch notebook's own heading: a heading
    reworded in the Dutch edition leaves no row pointing at a section the Dutch student cannot find."""
    text = (ROOT / "docs" / "nl" / "teacher-guide.md").read_text(encoding="utf-8")
    tables = text[text.index("## Kaart van het Nederlandse hoofdstuk") : text.index("## Woordenlijst")]
    rows = re.findall(f"^\\|.+\\| ((?:{NOTEBOOK_NAMED}.+?)) \\|$", tables, re.M)
    named = sections_named(rows, TWINS / "nl", " (optioneel)", "alle secties", "oefening")
    assert len(named) >= 70 and not [(n, s) for n, s, found in named if not found], len(named)


def test_every_exercise_that_uses_strategy_letters_or_word_pieces_says_what_they_are():
    """An exercise may be opened first: one that names strategies B-F or word pieces shows the reminders."""
    twins = sorted((TWINS / "exercises").glob("*.py")) + sorted((TWINS / "solutions").glob("*.py"))
    for path in twins:
        text = path.read_text(encoding="utf-8")
        if re.search(r"\bstrateg(y|ies) [B-F]\b|\b[B-F]/dense\b", text):
            assert "reminders.strategy_letters()" in text, path
        if "word piece" in text.lower():
            assert "reminders.word_pieces()" in text, path
    assert sum("reminders.strategy_letters()" in p.read_text(encoding="utf-8") for p in twins) >= 8


def test_every_notebook_that_uses_strategy_letters_or_word_pieces_says_what_they_are():
    from ragkit.teach.lesson import reminders

    letters = reminders.strategy_letters()
    assert all(f"**{s}** " in letters for s in "ABCDEF") and "256" in reminders.word_pieces()
    for path in MAIN[2:]:
        text = path.read_text(encoding="utf-8")
        assert "reminders.strategy_letters()" in text, path.stem
        if "word piece" in text.split("reminders.", 1)[1].lower():
            assert "reminders.word_pieces()" in text, path.stem


PROJECT_READING = {8: (0, 1, 2, 3, 4)}
"""The parts of the project page the term plan has the class read in a project week, by place: the title's paragraph
(0), the brief, the steps, the rubric and the worked example (1 to 4), in either language."""


def project_reading(week: int, page: Path) -> list[int]:
    """The minutes a week reads of the project page at the pace (figures' values read, their markers not): none for
    a week that reads nothing."""
    from ragkit.teach.classroom.pace import WORDS_PER_MINUTE

    if week not in PROJECT_READING:
        return []
    parts = re.split(r"^## ", re.sub(r"<!--.*?-->", "", page.read_text(encoding="utf-8")), flags=re.M)
    assert len(parts) == 5, f"{page}: the plan's weeks read its five parts by place"
    return [math.ceil(sum(len(re.findall(r"\w+", parts[i])) for i in PROJECT_READING[week]) / WORDS_PER_MINUTE)]


def test_the_term_plans_minutes_are_its_notebooks_and_exercise_at_the_stated_pace():
    from ragkit.teach.classroom.pace import EXERCISE_WORK, class_minutes

    text = GUIDE.read_text(encoding="utf-8")
    plan = text[text.index("### A ten-week term") :].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \| (.+?) \| (.+?) \| (\d+) \|$", plan, re.M)
    assert [int(r[0]) for r in rows] == list(range(1, 11))
    taught = set()
    for week, notebooks, exercise, graded, minutes in rows:
        assert int(minutes) <= 120, week
        if notebooks.startswith("project "):
            # the project page's parts a week reads, at the pace; the rest of the session is the students' own work
            read = [int(m) for m in re.findall(r"\((\d+) min\)", notebooks)]
            assert read == project_reading(int(week), ROOT / "docs" / "project.md"), week
            assert "allowance" in notebooks and exercise == "-", week
            continue
        if "allowance" in notebooks:
            continue
        names = notebooks.split(", ")
        taught.update(names)
        expected = sum(class_minutes(next(TWINS.glob(f"{n}-*.py"))) for n in names)
        if exercise != "-":
            number = re.fullmatch(r"Exercise (\d)", exercise)[1]
            expected += class_minutes(next((TWINS / "exercises").glob(f"ex{number}-*.py"))) + EXERCISE_WORK
            assert graded.startswith(f"ex{number}:"), week
        assert int(minutes) == expected, (week, int(minutes), expected)
    assert taught == {p.stem.split("-")[0] for p in MAIN}, "every main notebook in some week"
    exercises = {int(n) for r in rows for n in re.findall(r"Exercise (\d)", r[2])}
    assert exercises == {int(p.name[2]) for p in (TWINS / "exercises").glob("ex*.py")}, "every exercise in some week"
    assert [int(r[0]) for r in rows if r[1].startswith("project ")] == [8, 9, 10], "the project's three weeks"
    # the Dutch plan: the same weeks, its minutes from the Dutch twins, its project page read in Dutch
    dutch = (ROOT / "docs" / "nl" / "teacher-guide.md").read_text(encoding="utf-8")
    dutch_plan = dutch[dutch.index("### Een periode van tien weken") :].split("\n## ", 1)[0]
    dutch_rows = re.findall(r"^\| (\d+) \| (.+?) \| (.+?) \| (.+?) \| (\d+) \|$", dutch_plan, re.M)
    assert [(r[0], r[1].split(":")[0]) for r in dutch_rows] == [
        (r[0], r[1].split(":")[0].replace(" of 3", " van 3")) for r in rows
    ]
    nl_twins = TWINS / "nl"
    for week, notebooks, exercise, _, minutes in dutch_rows:
        if notebooks.startswith("project "):
            read = [int(m) for m in re.findall(r"\((\d+) min\)", notebooks)]
            assert read == project_reading(int(week), ROOT / "docs" / "nl" / "project.md"), ("nl", week)
            continue
        expected = sum(class_minutes(next(nl_twins.glob(f"{n}-*.nl.py"))) for n in notebooks.split(", "))
        if exercise != "-":
            number = re.fullmatch(r"Oefening (\d)", exercise)[1]
            expected += class_minutes(next((nl_twins / "exercises").glob(f"ex{number}-*.nl.py"))) + EXERCISE_WORK
        assert int(minutes) == expected <= 120, ("nl", week, int(minutes), expected)
    order = [n for r in rows for n in r[1].split(", ")]
    assert order.index("02b") < order.index("03"), "02b before the first notebook that leans on it"


def test_the_run_times_table_has_every_notebook_and_each_runs_warm_within_the_paces_time_for_its_cells():
    """The guide's Run times (make bench) name every main notebook, exercise and solution, and each one's warm run is
    shorter than the half-minute per code cell the pace gives it (the term plan says so)."""
    from ragkit.teach.classroom.pace import MINUTES_PER_CELL

    text = GUIDE.read_text(encoding="utf-8")
    table = text[text.index("<!-- run-times:") : text.index("<!-- /run-times -->")]
    warm = {name: int(s) for name, s in re.findall(r"^\| (\S+\.ipynb) \| (\d+) s \|", table, re.M)}
    course = [p.relative_to(NOTEBOOKS).as_posix() for p in sorted(NOTEBOOKS.glob("0*.ipynb"))] + [
        p.relative_to(NOTEBOOKS).as_posix()
        for folder in ("exercises", "solutions")
        for p in sorted((NOTEBOOKS / folder).glob("*.ipynb"))
    ]
    assert sorted(warm) == sorted(course), "make bench's run times lack a notebook: run `python -m benchmarks guide`"
    for name, seconds in warm.items():
        cells = sum(c.cell_type == "code" for c in jupytext.read(TWINS / name.replace(".ipynb", ".py")).cells)
        assert seconds < cells * MINUTES_PER_CELL * 60, (name, seconds, cells)
