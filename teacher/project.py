"""The project page's figures (docs/project.md): the worked example's, each computed by the project's own run.

A figure in ``docs/project.md`` is written ``<!--fig:name-->value<!--/fig-->`` (the pattern of
``ragkit.teach.classroom.figures``); ``figures()`` computes every name from ``ragkit.project.run_project`` on the
bundled example and from the project's rules, and a test fails when one drifts. ``python -m teacher.project
[--write]`` checks (or writes) them.
"""

from __future__ import annotations

from pathlib import Path

from ragkit import project
from ragkit.statistics import smallest_p
from ragkit.teach.classroom.figures import quoted, render
from ragkit.teach.exercises.rules import PROJECT, ProjectRules

__all__ = ["PAGE", "figures", "main"]

PAGE = Path("docs") / "project.md"
"""The page whose figures this module computes, relative to the clone."""


def _run_key(label: str) -> str:
    """A run's label as part of a figure's name: ``E/hybrid`` becomes ``e_hybrid``."""
    return label.replace("/", "_").lower()


def _pair(values: tuple[float, float] | list[float]) -> dict[str, str]:
    return {"low": f"{values[0]:.3f}", "high": f"{values[1]:.3f}"}


def figures(outcome: project.Outcome, example: Path, rules: ProjectRules = PROJECT) -> dict[str, str]:
    """Every figure the project page quotes, by name, written as the page writes it."""
    from ragkit.corpus import load_corpus
    from ragkit.data import load_out_of_domain

    corpus = load_corpus(example / project.CORPUS_FOLDER)
    ood = load_out_of_domain(example / project.OUT_OF_DOMAIN_FILE)
    (tune_needles, tune_ood), (held_needles, held_ood) = (
        outcome.split.counts(outcome.split.tuning),
        outcome.split.counts(outcome.split.held_out),
    )
    c, held, tuned = outcome.challenge, outcome.held_gate, outcome.tuned_gate
    out = {
        "rules_documents": str(rules.documents),
        "rules_words": f"{rules.words:,}",
        "rules_needles": str(rules.needles),
        "rules_half": str(rules.needles // 2),
        "rules_half_p": f"{smallest_p(rules.needles // 2):.4f}",
        "rules_ood": str(rules.out_of_domain),
        "rules_report_low": str(rules.report_words[0]),
        "rules_report_high": f"{rules.report_words[1]:,}",
        "rules_tolerance": f"{rules.tolerance:g}",
        "ex_documents": str(len(corpus.documents)),
        "ex_words": f"{sum(len(d.text.split()) for d in corpus.documents):,}",
        "ex_needles": str(len(outcome.split.needles)),
        "ex_ood": str(len(ood)),
        "ex_adjacent": str(sum(o.kind == "adjacent" for o in ood)),
        "ex_absurd": str(sum(o.kind == "absurd" for o in ood)),
        "ex_tune_needles": str(tune_needles),
        "ex_tune_ood": str(tune_ood),
        "ex_held_needles": str(held_needles),
        "ex_held_ood": str(held_ood),
        "ex_chosen": outcome.chosen,
        "ex_held_best": str(outcome.tuning.held_best),
        "ex_challenger": c.challenger,
        "ex_tune_split": f"+{c.tuning.wins}/-{c.tuning.losses}",
        "ex_tune_p": f"{c.tuning.p:.2g}",
        "ex_held_split": f"+{c.held_out.wins}/-{c.held_out.losses}",
        "ex_held_p": f"{c.held_out.p:.2g}",
        "ex_verdict": str(c.verdict),
        "ex_smallest_p": f"{outcome.smallest_p:.3f}",
        "ex_metric": f"{outcome.held_metric:.3f}",
        "ex_metric_low": f"{outcome.held_interval.low:.3f}",
        "ex_metric_high": f"{outcome.held_interval.high:.3f}",
        "ex_design": f"{outcome.held_interval.design_effect:.2f}",
        "ex_in_prompt": str(outcome.in_prompt[0]),
        "ex_in_prompt_n": str(outcome.in_prompt[1]),
        **{f"ex_in_prompt_{k}": v for k, v in _pair(outcome.in_prompt_interval).items()},
        "ex_cut": "none" if outcome.cut is None else f"{outcome.cut:.3f}",
        "ex_tune_cost": f"{tuned.cost:g}",
        "ex_tune_bluffs": str(tuned.row.bluffs),
        "ex_tune_without": str(tuned.row.answered_without_needle),
        "ex_tune_refused": str(tuned.row.refused),
        "ex_tune_ceiling": f"{outcome.plan.prices.max_refused * tuned.row.in_domain:g}",
        "ex_held_bluffs": str(held.row.bluffs),
        **{f"ex_held_bluffs_{k}": v for k, v in _pair(held.bluff_interval).items()},
        "ex_held_refused": str(held.row.refused),
        **{f"ex_held_refused_{k}": v for k, v in _pair(held.refusal_interval).items()},
        "ex_held_without": str(held.row.answered_without_needle),
        "ex_held_cost": f"{held.cost:g}",
        "ex_in_domain": str(held.row.in_domain),
        "ex_destroyed": str(len(outcome.destroyed)),
    }
    for trial in outcome.tuning.trials:
        out[f"run_{_run_key(str(trial.value))}_tune"] = f"{trial.tune:.3f}"
        out[f"run_{_run_key(str(trial.value))}_held"] = f"{trial.held:.3f}"
    return out


def main(argv: list[str] | None = None) -> int:
    """Say which marked figures of the project page drift from the computation; with --write, write them in."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m teacher.project", description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="write the computed figures into docs/project.md")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    path, example = root / PAGE, root / "data" / "example"
    text = path.read_text(encoding="utf-8")
    marked = quoted(text)
    values = figures(project.run_project(example), example)
    drift = sorted(n for n, v in values.items() if n in marked and marked[n] != {v})
    for name in drift:
        print(f"{name}: the page says {' / '.join(sorted(marked[name]))}, the computation {values[name]}")
    if args.write and drift:
        path.write_text(render(text, values), encoding="utf-8")
        print(f"wrote {len(drift)} figure(s) into {PAGE}")
        return 0
    return 1 if drift else 0


if __name__ == "__main__":
    raise SystemExit(main())
