"""What a student sees: narration (one module per notebook), plots, widgets, tables, the quiz, claims, overlap, latency.

It reads the course and the exercises' rules; nothing but the notebooks, the book and the CLI imports it. A notebook
imports its modules (``from ragkit.teach.lesson import narrate, plots``) and the three names below.
"""

from ragkit.teach.lesson.latency import measure, timings_table
from ragkit.teach.lesson.quiz import Quiz

__all__ = ["Quiz", "measure", "timings_table"]
