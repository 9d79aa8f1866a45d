"""One direction for every cut: each slider and each axis of cosine distance runs tighter on the left, looser on the
right, over the same range, and says so. Quick: the sweep's distances are drawn at random, seeded."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.express as px
import pytest

from ragkit.chunking import chunk_corpus
from ragkit.data import load_out_of_domain, load_questions
from ragkit.plumbing.locations import data_dir
from ragkit.teach.exercises import cost_table
from ragkit.teach.lesson import plots, widgets
from ragkit.threshold import CUT_RANGE, Sweep


class RandomDistances:
    """A stand-in retriever: each query's cosine distance to each chunk drawn uniformly, seeded."""

    def __init__(self, n_chunks: int, seed: int = 7):
        self.n_chunks, self.rng = n_chunks, np.random.default_rng(seed)

    def run(self, name, texts):
        distance = self.rng.uniform(0.15, 0.95, (len(texts), self.n_chunks))
        return SimpleNamespace(ranking=np.argsort(distance, axis=1), distance=distance)


@pytest.fixture(scope="module")
def sweep(corpus):
    chunks = chunk_corpus(corpus, "A")
    questions = load_questions(data_dir() / "questions.jsonl")[:6]
    ood = load_out_of_domain(data_dir() / "out_of_domain.jsonl")[:5]
    return Sweep(chunks, questions, ood, RandomDistances(len(chunks)))


def cut_axes(sweep) -> dict:
    """Every figure of the course with a cut on its x-axis, by name."""
    return {
        "histogram": plots.distance_histogram(sweep),
        "widget histogram": widgets.ThresholdExplorer(sweep).figure,
        "static slider": plots.threshold_slider(sweep),
        "what each cut costs": plots.bluffs_and_refusals(sweep),
        "ex2's cost": plots.cost_curve(cost_table(sweep)),
        "ex2's two halves": plots.cost_halves(
            pd.concat([cost_table(sweep).assign(half=half) for half in ("tune", "judge")])
        ),
    }


def test_every_cut_axis_runs_tighter_to_looser_over_one_range(sweep):
    assert plots.DISTANCE_RANGE[0] <= CUT_RANGE[0] < CUT_RANGE[1] <= plots.DISTANCE_RANGE[1]
    for name, fig in cut_axes(sweep).items():
        axis = fig.layout.xaxis
        assert axis.autorange in (None, False), f"{name}: its axis is {axis.autorange}, not the shared range"
        assert tuple(axis.range) == plots.DISTANCE_RANGE, f"{name} spans {axis.range}"
        title = axis.title.text
        assert plots.TIGHTER in title and plots.LOOSER in title, f"{name} does not say which way is looser"
        assert title.index(plots.TIGHTER) < title.index(plots.LOOSER), f"{name} says looser on the left"


def test_the_cost_lines_and_the_static_slider_run_from_tight_to_loose(sweep):
    for trace in plots.bluffs_and_refusals(sweep).data:
        assert list(trace.x) == sorted(trace.x), f"{trace.name} is drawn from the loose end"
    steps = plots.threshold_slider(sweep).layout.sliders[0].steps
    labels = [step.label for step in steps]
    assert labels[-1] == "none", "no cut at all is the loosest: the right end of the slider"
    values = [float(label) for label in labels[:-1]]
    assert values == sorted(values) and (values[0], values[-1]) == CUT_RANGE
    assert "on the left" in plots.threshold_slider(sweep).description
    # under the axis, each step under its cut: the first at 0.300, "none" one step past 1.000
    slider, axis = plots.threshold_slider(sweep).layout.sliders[0], plots.DISTANCE_RANGE
    span = axis[1] - axis[0]
    assert slider.x == pytest.approx((CUT_RANGE[0] - axis[0]) / span)
    assert slider.x + slider.len == pytest.approx((CUT_RANGE[1] + values[1] - values[0] - axis[0]) / span)


def test_the_widgets_sliders_span_the_cut_range_with_the_direction_under_them(sweep):
    explorer = widgets.ThresholdExplorer(sweep)
    sliders = [explorer.slider, widgets.cut_slider()]
    for slider in sliders:
        assert (slider.min, slider.max) == CUT_RANGE and slider.orientation == "horizontal"
    shown = explorer.direction.value
    assert shown.index("tighter") < shown.index("looser")
    assert explorer.direction in explorer.widget().children


def test_a_distance_beyond_the_range_widens_the_axis_instead_of_hiding():
    fig = plots.on_cut_axis(px.line(x=[0.4, 1.33], y=[1, 2]))
    assert fig.layout.xaxis.range[0] == plots.DISTANCE_RANGE[0] and fig.layout.xaxis.range[1] >= 1.33


def test_the_static_sliders_caption_says_where_its_line_starts_not_that_it_stays(sweep):
    """Issue 67, item 3: the kernel-free slider's title follows the cut, its caption kept "the cut at 0.675"."""
    text = plots.threshold_slider(sweep).description
    assert "The slider starts on the cut at 0.675: there " in text and "The dashed line marks" not in text
    assert "The dashed line marks the cut at 0.675" in plots.histogram_text(sweep, 0.675)


def test_the_abstention_tables_cosine_cut_is_one_the_explorer_can_reach():
    """Issue 67, item 3: 06's table listed a cut of 0.551, between two of the explorer's 0.005 steps."""
    from ragkit.abstention import ScoreSweep
    from ragkit.teach.exercises import CUT_GRID
    from ragkit.teach.lesson import tables

    needle = np.array([[True], [True]])
    rule = ScoreSweep("cosine distance", np.array([[0.5505], [0.3]]), needle, np.array([[0.5502], [0.9]]), False)
    assert rule.fewest_bluffs(0.5).cut == pytest.approx(0.5502)  # between 0.550 and 0.555
    shown = tables.chosen_cut("cosine distance", rule, 0.5)
    assert shown.cut in CUT_GRID and shown.cut == pytest.approx(0.55) and (shown.bluffs, shown.refused) == (0, 1)
    assert tables.abstention({"cosine distance": rule}, 0.5).iloc[0]["cut"] == pytest.approx(0.55)
