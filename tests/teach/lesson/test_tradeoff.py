"""Notebook 08b's table and figures: every measured setting shown, the slider's steps are the measurement's."""

import pytest

from ragkit.approximate import EfSearchPoint, IndexMemory, TradeOff
from ragkit.errors import InputError
from ragkit.teach.lesson import plots, tradeoff


def made_up(what: str = "made up", vectors: int = 200_000, exact: float = 30.0) -> TradeOff:
    settings = (EfSearchPoint(16, 0.55, 0.1), EfSearchPoint(64, 0.9, 0.3), EfSearchPoint(256, 0.96, 0.9))
    return TradeOff(
        what,
        vectors,
        384,
        94,
        20,
        32,
        40,
        60.0,
        2,
        IndexMemory(vectors * 1536, vectors * 272),
        exact,
        settings,
        0.51,
        0.45,
    )


def test_the_table_has_the_exact_scan_then_every_setting_of_each_collection_in_figures_for_people():
    table = tradeoff.table(made_up("small", 1_068, 0.04), made_up())
    assert len(table) == 2 * (1 + 3)
    assert list(table.iloc[0]) == ["small (1,068)", "exact scan", "1.000", "0.040", "1.0"]
    assert list(table.iloc[5]) == ["made up (200,000)", "HNSW, efSearch 16", "0.550", "0.100", "300.0"]
    assert list(table.columns) == ["collection", "search", "Recall@20", "ms per query", "times the exact scan's speed"]


def test_the_curve_draws_each_collection_and_its_exact_scan_and_says_so():
    fig = tradeoff.curve(made_up("small", 1_068, 0.04), made_up())
    lines, stars = fig.data[::2], fig.data[1::2]
    assert [list(t.y) for t in lines] == [[0.55, 0.9, 0.96]] * 2 and [list(t.text) for t in lines] == [
        ["16", "64", "256"]
    ] * 2
    assert [(t.x[0], t.y[0]) for t in stars] == [(0.04, 1.0), (30.0, 1.0)]
    assert fig.layout.xaxis.type == "log"
    text = plots.describe(fig)
    assert "For small (1,068 vectors), efSearch from 16 to 256 takes Recall@20 from 0.550 to 0.960" in text
    assert "the exact scan (a star at recall 1) takes 30.000 ms" in text
    with pytest.raises(InputError):
        tradeoff.curve()


def test_the_slider_moves_a_ring_to_each_measured_setting_without_a_kernel():
    t = made_up()
    fig = tradeoff.ef_slider(t, 64)
    (slider,) = fig.layout.sliders
    assert [s.label for s in slider.steps] == ["16", "64", "256"] and slider.active == 1
    ring = len(fig.data) - 1
    for step, s in zip(slider.steps, t.settings):
        data, layout, traces = step.args
        assert data == {"x": [[s.ms]], "y": [[s.recall]]} and list(traces) == [ring]
        assert f"efSearch {s.ef_search}: Recall@20 {s.recall:.3f}" in layout["annotations"][0]["text"]
    assert (fig.data[ring].x[0], fig.data[ring].y[0]) == (0.3, 0.9)
    caption = fig.layout.annotations[0].text
    assert caption == "efSearch 64: Recall@20 0.900, 0.300 ms per query, 100.0 times the exact scan's speed"
    assert "over 3 values of efSearch, from 16 to 256" in plots.describe(fig)
    assert tradeoff.ef_slider(t).layout.sliders[0].active == 0
    with pytest.raises(InputError, match="choose one of 16, 64, 256"):
        tradeoff.ef_slider(t, 32)


def test_the_collections_the_notebook_names_in_english_are_shown_in_the_kernels_language():
    from ragkit.teach import language

    course, generated = made_up("the course's chunks", 1_068, 0.04), made_up("generated")
    with language.speaking("en"):
        assert list(tradeoff.table(course, generated).iloc[[0, 4], 0]) == [
            "the course's chunks (1,068)",
            "the generated collection (200,000)",
        ]
    with language.speaking("nl"):
        table = tradeoff.table(course, generated)
        names = [t.name for t in tradeoff.curve(course, generated).data]
        text = plots.describe(tradeoff.ef_slider(course))
    assert list(table.iloc[[0, 4], 0]) == ["de chunks van de cursus (1.068)", "de gegenereerde verzameling (200.000)"]
    assert names[0].endswith(": de chunks van de cursus (1.068)")
    assert names[2].endswith(": de gegenereerde verzameling (200.000)")
    assert "Voor de chunks van de cursus (1.068 vectoren)" in text and "course's" not in text
    assert tradeoff.table(made_up("other"))["collection"][0] == "other (200,000)"  # a name of one's own, as given


def test_the_curves_labels_stay_inside_the_chart_and_off_the_stars():
    """Issue 67, item 7: the small collection's efSearch labels (64 to 512, recall near 1) were clipped at the top
    and written over the exact scan's star."""
    settings = tuple(EfSearchPoint(ef, r, ms) for ef, r, ms in ((16, 0.9, 0.02), (64, 0.99, 0.04), (512, 1.0, 0.2)))
    small = TradeOff("small", 1_068, 384, 94, 20, 32, 40, 1.0, 2, IndexMemory(1, 1), 0.05, settings, 0.5, 0.4)
    fig = tradeoff.curve(small, made_up())
    top = fig.layout.yaxis.range[1]
    stars = [(t.x[0], t.y[0]) for t in fig.data if t.marker.symbol == "star"]
    for line in (t for t in fig.data if t.text is not None):
        positions = line.textposition if isinstance(line.textposition, tuple) else (line.textposition,) * len(line.y)
        for y, where in zip(line.y, positions):
            if "top" in where:  # a label above its point needs room under the top, and no star just above it
                assert y + 0.06 <= top, f"the label of the point at recall {y} is cut off at {top}"
                assert all(abs(y - sy) > 0.06 for _, sy in stars), f"the label at recall {y} sits on a star"
