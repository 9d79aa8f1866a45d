"""The classroom layer, in rooms by who uses them; it imports the engine (``ragkit``), nothing in the engine imports it.

- ``course``: the course as the notebooks load it, its stages, and the chapter's own figures;
- ``lesson``: what a student sees: narration, plots, widgets, tables, the quiz;
- ``exercises``: the rules, the checks a kernel runs, their feedback and the student's results file;
- ``grading``: what the teacher runs over submissions: the grader, its sandbox, the nbgrader export, class-report;
- ``classroom``: the tools that deploy and author the course: the workspace, the Dutch edition, the pace;
- ``language`` and ``untrusted``, which every room reaches: the kernel's language, and reading what a student wrote.

``docs/architecture.md`` draws which room may import which.
"""

from ragkit.teach import moved

__all__ = ["moved"]

moved.install()
