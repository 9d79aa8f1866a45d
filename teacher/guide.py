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
from ragkit.teach.classroom.figures import quoted, render
from ragkit.teach.classroom.pace import class_times
from ragkit.teach.exercises.results import RESULTS_ENV

__all__ = ["EXECUTED", "defined", "ex4", "figures", "literal", "main"]

if TYPE_CHECKING:
    from ragkit.teach.course import Course
    from ragkit.threshold import Sweep


def literal(twin: Path, name: str) -> object:
    """The literal value a notebook twin assigns to ``name`` (the solution's answer cell), read without running it."""
    for node in ast.walk(ast.parse(twin.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise DataError(f"{twin} assigns no literal {name}: the guide's figures read the solution's answer from it")


def _ex2(course: Course) -> dict[str, str]:
    from ragkit.teach.exercises import CUT_GRID, EX2, exercise_cost, threshold_halves
    from ragkit.teach.exercises.ex2_threshold import _acceptance as acceptance

    tune, judge = threshold_halves(course.sweep(EX2.strategy, EX2.retriever))
    best, _, passing = acceptance(tune)
    cut = next(c for c in passing if exercise_cost(tune.at(c)) == best)  # the first cheapest, as the solution takes
    row, held = tune.at(cut), judge.at(cut)
    free = min((tune.at(c) for c in CUT_GRID), key=exercise_cost)
    judge_best, _, judge_passing = acceptance(judge)
    judge_cut = next(c for c in judge_passing if exercise_cost(judge.at(c)) == judge_best)
    return {
        "ex2_cut": f"{cut:.3f}",
        "ex2_bluffs": str(row.bluffs),
        "ex2_without": str(row.answered_without_needle),
        "ex2_refused": str(row.refused),
        "ex2_in_domain": str(row.in_domain),
        "ex2_ceiling": f"{EX2.max_refused * row.in_domain:g}",
        "ex2_cost": f"{best:g}",
        "ex2_pass_low": f"{min(passing):.3f}",
        "ex2_pass_high": f"{max(passing):.3f}",
        "ex2_free_cut": f"{free.cut:.3f}",
        "ex2_free_cost": f"{exercise_cost(free):g}",
        "ex2_free_refused": str(free.refused),
        "ex2_held_cost": f"{exercise_cost(held):g}",
        "ex2_held_refused": str(held.refused),
        "ex2_held_share": f"{held.refused / held.in_domain:.0%}",
        "ex2_held_ceiling": (
            "over the ceiling" if held.refused > EX2.max_refused * held.in_domain else "within the ceiling"
        ),
        "ex2_judge_best_cost": f"{judge_best:g}",
        "ex2_judge_best_cut": f"{judge_cut:.3f}",
        "ex2_needles": str(len(tune.questions)),
        **_equal_costs(tune, cut),
        "ex2_price_span": _price_span(tune),
    }


def _equal_costs(tune: Sweep, chosen: float) -> dict[str, str]:
    """Exercise 2's first try-this: every mistake at one price, on the sweep's own grid (``tables.per_cut(tune)``)."""
    rows = [r for r in tune.rows() if r.cut is not None]
    best = min(rows, key=lambda r: r.bluffs + r.answered_without_needle + r.refused)
    cut = float(best.cut or 0.0)  # never 0: the rows without a cut are left out above
    move = "up (looser)" if cut > chosen else "down (stricter)" if cut < chosen else "nowhere"
    return {"ex2_equal_cut": f"{cut:.3f}", "ex2_equal_move": move, "ex2_equal_refused": str(best.refused)}


def _price_span(tune: Sweep) -> str:
    """The cut exercise 2's rules choose on ``tune`` when an answer without the needle costs 1.5 to 4.5, in halves."""
    from ragkit.teach.exercises import EX2, exercise_cost
    from ragkit.teach.exercises.ex2_threshold import _acceptance as acceptance

    chosen = set()
    for price in np.arange(1.5, 4.51, 0.5):
        rules = dataclasses.replace(EX2, without_needle_cost=float(price))
        best, _, passing = acceptance(tune, rules=rules)
        chosen.add(next(c for c in passing if exercise_cost(tune.at(c), rules) == best))
    low, high = min(chosen), max(chosen)
    return f"{low:.3f} at every one of them" if low == high else f"from {low:.3f} to {high:.3f}"


def _ex3(course: Course, solutions: Path) -> dict[str, str]:
    from ragkit.teach.exercises import ticket_measures

    tickets = literal(solutions / "ex3-ticket-phrasings.py", "my_tickets")
    ranks = sorted(int(r) for r in ticket_measures(course, tickets)["needle's rank"])  # type: ignore[arg-type]
    return {"ex3_ranks": ", ".join(str(r) for r in ranks[:-1]) + f" and {ranks[-1]}"}


def _ex5(course: Course, solutions: Path) -> dict[str, str]:
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
        "ex5_median": f"{np.median(distance.min(axis=1)):.3f}",
        "ex5_paraphrase_min": f"{np.floor(own.min() * 100) / 100:.2f}",
        "ex5_solution_course": f"{solved.numbers['nearest_course']:.3f}",
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


def ex4(course: Course, solutions: Path) -> dict[str, str]:
    """Exercise 4's figures: the solution's header measured against E, and the verdict its stated direction gets."""
    from ragkit.statistics import verdict
    from ragkit.teach.exercises import EX4, header_run

    twin = solutions / "ex4-design-a-header.py"
    expectation = literal(twin, "my_expectation")
    test = header_run(course, defined(twin, "my_header"), str(expectation)).test  # type: ignore[arg-type]
    if test is None:
        raise DataError(f"the header of {twin} could not be measured: run the solution notebook to see why")
    found = verdict(1 if expectation == "better" else -1, test.wins, test.losses, test.p, EX4.alpha)
    return {"ex4_split": f"+{test.wins}/-{test.losses}", "ex4_p": f"{test.p:.3g}", "ex4_verdict": found}


def _p(p: float) -> str:
    return f"{p:.2g}"


def _differs(course: Course) -> dict[str, str]:
    """The guide's "where this corpus differs from the chapter" figures, from the notebooks' own evaluation."""
    from ragkit.evaluation import METRICS, with_holm
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
    fe_won = [c.metric for c in fe if c.p_holm is not None and c.p_holm < 0.05]
    return {
        "needles": str(ev.n_questions),
        "destroyed_a": str(len(ev.destroyed["A"])),
        "destroyed_b": str(len(ev.destroyed["B"])),
        "ec_split": f"+{ec.wins}/-{ec.losses}",
        "ec_p": _p(ec.p),
        "ec_reach": "reaches" if ec.p < 0.05 else "does not reach",
        "ea_split": f"+{ea.wins}/-{ea.losses}",
        "ea_p": _p(ea.p),
        "bm25_top1": "beats" if bm25_1 > dense1 else "does not beat",
        "bm25_hit1": f"{bm25_1:.3f}",
        "dense_hit1": f"{dense1:.3f}",
        "hb_split": f"+{hb.wins}/-{hb.losses}",
        "hb_p": _p(hb.p),
        "design_below_1": str(sum(f.design_effect < 1 for f in dense)),
        "design_total": str(len(dense)),
        "bluffs_default": str(bluffs),
        "fe_verdict": ("differs significantly at " + ", ".join(fe_won))
        if fe_won
        else "does not differ significantly at any metric",
        "bluffs_chapter": str(chapter.THRESHOLD["bluffs"][DEFAULT_CUT]),
    }


def _abstention(course: Course) -> dict[str, str]:
    """06's abstention rules within exercise 2's refusal ceiling, and the reranker's rule against the cosine cut."""
    from ragkit.statistics import sign_test
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
        "abst_reranker": "MaxSim" if reranker == "maxsim score" else "the cross-encoder",
        "abst_split": f"+{test.wins}/-{test.losses}",
        "abst_p": _p(test.p),
        "abst_verdict": "a finding at the 5% level" if test.p < 0.05 else "a lead, not a finding",
    }
    for key, name in (("cos", "cosine distance"), ("bm25", "BM25 score"), ("rr", reranker)):
        out[f"abst_{key}_bluffs"], out[f"abst_{key}_refused"] = str(best[name].bluffs), str(best[name].refused)
        out[f"abst_{key}_needle"] = str(best[name].answered_with_needle)
    return out


def _predictions(course: Course) -> dict[str, str]:
    """What each main notebook's prediction is answered with on this corpus, computed as its reveal cell computes it."""
    from ragkit import NoAnswer, count_pieces, default_embedder
    from ragkit.answer import answer
    from ragkit.report import report
    from ragkit.retrieval import RERANK_DEPTH
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
        "pred_01": f"{len(ev.destroyed['A'])} of {ev.n_questions}",
        "pred_02": f"{sum(line.verdict is not None and line.verdict.kind == 'consistent' for line in seven.judged)} of "
        f"{len(seven.judged)}",
        "pred_02b": f"{sum(adjusted < 0.05 for _, adjusted in held.values())} of {len(held)}",
        "pred_03": predict.ahead(top1, "the same"),
        "pred_03b": f"{len(study.agreed)} of {len(study.tunings)}",
        "pred_03_dense": f"{top1['dense']:.3f}",
        "pred_03_bm25": f"{top1['BM25']:.3f}",
        "pred_04": f"{ev['E/hybrid'].value(f'Hit@{RERANK_DEPTH}'):.3f}",
        "pred_05": "shorter" if follows < 0 else "longer",
        "pred_05_r": f"{follows:.2f}",
        "pred_06": "yes" if s.separable else "no",
        "pred_07": {
            (True, True): "both",
            (True, False): "only the first",
            (False, True): "only the second",
            (False, False): "neither",
        }[(football, databases)],
    }


