"""Knowledge checks: a few multiple-choice questions at the end of each notebook, with feedback on every option.

Where the right option depends on this corpus's numbers, it is computed from the course, never typed in; every
notebook's check has at least one question that applies its idea to a new case (a cut, a chunk boundary, a pair
of win/loss counts). Options are shuffled per student, with a seed from the student's name, so a reload shows the
same order and clicking the same position everywhere scores chance. The questions are plain data (``question``),
built per notebook (``retrieving``: 00 to 03, ``ranking``: 02b and 03b to 05, ``answering``: 06 to 08b) and picked and
shuffled by ``by_notebook`` (``questions(notebook, course)``); ``asking``'s ``Quiz`` shows them as ipywidgets and
records each score in the student's results file, like the exercises' checks. A question that tests the notebook's
prediction (``before_reveal``) is asked where the prediction is made, before the result that answers it
(``ragkit.teach.lesson.predict``).
"""

from ragkit.teach.lesson.quiz import answering, asking, by_notebook, question, ranking, retrieving
from ragkit.teach.lesson.quiz.answering import *
from ragkit.teach.lesson.quiz.asking import *
from ragkit.teach.lesson.quiz.by_notebook import *
from ragkit.teach.lesson.quiz.question import *
from ragkit.teach.lesson.quiz.ranking import *
from ragkit.teach.lesson.quiz.retrieving import *

__all__ = ["answering", "asking", "by_notebook", "question", "ranking", "retrieving"]
