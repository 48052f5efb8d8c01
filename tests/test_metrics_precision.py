"""P@k on hand-computed examples: hits in the top k distinct ids divided by k."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memeval_core.metrics.hits import hits_at_k
from memeval_core.metrics.precision import precision_from_hits


def test_two_hits_in_three_retrieved_divides_by_k() -> None:
    # a and b are gold, d is not: 2 hits; divided by k = 5, not by the 3 retrieved.
    assert precision_from_hits(hits_at_k([["a", "d", "b"]], [{"a", "b", "c"}], k=5))[0] == pytest.approx(0.4, abs=1e-15)


def test_fewer_than_k_retrieved_still_divides_by_k() -> None:
    assert precision_from_hits(hits_at_k([["a"]], [{"a"}], k=5))[0] == 0.2
    assert precision_from_hits(hits_at_k([["a"]], [{"a"}], k=1))[0] == 1.0


def test_duplicate_hit_counts_once() -> None:
    # Deduplicated in order: g1, g2 -> 2 hits, not 3.
    assert precision_from_hits(hits_at_k([["g1", "g1", "g2"]], [{"g1", "g2"}], k=5))[0] == pytest.approx(0.4)


def test_duplicates_do_not_take_a_slot() -> None:
    # k=2: distinct ids are x, g1 -> one hit. Without deduplication the top 2 would be x, x -> zero.
    assert precision_from_hits(hits_at_k([["x", "x", "g1"]], [{"g1"}], k=2))[0] == 0.5


def test_hit_below_cutoff_does_not_count() -> None:
    assert precision_from_hits(hits_at_k([["n1", "n2", "n3", "n4", "n5", "a"]], [{"a"}], k=5))[0] == 0.0
    assert precision_from_hits(hits_at_k([["n1", "n2", "n3", "n4", "n5", "a"]], [{"a"}], k=6))[0] == pytest.approx(
        1 / 6
    )


def test_nothing_retrieved_is_zero_and_no_gold_is_nan() -> None:
    values = precision_from_hits(hits_at_k([[], ["a"]], [{"a"}, set()], k=5))
    assert values[0] == 0.0
    assert math.isnan(values[1])


def test_from_hits_matches_and_batch_is_per_query() -> None:
    retrieved = [["a", "b"], ["c"], ["z", "y", "x"]]
    gold = [{"a", "b"}, {"d"}, {"x", "y"}]
    hits = hits_at_k(retrieved, gold, k=2)
    np.testing.assert_array_equal(precision_from_hits(hits), [1.0, 0.0, 0.5])
