"""Exercises 6 and 7 cannot be gamed: the answer a page prints, a value at an edge or of the wrong type is NOT YET;
the worked solution passes; the checks agree with ranx (ex6) and with the grader's declared answers."""

import ast
import json
import math

import numpy as np
import pytest

import ragkit.teach.course
from ragkit.teach import exercises as ex
from ragkit.teach import language
from ragkit.teach.exercises import ex6_rank_metrics as ex6
from ragkit.teach.exercises import ex7_efsearch as ex7
from ragkit.teach.exercises import results as res
from ragkit.teach.grading.answers import TABLE, answers_of

from conftest import ROOT

SOLUTIONS = ROOT / "notebooks" / "twins" / "solutions"


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv("RAGKIT_RESULTS", str(path))
    monkeypatch.setenv("RAGKIT_STUDENT", "tester")
    monkeypatch.setattr(res, "_student", None)
    return path


@pytest.fixture(autouse=True)
def every_hint(monkeypatch):
    """Every check here is judged as a first attempt: hints thin out after HINTS.free attempts (tested elsewhere)."""
    from dataclasses import replace

    from ragkit.teach.exercises import feedback

    monkeypatch.setattr(feedback, "HINTS", replace(feedback.HINTS, free=10_000))


def solved(name: str, student: str = "tester") -> dict[str, float]:
    """The worked solution's answer cell of ex6, run on ``student``'s ranking (only that cell: no kernel needed)."""
    tree = ast.parse((SOLUTIONS / name).read_text(encoding="utf-8"))
    cell = next(
        ast.Module([*tree.body[i : i + 8]], type_ignores=[])
        for i, node in enumerate(tree.body)
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "relevant"
    )
    scope = {"ranking": ex.own_ranking(student), "math": math}
    exec(compile(cell, name, "exec"), scope)
    return {"my_ap": scope["my_ap"], "my_ndcg": scope["my_ndcg"]}


# ex6 -------------------------------------------------------------------------------------------------------------


def truth(student: str = "tester") -> tuple[float, float]:
    return ex6._figures(ex.own_ranking(student))


def test_ex6_every_ranking_is_the_students_own_and_none_is_the_worked_example():
    drawn = {name: ex.own_ranking(name) for name in (f"student{i}" for i in range(300))}
    assert all(r.relevant != ex.EX6.example for r in drawn.values())
    assert len({r.relevant for r in drawn.values()}) > 200  # a classmate's answer is rarely one's own
    for r in drawn.values():
        top = [x for x in r.relevant if x <= ex.EX6.cutoff]
        assert len(r.relevant) in ex.EX6.relevant and r.relevant[0] > 1 and 2 <= len(top) < len(r.relevant)
    assert ex.own_ranking("ada") == ex.own_ranking("ada") != ex.own_ranking("bob")


def test_ex6_the_engines_ap_and_ndcg_equal_ranx_on_every_ranking_it_hands_out():
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    for n in [f"s{i}" for i in range(40)] + ["tester"]:
        ranking = ex.own_ranking(n)
        qrels = Qrels({"q": {f"c{r}": 1 for r in ranking.relevant}})
        run = Run({"q": {f"c{r}": float(100 - r) for r in range(1, ranking.length + 1)}})
        expected = ranx_evaluate(qrels, run, ["map", "ndcg@10"])
        assert truth(n) == pytest.approx((expected["map"], expected["ndcg@10"]), abs=1e-12), n
    worked = ex.worked_example()
    assert (worked.ap, worked.ndcg) == pytest.approx(ex6._figures(worked.ranking), abs=1e-12)


def test_ex6_the_worked_solution_passes_for_every_student():
    for student in ("tester", "ada", "bob", "student with spaces", "ëve"):
        answer = solved("ex6-rank-metrics-by-hand.py", student)
        feedback = ex.check_rank_metrics(answer["my_ap"], answer["my_ndcg"], student=student)
        assert feedback.passed, (student, str(feedback))
    assert ex.check_rank_metrics(*truth()).passed  # the kernel's student: RAGKIT_STUDENT


def test_ex6_answers_rounded_by_hand_pass_and_one_off_in_the_second_decimal_does_not():
    ap, ndcg = truth()
    assert ex.check_rank_metrics(round(ap, 2) if abs(round(ap, 2) - ap) <= 0.005 else ap, round(ndcg, 3)).passed
    assert ex.check_rank_metrics(np.float32(ap), np.float64(ndcg)).passed  # numpy numbers are numbers
    assert not ex.check_rank_metrics(ap + 0.01, ndcg).passed
    assert not ex.check_rank_metrics(ap, ndcg - 0.01).passed


