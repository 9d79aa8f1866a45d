"""The teacher's guide's figures about the corpus, computed: each is marked in the guide and checked against these.

A figure in ``docs/teacher-guide.md`` is written ``<!--fig:name-->value<!--/fig-->`` (the markers do not render; the
pattern is ``ragkit.teach.classroom.figures``'s); ``figures(course)`` computes every name, ``figures.render`` writes
them in, and a test fails when one drifts. ``python -m teacher.guide [--write]`` checks (or writes) them. It lives
with the teacher's tools, not in ragkit: it computes exercise 2's answer, and the class's repository
(``python -m ragkit class-repo``) leaves the teacher's tools out.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

import numpy as np

from ragkit.errors import DataError
from ragkit.teach.classroom.pace import class_times
from ragkit.teach.exercises.results import RESULTS_ENV
from teacher.rendering import Figure, check_or_write, figure, listing, rendered_by, series, term, verbatim, written

__all__ = ["EXECUTED", "PAGES", "defined", "ex4", "figures", "in_language", "literal", "main"]

if TYPE_CHECKING:
    from ragkit.statistics import SignTest
    from ragkit.teach.course import Course
    from ragkit.threshold import Sweep


def literal(twin: Path, name: str) -> object:
    """The literal value a notebook twin assigns to ``name`` (the solution's answer cell), read without running it."""
    for node in ast.walk(ast.parse(twin.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise DataError(f"{twin} assigns no literal {name}: the guide's figures read the solution's answer from it")


def _ex2(course: Course) -> dict[str, Figure]:
    from ragkit.teach.exercises import CUT_GRID, EX2, exercise_cost, threshold_halves
    from ragkit.teach.exercises.ex2_threshold import accepted_cuts, cheapest_passing_cuts

    tune, judge = threshold_halves(course.sweep(EX2.strategy, EX2.retriever))
    best, _, passing = accepted_cuts(tune)
    cut = cheapest_passing_cuts(tune)[0]  # the first cheapest, as the solution takes
    row, held = tune.at(cut), judge.at(cut)
    free = min((tune.at(c) for c in CUT_GRID), key=exercise_cost)
    judge_best = accepted_cuts(judge)[0]
    judge_cut = cheapest_passing_cuts(judge)[0]
    return {
        "ex2_cut": _cut(cut),
        "ex2_bluffs": verbatim(row.bluffs),
        "ex2_without": verbatim(row.answered_without_needle),
        "ex2_refused": verbatim(row.refused),
        "ex2_in_domain": verbatim(row.in_domain),
        "ex2_ceiling": _general(EX2.max_refused * row.in_domain),
        "ex2_cost": _general(best),
        "ex2_pass_low": _cut(min(passing)),
        "ex2_pass_high": _cut(max(passing)),
        "ex2_free_cut": _cut(free.cut),
        "ex2_free_cost": _general(exercise_cost(free)),
        "ex2_free_refused": verbatim(free.refused),
        "ex2_held_cost": _general(exercise_cost(held)),
        "ex2_held_refused": verbatim(held.refused),
        "ex2_held_share": figure("{share:.0%}", share=held.refused / held.in_domain),
        "ex2_held_ceiling": (
            figure("over the ceiling")
            if held.refused > EX2.max_refused * held.in_domain
            else figure("within the ceiling")
        ),
        "ex2_judge_best_cost": _general(judge_best),
        "ex2_judge_best_cut": _cut(judge_cut),
        "ex2_needles": verbatim(len(tune.questions)),
        **_equal_costs(tune, cut),
        "ex2_price_span": _price_span(tune),
    }


def _equal_costs(tune: Sweep, chosen: float) -> dict[str, Figure]:
    """Exercise 2's first try-this: every mistake at one price, on the sweep's own grid (``tables.per_cut(tune)``)."""
    rows = [r for r in tune.rows() if r.cut is not None]
    best = min(rows, key=lambda r: r.bluffs + r.answered_without_needle + r.refused)
    cut = float(best.cut or 0.0)  # never 0: the rows without a cut are left out above
    move = (
        figure("up (looser)")
        if cut > chosen
        else figure("down (stricter)")
        if cut < chosen
        else figure("nowhere (it stays put)")
    )
    return {"ex2_equal_cut": _cut(cut), "ex2_equal_move": move, "ex2_equal_refused": verbatim(best.refused)}


def _price_span(tune: Sweep) -> Figure:
    """The cut exercise 2's rules choose on ``tune`` when an answer without the needle costs 1.5 to 4.5, in halves."""
    from ragkit.teach.exercises import EX2
    from ragkit.teach.exercises.ex2_threshold import cheapest_passing_cuts

    chosen = set()
    for price in np.arange(1.5, 4.51, 0.5):
        chosen.add(cheapest_passing_cuts(tune, dataclasses.replace(EX2, without_needle_cost=float(price)))[0])
    low, high = min(chosen), max(chosen)
    if low == high:
        return figure("{cut:.3f} at every one of them", cut=low)
    return figure("from {low:.3f} to {high:.3f}", low=low, high=high)


def _ex3(course: Course, solutions: Path) -> dict[str, Figure]:
    from ragkit.teach.exercises import ticket_measures

    tickets = literal(solutions / "ex3-ticket-phrasings.py", "my_tickets")
    ranks = sorted(int(r) for r in ticket_measures(course, tickets)["needle's rank"])  # type: ignore[arg-type]
    return {"ex3_ranks": listing([verbatim(r) for r in ranks], figure("none"))}


def _ex5(course: Course, solutions: Path) -> dict[str, Figure]:
    from ragkit.retrieval import cosine_distance
    from ragkit.teach.exercises import check_own_document, copied_sentence

    retriever = course.retriever("E")
    distance = cosine_distance(retriever.vectors, retriever.vectors)
    docs = np.array([c.doc_id for c in retriever.chunks])
    distance[docs[:, None] == docs[None, :]] = np.inf
    kept = [q for q in course.questions if copied_sentence(q.question, q.needle) is None]
    own = np.diag(
        cosine_distance(retriever.embed([q.question for q in kept]), retriever.embed([q.needle for q in kept]))
    )
    twin = solutions / "ex5-cite-your-own-document.py"
    # the check records a result line: into a scratch file, never the teacher's own results
    with (
        tempfile.TemporaryDirectory() as scratch,
        mock.patch.dict(os.environ, {RESULTS_ENV: str(Path(scratch) / "results.jsonl")}),
    ):
        solved = check_own_document(
            course,
            literal(twin, "my_document"),  # type: ignore[arg-type]
            literal(twin, "my_question"),  # type: ignore[arg-type]
        )
    return {
        "ex5_median": _cut(float(np.median(distance.min(axis=1)))),
        "ex5_paraphrase_min": figure("{distance:.2f}", distance=float(np.floor(own.min() * 100) / 100)),
        "ex5_solution_course": _cut(solved.numbers["nearest_course"]),
    }


EXECUTED = ("ex4_split", "ex4_p", "ex4_verdict")
"""Figures of exercise 4's solution (``ex4``): measuring its header embeds the corpus anew, about a minute on an
empty cache, so they are checked beside the executed solution, whose run has cached those vectors."""


def defined(twin: Path, name: str) -> Callable[..., object]:
    """The function a notebook twin defines as ``name`` (the solution's answer), compiled alone: nothing else runs."""
    module = ast.parse(twin.read_text(encoding="utf-8"))
    node = next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if node is None:
        raise DataError(f"{twin} defines no function {name}: the guide's figures measure the solution's answer")
    scope: dict[str, object] = {}
    exec(compile(ast.Module([node], type_ignores=[]), str(twin), "exec"), scope)
    return scope[name]  # type: ignore[return-value]


def ex4(course: Course, solutions: Path) -> dict[str, Figure]:
    """Exercise 4's figures: the solution's header measured against E, and the verdict its stated direction gets."""
    from ragkit.statistics import verdict
    from ragkit.teach.exercises import EX4, header_run

    twin = solutions / "ex4-design-a-header.py"
    expectation = literal(twin, "my_expectation")
    test = header_run(course, defined(twin, "my_header"), str(expectation)).test  # type: ignore[arg-type]
    if test is None:
        raise DataError(f"the header of {twin} could not be measured: run the solution notebook to see why")
    found = verdict(1 if expectation == "better" else -1, test.wins, test.losses, test.p, EX4.alpha)
    return {"ex4_split": _split(test), "ex4_p": figure("{p:.3g}", p=test.p), "ex4_verdict": term(found)}


def _p(p: float) -> Figure:
    return figure("{p:.2g}", p=p)


def _cut(value: float) -> Figure:
    """A cut, a distance or a metric's value: three decimals."""
    return figure("{value:.3f}", value=value)


def _general(value: float) -> Figure:
    """A cost or a ceiling: as short as it is exact (57, 4.5)."""
    return figure("{value:g}", value=value)


def _split(test: SignTest) -> Figure:
    """A sign test's discordant pairs: +wins/-losses."""
    return figure("+{wins}/-{losses}", wins=test.wins, losses=test.losses)


def _of(k: int, n: int) -> Figure:
    return figure("{k} of {n}", k=k, n=n)


def _differs(course: Course) -> dict[str, Figure]:
    """The guide's "where this corpus differs from the chapter" figures, from the notebooks' own evaluation."""
    from ragkit.evaluation import METRICS, with_holm
    from ragkit.statistics import ALPHA
    from ragkit.teach.course import chapter
    from ragkit.threshold import DEFAULT_CUT

    ev = course.evaluation("ABCDEF")
    ec = ev.compare("E/dense", "C/dense", "Hit@20", "needle").test
    ea = ev.compare("E/dense", "A/dense", "Hit@20", "needle").test
    hb = ev.compare("E/hybrid", "E/bm25", "Hit@4", "needle").test
    dense1, bm25_1 = ev["E/dense"].value("Hit@1"), ev["E/bm25"].value("Hit@1")
    dense = ev.figures([label for label in ev.results if label.endswith("/dense")])  # the bootstrap runs once
    bluffs = course.sweep("E", "dense").at(DEFAULT_CUT).bluffs
    fe = with_holm([ev.compare("F/dense", "E/dense", m, "needle") for m in METRICS])
    fe_won = [verbatim(c.metric) for c in fe if c.p_holm is not None and c.p_holm < ALPHA]
    return {
        "needles": verbatim(ev.n_questions),
        "destroyed_a": verbatim(len(ev.destroyed["A"])),
        "destroyed_b": verbatim(len(ev.destroyed["B"])),
        "ec_split": _split(ec),
        "ec_p": _p(ec.p),
        "ec_reach": figure("reaches") if ec.p < ALPHA else figure("does not reach"),
        "ea_split": _split(ea),
        "ea_p": _p(ea.p),
        "bm25_top1": figure("beats") if bm25_1 > dense1 else figure("does not beat"),
        "bm25_hit1": _cut(bm25_1),
        "dense_hit1": _cut(dense1),
        "hb_split": _split(hb),
        "hb_p": _p(hb.p),
        "design_below_1": verbatim(sum(f.design_effect < 1 for f in dense)),
        "design_total": verbatim(len(dense)),
        "bluffs_default": verbatim(bluffs),
        "fe_verdict": figure("differs significantly at {metrics}", metrics=listing(fe_won, figure("none")))
        if fe_won
        else figure("does not differ significantly at any metric"),
        "bluffs_chapter": verbatim(chapter.THRESHOLD["bluffs"][DEFAULT_CUT]),
    }


def _abstention(course: Course) -> dict[str, Figure]:
    """06's abstention rules within exercise 2's refusal ceiling, and the reranker's rule against the cosine cut."""
    from ragkit.statistics import ALPHA, sign_test
    from ragkit.teach.exercises import EX2

    rules = course.abstention("E")
    from ragkit.teach.lesson.tables import chosen_cut

    best = {name: chosen_cut(name, rule, EX2.max_refused) for name, rule in rules.items()}
    reranker = next(n for n in rules if n not in ("cosine distance", "BM25 score"))
    cosine, other = rules["cosine distance"], rules[reranker]
    test = sign_test(
        cosine.bluffing(best["cosine distance"].cut).astype(float), other.bluffing(best[reranker].cut).astype(float)
    )
    out = {
        "abst_reranker": verbatim("MaxSim") if reranker == "maxsim score" else figure("the cross-encoder"),
        "abst_split": _split(test),
        "abst_p": _p(test.p),
        "abst_verdict": figure("a finding at the {alpha:.0%} level", alpha=ALPHA)
        if test.p < ALPHA
        else figure("a lead, not a finding"),
    }
    for key, name in (("cos", "cosine distance"), ("bm25", "BM25 score"), ("rr", reranker)):
        out[f"abst_{key}_bluffs"] = verbatim(best[name].bluffs)
        out[f"abst_{key}_refused"] = verbatim(best[name].refused)
        out[f"abst_{key}_needle"] = verbatim(best[name].answered_with_needle)
    return out


def _predictions(course: Course) -> dict[str, Figure]:
    """What each main notebook's prediction is answered with on this corpus, computed as its reveal cell computes it."""
    from ragkit import NoAnswer, count_pieces, default_embedder
    from ragkit.answer import answer
    from ragkit.report import report
    from ragkit.retrieval import RERANK_DEPTH
    from ragkit.statistics import ALPHA
    from ragkit.teach.course import chapter
    from ragkit.teach.lesson import claims, predict

    ev = course.evaluation("ABCDEF")
    seven = report(ev, chapter.COMPARISONS, chapter.FINDINGS, runs=())
    held = claims.own_holm()
    top1 = {"BM25": ev["E/bm25"].value("Hit@1"), "dense": ev["E/dense"].value("Hit@1")}
    chunks = course.chunks("E")
    sample = [chunks[i] for i in np.linspace(0, len(chunks) - 1, 200).round().astype(int)]
    norms = np.linalg.norm(default_embedder().pooled([c.text for c in sample]), axis=1)
    follows = np.corrcoef(count_pieces([c.text for c in sample]), norms)[0, 1]
    s = course.sweep("E", "dense")
    r = course.retriever("E")
    football, databases = (
        isinstance(answer(q, r), NoAnswer)
        for q in (
            "what is the offside rule in football",
            "which vector database should i use for ten million embeddings",
        )
    )
    from ragkit import tuning

    study = tuning.study(course.tuning_sweeps(), "MRR")  # 03b's reveal: the settings whose two halves agree
    return {
        "pred_01": _of(len(ev.destroyed["A"]), ev.n_questions),
        "pred_02": _of(
            sum(line.verdict is not None and line.verdict.kind == "consistent" for line in seven.judged),
            len(seven.judged),
        ),
        "pred_02b": _of(sum(adjusted < ALPHA for _, adjusted in held.values()), len(held)),
        "pred_03": verbatim(predict.ahead(top1, "the same")),  # the answer's own words, which a student types
        "pred_03b": _of(len(study.agreed), len(study.tunings)),
        "pred_03_dense": _cut(top1["dense"]),
        "pred_03_bm25": _cut(top1["BM25"]),
        "pred_04": _cut(ev["E/hybrid"].value(f"Hit@{RERANK_DEPTH}")),
        "pred_05": figure("shorter") if follows < 0 else figure("longer"),
        "pred_05_r": figure("{r:.2f}", r=follows),
        "pred_06": figure("yes") if s.separable else figure("no"),
        "pred_07": {
            (True, True): figure("both"),
            (True, False): figure("only the first"),
            (False, True): figure("only the second"),
            (False, False): figure("neither"),
        }[(football, databases)],
    }


def _generation(course: Course) -> dict[str, Figure]:
    """Notebook 07's generator on the course: needles recalled with and without the needle in the prompt, with the
    95% Wilson interval of the first (issue 66, statement 1: what was measured, not "rarely if ever")."""
    m = course.generation()
    if m is None:
        raise DataError("the guide quotes notebook 07's generator: run `python -m ragkit warm` with it installed")
    inside, outside = m.halves.with_needle, m.halves.without_needle
    return {
        "gen_recalled": _of(inside.k, inside.n),
        "gen_recalled_ci": figure("{low:.2f} to {high:.2f}", low=inside.low, high=inside.high),
        "gen_without": _of(outside.k, outside.n),
    }


def _setting_value(value: object) -> Figure:
    """A swept value as 03b writes it: 30, 0.75, (0.9, 0.9)."""
    from ragkit.teach.lesson.settings import setting_value

    return rendered_by(setting_value, value)


def _tuning(course: Course) -> dict[str, Figure]:
    """03b's choices on the tuning half and what the held-out half says, and what its first two try-thises find."""
    from ragkit import tuning

    sweeps = course.tuning_sweeps()
    study = tuning.study(sweeps, "MRR")
    rrf, bm25 = study["RRF k"], study["BM25 (k1, b)"]
    longest = sweeps["chunk size"].chunked[1024]

    def moved(other: tuning.Study) -> Figure:
        names = [t.parameter for t in other.tunings if t.chosen != study[t.parameter].chosen]
        return series([term(name) for name in names]) if names else figure("none")

    return {
        "tuning_agreed": verbatim(len(study.agreed)),
        "tuning_agreed_names": listing([term(name) for name in study.agreed], figure("none")),
        "rrf_chosen": _setting_value(rrf.chosen),
        "rrf_held_best": _setting_value(rrf.held_best),
        "bm25_chosen": _setting_value(bm25.chosen),
        "bm25_held_best": _setting_value(bm25.held_best),
        "bm25_held_gain": figure("{gain:+.3f}", gain=bm25.held_gain),
        "weight_chosen": _setting_value(study["dense weight"].chosen),
        "weight_held_best": _setting_value(study["dense weight"].held_best),
        "tuning_min_holm": _p(min(t.judged.p_holm for t in study.tunings if t.judged.p_holm is not None)),
        "over_window_1024": verbatim(longest.over_window),
        "chunks_1024": verbatim(longest.chunks),
        "tuning_metric_moved": moved(tuning.study(sweeps, "Hit@4")),
        "tuning_seed_moved": moved(tuning.study(sweeps, "MRR", seed=5)),
    }


def figures(course: Course, solutions: Path) -> dict[str, Figure]:
    """Every figure the guide quotes that this module computes from the corpus, by name, as a value."""
    return {
        **_ex2(course),
        **_ex3(course, solutions),
        **_ex5(course, solutions),
        **_differs(course),
        **_abstention(course),
        **_predictions(course),
        **_tuning(course),
        **_generation(course),
    }


def in_language(computed: dict[str, Figure], notebooks: Path, language: str) -> dict[str, str]:
    """The computed figures as the guide in ``language`` writes them, with the lessons' class times from that
    language's twins."""
    return {**written(computed, language), **class_times(notebooks, language)}


PAGES = {"en": Path("docs") / "teacher-guide.md", "nl": Path("docs") / "nl" / "teacher-guide.md"}
"""The guide in each language, relative to the clone."""


def main(argv: list[str] | None = None) -> int:
    """Say which marked figures of the guide drift from the computation; with --write, write them in."""
    import argparse

    from ragkit.teach.course import load

    parser = argparse.ArgumentParser(prog="python -m teacher.guide", description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="write the figures into the guide, both languages")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    computed = figures(load(progress=False), root / "notebooks" / "twins" / "solutions")
    values = {language: in_language(computed, root / "notebooks", language) for language in PAGES}
    pages = {language: root / path for language, path in PAGES.items()}
    found = check_or_write(pages, values, args.write, root, measured_elsewhere=EXECUTED)
    if args.write:
        print(
            f"exercise 4's figures ({', '.join(EXECUTED)}) are measured beside its executed solution, by the notebook "
            "tests: they keep what each guide says"
        )
    return found


if __name__ == "__main__":
    raise SystemExit(main())
