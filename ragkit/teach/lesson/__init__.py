"""What a student sees: narration (one module per notebook), plots, widgets, tables, the quiz, claims, overlap, latency.

It reads the course and the exercises' rules; nothing but the notebooks, the book and the CLI imports it. A notebook
imports its modules (``from ragkit.teach.lesson import narrate, plots``) and the three names below.
"""

from ragkit.teach.lesson.latency import time_stages, timings_table
from ragkit.teach.lesson.quiz import Quiz

__all__ = ["Quiz", "time_stages", "timings_table"]


def __getattr__(name: str) -> object:
    """A name an older copy of a notebook calls here that is called otherwise now (``ragkit.teach.moved``)."""
    from ragkit.teach.moved import moved_name

    return moved_name(__name__, name)
