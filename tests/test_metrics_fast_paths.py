"""The fast top-k hit paths are exact: Python lists (hash comparison confirmed with ==, or with numba the
compiled kernel over the ids joined into one separated text) and Arrow (numba kernel).

Every case is checked against the definition itself (``dict.fromkeys`` to deduplicate in order, a ``set`` for
gold), including forced hash collisions, long ids that agree in their first and last eight bytes, repeated ids
inside and beyond the top-k window, empty lists, ids that are not strings, ``bytes`` next to equal-looking
``str`` ids, and the compiled and uncompiled kernels against the numpy path.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from memeval_core.metrics import arrow as arrow_module
from memeval_core.metrics import evaluate, hits_at_k, to_columns, top_k_hits
from memeval_core.metrics import kernel as kernel_module
from memeval_core.metrics import lists as lists_module
from memeval_core.metrics.arrow import _lists, arrow_hits
from memeval_core.metrics.columnar import TopKHits, hit_tables
from memeval_core.metrics.lists import GOLD_LIMIT, hits_from_lists


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
    np.testing.assert_array_equal(got.hits, want.hits)
    if got.k <= 16 and got.n_queries:
        # A row code recorded by a fast path equals the one packed from the matrix.
        packed = TopKHits(k=got.k, hits=got.hits, n_gold=got.n_gold, n_retrieved=got.n_retrieved)
        np.testing.assert_array_equal(got.row_code, packed.row_code)
    np.testing.assert_array_equal(got.n_gold, want.n_gold)
    np.testing.assert_array_equal(got.n_retrieved, want.n_retrieved)


def random_queries(seed: int, n: int = 400, pool: int = 12) -> tuple[list[list[str]], list[list[str]]]:
    """Small pools so that repeats (in the window, beyond it, in gold) and hits are frequent."""
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(pool)] + ["", "é", "日本", "d1 "]
    retrieved = [[rng.choice(ids) for _ in range(rng.choice([0, 1, 3, 5, 6, 9, 20]))] for _ in range(n)]
    gold = [[rng.choice(ids) for _ in range(rng.choice([0, 1, 2, 4, 7, GOLD_LIMIT + 3]))] for _ in range(n)]
    # Fresh string objects, as a parser makes them (equal ids are equal, not identical).
    fresh = [["".join(list(x)) for x in r] for r in retrieved]
    return fresh, gold


@pytest.fixture(params=["hash", "compiled"])
def lists_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a lists test on the hash path, and again on the compiled path (numba, from any size, small blocks)."""
    if request.param == "compiled":
        pytest.importorskip("numba")
        monkeypatch.setattr(lists_module, "LISTS_MIN_QUERIES", 0)
        monkeypatch.setattr(lists_module, "COMPILED_BLOCK", 64)
    else:
        monkeypatch.setenv("MEMEVAL_NUMBA", "0")
    return str(request.param)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 5, 10, 20])
@pytest.mark.usefixtures("lists_path")
def test_lists_match_the_definition(seed: int, k: int) -> None:
    retrieved, gold = random_queries(seed)
    assert_same(hits_from_lists(retrieved, gold, k), reference(retrieved, gold, k))


def test_lists_in_several_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    retrieved, gold = random_queries(9, n=250)
    monkeypatch.setattr(lists_module, "BLOCK", 16)
    assert_same(hits_from_lists(retrieved, gold, 5), reference(retrieved, gold, 5))


@pytest.mark.usefixtures("lists_path")
def test_repeats_push_distinct_ids_beyond_the_window() -> None:
    retrieved = [["a", "a", "a", "a", "a", "b", "c", "g"], ["a", "a"], ["x", "y", "x", "y", "x", "y", "g", "z"]]
    gold = [["g", "c"], ["a"], ["g"]]
    got = hits_from_lists(retrieved, gold, 5)
    assert_same(got, reference(retrieved, gold, 5))
    assert got.hits[0].tolist() == [False, False, True, True, False]
    assert got.n_retrieved.tolist() == [4, 1, 4]


