"""Plotly figures for the notebooks (the interactive layer: the engine never imports this).

Every figure carries a sentence saying what it shows, computed from the same data (its text alternative): a
notebook shows it under the figure, the book gives it to screen readers. Colour never carries meaning alone
(dashes, markers, patterns and labels say it too), and the colours are Okabe and Ito's palette ("Color Universal
Design", 2002), chosen to stay apart under protanopia, deuteranopia and tritanopia (test_accessibility.py
simulates them). A module per subject: ``figure`` (the palette, its words, the text alternative), ``recall`` (Hit@k
and the win-loss grid), ``thresholds`` (the cut axis, the distance histogram and its slider, the abstention rules),
``costs`` (exercise 2's cost charts), ``lengths`` (05's norms and distances against length), ``needles``
(chunking's destroyed needles); a notebook calls ``plots.X``.
"""

from ragkit.teach.lesson.plots import costs, figure, lengths, needles, recall, thresholds
from ragkit.teach.lesson.plots.costs import *
from ragkit.teach.lesson.plots.figure import *
from ragkit.teach.lesson.plots.lengths import *
from ragkit.teach.lesson.plots.needles import *
from ragkit.teach.lesson.plots.recall import *
from ragkit.teach.lesson.plots.thresholds import *

__all__ = ["costs", "figure", "lengths", "needles", "recall", "thresholds"]