def test_ex6_what_the_page_prints_is_not_yet_and_the_hint_says_which_figure_it_is():
    ranking = ex.own_ranking()
    ap, ndcg = truth()
    k = ex.EX6.cutoff
    printed = {
        "MRR": ex6._engine(ranking.relevant, "MRR"),
        f"P@{k}": ex6._engine(ranking.relevant, f"P@{k}"),
        f"Recall@{k}": ex6._engine(ranking.relevant, f"Recall@{k}"),
    }
    for name, value in printed.items():
        feedback = ex.check_rank_metrics(value, ndcg)
        assert not feedback.passed, name
        assert any(name.split("@")[0].lower() in h.lower() for h in feedback.hints), (name, feedback.hints)
        assert not ex.check_rank_metrics(ap, value).passed, name
    example = ex.worked_example()
    feedback = ex.check_rank_metrics(round(example.ap, 3), round(example.ndcg, 3))
    assert not feedback.passed and any("worked example" in h for h in feedback.hints)
    swapped = ex.check_rank_metrics(ndcg, ap)
    assert not swapped.passed and any("swapped" in h for h in swapped.hints)


def test_ex6_each_usual_slip_is_not_yet_with_its_hint_and_no_feedback_gives_the_value():
    ap, ndcg = truth()
    slips = ex6._slips(ex.own_ranking())
    for name, (value, _hint) in slips.items():
        named = {h for v, h in slips.values() if abs(v - value) <= ex.EX6.tolerance}
        for answer, kept in ((ex.check_rank_metrics(value, ndcg), ap), (ex.check_rank_metrics(ap, value), ndcg)):
            assert not answer.passed, name
            assert named & set(answer.hints), (name, answer.hints)
            assert f"{kept:.3f}" not in " ".join(n for n in answer.notes if "not yet" in n), name
            assert f"{kept:.3f}" not in " ".join(answer.hints), name


@pytest.mark.parametrize("value", [0, 0.0, 1.5, -0.3, math.nan, math.inf, True, "0.5", [0.5], None])
def test_ex6_a_value_at_an_edge_or_of_another_type_is_answered_in_words(value):
    ap, ndcg = truth()
    for feedback in (ex.check_rank_metrics(value, ndcg), ex.check_rank_metrics(ap, value)):
        assert not feedback.passed
        assert "Traceback" not in str(feedback)
    if value is not None:
        assert "above 0 and at most 1" in str(ex.check_rank_metrics(value, ndcg))


def test_ex6_one_is_the_edge_a_perfect_ranking_would_reach_and_is_not_this_rankings():
    assert not ex.check_rank_metrics(1, 1).passed


def test_ex6_the_truth_is_never_recorded_where_the_student_can_read_it(results):
    ex.check_rank_metrics(0.5, 0.25)
    row = json.loads(results.read_text(encoding="utf-8").splitlines()[-1])
    assert row["exercise"] == "ex6" and not row["passed"]
    assert row["numbers"] == {"ap": 0.5, "ndcg": 0.25, "ap_right": False, "ndcg_right": False}


def test_ex6_the_grader_judges_the_students_own_ranking_from_the_name():
    answer = solved("ex6-rank-metrics-by-hand.py", "ada")
    report = json.dumps({name: {"value": value} for name, value in answer.items()})
    answers, why = answers_of(report, TABLE["ex6"])
    assert why is None
    assert TABLE["ex6"].judge(None, "ada", answers).passed  # ex6 needs no course
    assert not TABLE["ex6"].judge(None, "bob", answers).passed  # ada's numbers are not bob's
    _, why = answers_of(json.dumps({"my_ap": {"value": "0.4"}, "my_ndcg": {"value": 0.4}}), TABLE["ex6"])
    assert why is not None and "number" in why


def test_ex6_speaks_dutch():
    with language.speaking("nl"):
        ap, ndcg = truth()
        text = str(ex.check_rank_metrics(ap, ndcg - 0.1))
        assert "NOG NIET" in text and "nog niet" in text
        assert "," in f"{language.number(ap, '.3f')}"
        assert "relevante" in ex.own_ranking()._repr_markdown_()


# ex7 -------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def course():
    return ragkit.teach.course.load(progress=False)


@pytest.fixture(scope="module")
def smallest(course):
    return ex7._collection(course, judging=False).smallest(ex.EX7.target, ex.EX7.most)


@pytest.mark.slow
def test_ex7_the_smallest_efsearch_passes_and_one_step_above_it_too(course, smallest):
    assert smallest is not None and ex.EX7.k <= smallest < 512
    for ef in (smallest, smallest + ex.EX7.step):
        assert ex.check_efsearch(course, ef).passed, ef
    assert ex.efsearch_choice_passes(course, smallest)


@pytest.mark.slow
def test_ex7_the_worked_solution_finds_the_smallest(course, smallest):
    scan = ex.efsearch_recall(course, range(ex.EX7.k, 257))
    assert int(scan[scan["reaches target"]].efSearch.iloc[0]) == smallest
    assert scan[scan.efSearch == smallest - 1]["reaches target"].item() is False or smallest == ex.EX7.k