def _generation(course: Course) -> dict[str, str]:
    """Notebook 07's generator on the course: needles recalled with and without the needle in the prompt, with the
    95% Wilson interval of the first (issue 66, statement 1: what was measured, not "rarely if ever")."""
    m = course.generation()
    if m is None:
        raise DataError("the guide quotes notebook 07's generator: run `python -m ragkit warm` with it installed")
    inside, outside = m.halves.with_needle, m.halves.without_needle
    return {
        "gen_recalled": f"{inside.k} of {inside.n}",
        "gen_recalled_ci": f"{inside.low:.2f} to {inside.high:.2f}",
        "gen_without": f"{outside.k} of {outside.n}",
    }


def _setting_value(value: object) -> str:
    """A swept value as the guide writes it: 30, 0.75, (0.9, 0.9)."""
    return f"({value[0]:g}, {value[1]:g})" if isinstance(value, tuple) else format(value, "g")


def _tuning(course: Course) -> dict[str, str]:
    """03b's choices on the tuning half and what the held-out half says, and what its first two try-thises find."""
    from ragkit import tuning

    sweeps = course.tuning_sweeps()
    study = tuning.study(sweeps, "MRR")
    rrf, bm25 = study["RRF k"], study["BM25 (k1, b)"]
    longest = sweeps["chunk size"].chunked[1024]

    def moved(other: tuning.Study) -> str:
        names = [t.parameter for t in other.tunings if t.chosen != study[t.parameter].chosen]
        return ", ".join(names) if names else "none"

    return {
        "tuning_agreed": str(len(study.agreed)),
        "tuning_agreed_names": " and ".join(study.agreed) or "none",
        "rrf_chosen": _setting_value(rrf.chosen),
        "rrf_held_best": _setting_value(rrf.held_best),
        "bm25_chosen": _setting_value(bm25.chosen),
        "bm25_held_best": _setting_value(bm25.held_best),
        "bm25_held_gain": f"{bm25.held_gain:+.3f}",
        "weight_chosen": _setting_value(study["dense weight"].chosen),
        "weight_held_best": _setting_value(study["dense weight"].held_best),
        "tuning_min_holm": _p(min(t.judged.p_holm for t in study.tunings if t.judged.p_holm is not None)),
        "over_window_1024": str(longest.over_window),
        "chunks_1024": str(longest.chunks),
        "tuning_metric_moved": moved(tuning.study(sweeps, "Hit@4")),
        "tuning_seed_moved": moved(tuning.study(sweeps, "MRR", seed=5)),
    }


