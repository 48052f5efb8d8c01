"""Holm adjustment against hand-computed examples and its defining formula."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval_core.stats.holm import holm_adjust


def test_hand_computed_example() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    out = holm_adjust([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(out, [0.03, 0.06, 0.06, 0.02], rtol=1e-12)


def test_capped_at_one() -> None:
    # Sorted: 0.02*3 = 0.06, 0.3*2 = 0.6, 0.9*1 = 0.9.
    np.testing.assert_allclose(holm_adjust([0.3, 0.9, 0.02]), [0.6, 0.9, 0.06], rtol=1e-12)
    # 0.5*2 = 1.0, then max(1.0, 0.6) = 1.0.
    np.testing.assert_array_equal(holm_adjust([0.6, 0.5]), [1.0, 1.0])
    np.testing.assert_array_equal(holm_adjust([0.7, 0.8]), [1.0, 1.0])


def test_ties_get_equal_values() -> None:
    # 0.01*3 = 0.03, max(0.03, 0.01*2) = 0.03, max(0.03, 0.5) = 0.5.
    np.testing.assert_allclose(holm_adjust([0.5, 0.01, 0.01]), [0.5, 0.03, 0.03], rtol=1e-12)


def test_single_and_empty() -> None:
    np.testing.assert_array_equal(holm_adjust([0.2]), [0.2])
    assert holm_adjust([]).shape == (0,)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm_adjust([0.1, 1.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm_adjust([float("nan")])
    with pytest.raises(ValueError, match="one-dimensional"):
        holm_adjust([[0.1, 0.2]])


def _holm_by_definition(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(1.0, max((m - k) * p[order[k]] for k in range(rank + 1)))
    return out


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=30))
def test_matches_definition_and_is_monotone(p: list[float]) -> None:
    out = holm_adjust(p)
    np.testing.assert_allclose(out, _holm_by_definition(p), rtol=1e-12, atol=0)
    assert np.all(out >= np.asarray(p)) and np.all(out <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(out[order]) >= 0)
