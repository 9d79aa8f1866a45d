"""Why a notebook did not run: a value the sandbox and its confined child hand back, said once per language.

The child sends it in its JSON report (``RunFailure.to_json``), the sandbox reads it back as hostile input
(``RunFailure.from_json``) and carries it in ``SandboxRun``; the grader says it (``str``) in the language of the
notebook it is about. Nothing reads a sentence back: each cause has its fields, numbers as numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, get_args

from ragkit.teach.language import _, say

__all__ = [
    "A_CELL_RAISED",
    "CAUSES",
    "CELL_RAISED",
    "KERNEL_DIED",
    "MEMORY_BOUND",
    "NOT_READ",
    "NOT_READABLE",
    "NO_REPORT",
    "NO_REPORT_SAYING",
    "TIMED_OUT",
    "TOO_LARGE",
    "Cause",
    "RunFailure",
]

Cause = Literal[
    "timed out", "kernel died", "cell raised", "not readable", "no report", "too large", "not read", "sandbox"
]
"""Why a run stopped: the notebook's doing (the first six, and ``not read``: the file handed in), or ``sandbox``, the
machine's fault (the sandbox could not start, or failed to contain the run), which is the teacher's to read."""
CAUSES: tuple[str, ...] = get_args(Cause)

TIMED_OUT = "still running after the time limit of {seconds:g} s (a loop, a wait, or too slow): stopped"
KERNEL_DIED = "the kernel died (it exited, crashed or ran out of memory)"
CELL_RAISED = "cell {number} raised {error}: {message}"
A_CELL_RAISED = "a cell raised {error}: {message}"
NOT_READABLE = "not a readable notebook ({error}: {message})"
NO_REPORT = "the sandbox ended without a report (killed: memory, a signal, os._exit)"
NO_REPORT_SAYING = "the sandbox ended without a report (killed: memory, a signal, os._exit): {last}"
TOO_LARGE = "the notebook's answers exceed {limit:,} bytes"
NOT_READ = "notebook not read ({reason})"
MEMORY_BOUND = "{reason} (the run reached its memory bound of {gib:.3g} GiB, all its processes together)"


@dataclass(frozen=True)
class RunFailure:
    """Why one run did not finish: its cause and the fields its sentence takes (each cause uses a few of them)."""

    cause: Cause
    seconds: float | None = None
    """``timed out``: the time limit, in seconds."""
    number: int | None = None
    """``cell raised``: the number of the cell that raised (from 1), or None where the child could not tell which."""
    error: str = ""
    """``cell raised``, ``not readable``: the exception's name."""
    message: str = ""
    """``cell raised``, ``not readable``: the exception's message."""
    last: str = ""
    """``no report``: the child's last line on stderr, where it wrote one."""
    limit: int | None = None
    """``too large``: the bytes a run's report may take."""
    reason: str = ""
    """``not read``: why the notebook's file was not read (the reader's words)."""
    text: str = ""
    """``sandbox``: the machine's fault, as the sandbox wrote it for the teacher (never translated)."""
    memory_bound: int | None = None
    """The run's memory bound, in bytes, where the run reached it (whatever the cause it then showed)."""

    def __post_init__(self) -> None:
        if self.cause not in CAUSES:
            raise ValueError(f"{self.cause!r} is not a cause a run stops for: one of {', '.join(CAUSES)}")

    def __str__(self) -> str:
        """The failure said in the language being spoken (English: as the sandbox has always written it)."""
        said = self._said()
        if self.memory_bound is not None:
            return say(MEMORY_BOUND, reason=said, gib=self.memory_bound / 2**30)
        return said

    def _said(self) -> str:
        cause = self.cause
        if cause == "timed out":
            return say(TIMED_OUT, seconds=self.seconds)
        if cause == "kernel died":
            return _(KERNEL_DIED)
        if cause == "cell raised":
            if self.number is None:
                return say(A_CELL_RAISED, error=self.error, message=self.message)
            return say(CELL_RAISED, number=self.number, error=self.error, message=self.message)
        if cause == "not readable":
            return say(NOT_READABLE, error=self.error, message=self.message)
        if cause == "no report":
            return say(NO_REPORT_SAYING, last=self.last) if self.last else _(NO_REPORT)
        if cause == "too large":
            return say(TOO_LARGE, limit=self.limit)
        if cause == "not read":
            return say(NOT_READ, reason=self.reason)
        return self.text  # the machine's fault: the teacher's to read, as written

    def to_json(self) -> dict[str, object]:
        """The failure as the child's report carries it: its cause and the fields it sets."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) not in (None, "") or f.name == "cause"}

    @classmethod
    def from_json(cls, data: object) -> RunFailure:
        """A failure from a report read as hostile input: a known cause, its fields of their types, texts bounded.

        Anything else raises ``TypeError`` or ``ValueError``: the report is then no report at all.
        """
        if not isinstance(data, dict) or data.get("cause") not in CAUSES:
            raise ValueError("a failure names one of the causes a run stops for")
        given: dict[str, object] = {}
        for name, value in data.items():
            if name in ("number", "limit", "memory_bound"):
                if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
                    raise TypeError(f"{name} must be a whole number")
            elif name == "seconds":
                if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 2**63:
                    raise TypeError(f"{name} must be a number of seconds")
                value = float(value)
            elif name in _BOUNDS:
                if not isinstance(value, str):
                    raise TypeError(f"{name} must be a text")
                value = value[: _BOUNDS[name]]
            elif name != "cause":
                raise ValueError(f"a failure has no field {name!r}")
            given[name] = value
        failure = cls(**given)  # type: ignore[arg-type]
        if (needed := _NEEDED.get(failure.cause)) and getattr(failure, needed) in (None, ""):
            raise ValueError(f"a failure of cause {failure.cause!r} needs its {needed}")
        return failure


_BOUNDS = {"error": 200, "message": 300, "last": 300, "reason": 500, "text": 500}
"""Characters each text field of a failure keeps when it is read from a report (an exception's name is the
notebook's to choose; a machine's reason was cut at 500 characters before it was a value)."""
_NEEDED = {"timed out": "seconds", "too large": "limit", "not read": "reason", "sandbox": "text"}
"""The field a cause's sentence cannot go without."""
