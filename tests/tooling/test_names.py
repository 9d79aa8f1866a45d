"""One name, one thing; modules of one job; a public face: read off ragkit's source with ``ast``, nothing imported."""

import ast
import re
from collections import Counter, defaultdict
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "ragkit"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 600

SHARED_VERBS: dict[str, str] = {
    "main": "a module's entry point, what `python -m` runs (the CLI's, and the grader's confined child's)",
    "write": "a generated file's protocol (classroom.generated: edition, guides, address)",
    "check": "a generated file's protocol (classroom.generated: edition, guides, address)",
    "skeleton": "the translation generators' protocol (classroom.generated: edition, guides)",
}
"""Public names that several modules define on purpose, because they are one protocol; each says which."""


def dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a module's top level, those under a top-level ``if``, ``try`` or ``with`` included."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If | ast.Try | ast.With):
            inner = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            inner += [s for handler in getattr(node, "handlers", []) for s in handler.body]
            out += top_level(inner)
    return out


def targets(target: ast.expr) -> list[str]:
    """The names an assignment binds, tuple and list targets unpacked."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in targets(element)]
    return []


def defined(module: ast.Module, private: bool = False) -> list[str]:
    """The public names a module defines at its top level (functions, classes, assigned names); all, with private."""
    names: list[str] = []
    for node in top_level(module.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [name for t in node.targets for name in targets(t)]
        elif isinstance(node, ast.AnnAssign):
            names += targets(node.target)
    return [n for n in dict.fromkeys(names) if private or not n.startswith("_")]


def twice() -> dict[str, list[str]]:
    homes: dict[str, list[str]] = defaultdict(list)
    for path in MODULES:
        for name in defined(tree(path)):
            homes[name].append(dotted(path))
    return {name: where for name, where in homes.items() if len(where) > 1}


def test_a_public_name_is_defined_in_one_module():
    found = twice()
    new = {name: where for name, where in found.items() if name not in SHARED_VERBS}
    assert not new, f"public names defined in two modules: give one a longer name, or import it: {new}"
    assert len(SHARED_VERBS) <= 10 and set(SHARED_VERBS) <= set(found), "an allow-listed verb no longer shared"


def crossing() -> set[tuple[str, str]]:
    """Private names imported from another module of ragkit (the translation function ``_`` excepted)."""
    found = set()
    for path in MODULES:
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ImportFrom) and ((node.module or "").startswith("ragkit") or node.level > 0):
                found |= {(dotted(path), a.name) for a in node.names if a.name.startswith("_") and a.name != "_"}
    return found


def test_no_private_name_crosses_modules():
    assert not crossing(), f"private names imported across modules: make them public or keep them home: {crossing()}"


def test_no_module_is_over_600_lines():
    long = {dotted(p) for p in MODULES if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: split them by job: {sorted(long)}"


def says_all(module: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for node in module.body
    )


def test_every_module_says_its_public_names():
    """``__all__`` in every module: what a reader may use is said, not guessed from underscores."""
    missing = {dotted(p) for p in MODULES if p.stem != "__main__" and not says_all(tree(p))}
    assert not missing, f"modules without __all__: {sorted(missing)}"


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
        bound = set(defined(module, private=True)) | {
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
        if "__getattr__" in bound:  # a lazy module (PEP 562): what its ``if TYPE_CHECKING:`` block imports is bound
            bound |= {
                a.asname or a.name
                for node in module.body
                if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
                for inner in node.body
                if isinstance(inner, ast.ImportFrom)
                for a in inner.names
            }
        assert not set(listed) - bound, (dotted(path), sorted(set(listed) - bound))


def code_spans(markdown: str) -> list[str]:
    """The inline code spans of a Markdown text, as markdown-it reads them (a fence's backticks pair with nothing)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return [child.content for t in tokens for child in t.children or () if child.type == "code_inline"]


def test_architecture_names_every_module():
    """docs/architecture.md is where a newcomer finds a module: each is named there in a code span."""
    spans = " ".join(code_spans((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")))
    short = {p: p.stem if p.stem != "__init__" else p.parent.name for p in MODULES if p.stem != "__main__"}
    alike = Counter(short.values())  # two modules of one name (tuning, citations) need a mention each
    missing = {
        dotted(p)
        for p, name in short.items()
        if len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", spans)) < alike[name]
    }
    assert not missing, f"modules docs/architecture.md does not name: {sorted(missing)}"


def literal_levels(module: ast.Module) -> list[int]:
    """Lines where the literal 0.05 is the course's significance level: compared with a p, or an ``alpha``'s value."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value == 0.05 for c in [node.left, *node.comparators]
        ):
            found.append(node.lineno)
        elif isinstance(node, ast.arguments):
            named = [*node.posonlyargs, *node.args][-len(node.defaults) :] if node.defaults else []
            pairs = [*zip(named, node.defaults), *zip(node.kwonlyargs, node.kw_defaults)]
            found += [
                d.lineno for a, d in pairs if a.arg == "alpha" and isinstance(d, ast.Constant) and d.value == 0.05
            ]
        elif isinstance(node, ast.keyword) and node.arg == "alpha" and isinstance(node.value, ast.Constant):
            found += [node.value.lineno] if node.value.value == 0.05 else []
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value == 0.05:
            found += [node.lineno for t in node.targets for name in targets(t) if "ALPHA" in name]
    return sorted(found)


def test_the_significance_level_is_statistics_alpha_everywhere():
    """One level in one place (issue 62): every p is compared with ``statistics.ALPHA``, never a literal 0.05."""
    found = {dotted(m): lines for m in MODULES if (lines := literal_levels(tree(m))) and m != PACKAGE / "statistics.py"}
    assert not found, f"the literal 0.05 used as the significance level (use ragkit.statistics.ALPHA): {found}"
    assert literal_levels(ast.parse("x = p < 0.05\ndef f(a, alpha=0.05): ...\ng(alpha=0.05)\nALPHA = 0.05")) == [
        1,
        2,
        3,
        4,
    ]
