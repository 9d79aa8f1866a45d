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
from ragkit.teach.exercises.rules import PROJECT, ProjectRules
from teacher.rendering import Figure, check_or_write, figure, verbatim, written

__all__ = ["PAGE", "PAGES", "figures", "main"]

PAGE = Path("docs") / "project.md"
"""The page whose figures this module computes, relative to the clone."""


def _run_key(label: str) -> str:
    """A run's label as part of a figure's name: ``E/hybrid`` becomes ``e_hybrid``."""
    return label.replace("/", "_").lower()


def _pair(values: tuple[float, float] | list[float]) -> dict[str, Figure]:
    return {"low": _three(values[0]), "high": _three(values[1])}


def _three(value: float) -> Figure:
    """A metric, an interval's end or a cut: three decimals."""
    return figure("{value:.3f}", value=value)


def figures(outcome: project.Outcome, example: Path, rules: ProjectRules = PROJECT) -> dict[str, Figure]:
    """Every figure the project page quotes, by name, as a value."""
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
        "rules_documents": verbatim(rules.documents),
        "rules_words": figure("{value:,}", value=rules.words),
        "rules_needles": verbatim(rules.needles),
        "rules_half": verbatim(rules.needles // 2),
        "rules_half_p": figure("{value:.4f}", value=smallest_p(rules.needles // 2)),
        "rules_ood": verbatim(rules.out_of_domain),
        "rules_report_low": verbatim(rules.report_words[0]),
        "rules_report_high": figure("{value:,}", value=rules.report_words[1]),
        "rules_tolerance": figure("{value:g}", value=rules.tolerance),
        "ex_documents": verbatim(len(corpus.documents)),
        "ex_words": figure("{value:,}", value=sum(len(d.text.split()) for d in corpus.documents)),
        "ex_needles": verbatim(len(outcome.split.needles)),
        "ex_ood": verbatim(len(ood)),
        "ex_adjacent": verbatim(sum(o.kind == "adjacent" for o in ood)),
        "ex_absurd": verbatim(sum(o.kind == "absurd" for o in ood)),
        "ex_tune_needles": verbatim(tune_needles),
        "ex_tune_ood": verbatim(tune_ood),
        "ex_held_needles": verbatim(held_needles),
        "ex_held_ood": verbatim(held_ood),
        "ex_chosen": verbatim(outcome.chosen),
        "ex_held_best": verbatim(outcome.tuning.held_best),
        "ex_challenger": verbatim(c.challenger),
        "ex_tune_split": figure("+{wins}/-{losses}", wins=c.tuning.wins, losses=c.tuning.losses),
        "ex_tune_p": figure("{value:.2g}", value=c.tuning.p),
        "ex_held_split": figure("+{wins}/-{losses}", wins=c.held_out.wins, losses=c.held_out.losses),
        "ex_held_p": figure("{value:.2g}", value=c.held_out.p),
        "ex_verdict": figure("{verdict}", verdict=c.verdict),
        "ex_smallest_p": _three(outcome.smallest_p),
        "ex_metric": _three(outcome.held_metric),
        "ex_metric_low": _three(outcome.held_interval.low),
        "ex_metric_high": _three(outcome.held_interval.high),
        "ex_design": figure("{value:.2f}", value=outcome.held_interval.design_effect),
        "ex_in_prompt": verbatim(outcome.in_prompt[0]),
        "ex_in_prompt_n": verbatim(outcome.in_prompt[1]),
        **{f"ex_in_prompt_{k}": v for k, v in _pair(outcome.in_prompt_interval).items()},
        "ex_cut": figure("none") if outcome.cut is None else _three(outcome.cut),
        "ex_tune_cost": figure("{value:g}", value=tuned.cost),
        "ex_tune_bluffs": verbatim(tuned.row.bluffs),
        "ex_tune_without": verbatim(tuned.row.answered_without_needle),
        "ex_tune_refused": verbatim(tuned.row.refused),
        "ex_tune_ceiling": figure("{value:g}", value=outcome.plan.prices.max_refused * tuned.row.in_domain),
        "ex_held_bluffs": verbatim(held.row.bluffs),
        **{f"ex_held_bluffs_{k}": v for k, v in _pair(held.bluff_interval).items()},
        "ex_held_refused": verbatim(held.row.refused),
        **{f"ex_held_refused_{k}": v for k, v in _pair(held.refusal_interval).items()},
        "ex_held_without": verbatim(held.row.answered_without_needle),
        "ex_held_cost": figure("{value:g}", value=held.cost),
        "ex_in_domain": verbatim(held.row.in_domain),
        "ex_destroyed": verbatim(len(outcome.destroyed)),
    }
    for trial in outcome.tuning.trials:
        out[f"run_{_run_key(str(trial.value))}_tune"] = _three(trial.tune)
        out[f"run_{_run_key(str(trial.value))}_held"] = _three(trial.held)
    return out


PAGES = {"en": PAGE, "nl": Path("docs") / "nl" / "project.md"}
"""The page in each language, relative to the clone."""


def main(argv: list[str] | None = None) -> int:
    """Say which marked figures of the project page drift from the computation; with --write, write them in."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m teacher.project", description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="write the computed figures into the page, both languages")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    example = root / "data" / "example"
    computed = figures(project.run_project(example), example)
    values = {language: written(computed, language) for language in PAGES}
    return check_or_write({language: root / path for language, path in PAGES.items()}, values, args.write, root)


if __name__ == "__main__":
    raise SystemExit(main())
