"""What one paired test of a place against the middle says: no stronger than the test, in the kernel's language."""

from ragkit.statistics import counts_test
from ragkit.teach import language
from ragkit.teach.lesson.narrate.generation import _position


def test_a_place_against_the_middle_is_said_no_stronger_than_its_test():
    with language.speaking("en"):
        assert _position(counts_test(7, 1), "first").startswith("no difference detected (+7/-1, p = 0.0703)")
        assert _position(counts_test(8, 0), "first").startswith("first ahead (+8/-0, p = 0.00781)")
        assert _position(counts_test(0, 9), "first").startswith("the middle ahead")
        assert "cannot tell the two apart" in _position(counts_test(0, 0), "first")
        assert "no smaller than 0.25" in _position(counts_test(3, 0), "last")


def test_in_dutch_the_same_reading_has_a_decimal_comma():
    with language.speaking("nl"):
        said = _position(counts_test(3, 0), "achteraan")
    assert "0,25" in said and "0.25" not in said
