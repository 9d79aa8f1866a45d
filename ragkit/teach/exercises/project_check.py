"""The project's check: what a machine can check of a project handed in (docs/project.md), the rest being the rubric's.

A project folder is a student's files, so it is read as hostile input: regular files only, no link followed, each
bounded in size, copied into a private folder before the engine reads a byte of it. The check then holds it to the
project's rules (``PROJECT``): a valid ground truth of at least the rules' sizes, the course's split sealed over the
files handed in (nothing decided after it was drawn), ``results.json`` the figures these files give (recomputed here
by ``ragkit.project.run_project``), and a report that quotes them. A student runs the same check before handing in
(``python -m ragkit project check FOLDER``); the grader runs it on every project it finds.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ragkit import project
from ragkit.errors import RagkitError
from ragkit.plumbing.bounded import read_regular
from ragkit.teach.exercises.feedback import Feedback, record
from ragkit.teach.exercises.rules import PROJECT, ProjectRules
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import MAX_NESTING, nesting, readable

__all__ = ["REPORT_FILE", "check_project", "differences", "quoted_figures"]

REPORT_FILE = "report.md"
_FILES = (project.QUESTIONS_FILE, project.OUT_OF_DOMAIN_FILE, project.PLAN_FILE, project.SPLIT_FILE)


def _copy(folder: Path, into: Path, rules: ProjectRules) -> list[str]:
    """Copy a project's files into ``into`` as hostile input; what is missing or refused, said for the student."""
    problems: list[str] = []
    corpus = folder / project.CORPUS_FOLDER
    if corpus.is_symlink() or not corpus.is_dir():
        return [say("{name}/ is missing or not a folder: put the project's documents there", name=corpus.name)]
    (into / project.CORPUS_FOLDER).mkdir()
    entries = sorted((e for e in os.scandir(corpus) if e.name.endswith(".md")), key=lambda e: e.name)
    if len(entries) > rules.most_documents:
        return [say("{count} documents: a project holds at most {most}", count=len(entries), most=rules.most_documents)]
    total = 0
    for entry in entries:
        try:
            data = read_regular(Path(entry.path), rules.document_bytes, entry.name)[0]
        except RagkitError as exc:
            problems.append(say("{name} not read: {why}", name=readable(entry.name), why=str(exc)))
            continue
        total += len(data)
        if total > rules.corpus_bytes:
            return [say("the documents hold more than {most:,} bytes together", most=rules.corpus_bytes)]
        (into / project.CORPUS_FOLDER / entry.name).write_bytes(data)
    for name in (*_FILES, project.RESULTS_FILE, REPORT_FILE):
        path = folder / name
        if not path.exists() and not path.is_symlink():
            problems.append(say("{name} is missing", name=name))
            continue
        try:
            (into / name).write_bytes(read_regular(path, rules.file_bytes, name)[0])
        except RagkitError as exc:
            problems.append(say("{name} not read: {why}", name=name, why=str(exc)))
    return problems


def differences(recomputed: Any, handed: Any, tolerance: float, where: str = "") -> list[str]:
    """Where two results differ: a number by more than ``tolerance``, a text, a key or a length; each as its path."""
    if isinstance(recomputed, dict) and isinstance(handed, dict):
        keys = sorted(set(recomputed) | set(handed))
        return [d for k in keys for d in differences(recomputed.get(k), handed.get(k), tolerance, f"{where}.{k}")]
    if isinstance(recomputed, list) and isinstance(handed, list) and len(recomputed) == len(handed):
        return [
            d for i, (a, b) in enumerate(zip(recomputed, handed)) for d in differences(a, b, tolerance, f"{where}[{i}]")
        ]
    numbers = (int, float)
    if (
        isinstance(recomputed, numbers)
        and isinstance(handed, numbers)
        and not isinstance(recomputed, bool)
        and not isinstance(handed, bool)
    ):
        return [] if abs(recomputed - handed) <= tolerance else [where.lstrip(".")]
    same = type(recomputed) is type(handed) and recomputed == handed
    return [] if same else [where.lstrip(".")]


def quoted_figures(outcome: project.Outcome) -> list[str]:
    """The figures a report must quote, as ``project run`` prints them: the chosen run, its cut, its held-out metric."""
    cut = _("no threshold") if outcome.cut is None else f"{outcome.cut:.3f}"
    return [outcome.chosen, cut, f"{outcome.held_metric:.3f}"]


def _quotes(report: str, figure: str) -> bool:
    """Whether a report quotes a figure, written with a decimal point or a decimal comma."""
    return figure in report or figure.replace(".", ",") in report


