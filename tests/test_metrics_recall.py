"""R@k on hand-computed examples: hits in the top k distinct ids divided by |gold|."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memeval_core.metrics.hits import hits_at_k
from memeval_core.metrics.recall import recall_from_hits


def test_two_of_three_gold() -> None:
    assert recall_from_hits(hits_at_k([["a", "d", "b"]], [{"a", "b", "c"}], k=5))[0] == pytest.approx(2 / 3, abs=1e-15)


def test_gold_larger_than_k_caps_below_one() -> None:
    retrieved = [["g1", "g2"]]
    gold = [{"g1", "g2", "g3", "g4"}]
    assert recall_from_hits(hits_at_k(retrieved, gold, k=2))[0] == 0.5


def test_duplicates_in_retrieved_and_gold_count_once() -> None:
    # Gold given as a list with a repeat is the set {b}; the repeated hit b counts once.
    assert recall_from_hits(hits_at_k([["b", "b", "x"]], [["b", "b"]], k=5))[0] == 1.0


def test_cutoff_applies_after_deduplication() -> None:
    # Distinct order: x, y, g -> g is 3rd; with k=2 it is out, with k=3 it is in.
    retrieved = [["x", "x", "y", "x", "g"]]
    assert recall_from_hits(hits_at_k(retrieved, [{"g"}], k=2))[0] == 0.0
    assert recall_from_hits(hits_at_k(retrieved, [{"g"}], k=3))[0] == 1.0


def test_nothing_retrieved_zero_no_gold_nan() -> None:
    values = recall_from_hits(hits_at_k([[], [], ["a"]], [{"a"}, [], []], k=5))
    assert values[0] == 0.0
    assert math.isnan(values[1]) and math.isnan(values[2])


def test_many_queries() -> None:
    retrieved = [["a"], ["b", "c"], ["d", "e", "f"]]
    gold = [{"a", "z"}, {"c"}, {"q"}]
    np.testing.assert_array_equal(recall_from_hits(hits_at_k(retrieved, gold, k=5)), [0.5, 1.0, 0.0])
