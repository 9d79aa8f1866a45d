"""The teacher's grader: submitted notebooks run in the sandbox, judged by the exercises' own checks; the nbgrader
export; class-report over a class's results files. Everything a student wrote is read here as hostile input.

Its modules, by job: ``grader`` (``ragkit grade``, the orchestration), ``handed_in`` (which notebook is whose),
``answers`` (the declared answers read and validated), ``judging`` (each check in a bounded thread), ``gradebook``
(the rows, the table, CSV and JSON), ``sandbox`` (one notebook run contained), ``isolation`` (its limits and what
this machine can hold it to), ``uids`` (a uid of its own per run), ``confinement`` (the sandbox's child),
``failures`` (why a run did not finish, as a value), ``cgroup``, ``nbgrader_export``, ``class_report``.
"""

__all__ = []
