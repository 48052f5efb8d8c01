"""The hits matrix: Python lists give the definition's top-k hits.

Every case is checked against the definition itself (``dict.fromkeys`` to deduplicate in order, a ``set`` for
gold): repeated ids inside and beyond the first k, empty lists, k larger than the lists, ids that are not
strings (compared by Python equality, as in a set), and bad input, which is refused with a message naming it.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pytest

from memeval_core.metrics.evaluate import evaluate
from memeval_core.metrics.f1 import f1_from_hits
from memeval_core.metrics.hits import TopKHits, first_k_distinct, hits_at_k
from memeval_core.metrics.mrr import reciprocal_rank_from_hits
from memeval_core.metrics.ndcg import ndcg_from_hits
from memeval_core.metrics.precision import precision_from_hits
from memeval_core.metrics.recall import recall_from_hits

RETRIEVED = [["a", "d", "b"], ["x", "x", "x", "g1", "y", "z"], [], ["n1", "n2", "n3", "n4", "n5", "a"], ["q"]]
GOLD: list[list[str]] = [["a", "b", "c"], ["g1"], ["a"], ["a"], []]
EXPECTED_HITS = [
    [True, False, True, False, False],
    [False, True, False, False, False],
    [False] * 5,
    [False] * 5,
    [False] * 5,
]


def reference(retrieved: Sequence[Sequence[Any]], gold: Sequence[Collection[Any]], k: int) -> TopKHits:
    """The definition, query by query."""
    hits = np.zeros((len(retrieved), k), dtype=np.bool_)
    n_gold, n_top = [], []
    for i, (r, g) in enumerate(zip(retrieved, gold, strict=True)):
        top = list(dict.fromkeys(r))[:k]
        gs = set(g)
        hits[i, : len(top)] = [d in gs for d in top]
        n_gold.append(len(gs))
        n_top.append(len(top))
    return TopKHits(k=k, hits=hits, n_gold=np.array(n_gold, dtype=np.int64), n_retrieved=np.array(n_top))


def assert_same(got: TopKHits, want: TopKHits) -> None:
    assert got.k == want.k
    np.testing.assert_array_equal(got.hits, want.hits)
    np.testing.assert_array_equal(got.n_gold, want.n_gold)
    np.testing.assert_array_equal(got.n_retrieved, want.n_retrieved)


def random_queries(seed: int, n: int = 400, pool: int = 12) -> tuple[list[list[str]], list[list[str]]]:
    """Small pools so that repeats (in the first k, beyond it, in gold) and hits are frequent."""
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(pool)] + ["", "é", "日本", "d1 "]
    retrieved = [[rng.choice(ids) for _ in range(rng.choice([0, 1, 3, 5, 6, 9, 20]))] for _ in range(n)]
    gold = [[rng.choice(ids) for _ in range(rng.choice([0, 1, 2, 4, 7, 19]))] for _ in range(n)]
    # Fresh string objects, as a parser makes them (equal ids are equal, not identical).
    fresh = [["".join(list(x)) for x in r] for r in retrieved]
    return fresh, gold


def test_hand_checked_example() -> None:
    hits = hits_at_k(RETRIEVED, GOLD, k=5)
    np.testing.assert_array_equal(hits.hits, EXPECTED_HITS)
    np.testing.assert_array_equal(hits.n_gold, [3, 1, 1, 1, 0])
    np.testing.assert_array_equal(hits.n_retrieved, [3, 4, 0, 5, 1])
    np.testing.assert_array_equal(hits.hit_count, [2, 1, 0, 0, 0])
    np.testing.assert_array_equal(hits.has_gold, [True, True, True, True, False])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 5, 10, 20, 25])
def test_lists_match_the_definition(seed: int, k: int) -> None:
    retrieved, gold = random_queries(seed)
    assert_same(hits_at_k(retrieved, gold, k), reference(retrieved, gold, k))


def test_first_k_distinct() -> None:
    assert first_k_distinct(["a", "b", "c", "d"], 2) == ["a", "b"]
    assert first_k_distinct(["a", "a", "b", "a", "c"], 2) == ["a", "b"]  # the second distinct id lies past k
    assert first_k_distinct(["a", "a"], 5) == ["a"]
    assert first_k_distinct([], 3) == []


def test_repeats_push_distinct_ids_beyond_the_first_k() -> None:
    retrieved = [["a", "a", "a", "a", "a", "b", "c", "g"], ["a", "a"], ["x", "y", "x", "y", "x", "y", "g", "z"]]
    gold = [["g", "c"], ["a"], ["g"]]
    got = hits_at_k(retrieved, gold, 5)
    assert_same(got, reference(retrieved, gold, 5))
    assert got.hits[0].tolist() == [False, False, True, True, False]
    assert got.n_retrieved.tolist() == [4, 1, 4]


def test_ids_that_are_not_strings_use_python_equality() -> None:
    nan = float("nan")
    retrieved: list[list[Any]] = [
        [-1, -2, 3],  # hash(-1) == hash(-2) in CPython: equal hashes, different ids
        [1, 1.0, True],  # 1 == 1.0 == True: one id, as in a set
        [("a", 1), ("a", 2)],
        [nan, 0],  # nan is not == nan, but the same object is in the set
        ["1", 1],
        [b"x", "x"],
    ]
    gold: list[Any] = [{-2}, [1.0], [("a", 2)], [nan], [1], ["x"]]
    got = hits_at_k(retrieved, gold, 3)
    assert_same(got, reference(retrieved, gold, 3))
    assert got.hits[0].tolist() == [False, True, False]
    assert got.n_retrieved[1] == 1
    assert got.hits[3, 0]
    assert got.hits[4].tolist() == [False, True, False] and got.hits[5].tolist() == [False, True, False]


def test_empty_and_degenerate_inputs() -> None:
    assert hits_at_k([], [], 5).hits.shape == (0, 5)
    retrieved: list[list[str]] = [[], ["a"], [], ["a", "a"]]
    gold: list[list[str]] = [[], [], ["a"], ["a", "a", "a"]]
    got = hits_at_k(retrieved, gold, 5)
    assert_same(got, reference(retrieved, gold, 5))
    assert got.n_gold.tolist() == [0, 0, 1, 1]
    # Tuples, sets and numpy arrays of ids are accepted as per-query containers.
    assert_same(hits_at_k([("a", "b")], [frozenset({"b"})], 2), reference([("a", "b")], [{"b"}], 2))
    ids = np.array(["a", "b", "c"])
    assert_same(hits_at_k([ids], [["c"]], 5), reference([ids.tolist()], [["c"]], 5))


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="retrieved has 2 queries but gold has 1"):
        hits_at_k([["a"], ["b"]], [{"a"}])
    with pytest.raises(ValueError, match="k must be >= 1"):
        hits_at_k([["a"]], [{"a"}], k=0)
    with pytest.raises(ValueError, match="not strings"):
        hits_at_k(["abc"], [{"a"}])
    with pytest.raises(ValueError, match="not strings"):
        hits_at_k([["a"]], ["a"])
    with pytest.raises(ValueError, match="hashable"):
        hits_at_k([[["a"]]], [{"a"}])
    with pytest.raises(ValueError, match="hashable"):
        hits_at_k([["a"]], [[["a"]]])
    # A set or a mapping has no rank order.
    for ranked in ({"a", "b"}, {"a": 1}):
        with pytest.raises(ValueError, match="ordered sequence"):
            hits_at_k([ranked], [["a"]])
    # A one-shot iterator is refused as a gold set rather than read as whatever it yields.
    with pytest.raises(ValueError, match=r"gold sets must be collections.*generator"):
        hits_at_k([["a", "b"]], [(g for g in ["a"])], 2)
    # Mixed id types are not an error: they compare by Python equality (no match here).
    assert not hits_at_k([[1, 2]], [{"a"}]).hits.any()


# ---------------------------------------------------------------- scores from the hits matrix


def test_f1_equals_the_harmonic_mean_of_p_and_r() -> None:
    retrieved, gold = random_queries(13, n=2_000)
    scores = evaluate(retrieved, gold, k=5)
    p, r = scores.precision, scores.recall
    with np.errstate(invalid="ignore", divide="ignore"):
        harmonic = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    harmonic[np.isnan(p)] = np.nan
    np.testing.assert_allclose(scores.f1, harmonic, rtol=0, atol=1e-12)
    assert np.isnan(scores.f1).any() and (scores.f1 > 0).any()


def test_undefined_scores_are_plain_nan() -> None:
    # n_gold == 0 is NaN in every metric, with the sign bit clear (byte-level diffs of exports stay stable),
    # even for a hand-built TopKHits whose hits contradict its gold count.
    hits = TopKHits(
        k=3,
        hits=np.array([[True, False, False], [False, False, False], [False, True, False]]),
        n_gold=np.array([0, 0, 2]),
        n_retrieved=np.array([3, 0, 3]),
    )
    for metric in (ndcg_from_hits, precision_from_hits, recall_from_hits, reciprocal_rank_from_hits, f1_from_hits):
        values = metric(hits)
        assert np.isnan(values[:2]).all() and not np.signbit(values[:2]).any(), metric.__name__
        assert np.isfinite(values[2]), metric.__name__
