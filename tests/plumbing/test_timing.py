"""The one timing rule: the median of the calls' wall times, a warm-up call left untimed when asked."""

import time

from ragkit.plumbing.timing import median_ms


def test_the_median_of_the_calls_in_milliseconds_and_a_warm_up_call_is_not_timed():
    calls = []

    def work(seconds):
        calls.append(seconds)
        time.sleep(seconds)

    assert 15 <= median_ms(work, [0.0, 0.02, 0.05]) < 45
    assert calls == [0.0, 0.02, 0.05]
    calls.clear()
    assert median_ms(work, [0.05, 0.0, 0.0], warm=True) < 20  # the first item's first call is the untimed one
    assert calls == [0.05, 0.05, 0.0, 0.0]
