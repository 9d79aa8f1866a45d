"""Whether this Python holds ragkit's dependencies: run from the clone by another Python (the system's, with none of
them), ``python -m ragkit`` says in one sentence which Python to use, where it would end in a traceback."""

from __future__ import annotations

import sys
from importlib.util import find_spec

__all__ = ["ADVICE", "NEEDED", "check_dependencies", "missing"]

NEEDED = ("numpy", "scipy", "markdown_it")
"""What the engine imports everywhere: a Python without them cannot run it (a command's own needs say their own)."""

ADVICE = (
    "run ragkit with the Python of the environment `make` builds: `.venv/bin/python -m ragkit ...` from the "
    "clone (`make setup` builds .venv the first time), or activate it first (`source .venv/bin/activate`)"
)


def missing() -> list[str]:
    """The modules of NEEDED this Python cannot find."""
    return [name for name in NEEDED if not _found(name)]


def _found(name: str) -> bool:
    """Whether this Python can import ``name`` (a module already loaded without a spec counts as found)."""
    try:
        return find_spec(name) is not None
    except ValueError:  # in sys.modules with __spec__ None: loaded, so found
        return True


def check_dependencies() -> None:
    """Nothing when this Python holds ragkit's dependencies; else one sentence and exit 1 under ``python -m``, or a
    ModuleNotFoundError carrying that sentence when a script imports ragkit."""
    absent = missing()
    if not absent:
        return
    sentence = f"this Python ({sys.executable}) lacks ragkit's dependencies ({', '.join(absent)}): {ADVICE}"
    if sys.argv[:1] == ["-m"]:  # `python -m ragkit`: the package is imported while argv[0] is still "-m"
        sys.stderr.write(f"error: {sentence}\n")
        raise SystemExit(1)
    raise ModuleNotFoundError(sentence, name=absent[0])


check_dependencies()  # on import: ragkit/__init__.py imports this module before anything that needs a dependency