def figures(course: Course, solutions: Path) -> dict[str, str]:
    """Every figure the guide quotes that this module computes, by name, written as the guide writes it."""
    return {
        **_ex2(course),
        **_ex3(course, solutions),
        **_ex5(course, solutions),
        **_differs(course),
        **_abstention(course),
        **_predictions(course),
        **_tuning(course),
        **_generation(course),
        **class_times(solutions.parent.parent),  # the lessons' class times, from their twins
    }


def main(argv: list[str] | None = None) -> int:
    """Say which marked figures of the guide drift from the computation; with --write, write them in."""
    import argparse

    from ragkit.teach.course import load

    parser = argparse.ArgumentParser(prog="python -m teacher.guide", description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="write the computed figures into docs/teacher-guide.md")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    path = root / "docs" / "teacher-guide.md"
    text = path.read_text(encoding="utf-8")
    marked = quoted(text)
    values = figures(load(progress=False), root / "notebooks" / "twins" / "solutions")
    drift = sorted(n for n, v in values.items() if n in marked and marked[n] != {v})
    for name in drift:
        print(f"{name}: the guide says {' / '.join(sorted(marked[name]))}, the computation {values[name]}")
    if args.write and drift:
        kept = {name: next(iter(marked[name])) for name in EXECUTED if name in marked}
        path.write_text(render(text, {**kept, **values}), encoding="utf-8")
        print(
            f"wrote {len(drift)} figure(s) into {path.relative_to(root)}; exercise 4's "
            f"({', '.join(EXECUTED)}) are measured beside its executed solution, by the notebook tests"
        )
        return 0
    return 1 if drift else 0


if __name__ == "__main__":
    raise SystemExit(main())
