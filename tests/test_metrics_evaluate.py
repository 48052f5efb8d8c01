"""All five metrics from one conversion, and the mean as a separate step with NaN/None left out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memeval_core.metrics.evaluate import METRICS, MeanScores, aggregate, evaluate, mean_over_queries

RETRIEVED = [["a", "d", "b"], ["y", "x", "w", "v", "u", "x2"], ["m"], [], ["a", "a", "a", "b", "c", "d"], ["z"]]
GOLD = [{"a", "b", "c"}, {"x"}, {"z"}, {"q"}, ["b", "b"], []]


def test_per_query_values() -> None:
    scores = evaluate(RETRIEVED, GOLD, k=5)
    ndcg1 = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    expected = {
        "ndcg": [ndcg1, 1 / math.log2(3), 0.0, 0.0, 1 / math.log2(3), math.nan],
        "precision": [0.4, 0.2, 0.0, 0.0, 0.2, math.nan],
        "recall": [2 / 3, 1.0, 0.0, 0.0, 1.0, math.nan],
        "mrr": [1.0, 0.5, 0.0, 0.0, 0.5, math.nan],
        "f1": [0.5, 1 / 3, 0.0, 0.0, 1 / 3, math.nan],
    }
    for name in METRICS:
        np.testing.assert_allclose(getattr(scores, name), expected[name], rtol=0, atol=1e-15, err_msg=name)
    np.testing.assert_array_equal(scores.n_gold, [3, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(scores.n_retrieved, [3, 5, 1, 0, 4, 1])
    assert scores.n_queries == 6


def test_aggregate_leaves_out_queries_without_gold() -> None:
    mean = aggregate(evaluate(RETRIEVED, GOLD, k=5))
    assert isinstance(mean, MeanScores)
    assert (mean.k, mean.n_queries, mean.n_scored) == (5, 6, 5)
    assert mean.precision == pytest.approx((0.4 + 0.2 + 0.2) / 5, abs=1e-15)
    assert mean.recall == pytest.approx((2 / 3 + 1 + 1) / 5, abs=1e-15)
    assert mean.mrr == pytest.approx(2.0 / 5, abs=1e-15)
    assert mean.f1 == pytest.approx((0.5 + 1 / 3 + 1 / 3) / 5, abs=1e-15)


def test_failed_query_scores_zero_when_passed_empty() -> None:
    ok = aggregate(evaluate([["a"]], [{"a"}], k=1))
    with_failure = aggregate(evaluate([["a"], []], [{"a"}, {"b"}], k=1))
    assert ok.precision == 1.0
    assert with_failure.precision == 0.5


def test_mean_over_queries_rules() -> None:
    assert mean_over_queries([1.0, None, math.nan, 0.0]) == 0.5
    assert mean_over_queries(np.array([0.25, np.nan])) == 0.25
    assert mean_over_queries([]) is None
    assert mean_over_queries([None, math.nan]) is None
    assert aggregate(evaluate([["a"]], [set()], k=5)).ndcg is None


def test_no_queries_and_integer_ids() -> None:
    empty = aggregate(evaluate([], [], k=5))
    assert (empty.n_queries, empty.n_scored, empty.precision) == (0, 0, None)
    # Integer ids work like strings: 3 is the third id -> NDCG = 1/log2(4) = 0.5.
    assert evaluate([[1, 2, 3]], [[3]], k=5).ndcg[0] == 0.5  # type: ignore[list-item]
