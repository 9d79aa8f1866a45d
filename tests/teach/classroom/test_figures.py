"""The guide's figure marker, one pattern for the teacher's tools (which write the values) and the Dutch guide."""

import pytest

from ragkit.errors import DataError
from ragkit.teach.classroom import figures, guides

TEXT = "cut <!--fig:a-->0.5<!--/fig--> and <!--fig:b-->3<!--/fig-->, again <!--fig:a-->0.6<!--/fig-->"


def test_markers_are_read_and_written_and_an_unknown_name_is_an_error():
    assert figures.quoted(TEXT) == {"a": {"0.5", "0.6"}, "b": {"3"}}
    assert figures.figure_names(TEXT) == ["a", "b", "a"]
    assert figures.quoted(figures.render(TEXT, {"a": "0.7", "b": "4"})) == {"a": {"0.7"}, "b": {"4"}}
    with pytest.raises(DataError, match="nothing computes: b"):
        figures.render(TEXT, {"a": "0.7"})
    assert figures.marked("a", "0.5") in TEXT


def test_a_figures_value_is_no_part_of_a_translated_blocks_hash():
    empty = "cut <!--fig:a--><!--/fig--> and <!--fig:b--><!--/fig-->, again <!--fig:a--><!--/fig-->"
    assert figures.unvalued(TEXT) == empty
    assert guides.block_sha(TEXT) == guides.block_sha(figures.render(TEXT, {"a": "9", "b": "ten"}))
    assert guides.block_sha(TEXT) != guides.block_sha(TEXT.replace("again", "and again"))