def check_project(folder: str | Path, rules: ProjectRules = PROJECT) -> Feedback:
    """The project's machine check: its files read without trust, its split respected, its figures recomputed.

    ``rules`` are the project's own (``PROJECT``); a grader passes nothing else.
    """
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return Feedback(
            False,
            (say("{folder} is not a folder: give the project's folder", folder=readable(str(folder))), str(rules)),
        )
    with tempfile.TemporaryDirectory(prefix="ragkit-project-") as private:
        return record("project", _judged(folder, Path(private), rules))


def _not_yet(notes: list[str], hint: str, numbers: dict | None = None) -> Feedback:
    return Feedback(False, tuple(notes), numbers or {}, hints=(hint,))


def _judged(folder: Path, copy: Path, rules: ProjectRules) -> Feedback:
    """The check on a private copy of the project's files."""
    problems = _copy(folder, copy, rules)
    if problems:
        return _not_yet(problems, _("hand in the whole project folder: docs/project.md lists what it holds"))
    try:
        made = project.split_project(copy)  # reads the plan and validates the ground truth first
    except RagkitError as exc:
        return _not_yet([readable(str(exc), 1_500, lines=True)], _("fix what is listed, then split and run again"))
    documents = sorted((copy / project.CORPUS_FOLDER).glob("*.md"))
    words = sum(len(p.read_text(encoding="utf-8", errors="replace").split()) for p in documents)
    needles, out_of_domain = len(made.needles), len(made.tuning | made.held_out) - len(made.needles)
    if len(documents) < rules.documents or words < rules.words or needles < rules.needles:
        return _not_yet(
            [
                say(
                    "{documents} documents of {words:,} words and {needles} needles: a project holds at least "
                    "{least_documents} documents of {least_words:,} words and {least_needles} needles",
                    documents=len(documents),
                    words=words,
                    needles=needles,
                    least_documents=rules.documents,
                    least_words=rules.words,
                    least_needles=rules.needles,
                )
            ],
            _("write more documents or needles, then split again: nothing has been retrieved on them yet"),
        )
    if out_of_domain < rules.out_of_domain:
        return _not_yet(
            [
                say(
                    "{count} out-of-domain queries: a project holds at least {least}",
                    count=out_of_domain,
                    least=rules.out_of_domain,
                )
            ],
            _("write more out-of-domain queries, then split again"),
        )
    try:
        project.read_split(copy)
        outcome = project.run_project(copy, progress=False)
    except RagkitError as exc:
        return _not_yet(
            [readable(str(exc), 1_500, lines=True)], _("run `python -m ragkit project split` only before any retrieval")
        )
    numbers = {
        "chosen": outcome.chosen,
        "cut": outcome.cut,
        "held_metric": round(outcome.held_metric, 4),
        "verdict": str(outcome.challenge.verdict),
    }
    raw = (copy / project.RESULTS_FILE).read_text(encoding="utf-8", errors="replace")
    try:
        handed = json.loads(raw) if nesting(raw) <= MAX_NESTING + 2 else None
    except (ValueError, RecursionError):
        handed = None
    if not isinstance(handed, dict):
        return _not_yet(
            [_("results.json is not the JSON `python -m ragkit project run` writes")],
            _("run `python -m ragkit project run` on the files you hand in"),
            numbers,
        )
    wrong = differences(outcome.to_dict(), handed, rules.tolerance)
    if wrong:
        return _not_yet(
            [
                say(
                    "results.json is not what your files give: {fields} differ from the recomputation",
                    fields=readable(", ".join(wrong[:6]) + (" ..." if len(wrong) > 6 else ""), 400),
                )
            ],
            _("run `python -m ragkit project run` again on exactly the files you hand in, and quote what it writes"),
            numbers,
        )
    report = (copy / REPORT_FILE).read_text(encoding="utf-8", errors="replace")
    length = len(report.split())
    missing = [f for f in quoted_figures(outcome) if not _quotes(report, f)]
    low, high = rules.report_words
    if not low <= length <= high or missing:
        notes = [say("report.md has {words} words (from {low} to {high})", words=length, low=low, high=high)]
        if missing:
            notes.append(say("report.md does not quote {figures}", figures=readable(", ".join(missing), 200)))
        return _not_yet(notes, _("quote the figures as `python -m ragkit project run` prints them"), numbers)
    return Feedback(
        True,
        (
            say(
                "the split is the course's and sealed the files handed in; results.json is what they give: "
                "{chosen} chosen on the tuning half, cut {cut}, held-out {metric} {value:.3f}, verdict: {verdict}",
                chosen=outcome.chosen,
                cut=quoted_figures(outcome)[1],
                metric=outcome.plan.metric,
                value=outcome.held_metric,
                verdict=str(outcome.challenge.verdict),
            ),
            _(
                "what no machine checks is the rubric's: the documents and needles of your own, the plan's reasons, "
                "and what the report makes of the figures"
            ),
        ),
        numbers,
    )
