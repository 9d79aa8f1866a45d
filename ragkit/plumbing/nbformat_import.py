"""nbformat imported without jsonschema's IRI grammar: the one workaround every place that imports nbformat shares.

jupyter-events installs the package of that grammar (``GRAMMAR``), and jsonschema, which nbformat imports, then
builds the grammar with lark when it is imported, seconds of CPU for an "iri" format check nbformat never makes. A
student's kernel would pay it at its first figure (plotly's renderer imports nbformat), the grader's sandbox child
when it reads a submission, and each kernel the sandbox starts: a class of sixty is three hundred children and as
many kernels. The module itself imports nothing but ``sys``.
"""

from __future__ import annotations

import sys

__all__ = ["GRAMMAR", "import_nbformat_quickly"]

GRAMMAR = "rfc3987_syntax"


def import_nbformat_quickly() -> None:
    """Import nbformat with the grammar's package hidden, then show it again (a kernel may import it itself).

    Hidden only while nbformat (and so jsonschema) is imported: jsonschema then checks no "iri" format, and a later
    import of the package works as without ragkit. Nothing to do once jsonschema is imported: its choice is made.
    """
    if "nbformat" in sys.modules or "jsonschema" in sys.modules:
        return
    hidden = GRAMMAR not in sys.modules
    if hidden:
        sys.modules[GRAMMAR] = None  # type: ignore[assignment]  # None in sys.modules makes its import fail
    try:
        import nbformat  # noqa: F401
    finally:
        if hidden and GRAMMAR in sys.modules and sys.modules[GRAMMAR] is None:
            del sys.modules[GRAMMAR]