@pytest.mark.parametrize(
    "forced",
    [lambda x: hash(x) & 3, lambda x: 0, lambda x: -1 if isinstance(x, str) else hash(x)],
    ids=["two-bits", "constant-markers-too", "every-string-collides"],
)
def test_forced_hash_collisions_do_not_change_results(
    monkeypatch: pytest.MonkeyPatch, forced: Callable[[Any], int]
) -> None:
    retrieved, gold = random_queries(7)
    want = reference(retrieved, gold, 5)
    monkeypatch.setattr(lists_module, "_hash", forced)
    assert_same(hits_from_lists(retrieved, gold, 5), want)


@pytest.mark.usefixtures("lists_path")
def test_ids_that_are_not_strings_use_python_equality() -> None:
    nan = float("nan")
    retrieved: list[list[Any]] = [
        [-1, -2, 3],  # hash(-1) == hash(-2) in CPython: a real collision
        [1, 1.0, True],  # 1 == 1.0 == True: one id, as in a set
        [("a", 1), ("a", 2)],
        [nan, 0],  # nan is not == nan, but the same object is in the set
        ["1", 1],
        [b"x", "x"],
    ]
    gold: list[Any] = [{-2}, [1.0], [("a", 2)], [nan], [1], ["x"]]
    got = hits_from_lists(retrieved, gold, 3)
    assert_same(got, reference(retrieved, gold, 3))
    assert got.hits[0].tolist() == [False, True, False]
    assert got.n_retrieved[1] == 1
    assert got.hits[3, 0]


@pytest.mark.usefixtures("lists_path")
def test_empty_and_degenerate_inputs() -> None:
    assert hits_from_lists([], [], 5).hits.shape == (0, 5)
    retrieved: list[list[str]] = [[], ["a"], [], ["a", "a"]]
    gold: list[list[str]] = [[], [], ["a"], ["a", "a", "a"]]
    got = hits_from_lists(retrieved, gold, 5)
    assert_same(got, reference(retrieved, gold, 5))
    assert got.n_gold.tolist() == [0, 0, 1, 1]
    # Tuples, sets and numpy arrays of ids are accepted as per-query containers.
    assert_same(hits_from_lists([("a", "b")], [frozenset({"b"})], 2), reference([("a", "b")], [{"b"}], 2))
    ids = np.array(["a", "b", "c"])
    assert_same(hits_from_lists([ids], [["c"]], 5), reference([ids.tolist()], [["c"]], 5))


def test_compiled_lists_path_takes_only_what_it_compares_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    monkeypatch.setattr(lists_module, "LISTS_MIN_QUERIES", 0)
    monkeypatch.setattr(lists_module, "COMPILED_BLOCK", 3)
    retrieved, gold = random_queries(21, n=200)
    assert lists_module._compiled_block(retrieved, gold, 5) is not None
    assert_same(hits_from_lists(retrieved, gold, 5), reference(retrieved, gold, 5))
    # Sets, tuples, numpy string arrays and empty lists next to lists holding one empty id are all strings.
    shapes: list[Any] = [("a", "b"), [], [""], np.array(["c", "a"]), ["", ""], []]
    shapes_gold: list[Any] = [frozenset({"b"}), [""], [], {"a", ""}, [""], []]
    assert lists_module._compiled_block(shapes, shapes_gold, 5) is not None
    got = hits_from_lists(shapes, shapes_gold, 5)
    assert_same(got, reference(shapes, shapes_gold, 5))
    assert got.n_retrieved.tolist() == [2, 0, 1, 2, 1, 0] and got.n_gold.tolist() == [1, 1, 0, 2, 1, 0]
    # bytes look like str to a byte comparison, but b"x" != "x" in Python: such blocks take the hash path, as do
    # other ids, None, lone surrogates (not UTF-8) and ids that hold the separator. Nothing is half-converted.
    sep = lists_module.SEPARATOR
    for r, g in (
        ([[b"x", "x"]], [["x"]]),
        ([["x"]], [[b"x"]]),
        ([[1]], [[1]]),
        ([["a", None]], [["a"]]),
        ([None], [["a"]]),
        ([["a\ud800"]], [["a"]]),
        ([[f"a{sep}b"]], [["a", "b"]]),
        ([["a", "b"]], [[f"a{sep}b"]]),
    ):
        assert lists_module._compiled_block(r, g, 5) is None, (r, g)
    blocks: list[list[Any]] = [
        ["a", "b"],
        ["c"],
        [1, 2],
        [b"x", "x", "y"],
        [2.0, "a"],
        ["a", None],
        ["z", "a"],
        [f"a{sep}b", "a"],
        ["q"],
    ]
    blocks_gold: list[list[Any]] = [["b"], ["c"], [2], ["x", b"y"], [2], [None], ["a"], ["a", "b"], []]
    got = hits_from_lists(blocks, blocks_gold, 5)
    assert_same(got, reference(blocks, blocks_gold, 5))
    assert got.hits[3].tolist() == [False, True, False, False, False] and not got.hits[7, 0] and got.hits[7, 1]


