"""NDCG@k on hand-computed examples: DCG = Σ rel_i / log2(i+1), IDCG over min(|G|, k) ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memeval_core.metrics.hits import hits_at_k
from memeval_core.metrics.ndcg import discounts, ndcg_from_hits


def test_discounts() -> None:
    np.testing.assert_allclose(discounts(3), [1.0, 1 / math.log2(3), 0.5], rtol=0, atol=1e-15)


def test_hits_at_rank_1_and_3_of_three_gold() -> None:
    dcg = 1.0 + 1 / math.log2(4)
    idcg = 1.0 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_from_hits(hits_at_k([["a", "d", "b"]], [{"a", "b", "c"}], k=5))[0] == pytest.approx(
        dcg / idcg, abs=1e-15
    )
    assert dcg / idcg == pytest.approx(0.7039180890341347, abs=1e-15)


def test_ideal_is_capped_at_k() -> None:
    # 4 gold, k = 2: IDCG uses 2 ranks, so retrieving any 2 gold ids is perfect.
    assert ndcg_from_hits(hits_at_k([["g3", "g1"]], [{"g1", "g2", "g3", "g4"}], k=2))[0] == pytest.approx(
        1.0, abs=1e-15
    )


def test_single_hit_at_rank_two_after_deduplication() -> None:
    value = ndcg_from_hits(hits_at_k([["x", "x", "g1"]], [{"g1"}], k=5))[0]
    assert value == pytest.approx(1 / math.log2(3), abs=1e-15)


def test_fewer_than_k_retrieved() -> None:
    assert ndcg_from_hits(hits_at_k([["a"]], [{"a"}], k=5))[0] == 1.0
    # 1 of 2 gold retrieved at rank 1: 1 / (1 + 1/log2 3).
    assert ndcg_from_hits(hits_at_k([["a"]], [{"a", "b"}], k=5))[0] == pytest.approx(
        1 / (1 + 1 / math.log2(3)), abs=1e-15
    )


def test_nothing_retrieved_zero_no_gold_nan() -> None:
    values = ndcg_from_hits(hits_at_k([[], ["a"]], [{"a"}, []], k=5))
    assert values[0] == 0.0
    assert math.isnan(values[1])
