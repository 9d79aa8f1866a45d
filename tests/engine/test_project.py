"""A project: its plan read strictly, its split the course's one and sealed, its run chosen and judged as documented."""

import json
import shutil

import numpy as np
import pytest

from ragkit import project
from ragkit.errors import DataError, InputError
from ragkit.statistics import VERDICTS
from ragkit.tuning import SPLIT_SEED, halves

from conftest import ROOT

EXAMPLE = ROOT / "data" / "example"


def copy_example(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLE, folder)
    return folder


def test_the_examples_plan_is_read_as_written():
    plan = project.read_plan(EXAMPLE / project.PLAN_FILE)
    assert plan.metric == "MRR@10" and plan.baseline == "E/dense"
    assert plan.candidates == ("A/dense", "C/dense", "E/dense", "E/bm25", "E/hybrid")
    assert plan.prices == project.Prices(5.0, 3.0, 1.0, 0.25)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("title = 'x'\nmetric = 'MRR@0'\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'E/dense'", "unknown metric"),
        ("metric = 'Hit@4'\ncandidates = ['Z/dense', 'E/dense']\nbaseline = 'E/dense'", "'Z/dense' is not a run"),
        ("metric = 'Hit@4'\ncandidates = ['E/dense', 'E/rerank']\nbaseline = 'E/dense'", "'E/rerank' is not a run"),
        ("metric = 'Hit@4'\ncandidates = ['E/dense']\nbaseline = 'E/dense'", "at least two candidates"),
        ("metric = 'Hit@4'\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'C/dense'", "not among the candidates"),
        ("metric = 'Hit@4'\ncandidates = 'E/dense'\nbaseline = 'E/dense'", "candidates must list"),
        ("metric = 4\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'E/dense'", "must be text"),
        (
            "metric = 'Hit@4'\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'E/dense'\n[gate]\nbluff = 5",
            "no field bluff",
        ),
        (
            "metric = 'Hit@4'\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'E/dense'\n[gate]\nbluff_cost = -1",
            "0 or more",
        ),
        (
            "metric = 'Hit@4'\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'E/dense'\n[gate]\nrefusal_cost = true",
            "0 or more",
        ),
        (
            "metric = 'Hit@4'\ncandidates = ['E/dense', 'A/dense']\nbaseline = 'E/dense'\n[gate]\nmax_refused = 2",
            "between 0 and 1",
        ),
        ("metric = 'Hit@4\n", "cannot be read as TOML"),
    ],
)
def test_a_wrong_plan_is_an_input_error_that_says_what_to_fix(tmp_path, text, said):
    path = tmp_path / "project.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=said):
        project.read_plan(path)


def test_a_missing_plan_says_to_write_it(tmp_path):
    with pytest.raises(InputError, match="missing: write the plan first"):
        project.read_plan(tmp_path / "project.toml")


def test_the_split_is_the_courses_one_by_needle_and_seals_every_file(tmp_path):
    folder = copy_example(tmp_path)
    made = project.split_project(folder)
    questions = [json.loads(line)["id"] for line in (folder / project.QUESTIONS_FILE).read_text().splitlines()]
    ood = [json.loads(line)["id"] for line in (folder / project.OUT_OF_DOMAIN_FILE).read_text().splitlines()]
    assert (made.tuning, made.held_out) == halves(questions, SPLIT_SEED, ood)
    assert made.counts(made.tuning) == (10, 7) and made.counts(made.held_out) == (10, 7)
    assert set(made.sealed) == {f"corpus/{p.name}" for p in (folder / "corpus").glob("*.md")} | set(project.SEALED)
    assert project.read_split(folder) == made  # the committed split.json is this one


