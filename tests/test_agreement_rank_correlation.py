"""Kendall's tau-b against hand values and scipy; leader changes between two scorings of runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from memeval_core.agreement.rank_correlation import kendall_tau_b, kendall_tau_b_rows, leader_changes


def test_hand_values() -> None:
    assert kendall_tau_b([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # One swapped pair of 6: (5 − 1) / 6.
    assert kendall_tau_b([1, 2, 3, 4], [2, 1, 3, 4]) == pytest.approx(4 / 6, abs=1e-15)
    # Ties: x = (1,1,2), y = (1,2,3): pairs (1,2) tied in x; n_c = 2, n_d = 0; sqrt((3−1)(3−0)) = sqrt 6.
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6), abs=1e-15)


def test_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(2)
    for _ in range(50):
        x = rng.integers(0, 5, 12).astype(float)
        y = rng.integers(0, 5, 12).astype(float)
        expected = kendalltau(x, y, variant="b").statistic
        assert kendall_tau_b(x, y) == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_rows_batch() -> None:
    x = np.array([[1.0, 2, 3], [3, 2, 1]])
    y = np.array([[1.0, 2, 3], [1, 2, 3]])
    np.testing.assert_allclose(kendall_tau_b_rows(x, y), [1.0, -1.0])


def test_all_ties_is_nan_and_bad_input_named() -> None:
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="equal length"):
        kendall_tau_b([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="NaN"):
        kendall_tau_b([1, math.nan], [1, 2])


def test_leader_changes() -> None:
    judge_a = {"tenure": 0.9, "mem0": 0.6, "zep": 0.7, "vector": 0.5}
    judge_b = {"tenure": 0.8, "mem0": 0.85, "zep": 0.7, "vector": 0.4}
    report = leader_changes(judge_a, judge_b)
    assert report.leaders_a == ("tenure",)
    assert report.leaders_b == ("mem0",)
    assert report.leader_changed
    # Under a: tenure > zep > mem0 > vector; under b: mem0 > tenure > zep > vector.
    assert set(report.swapped_pairs) == {("tenure", "mem0"), ("zep", "mem0")}
    assert report.n_pairs == 6
    assert report.tau_b == pytest.approx((4 - 2) / 6, abs=1e-15)


def test_leader_tie_and_no_change() -> None:
    report = leader_changes({"a": 1.0, "b": 1.0, "c": 0.0}, {"a": 1.0, "b": 1.0, "c": 0.5})
    assert report.leaders_a == ("a", "b") == report.leaders_b
    assert not report.leader_changed
    assert report.swapped_pairs == ()


def test_leader_changes_needs_same_runs() -> None:
    with pytest.raises(ValueError, match=r"only in a: \['x'\], only in b: \['y'\]"):
        leader_changes({"x": 1.0}, {"y": 1.0})
