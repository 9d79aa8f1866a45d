"""The run-times table ``make bench`` writes into the teacher's guide: measurements kept as data, shown in a language.

The benchmark writes the table in English with its measurements beside it, as JSON in an HTML comment; the Dutch
guide shows the same measurements in Dutch, written from that data (``in_every_language``), never translated from the
English sentences.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from ragkit.teach import language
from ragkit.teach.language import _, say

__all__ = ["END", "START", "RunTimes", "Timed", "in_every_language"]

START, END = "<!-- run-times: written by make bench, do not edit -->", "<!-- /run-times -->"
_DATA = re.compile(r"<!-- run-times data: (\{.*?\}) -->")
_MONTHS = "januari februari maart april mei juni juli augustus september oktober november december".split()


@dataclass(frozen=True)
class Timed:
    """One notebook's run on a fresh kernel: warm (the cache filled) and cold (an empty cache; None: not measured)."""

    notebook: str
    warm: float
    cold: float | None


@dataclass(frozen=True)
class RunTimes:
    """What one ``make bench`` measured for the guide, and on what: when (UTC), cores, machine, Python, load; and
    the warm runs' total, summed before any rounding."""

    when: str
    cores: int
    machine: str
    python: str
    load: float
    timed: tuple[Timed, ...]
    warm_total: float

    def _when(self) -> str:
        """The date and time, as the kernel's language writes a date in prose."""
        day, _, clock = self.when.partition(" ")
        if language.current() != "nl":
            return f"{day} {clock} UTC"
        year, month, date = (int(x) for x in day.split("-"))
        return f"{date} {_MONTHS[month - 1]} {year}, {clock} UTC"

    def _seconds(self, seconds: float | None) -> str:
        return _("not measured") if seconds is None else say("{seconds:.0f} s", seconds=seconds)

    def block(self) -> str:
        """The table with its sentences, markers and data, in the kernel's language."""
        shared = (
            _(" (above the core count: the machine was shared, so these times are longer than on an idle machine)")
            if self.load > self.cores
            else ""
        )
        lines = [
            START,
            "",
            f"<!-- run-times data: {json.dumps(asdict(self), separators=(',', ':'))} -->",
            "",
            say(
                "Measured by `make bench` on {when}: {cores} cores, {machine}, Python {python}, load average "
                "{load:.1f} when it started{shared}; warm = the embedding cache already filled (a second run, or "
                "Binder after its build), cold = an empty cache (the first run on a new machine). Each notebook on "
                "a fresh kernel.",
                when=self._when(),
                cores=self.cores,
                machine=self.machine,
                python=self.python,
                load=self.load,
                shared=shared,
            ),
            "",
            say("| notebook | warm | cold |"),
            "|---|---:|---:|",
            *(f"| {t.notebook} | {self._seconds(t.warm)} | {self._seconds(t.cold)} |" for t in self.timed),
            "",
            say(
                "All {n} warm, one after another: {total} (summed before each row was rounded).",
                n=len(self.timed),
                total=self._seconds(self.warm_total),
            ),
        ]
        if missing := sum(t.cold is None for t in self.timed):
            lines += [
                "",
                say(
                    "Cold was not measured for {missing} notebooks (RAGKIT_BENCH_COLD limited it); unset it on an "
                    "idle machine to measure every one.",
                    missing=missing,
                ),
            ]
        return "\n".join([*lines, "", END])

    @classmethod
    def found(cls, text: str) -> RunTimes | None:
        """The measurements a guide's table carries, or None where it has no table or its data cannot be read."""
        match = _DATA.search(text)
        if match is None:
            return None
        try:
            raw = json.loads(match.group(1))
            timed = tuple(Timed(t["notebook"], float(t["warm"]), t["cold"]) for t in raw.pop("timed"))
            return cls(**raw, timed=timed)
        except (ValueError, KeyError, TypeError):
            return None


def in_every_language(text: str) -> str:
    """``text`` with its run-times table (copied from the English guide) written again in the kernel's language."""
    times = RunTimes.found(text)
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if times is None or not start or not end:
        return text
    return head + times.block() + tail
