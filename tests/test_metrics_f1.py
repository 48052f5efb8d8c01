"""F1@k on hand-computed examples: 2PR/(P+R), 0 when both are 0, equal to 2h/(k+|G|)."""

from __future__ import annotations

import math

import pytest

from memeval_core.metrics.f1 import f1_from_hits
from memeval_core.metrics.hits import hits_at_k


def test_harmonic_mean_of_p_and_r() -> None:
    # P = 2/5, R = 2/3 -> F1 = 2 * 0.4 * 0.6667 / 1.0667 = 0.5 (= 2*2 / (5+3)).
    assert f1_from_hits(hits_at_k([["a", "d", "b"]], [{"a", "b", "c"}], k=5))[0] == pytest.approx(0.5, abs=1e-15)


def test_fewer_than_k_uses_k_in_precision() -> None:
    # P = 1/5, R = 1 -> F1 = 2 * 0.2 / 1.2 = 1/3.
    assert f1_from_hits(hits_at_k([["a"]], [{"a"}], k=5))[0] == pytest.approx(1 / 3, abs=1e-15)


def test_perfect() -> None:
    assert f1_from_hits(hits_at_k([["a", "b"]], [{"a", "b"}], k=2))[0] == pytest.approx(1.0)


def test_duplicates_count_once() -> None:
    # Distinct: x, g1, y, z -> one hit; P = 0.2, R = 1 -> 1/3.
    assert f1_from_hits(hits_at_k([["x", "x", "x", "g1", "y", "z"]], [{"g1"}], k=5))[0] == pytest.approx(
        1 / 3, abs=1e-15
    )


def test_no_hit_zero_nothing_retrieved_zero_no_gold_nan() -> None:
    values = f1_from_hits(hits_at_k([["x"], [], ["x"]], [{"a"}, {"a"}, set()], k=5))
    assert values[0] == 0.0
    assert values[1] == 0.0
    assert math.isnan(values[2])
