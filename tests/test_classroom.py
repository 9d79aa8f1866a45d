"""The classroom layer: the notebooks' from-scratch cells agree with ragkit and the libraries; objectives; quizzes."""

import ast
import math
import random
import re

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
    lines = source.splitlines()[body[0].lineno - 1:fn.end_lineno]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def scratch(notebook: str, what: str, name: str, limit: int):
    namespace, source = by_hand(notebook, what)
    assert code_lines(source, name) <= limit, f"{name} is longer than {limit} lines"
    return namespace[name]


def test_boundaries_by_hand_matches_ragkit_chunk_for_chunk(corpus):
    fn = scratch("01-chunking", "the boundaries rule", "boundaries_by_hand", 25)
    bodies = [doc.text[s.start:s.end] for doc in corpus.documents for s in sections(doc.text)]
    tricky = ["one.\n\n" + "A long sentence that goes on. " * 40 + "\n\nshort tail", "x" * 1300, "", "\n\n\n",
              "a\nb\n\nc" * 200, "No full stop at all " * 60]
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
    texts = [d.text[i:i + 700] for d in corpus.documents for i in range(0, len(d.text), 2500)]
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
    for name, asserted in (("01-chunking", "by_hand == by_ragkit"), ("02-dense-retrieval", "worst < 1e-9"),
                           ("03-bm25-and-hybrid", "diff_hand < 1e-9 and diff_library < 1e-9"),
                           ("03-bm25-and-hybrid", "same == len(texts)")):
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
def test_first_cell_states_the_guides_learning_objectives(path):
    first = jupytext.read(path).cells[0]
    assert first.cell_type == "markdown" and "Learning objectives" in first.source
    bullets = re.findall(r"^- (.+)$", first.source, re.M)
    assert 3 <= len(bullets) <= 5
    assert objectives_in_guide()[path.stem] == bullets


@pytest.mark.parametrize("path", MAIN, ids=lambda p: p.stem)
def test_last_cell_is_the_knowledge_check(path):
    last = jupytext.read(path).cells[-1]
    assert last.cell_type == "code" and f'Quiz("{path.stem[:2]}", course).widget()' in last.source


@pytest.fixture(scope="module")
def course():
    import ragkit.teach.course

    return ragkit.teach.course.load(progress=False)


@pytest.mark.slow
def test_every_quiz_has_three_to_five_questions_one_right_option_and_reasons(course):
    from ragkit.teach import quiz

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
    from ragkit.teach import quiz

    def right(nb: str, i: int) -> str:
        return next(o.text for o in quiz.questions(nb, course)[i].options if o.right)

    assert right("01", 0) == str(len(course.evaluation().destroyed["A"]))
    assert right("06", 0) == str(course.sweep().at(DEFAULT_CUT).bluffs)
    c = course.evaluation().compare("E/dense", "C/dense", "R@20").test
    assert right("02", 2) == ("yes" if c.p < 0.05 else "no")


@pytest.mark.slow
def test_quiz_widget_explains_every_option(course):
    from ragkit.teach.quiz import Quiz

    z = Quiz("06", course)
    first = z.questions[0]
    wrong = next(o for o in first.options if not o.right)
    z.choices[0].value = wrong.text
    z.choices[1].value = next(o.text for o in z.questions[1].options if o.right)
    assert z.check() == 1
    assert "not quite" in z.feedback[0].value and all(o.why[:30] in z.feedback[0].value.replace("&#x27;", "'")
                                                       for o in first.options)
    assert "right" in z.feedback[1].value and "choose an option first" in z.feedback[2].value
    assert "1 of 3 right" in z.score.value
