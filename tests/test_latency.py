from __future__ import annotations

import pytest

from memeval_core.latency import nearest_rank, summarize


def test_nearest_rank_picks_an_observed_value() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    # n=5: p50 -> ceil(2.5)=3rd smallest; p95 -> ceil(4.75)=5th smallest.
    assert nearest_rank(values, 0.5) == 3.0
    assert nearest_rank(values, 0.95) == 5.0


def test_nearest_rank_even_count_takes_lower_middle() -> None:
    # n=4: ceil(2.0)=2nd smallest, no interpolation (numpy's median would say 2.5).
    assert nearest_rank([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0


def test_nearest_rank_of_twenty_values_p95_is_19th() -> None:
    assert nearest_rank([float(i) for i in range(1, 21)], 0.95) == 19.0


def test_empty_gives_none_not_zero() -> None:
    s = summarize([])
    assert (s.count, s.mean_ms, s.p50_ms, s.p95_ms) == (0, None, None, None)


def test_summary() -> None:
    s = summarize([10.0, 30.0, 20.0])
    assert s.mean_ms == pytest.approx(20.0)
    assert s.p50_ms == 20.0
    assert s.p95_ms == 30.0


def test_bad_percentile() -> None:
    with pytest.raises(ValueError, match="percentile"):
        nearest_rank([1.0], 0.0)