def test_a_file_changed_after_the_split_breaks_the_seal(tmp_path):
    folder = copy_example(tmp_path)
    doc = folder / "corpus" / "05-regattas-and-travel.md"
    doc.write_text(doc.read_text(encoding="utf-8") + "\nOne more sentence after the split.\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"changed since the split was made: corpus/05-regattas-and-travel\.md"):
        project.read_split(folder)
    plan = folder / project.PLAN_FILE
    plan.write_text(plan.read_text(encoding="utf-8").replace("0.25", "0.5"), encoding="utf-8")
    with pytest.raises(DataError, match=r"project\.toml"):
        project.read_split(folder)
    project.write_split(folder)  # a new split seals the files as they are now
    assert project.read_split(folder).sealed["project.toml"] == project.seal(folder)["project.toml"]


def test_other_halves_or_another_seed_are_refused(tmp_path):
    folder = copy_example(tmp_path)
    path = folder / project.SPLIT_FILE
    raw = json.loads(path.read_text(encoding="utf-8"))
    swapped = json.loads(json.dumps(raw))
    swapped["tuning"]["needles"][0], swapped["held_out"]["needles"][0] = (
        raw["held_out"]["needles"][0],
        raw["tuning"]["needles"][0],
    )
    path.write_text(json.dumps(swapped), encoding="utf-8")
    with pytest.raises(DataError, match="other halves than the course's split"):
        project.read_split(folder)
    path.write_text(json.dumps({**raw, "seed": 5}), encoding="utf-8")
    with pytest.raises(DataError, match="other halves"):
        project.read_split(folder)
    for broken in ("[]", "{", json.dumps({**raw, "tuning": 3})):
        path.write_text(broken, encoding="utf-8")
        with pytest.raises(DataError, match="is not a split ragkit wrote"):
            project.read_split(folder)
    path.unlink()
    with pytest.raises(DataError, match="project split"):
        project.read_split(folder)


def test_an_invalid_ground_truth_is_not_split(tmp_path):
    folder = copy_example(tmp_path)
    questions = folder / project.QUESTIONS_FILE
    questions.write_text(questions.read_text(encoding="utf-8").replace("twenty outings", "30 outings"), "utf-8")
    with pytest.raises(DataError, match="q01: needle not found verbatim"):
        project.split_project(folder)


@pytest.fixture(scope="module")
def outcome():
    return project.run_project(EXAMPLE)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_the_tuning_half_chooses_and_the_cheapest_cut_within_the_ceiling_is_taken(outcome):
    trials = {str(t.value): t for t in outcome.tuning.trials}
    best = max(t.tune for t in trials.values())
    assert trials[outcome.chosen].tune == best
    if outcome.chosen != outcome.plan.baseline:
        assert trials[outcome.plan.baseline].tune < best  # a tie goes to the baseline
    prices = outcome.plan.prices
    assert outcome.tuned_gate.cost == prices.cost(outcome.tuned_gate.row) and prices.within(outcome.tuned_gate.row)
    assert outcome.cut in project.cut_grid()


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_the_cut_is_the_cheapest_of_the_grid_when_recomputed_by_hand(outcome):
    from ragkit.chunking import chunk_corpus
    from ragkit.corpus import load_corpus
    from ragkit.data import load_out_of_domain, load_questions
    from ragkit.retrieval import Retriever
    from ragkit.threshold import Sweep

    letter, name = outcome.chosen.split("/")
    retriever = Retriever(chunk_corpus(load_corpus(EXAMPLE / "corpus"), letter), progress=False)
    sweep = Sweep(
        retriever.chunks,
        load_questions(EXAMPLE / project.QUESTIONS_FILE),
        load_out_of_domain(EXAMPLE / project.OUT_OF_DOMAIN_FILE),
        retriever,
        name,
    )
    tune, held = sweep.subset(outcome.split.tuning), sweep.subset(outcome.split.held_out)
    costs = {}
    for cut in np.round(np.arange(0.30, 1.0001, 0.005), 3):
        row = tune.at(float(cut))
        if row.refused <= 0.25 * row.in_domain:
            costs[float(cut)] = row.bluffs * 5 + row.answered_without_needle * 3 + row.refused
    assert outcome.cut == min(costs, key=lambda c: (costs[c], c))
    assert outcome.held_gate.row == held.at(outcome.cut)


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_the_held_out_figures_are_the_held_out_needles_own(outcome):
    result_ids = outcome.split.needles & outcome.split.held_out
    assert outcome.held_needles == len(result_ids) == 10
    assert outcome.in_prompt[1] == 2 * len(result_ids)  # a question and a ticket per needle
    assert outcome.held_interval.low <= outcome.held_metric <= outcome.held_interval.high
    assert outcome.smallest_p == 2 * 0.5**10
    f = outcome.challenge
    assert f.baseline == outcome.plan.baseline and f.challenger != f.baseline
    assert f.verdict.kind in VERDICTS
    assert f.held_out.wins + f.held_out.losses <= outcome.held_needles


@pytest.mark.slow  # recomputes the project: embeds its documents
def test_the_outcome_is_plain_json_and_says_its_verdict(outcome, tmp_path):
    data = outcome.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["chosen"] == outcome.chosen and data["challenge"]["verdict"] == str(outcome.challenge.verdict)
    text = str(outcome)
    assert f"verdict: {outcome.challenge.verdict}" in text and "95% Wilson" in text
    folder = tmp_path / "written"
    folder.mkdir()
    path = project.write_results(folder, outcome)
    assert json.loads(path.read_text(encoding="utf-8")) == data