def test_evaluate_from_lists_equals_columnar_path() -> None:
    retrieved, gold = random_queries(11, n=1_000)
    via_lists = evaluate(retrieved, gold, k=5)
    via_columns = evaluate(to_columns(retrieved, gold, depth=5), k=5)
    for name in ("ndcg", "precision", "recall", "mrr", "f1"):
        np.testing.assert_allclose(via_lists.metric(name), via_columns.metric(name), rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [1, 5, 16, 17, 20])
def test_row_code_tables_match_row_reductions(k: int) -> None:
    rng = np.random.default_rng(k)
    hits = TopKHits(
        k=k,
        hits=rng.uniform(size=(300, k)) < 0.3,
        n_gold=rng.integers(0, 4, size=300),
        n_retrieved=np.full(300, k, dtype=np.int64),
    )
    assert (hits.row_code is None) == (k > 16)
    np.testing.assert_array_equal(hits.hit_count, hits.hits.sum(axis=1))
    if hits.row_code is not None:
        tables = hit_tables(k)
        first = np.where(hits.hits.any(axis=1), np.argmax(hits.hits, axis=1) + 1, 0)
        np.testing.assert_array_equal(tables.first[hits.row_code], first)
        weights = 1.0 / np.log2(np.arange(2, k + 2))
        np.testing.assert_allclose(tables.dcg[hits.row_code], hits.hits @ weights, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- Arrow: compiled kernel and numpy path


def _arrow_variants(retrieved: list[list[str]], gold: list[list[str]]) -> dict[str, tuple[Any, Any]]:
    r = pa.array(retrieved, pa.list_(pa.string()))
    g = pa.array(gold, pa.list_(pa.string()))
    r_dict = pa.ListArray.from_arrays(r.offsets, pc.dictionary_encode(r.flatten()))
    g_dict = pa.ListArray.from_arrays(g.offsets, pc.dictionary_encode(g.flatten()))
    pad_r = pa.array([["pad"], *retrieved], pa.list_(pa.string())).slice(1)
    pad_g = pa.array([["pad"], *gold], pa.list_(pa.string())).slice(1)
    return {
        "string": (r, g),
        "dictionary": (r_dict, g_dict),
        "string-vs-dictionary": (r, g_dict),
        "large": (r.cast(pa.large_list(pa.large_string())), g.cast(pa.large_list(pa.large_string()))),
        "sliced": (pad_r, pad_g),
        "chunked": (pa.chunked_array([r.slice(0, 7), r.slice(7)]), pa.chunked_array([g])),
    }


def _null_lists() -> tuple[Any, Any, list[list[str]], list[list[str]]]:
    # A null list that still spans child values (allowed by the Arrow format) counts as empty.
    child = pa.array(["a", "b", "a", "c"])
    r = pa.ListArray.from_arrays(pa.array([0, 2, 4], pa.int32()), child, mask=pa.array([False, True]))
    g = pa.array([["a"], ["c"]], pa.list_(pa.string()))
    return r, g, [["a", "b"], []], [["a"], ["c"]]


def test_arrow_kernel_matches_definition_and_numpy_path() -> None:
    pytest.importorskip("numba")
    retrieved, gold = random_queries(3, n=300)
    want = reference(retrieved, gold, 5)
    for name, (r, g) in _arrow_variants(retrieved, gold).items():
        got = arrow_hits(r, g, 5, min_queries=0)
        assert got is not None, name
        assert_same(got, want)
        assert_same(top_k_hits(to_columns(r, g, depth=5), 5), want)
    r, g, retrieved, gold = _null_lists()
    got = arrow_hits(r, g, 3, min_queries=0)
    assert got is not None
    assert_same(got, reference(retrieved, gold, 3))
    assert_same(top_k_hits(to_columns(r, g, depth=3), 3), reference(retrieved, gold, 3))


def test_dictionary_with_repeated_entries_compares_strings() -> None:
    pytest.importorskip("numba")
    # Arrow allows a dictionary to hold the same value twice: equal ids then have different indices.
    dictionary = pa.array(["a", "b", "a", "g"])
    child = pa.DictionaryArray.from_arrays(pa.array([0, 2, 1, 3, 2], pa.int32()), dictionary)
    r = pa.ListArray.from_arrays(pa.array([0, 5], pa.int32()), child)
    g = pa.ListArray.from_arrays(
        pa.array([0, 2], pa.int32()), pa.DictionaryArray.from_arrays(pa.array([0, 2], pa.int32()), dictionary)
    )
    want = reference([["a", "a", "b", "g", "a"]], [["a", "a"]], 5)
    got = arrow_hits(r, g, 5, min_queries=0)
    assert got is not None
    assert_same(got, want)
    assert_same(top_k_hits(to_columns(r, g, depth=5), 5), want)


def _kernel_inputs(r: Any, g: Any) -> tuple[Any, ...]:
    sides = _lists(r), _lists(g)
    assert sides[0] is not None and sides[1] is not None
    return (*sides[0], *sides[1])


def _run_python_kernel(r: Any, g: Any, k: int) -> TopKHits:
    """The kernel as plain Python (what runs when numba is absent from a test environment)."""
    inputs = _kernel_inputs(r, g)
    n = len(inputs[0])
    hits = np.zeros((n, k), dtype=np.bool_)
    code = np.zeros(n, dtype=np.int64)
    n_gold = np.zeros(n, dtype=np.int64)
    n_top = np.zeros(n, dtype=np.int64)
    kernel_module.top_k_hits_kernel(k, *inputs, hits, code, n_gold, n_top)
    np.testing.assert_array_equal(code, (hits << np.arange(k)).sum(axis=1))
    return TopKHits(k=k, hits=hits, n_gold=n_gold, n_retrieved=n_top)


def _long_ids() -> tuple[list[list[str]], list[list[str]]]:
    """Ids of 17-40 bytes that agree in their first and last eight bytes and differ only in the middle, so only
    the byte comparison tells them apart."""
    rng = random.Random(4)
    ids = ["prefix00" + m + "suffix00" for m in ("a", "b", "ab", "ba", "x" * 24, "x" * 23 + "y", "日本")]
    retrieved = [[rng.choice(ids) for _ in range(rng.randrange(0, 9))] for _ in range(150)]
    gold = [[rng.choice(ids) for _ in range(rng.randrange(0, 4))] for _ in range(150)]
    return retrieved, gold


@pytest.mark.parametrize("data", ["random", "long"])
def test_uncompiled_kernel_matches_definition(data: str) -> None:
    retrieved, gold = random_queries(5, n=120) if data == "random" else _long_ids()
    r = pa.array(retrieved, pa.list_(pa.string()))
    g = pa.array(gold, pa.list_(pa.string()))
    assert_same(_run_python_kernel(r, g, 5), reference(retrieved, gold, 5))


def test_compiled_kernel_tells_long_ids_apart_by_their_middle_bytes() -> None:
    pytest.importorskip("numba")
    retrieved, gold = _long_ids()
    for name, (r, g) in _arrow_variants(retrieved, gold).items():
        got = arrow_hits(r, g, 5, min_queries=0)
        assert got is not None, name
        assert_same(got, reference(retrieved, gold, 5))


def test_summaries_identify_short_strings() -> None:
    values = ["", "a", "a\x00", "\x00a", "abcdefgh", "abcdefghi", "bbcdefghi", "abcdefghij", "日本語", "é" * 8]
    array = pa.array(values + values)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[: len(array) + 1]
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)
    keys = []
    for s in range(len(array)):
        size = int(offsets[s + 1] - offsets[s])
        assert size <= 16
        keys.append((size, *(int(w) for w in kernel_module.summary(data, int(offsets[s]), size))))
    # Equal strings give equal keys; different strings of up to 16 bytes never do.
    assert keys[: len(values)] == keys[len(values) :]
    assert len(set(keys)) == len(values)


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_kernel_split_among_threads_gives_the_same_hits(monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    pytest.importorskip("numba")
    retrieved, gold = random_queries(31, n=301)
    monkeypatch.setattr(arrow_module, "_threads", lambda n: threads)
    want = reference(retrieved, gold, 5)
    for name, (r, g) in _arrow_variants(retrieved, gold).items():
        got = arrow_hits(r, g, 5, min_queries=0)
        assert got is not None, name
        assert_same(got, want)
    # The compiled lists path runs the same kernel.
    monkeypatch.setattr(lists_module, "LISTS_MIN_QUERIES", 0)
    assert_same(hits_from_lists(retrieved, gold, 5), want)


@pytest.mark.usefixtures("lists_path")
def test_bad_lists_fail_alike_on_both_paths() -> None:
    # A set or a mapping has no rank order; a missing gold set is a caller's mistake. Same error on either path.
    for retrieved, gold in (([{"a", "b"}], [["a"]]), ([{"a": 1}], [["a"]]), ([["a"], ["b"]], [["a"]])):
        with pytest.raises(ValueError):
            hits_from_lists(retrieved, gold, 2)
    # Gold is read twice, so a one-shot iterator is refused rather than losing its hits.
    with pytest.raises(ValueError, match=r"gold sets must be collections.*generator"):
        hits_from_lists([["a", "b"]], [(g for g in ["a"])], 2)


def test_kernel_refuses_k_below_one() -> None:
    pytest.importorskip("numba")
    r = pa.array([["a"]], pa.list_(pa.string()))
    with pytest.raises(ValueError, match="k must be >= 1"):
        arrow_hits(r, r, 0, min_queries=0)


def test_first_use_of_the_kernel_from_several_threads_at_once(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    # A switch interval of 1 us makes threads interleave inside compiled(): without its lock, most runs fail.
    script = """
import sys, threading
sys.setswitchinterval(1e-6)
from memeval_core.metrics import kernel
barrier = threading.Barrier(8)
got, errors = [], []
def first_use():
    barrier.wait()
    try:
        got.append(kernel.compiled())
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=first_use) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
assert len(got) == 8 and all(g is got[0] for g in got)
"""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).parent.parent)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_threads_follow_the_cores_and_the_input_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrow_module.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    per = arrow_module.QUERIES_PER_THREAD
    assert [arrow_module._threads(n) for n in (0, per - 1, per, 2 * per, 3 * per, 100 * per)] == [1, 1, 1, 2, 3, 4]
    monkeypatch.setattr(arrow_module.os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert arrow_module._threads(100 * per) == arrow_module.MAX_THREADS


def test_arrow_kernel_is_skipped_when_not_applicable(monkeypatch: pytest.MonkeyPatch) -> None:
    r = pa.array([["a"]], pa.list_(pa.string()))
    assert arrow_hits(r, r, 5) is None  # below MIN_QUERIES
    assert arrow_hits(pa.array([[1]]), pa.array([[1]]), 5, min_queries=0) is None  # integer ids: numpy path
    monkeypatch.setenv("MEMEVAL_NUMBA", "0")
    assert arrow_hits(r, r, 5, min_queries=0) is None
    # The public entry point still answers (numpy path).
    assert hits_at_k(r, r, k=5).hits[0, 0]


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
    scores = evaluate(hits, k=3)
    for name in ("ndcg", "precision", "recall", "mrr", "f1"):
        values = scores.metric(name)
        assert np.isnan(values[:2]).all() and not np.signbit(values[:2]).any(), name
        assert np.isfinite(values[2]), name


def test_uint64_dictionary_indices() -> None:
    pytest.importorskip("numba")
    dictionary = pa.array(["a", "b", "c"])
    child = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1], pa.uint64()), dictionary)
    r = pa.ListArray.from_arrays(pa.array([0, 3, 4], pa.int32()), child)
    g = pa.array([["b"], ["c"]], pa.list_(pa.string()))
    got = arrow_hits(r, g, 5, min_queries=0)
    assert got is not None
    assert_same(got, reference([["a", "b", "c"], ["b"]], [["b"], ["c"]], 5))
