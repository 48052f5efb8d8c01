"""The columnar form: lists, pyarrow and offsets+flat input give the same hit matrix; depth truncation is exact."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from memeval_core.metrics.columnar import (
    RankedColumns,
    TopKHits,
    columns_from_arrow,
    columns_from_flat,
    columns_from_lists,
    hits_at_k,
    to_columns,
    top_k_hits,
)

RETRIEVED = [["a", "d", "b"], ["x", "x", "x", "g1", "y", "z"], [], ["n1", "n2", "n3", "n4", "n5", "a"], ["q"]]
GOLD: list[list[str]] = [["a", "b", "c"], ["g1"], ["a"], ["a"], []]
EXPECTED_HITS = [
    [True, False, True, False, False],
    [False, True, False, False, False],
    [False] * 5,
    [False] * 5,
    [False] * 5,
]


def _check(hits: TopKHits) -> None:
    np.testing.assert_array_equal(hits.hits, EXPECTED_HITS)
    np.testing.assert_array_equal(hits.n_gold, [3, 1, 1, 1, 0])
    np.testing.assert_array_equal(hits.n_retrieved, [3, 4, 0, 5, 1])
    np.testing.assert_array_equal(hits.hit_count, [2, 1, 0, 0, 0])
    np.testing.assert_array_equal(hits.has_gold, [True, True, True, True, False])


def test_from_lists() -> None:
    _check(hits_at_k(RETRIEVED, GOLD, k=5))
    _check(top_k_hits(columns_from_lists(RETRIEVED, GOLD), 5))


def test_from_arrow_plain_chunked_and_large() -> None:
    r = pa.array(RETRIEVED, pa.list_(pa.string()))
    g = pa.array(GOLD, pa.list_(pa.string()))
    _check(hits_at_k(r, g, k=5))
    _check(hits_at_k(pa.chunked_array([r.slice(0, 2), r.slice(2)]), g, k=5))
    _check(hits_at_k(r.cast(pa.large_list(pa.large_string())), g, k=5))


def test_arrow_null_list_is_empty() -> None:
    r = pa.array([["a"], None], pa.list_(pa.string()))
    g = pa.array([["a"], None], pa.list_(pa.string()))
    hits = hits_at_k(r, g, k=2)
    np.testing.assert_array_equal(hits.n_gold, [1, 0])
    np.testing.assert_array_equal(hits.n_retrieved, [1, 0])


def test_from_flat_strings_and_ints() -> None:
    r_off = np.cumsum([0] + [len(r) for r in RETRIEVED])
    g_off = np.cumsum([0] + [len(g) for g in GOLD])
    flat = [x for r in RETRIEVED for x in r]
    gflat = [x for g in GOLD for x in g]
    _check(top_k_hits(columns_from_flat(r_off, np.array(flat), g_off, np.array(gflat), depth=5), 5))
    vocab = {x: i for i, x in enumerate(sorted(set(flat) | set(gflat)))}
    r_int = np.array([vocab[x] for x in flat])
    g_int = np.array([vocab[x] for x in gflat])
    columns = columns_from_flat(r_off, r_int, g_off, g_int)
    # Small non-negative integer ids are used as codes directly.
    np.testing.assert_array_equal(columns.retrieved_codes, r_int)
    _check(top_k_hits(columns, 5))
    # Large and negative ids (e.g. hashes) are compacted first.
    big = r_int * 2**40 - 7
    gbig = g_int * 2**40 - 7
    _check(top_k_hits(columns_from_flat(r_off, big, g_off, gbig, depth=5), 5))


def test_depth_keeps_first_k_and_widens_only_where_a_window_repeats() -> None:
    columns = columns_from_lists(RETRIEVED, GOLD, depth=2)
    lengths = np.diff(columns.retrieved_offsets)
    # Query 1 repeats x within its first 2 ids, so its whole list is kept; the others are cut at 2.
    np.testing.assert_array_equal(lengths, [2, 6, 0, 2, 1])
    hits = top_k_hits(columns, 2)
    np.testing.assert_array_equal(hits.hits, [row[:2] for row in EXPECTED_HITS])


def test_depth_truncation_equals_full_conversion_on_random_lists() -> None:
    rng = random.Random(7)
    retrieved = [[f"d{rng.randrange(12)}" for _ in range(rng.randrange(0, 15))] for _ in range(400)]
    gold = [{f"d{rng.randrange(12)}" for _ in range(rng.randrange(0, 4))} for _ in range(400)]
    for k in (1, 3, 5, 10):
        full = top_k_hits(columns_from_lists(retrieved, gold), k)
        for cut in (
            columns_from_lists(retrieved, gold, depth=k),
            columns_from_arrow(pa.array(retrieved), pa.array([sorted(g) for g in gold], pa.list_(pa.string())), k),
        ):
            truncated = top_k_hits(cut, k)
            np.testing.assert_array_equal(truncated.hits, full.hits)
            np.testing.assert_array_equal(truncated.n_gold, full.n_gold)
            np.testing.assert_array_equal(truncated.n_retrieved, full.n_retrieved)
        # And against a per-query Python reference.
        for i, (r, g) in enumerate(zip(retrieved, gold, strict=True)):
            top = list(dict.fromkeys(r))[:k]
            assert full.hits[i, : len(top)].tolist() == [d in g for d in top]
            assert not full.hits[i, len(top) :].any()


def test_columns_pass_through_and_hits_reuse() -> None:
    columns = to_columns(RETRIEVED, GOLD)
    assert to_columns(columns) is columns
    hits = hits_at_k(columns, k=5)
    assert hits_at_k(hits, k=5) is hits
    with pytest.raises(ValueError, match="k=5, asked for k=3"):
        hits_at_k(hits, k=3)
    with pytest.raises(ValueError, match="gold must be None"):
        to_columns(columns, GOLD)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="retrieved has 2 queries but gold has 1"):
        hits_at_k([["a"], ["b"]], [{"a"}])
    with pytest.raises(ValueError, match="k must be >= 1"):
        hits_at_k([["a"]], [{"a"}], k=0)
    with pytest.raises(ValueError, match="not strings"):
        hits_at_k(["abc"], [{"a"}])
    with pytest.raises(ValueError, match="gold is required"):
        hits_at_k([["a"]])
    # The columnar form needs one id type; top-k hits from Python lists use Python equality (no match here).
    with pytest.raises(ValueError, match="retrieved ids are int64 but gold ids are string"):
        to_columns([[1, 2]], [{"a"}])
    assert not hits_at_k([[1, 2]], [{"a"}]).hits.any()
    with pytest.raises(ValueError, match="hashable"):
        hits_at_k([[["a"]]], [{"a"}])
    with pytest.raises(ValueError, match="null"):
        columns_from_arrow(pa.array([["a", None]]), pa.array([["a"]]))
    with pytest.raises(ValueError, match="retrieved_offsets must start at 0 and end at 2"):
        columns_from_flat([0, 3], ["a", "b"], [0, 1], ["a"])
    with pytest.raises(ValueError, match="pyarrow list array"):
        columns_from_arrow(pa.array(["a"]), pa.array([["a"]]))
    with pytest.raises(ValueError, match="must lie in"):
        RankedColumns(np.array([0, 1]), np.array([5]), np.array([0, 0]), np.zeros(0, dtype=np.int64), n_codes=2)


def test_dictionary_encoded_arrow_uses_unified_indices() -> None:
    # Retrieved and gold encoded with different dictionaries (as two Parquet columns read with read_dictionary).
    r = pa.array(RETRIEVED, pa.list_(pa.string()))
    g = pa.array(GOLD, pa.list_(pa.string()))
    r_dict = pa.ListArray.from_arrays(r.offsets, pc_encode(r.flatten()))
    g_dict = pa.ListArray.from_arrays(g.offsets, pc_encode(g.flatten()))
    assert pa.types.is_dictionary(r_dict.type.value_type)
    _check(hits_at_k(r_dict, g_dict, k=5))
    columns = columns_from_arrow(r_dict, g_dict)
    # Codes are indices into the unified dictionary: "a" in retrieved and in gold share one code.
    assert columns.retrieved_codes[0] == columns.gold_codes[0]
    assert columns.n_codes == len({i for ids in (*RETRIEVED, *GOLD) for i in ids})


def pc_encode(values: pa.Array) -> pa.Array:
    """Dictionary-encode flat ids."""
    import pyarrow.compute as pc

    return pc.dictionary_encode(values)
