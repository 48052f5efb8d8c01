"""Reciprocal rank within the top k (MRR@k) on hand-computed examples."""

from __future__ import annotations

import math

import numpy as np

from memeval_core.metrics.evaluate import mean_over_queries
from memeval_core.metrics.hits import hits_at_k
from memeval_core.metrics.mrr import reciprocal_rank_from_hits


def test_first_hit_rank() -> None:
    values = reciprocal_rank_from_hits(
        hits_at_k([["a", "b"], ["x", "a"], ["x", "y", "z", "a"]], [{"a"}, {"a"}, {"a"}], k=5)
    )
    np.testing.assert_allclose(values, [1.0, 0.5, 0.25], rtol=0, atol=0)


def test_only_first_hit_counts() -> None:
    assert reciprocal_rank_from_hits(hits_at_k([["x", "a", "b"]], [{"a", "b"}], k=5))[0] == 0.5


def test_hit_below_cutoff_is_zero() -> None:
    # trec_eval's recip_rank (no cutoff) would give 1/6 here.
    assert reciprocal_rank_from_hits(hits_at_k([["n1", "n2", "n3", "n4", "n5", "a"]], [{"a"}], k=5))[0] == 0.0


def test_repeated_miss_does_not_push_the_hit_down() -> None:
    # Distinct order x, g1 -> rank 2 (a naive positional count would say rank 4).
    assert reciprocal_rank_from_hits(hits_at_k([["x", "x", "x", "g1"]], [{"g1"}], k=5))[0] == 0.5


def test_nothing_retrieved_zero_no_gold_nan_and_mean() -> None:
    values = reciprocal_rank_from_hits(hits_at_k([[], ["a"], ["x", "a"]], [{"a"}, set(), {"a"}], k=5))
    assert values[0] == 0.0
    assert math.isnan(values[1])
    assert values[2] == 0.5
    assert mean_over_queries(values) == 0.25
