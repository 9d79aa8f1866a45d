"""One name, one thing; modules of one job; a public face: read off ragkit's source with ``ast``, nothing imported."""

import ast
import re
from collections import defaultdict
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "ragkit"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 600

SHARED_VERBS: dict[str, str] = {
    "main": "a module's entry point, what `python -m` runs (the CLI's, and the grader's confined child's)",
    "write": "a generated file's protocol (classroom.generated: edition, guides, address), and the result store's",
    "check": "a generated file's protocol (classroom.generated), and the environment's check of the Python in use",
    "skeleton": "the translation generators' protocol (classroom.generated: edition, guides)",
}
"""Public names that several modules define on purpose, because they are one protocol; each says which."""

NOT_YET_ONE_NAME: set[str] = {
    "shown",
    "smallest_p",
}
"""Public names still defined in two modules (issue 62 empties this; a name fixed must leave it)."""

NOT_YET_PRIVATE: set[tuple[str, str]] = set()
"""(importing module, private name) pairs still crossing modules (issue 62 empties this)."""

NOT_YET_SMALL: set[str] = {
    "ragkit.teach.lesson.narrate.citations",
}
"""Modules still over MAX_LINES (issue 62 empties this)."""

NOT_YET_ALL: set[str] = {
    "ragkit.report",
    "ragkit.teach",
    "ragkit.teach.language",
}
"""Modules that do not yet say their public names in ``__all__`` (issue 62 empties this)."""

NOT_YET_IN_ARCHITECTURE: set[str] = {
    "ragkit.cli",
    "ragkit.cli.common",
    "ragkit.cli.vectors",
    "ragkit.errors",
    "ragkit.faithfulness",
    "ragkit.generation",
    "ragkit.phrasing",
    "ragkit.plumbing.environment",
    "ragkit.plumbing.generator_export",
    "ragkit.plumbing.timing",
    "ragkit.teach.classroom.address",
    "ragkit.teach.classroom.class_repo",
    "ragkit.teach.classroom.edition",
    "ragkit.teach.classroom.generated",
    "ragkit.teach.classroom.guides",
    "ragkit.teach.classroom.pace",
    "ragkit.teach.classroom.quiet",
    "ragkit.teach.classroom.workspace",
    "ragkit.teach.exercises.ex1_destroyed_needle",
    "ragkit.teach.exercises.ex2_threshold",
    "ragkit.teach.exercises.ex3_tickets",
    "ragkit.teach.exercises.ex4_header",
    "ragkit.teach.exercises.ex5_own_document",
    "ragkit.teach.exercises.feedback",
    "ragkit.teach.grading.cgroup",
    "ragkit.teach.grading.class_report",
    "ragkit.teach.grading.confinement",
    "ragkit.teach.grading.failures",
    "ragkit.teach.grading.gradebook",
    "ragkit.teach.grading.handed_in",
    "ragkit.teach.grading.isolation",
    "ragkit.teach.grading.judging",
    "ragkit.teach.grading.nbgrader_export",
    "ragkit.teach.grading.uids",
    "ragkit.teach.lesson.claims",
    "ragkit.teach.lesson.formats",
    "ragkit.teach.lesson.held_out",
    "ragkit.teach.lesson.latency",
    "ragkit.teach.lesson.narrate",
    "ragkit.teach.lesson.narrate.bm25_and_hybrid",
    "ragkit.teach.lesson.narrate.dense_retrieval",
    "ragkit.teach.lesson.narrate.phrasing",
    "ragkit.teach.lesson.narrate.production",
    "ragkit.teach.lesson.narrate.reranking",
    "ragkit.teach.lesson.narrate.start_here",
    "ragkit.teach.lesson.narrate.statistics_further",
    "ragkit.teach.lesson.narrate.thresholds",
    "ragkit.teach.lesson.overlap",
    "ragkit.teach.lesson.paired",
    "ragkit.teach.lesson.plots",
    "ragkit.teach.lesson.plots.needles",
    "ragkit.teach.lesson.plots.thresholds",
    "ragkit.teach.lesson.predict",
    "ragkit.teach.lesson.quiz.answering",
    "ragkit.teach.lesson.quiz.asking",
    "ragkit.teach.lesson.quiz.by_notebook",
    "ragkit.teach.lesson.quiz.question",
    "ragkit.teach.lesson.quiz.ranking",
    "ragkit.teach.lesson.quiz.retrieving",
    "ragkit.teach.lesson.reminders",
    "ragkit.teach.lesson.settings",
    "ragkit.teach.lesson.tables",
    "ragkit.teach.lesson.tradeoff",
    "ragkit.teach.lesson.widgets",
    "ragkit.teach.moved",
}
"""Modules docs/architecture.md does not yet name (issue 62 empties this)."""


def dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def defined(module: ast.Module) -> list[str]:
    """The public names a module defines at its top level (functions, classes, assigned names)."""
    names: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def twice() -> dict[str, list[str]]:
    homes: dict[str, list[str]] = defaultdict(list)
    for path in MODULES:
        for name in defined(tree(path)):
            homes[name].append(dotted(path))
    return {name: where for name, where in homes.items() if len(where) > 1}


def test_a_public_name_is_defined_in_one_module():
    found = twice()
    new = {name: where for name, where in found.items() if name not in SHARED_VERBS.keys() | NOT_YET_ONE_NAME}
    assert not new, f"public names defined in two modules: give one a longer name, or import it: {new}"
    fixed = NOT_YET_ONE_NAME - set(found)
    assert not fixed, f"no longer defined twice: take them off NOT_YET_ONE_NAME: {sorted(fixed)}"
    assert len(SHARED_VERBS) <= 10


def crossing() -> set[tuple[str, str]]:
    """Private names imported from another module of ragkit (the translation function ``_`` excepted)."""
    found = set()
    for path in MODULES:
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragkit"):
                found |= {(dotted(path), a.name) for a in node.names if a.name.startswith("_") and a.name != "_"}
    return found


def test_no_private_name_crosses_modules():
    found = crossing()
    assert not found - NOT_YET_PRIVATE, f"private names imported across modules: {sorted(found - NOT_YET_PRIVATE)}"
    assert not NOT_YET_PRIVATE - found, f"take these off NOT_YET_PRIVATE: {sorted(NOT_YET_PRIVATE - found)}"


def test_no_module_is_over_600_lines():
    long = {dotted(p) for p in MODULES if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES}
    assert not long - NOT_YET_SMALL, (
        f"modules over {MAX_LINES} lines: split them by job: {sorted(long - NOT_YET_SMALL)}"
    )
    assert not NOT_YET_SMALL - long, f"take these off NOT_YET_SMALL: {sorted(NOT_YET_SMALL - long)}"


def says_all(module: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for node in module.body
    )


def test_every_module_says_its_public_names():
    """``__all__`` in every module: what a reader may use is said, not guessed from underscores."""
    missing = {dotted(p) for p in MODULES if p.stem != "__main__" and not says_all(tree(p))}
    assert not missing - NOT_YET_ALL, f"modules without __all__: {sorted(missing - NOT_YET_ALL)}"
    assert not NOT_YET_ALL - missing, f"take these off NOT_YET_ALL: {sorted(NOT_YET_ALL - missing)}"


def test_every_public_name_a_module_lists_is_defined_or_imported_there():
    for path in MODULES:
        module = tree(path)
        listed = next(
            (
                ast.literal_eval(node.value)
                for node in module.body
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            ),
            (),
        )
        bound = set(defined(module)) | {
            (a.asname or a.name).split(".")[0]
            for node in module.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            for a in node.names
        }
        bound |= {
            t.id
            for node in module.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        assert not set(listed) - bound, (dotted(path), sorted(set(listed) - bound))


def test_architecture_names_every_module():
    """docs/architecture.md is where a newcomer finds a module: each is named there in a code span."""
    spans = " ".join(re.findall(r"`([^`]+)`", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")))
    missing = {
        dotted(p)
        for p in MODULES
        if p.stem not in ("__main__",)
        and not re.search(rf"(?<![\w.]){re.escape(p.stem if p.stem != '__init__' else p.parent.name)}(?!\w)", spans)
    }
    assert not missing - NOT_YET_IN_ARCHITECTURE, f"modules docs/architecture.md does not name: {sorted(missing)}"
    assert not NOT_YET_IN_ARCHITECTURE - missing, (
        f"take these off NOT_YET_IN_ARCHITECTURE: {sorted(NOT_YET_IN_ARCHITECTURE - missing)}"
    )
