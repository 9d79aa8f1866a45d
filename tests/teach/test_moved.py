"""A student's own copy of a notebook made before the rooms still imports: its old paths reach the same modules."""

import subprocess
import sys

import numpy as np
import pytest

from ragkit.evaluation import Result, compare
from ragkit.teach import moved

OLD_IMPORTS = """
from ragkit.teach import chapter, claims, narrate, plots, tables, widgets
from ragkit.teach import language, overlap, reminders
from ragkit.teach.exercises import EX2, check_threshold_choice, cost_minima, cost_table, threshold_halves
from ragkit.teach.exercises import EX3, check_ticket_phrasings, shared_needle_words, ticket_measures
from ragkit.teach.exercises import EX4, check_header, measure_header, needle_sign_test
from ragkit.teach.exercises import EX5, check_own_document
from ragkit.teach.exercises import check_destroyed_needle, current_student, own_size, results_path
from ragkit.teach.latency import measure, timings_table
from ragkit.teach.quiz import Quiz
import ragkit.teach.course
"""
"""Every import line of every notebook at the last commit before the rooms (bea7b1f), merged."""


def test_every_import_of_the_old_notebooks_runs_in_a_fresh_process_and_reaches_the_modules_in_the_rooms():
    check = OLD_IMPORTS + (
        "import ragkit.teach.lesson.quiz, ragkit.teach.lesson.narrate, ragkit.teach.course.chapter\n"
        "assert Quiz is ragkit.teach.lesson.quiz.Quiz and narrate is ragkit.teach.lesson.narrate\n"
        "assert chapter is ragkit.teach.course.chapter\n"
        "from ragkit.data import shared_needle_words as data_words\n"
        "assert shared_needle_words is data_words\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_every_old_path_names_a_module_that_exists():
    import importlib

    for old, new in moved.MOVED.items():
        assert importlib.import_module(old) is importlib.import_module(new)


def test_the_old_ex4_call_gives_the_engines_needle_test():
    rng = np.random.default_rng(3)
    needles = [f"n{i // 2}" for i in range(40)]
    ids = tuple(f"q{i}" for i in range(40))
    a, b = rng.integers(0, 30, size=40), rng.integers(0, 30, size=40)
    engine = compare(
        Result("A", "dense", a, ids, tuple(needles)),
        Result("B", "dense", b, ids, tuple(needles)),
        "Hit@20",
        level="needle",
    ).test
    assert moved.needle_sign_test_of_ranks(a, b, needles, k=20) == engine


def test_a_name_that_never_was_is_still_an_import_error():
    done = subprocess.run(
        [sys.executable, "-c", "from ragkit.teach.exercises import no_such_name"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "cannot import name 'no_such_name'" in done.stderr


def test_a_name_a_notebook_called_before_its_rename_is_the_renamed_object():
    import importlib

    for (module, old), new in moved.RENAMED.items():
        home = importlib.import_module(module)
        assert getattr(home, old) is getattr(home, new), (module, old, new)


def test_the_calls_of_the_notebooks_before_the_renames_run_in_a_fresh_process():
    """A student's copy made before the renames imports and calls the old names (02's import line, 06's table)."""
    check = (
        "from ragkit.teach.lesson import claims, measure, narrate, paired, plots, predict, tables, timings_table\n"
        "from ragkit.teach.lesson import held_out, overlap, latency\n"
        "from ragkit.teach.course import chapter\n"
        "assert measure is latency.time_stages and tables.sweep is tables.per_cut\n"
        "assert overlap.measure is overlap.measure_pull and chapter.QWEN is chapter.INVENTED_REFERENCES\n"
        "assert held_out.table is held_out.summary_table and held_out.shown is held_out.setting_value\n"
        "assert tables.metric_shopping is tables.metric_looks\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_name_that_never_was_is_still_an_attribute_error_in_a_module_that_forwards_old_names():
    from ragkit.teach.lesson import tables

    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tables.no_such_name  # noqa: B018