@pytest.mark.slow
def test_ex7_the_values_the_page_prints_are_not_yet(course, smallest):
    from ragkit import approximate

    table = ex.efsearch_recall(course, approximate.EF_SEARCH)
    first = int(table[table["reaches target"]].efSearch.iloc[0])  # what the doubling table seems to say
    assert first > smallest + ex.EX7.step, "the page's own table would hand out the answer"
    feedback = ex.check_efsearch(course, first)
    assert not feedback.passed and any("smaller" in h for h in feedback.hints)
    for ef in (100, 150, 200, max(approximate.EF_SEARCH)):  # the example scan, and the largest 08b measured
        assert not ex.check_efsearch(course, ef).passed


@pytest.mark.slow
def test_ex7_too_small_is_not_yet_and_below_k_says_faiss_searches_with_k(course, smallest):
    short = ex.check_efsearch(course, smallest - 1)
    assert not short.passed and any("larger" in h for h in short.hints)
    edge = ex.check_efsearch(course, 1)
    assert not edge.passed and "at least k = 20" in str(edge)


@pytest.mark.slow
@pytest.mark.parametrize("value", [0, -5, 2000, 56.0, np.float64(56), True, "56", [56], math.nan])
def test_ex7_a_value_at_an_edge_or_of_another_type_is_answered_in_words(course, value):
    feedback = ex.check_efsearch(course, value)
    assert not feedback.passed and "not an efSearch" in str(feedback)


@pytest.mark.slow
def test_ex7_the_judging_collection_is_shown_only_after_the_check_passes(course, smallest):
    from IPython.display import Markdown

    assert isinstance(ex.judging_collection(course, 1024), Markdown)
    shown = ex.judging_collection(course, smallest)
    assert list(shown.iloc[:, 1]) == [smallest, ex7._collection(course, True).smallest(ex.EX7.target, ex.EX7.most)]
    assert list(shown.index) == ["tuning", "judging"]  # a table whose rows are named, no bare 0, 1 index
    judged = ex.check_efsearch(course, smallest)
    assert judged.numbers["judged_recall"] == ex7._collection(course, True).recall(smallest)
    assert judged.numbers["judged_recall"] < ex.EX7.target  # the teacher's guide says the answer falls short there


@pytest.mark.slow
def test_ex7_the_grader_judges_a_declared_whole_number(course, smallest):
    answers, why = answers_of(json.dumps({"my_ef": {"value": smallest}}), TABLE["ex7"])
    assert why is None and TABLE["ex7"].judge(course, "ada", answers).passed
    answers, why = answers_of(json.dumps({"my_ef": {"value": 56.5}}), TABLE["ex7"])
    assert why is not None and "whole number" in why


def test_ex7_a_wrong_first_argument_is_answered_in_words():
    feedback = ex.check_efsearch("course", 56)
    assert not feedback.passed and "pass the course" in str(feedback)
    assert not ex.check_efsearch(None, None).passed


@pytest.mark.slow
def test_ex7_the_graders_stored_collections_are_read_not_built_and_a_damaged_one_is_not_read(
    course, tmp_path, monkeypatch
):
    """The grader stores both graphs in its snapshot; a kernel reading that snapshot as its shared cache finds what
    the built ones find without building; one byte changed in the middle of a graph is a miss."""
    from ragkit.plumbing import results

    monkeypatch.setattr(ex7, "_built", {})
    built = ex7._collection(course, judging=False)
    assert ex7.seed_collections(course, tmp_path) == ""
    stored = sorted((tmp_path / results.FOLDER).glob(f"{ex7.STORED}-*.bin"))
    assert len(stored) == 2
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(tmp_path))
    monkeypatch.setattr(ex7, "_built", {})
    monkeypatch.setattr(ex7, "_build", lambda *_: pytest.fail("built again, not read from the snapshot"))
    read = ex7._collection(course, judging=False)
    assert read is not built and read.index.ntotal == built.index.ntotal == ex.EX7.vectors
    assert (read.exact.ids == built.exact.ids).all() and (read.exact.scores == built.exact.scores).all()
    for ef in (ex.EX7.k, 40, 56, 100, 300):
        assert read.recall(ef) == built.recall(ef), ef
    key = ex7._key(course, False, ex.EX7)[0]
    for path in stored:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF  # a graph faiss would read, wrong
        path.write_bytes(bytes(data))
    assert ex7._stored(key, read.queries) is None


def test_ex7_a_stored_graph_of_other_code_or_libraries_is_not_read(monkeypatch):
    """The stamp holds the code that makes a collection and the libraries' versions: a change to any is a miss."""
    from ragkit import fusion

    key = ("made of", 46, 1.0, 20_000, 20)
    stamp = ex7._stamp(key)
    assert stamp["numpy"] == np.__version__ and stamp["faiss"]
    monkeypatch.setattr(ex7, "GRAPH_CODE", (*ex7.GRAPH_CODE, fusion.__file__))
    assert ex7._stamp(key)["code"] != stamp["code"]
