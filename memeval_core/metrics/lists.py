"""Top-k hits straight from per-query Python lists, comparing ids within each query only (no vocabulary).

With numba (from :data:`LISTS_MIN_QUERIES` queries), blocks of string ids take the compiled path: per block and
side, ``str.join`` writes every id followed by a separator into one text (in C: joining per query, then the
queries), which is UTF-8 encoded; numpy finds the separators, which give each id's bytes; the kernel of
:mod:`memeval_core.metrics.kernel` compares bytes within each query. ``str.join`` accepts ``str`` ids only (it
refuses ``bytes``, numbers and None), and equal UTF-8 bytes are equal strings, so the kernel's equalities are
Python's and nothing needs checking again. A block with any other id, with a lone surrogate (not UTF-8) or with
an id that holds the separator takes the hash path, as does a block whose ranked lists are not sliceable
sequences (a ``set`` or ``dict`` has no rank order; the hash path refuses it). One limit, for ids no results file
produces: a ``str`` subclass that redefines ``==`` or ``__hash__`` is compared by its characters. The hash path:

Relevance only asks "is this retrieved id in *this* query's gold set", so ids never need codes shared across
queries. Per query only the first ``k`` retrieved ids and the gold ids are read:

1. One C-level pass walks, query after query, ``retrieved[i][:k]``, a marker, ``gold[i]``, a second marker
   (``itertools.chain`` over ``map(itemgetter(slice(0, k)), ...)``) and hashes every element on the fly
   (``np.fromiter(map(hash, ...))``; CPython caches a string's hash on the string). The markers' positions give
   every window's and gold set's start and length, so no ``len()`` pass is needed; if a marker's hash equals
   an id's (or the other marker's), the marker count is off and lengths come from ``len()`` instead.
2. numpy builds padded ``(queries x k)`` and ``(queries x G)`` hash matrices and compares them: window slots
   with earlier window slots, gold slots with each other, window slots with gold slots.
3. Exactness: equal hashes may be a collision. A window slot whose hash equals a gold hash is a hit only if
   ``retrieved[q][j] in gold[q]`` (Python's own ``is``/``==`` test, run in C through ``map(operator.contains,
   ...)`` over the candidates only, typically under one per query), so a collision is never a hit.
4. Queries with equal hashes inside their window (a repeated id, whose first ``k`` distinct ids may lie further
   down, or a collision) or inside their gold set, or with more than :data:`GOLD_LIMIT` gold ids, are scored by
   an exact per-query path (``dict.fromkeys`` + ``set``: the definition itself). In the benchmark that is about
   1.5 % of queries.

Measured cost (bench/bench_metrics.py, 1M queries): the hashing pass of step 1 is about 1.1 us per query, over
half of the total; it is bound by CPython's per-element iteration, not by numpy.

Ids may be any hashable Python objects; equality is Python's (``1 == 1.0``, ``"1" != 1``), as in a ``set``
(within the one limit of the compiled path above).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain, repeat
from operator import contains, getitem, itemgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics import kernel
from memeval_core.metrics.arrow import NO_INDEX, Side, run_kernel
from memeval_core.metrics.columnar import IntArray, TopKHits, check_counts

BLOCK = 8192
"""Queries per block (see :func:`hits_from_lists`)."""

GOLD_LIMIT = 16
"""Queries with more gold ids than this take the exact per-query path (the padded comparison is n x k x G)."""

_PAIRWISE_GOLD = 8
"""Up to this many gold slots, repeated gold hashes are found by comparing slot pairs; beyond, by a row sort."""

_hash: Callable[[Any], int] = hash
"""The hash used for the first comparison (tests replace it to force collisions; results must not change)."""


def _confirmed_hits(
    retrieved: Sequence[Sequence[Any]], gold: Sequence[Collection[Any]], query: IntArray, slot: IntArray
) -> NDArray[np.bool_]:
    """``retrieved[q][s] in gold[q]`` for every candidate pair (Python's own ``is``/``==`` test, in C)."""
    if len(query) == 0:
        return np.zeros(0, dtype=np.bool_)
    queries = query.tolist()
    ids = map(getitem, map(retrieved.__getitem__, queries), slot.tolist())
    return np.fromiter(map(contains, map(gold.__getitem__, queries), ids), dtype=np.bool_, count=len(queries))


COMPILED_BLOCK = 8192
"""Queries per block on the compiled path: a block's joined text (about 1.4 MB at 15 ids of 11 bytes) stays in
the CPU cache while it is encoded and searched for separators."""

LISTS_MIN_QUERIES = 500_000
"""From this many queries (with numba) lists take the compiled path. Loading the kernel costs about 0.5-0.7 s once
per process (:data:`memeval_core.metrics.kernel.MIN_QUERIES`); at a million queries the compiled path takes
1.1-1.25 s against 1.85 s on the hash path (about 0.65 us per query saved), so a single call breaks even near
a million queries and a process that scores two such inputs (or Arrow input too) gains from half that."""

SEPARATOR = "\x1f"
"""Joins the ids of a block into one text on the compiled path (ASCII unit separator: in no real id; an id that
holds it changes the separator count, and the block then takes the hash path)."""

_SEPARATOR_BYTE = ord(SEPARATOR)
_INT32_LIMIT = 2**31 - 1


def _delimited(lists: Sequence[Collection[Any]]) -> Side | None:
    """One side of a block as the kernel reads it (see :data:`memeval_core.metrics.arrow.Side`), built from
    one text: every id followed by :data:`SEPARATOR`, UTF-8 encoded. None when an id is not a ``str`` (``join``
    refuses it), is not valid UTF-8 (a lone surrogate) or holds the separator.

    Each id's bytes keep their separator: every id has exactly one, so equal bytes still mean equal ids. An
    empty list contributes an empty piece (and its separator), which its query's empty range skips.
    """
    n = len(lists)
    try:
        sizes = np.fromiter(map(len, lists), dtype=np.int64, count=n)
        # Joining per query first, then the queries, is twice as fast as one join over every id.
        data = np.frombuffer((SEPARATOR.join(map(SEPARATOR.join, lists)) + SEPARATOR).encode(), dtype=np.uint8)
    except (TypeError, UnicodeEncodeError):
        return None
    pieces = np.maximum(sizes, 1)
    ends = np.flatnonzero(data == _SEPARATOR_BYTE)
    if len(ends) != int(pieces.sum()):
        return None
    index_type = np.int32 if len(data) <= _INT32_LIMIT else np.int64
    offsets = np.empty(len(ends) + 1, dtype=index_type)
    offsets[0] = 0
    offsets[1:] = ends + 1
    start = (np.cumsum(pieces) - pieces).astype(index_type)
    return start, start + sizes.astype(index_type), NO_INDEX, False, offsets, data


def _ranked(lists: Sequence[Any]) -> bool:
    """Every ranked list of the block is a sliceable sequence, as the hash path needs (not a set or a mapping)."""
    return all(
        hasattr(kind, "__getitem__") and not issubclass(kind, (Mapping, AbstractSet)) for kind in set(map(type, lists))
    )


def _compiled_block(
    retrieved: Sequence[Sequence[Any]], gold: Sequence[Collection[Any]], k: int
) -> tuple[NDArray[np.bool_], IntArray, IntArray, NDArray[np.intp]] | None:
    """Hits, |gold|, |top k| and row codes of one block on the compiled path (see the module docstring), or
    None when an id is not a string the kernel can compare (the block then takes the hash path)."""
    r = _delimited(retrieved) if _ranked(retrieved) else None
    g = _delimited(gold) if r is not None else None
    if r is None or g is None:
        return None
    top = run_kernel(r, g, k)
    code = top.row_code  # None above 16 bits, where no block records codes
    return top.hits, top.n_gold, top.n_retrieved, np.zeros(len(top.n_gold), dtype=np.intp) if code is None else code


def _slow_rows(
    retrieved: Sequence[Sequence[Any]], gold: Sequence[Collection[Any]], queries: IntArray, k: int
) -> tuple[NDArray[np.bool_], IntArray, IntArray]:
    """The definition, per query, for the few queries the vectorised pass hands over: hits, |gold|, |top k|."""
    hits = np.zeros((len(queries), k), dtype=np.bool_)
    n_gold = np.zeros(len(queries), dtype=np.int64)
    n_top = np.zeros(len(queries), dtype=np.int64)
    for row, q in enumerate(queries.tolist()):
        top = list(dict.fromkeys(retrieved[q]))[:k]
        gold_set = set(gold[q])
        hits[row, : len(top)] = [d in gold_set for d in top]
        n_gold[row] = len(gold_set)
        n_top[row] = len(top)
    return hits, n_gold, n_top


def _layout(
    hashes: IntArray,
    markers: tuple[int, int],
    retrieved: Sequence[Sequence[Any]],
    gold: Sequence[Collection[Any]],
    k: int,
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Start and length of every window and gold set in the flat sequence ``[window, m1, gold, m2] * n``."""
    n = len(retrieved)
    ends_w = np.flatnonzero(hashes == markers[0])
    ends_g = np.flatnonzero(hashes == markers[1])
    if len(ends_w) != n or len(ends_g) != n:
        # An id hashes like a marker: count lengths instead (exact, one more pass).
        w_len = np.minimum(np.fromiter(map(len, retrieved), dtype=np.int64, count=n), k)
        g_len = np.fromiter(map(len, gold), dtype=np.int64, count=n)
        block_end = np.cumsum(w_len + g_len + 2)
        ends_g = block_end - 1
        ends_w = ends_g - g_len - 1
    w_start = np.empty(n, dtype=np.int64)
    w_start[:1] = 0
    w_start[1:] = ends_g[:-1] + 1
    return w_start, ends_w - w_start, ends_w + 1, ends_g - ends_w - 1


def _padded(hashes: IntArray, start: IntArray, length: IntArray, width: int) -> tuple[IntArray, NDArray[np.bool_]]:
    """``(queries x width)`` matrix of each segment's hashes (row-padded) and the mask of real slots."""
    slot = np.arange(width, dtype=np.int64)
    valid = slot < length[:, None]
    index = np.minimum(start[:, None] + slot, max(len(hashes) - 1, 0))
    return hashes[index], valid


def hits_from_lists(retrieved: Sequence[Sequence[Any]], gold: Sequence[Collection[Any]], k: int) -> TopKHits:
    """Top-k hit matrix of per-query Python lists, exact (see the module docstring for how).

    Queries are processed in blocks (:data:`BLOCK` on the hash path, :data:`COMPILED_BLOCK` on the compiled
    one) so that the ids read first are still in the CPU cache when they are read again (the hash path's
    confirmation, measured at about 1 us per candidate on a cold cache; the compiled path's separator search).
    A block that the compiled path cannot take (:func:`_delimited`) takes the hash path on its own.
    """
    n = len(retrieved)
    check_counts(n, len(gold))
    compiled = n >= LISTS_MIN_QUERIES and kernel.numba_enabled()
    size = COMPILED_BLOCK if compiled else BLOCK
    blocks = []
    for lo in range(0, max(n, 1), size):
        r, g = retrieved[lo : lo + size], gold[lo : lo + size]
        _check_collections(g)  # per block: the block's gold lists are then in cache for the passes that follow
        block = _compiled_block(r, g, k) if compiled and len(r) else None
        blocks.append(block if block is not None else _hits_block(r, g, k))
    hits, n_gold, n_top, code = (np.concatenate(parts) for parts in zip(*blocks, strict=True))
    return TopKHits(k=k, hits=hits, n_gold=n_gold, n_retrieved=n_top).with_row_code(code)


def _check_collections(gold: Sequence[Any]) -> None:
    """Refuse one-shot iterators as gold sets: gold is read twice (hashed, then searched with ``in``), and an
    iterator would be empty the second time."""
    once = sorted(kind.__name__ for kind in set(map(type, gold)) if not issubclass(kind, Collection))
    if once:
        raise ValueError(f"gold sets must be collections (list, tuple, set...), got {', '.join(once)}")


def _hits_block(
    retrieved: Sequence[Sequence[Any]], gold: Sequence[Collection[Any]], k: int
) -> tuple[NDArray[np.bool_], IntArray, IntArray, NDArray[np.intp]]:
    """Hits, |gold|, |top k| and row codes of one block of queries."""
    n = len(retrieved)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros((0, k), dtype=np.bool_), empty, empty, empty.astype(np.intp)
    # Two fresh objects end every window and every gold set. Should their hashes equal each other's or an id's,
    # the marker counts come out wrong and _layout counts lengths instead.
    marker_w, marker_g = object(), object()
    # One pass in C: [retrieved[i][:k], marker, gold[i], marker] for every query, hashed on the fly.
    blocks = zip(map(itemgetter(slice(0, k)), retrieved), repeat((marker_w,)), gold, repeat((marker_g,)))
    try:
        hashes = np.fromiter(map(_hash, chain.from_iterable(chain.from_iterable(blocks))), dtype=np.int64)
    except TypeError as exc:
        raise ValueError(f"ids must be hashable ({exc})") from exc
    w_start, w_len, g_start, g_len = _layout(hashes, (_hash(marker_w), _hash(marker_g)), retrieved, gold, k)

    slow = g_len > GOLD_LIMIT
    width_g = int(min(int(g_len.max()), GOLD_LIMIT))
    window, w_valid = _padded(hashes, w_start, w_len, k)
    gold_h, g_valid = _padded(hashes, g_start, np.minimum(g_len, GOLD_LIMIT), width_g)

    # Hash-equal slots within a window (a repeated id, or a collision) or within a gold set: exact path.
    for b in range(1, k):
        for a in range(b):
            slow |= w_valid[:, b] & (window[:, a] == window[:, b])
    if width_g > _PAIRWISE_GOLD:
        # Padding sorts last (first key), so a row's real hashes stay contiguous in sorted order.
        order = np.lexsort((gold_h, ~g_valid), axis=1)
        ranked = np.take_along_axis(gold_h, order, axis=1)
        ranked_valid = np.take_along_axis(g_valid, order, axis=1)
        slow |= ((ranked[:, 1:] == ranked[:, :-1]) & ranked_valid[:, 1:]).any(axis=1)
    else:
        for b in range(1, width_g):
            for a in range(b):
                slow |= g_valid[:, b] & (gold_h[:, a] == gold_h[:, b])

    # Hits: window slots whose hash equals a gold hash of their query, confirmed with ``in``.
    candidate = np.zeros((n, k), dtype=np.bool_)
    for g in range(width_g):
        candidate |= (window == gold_h[:, g : g + 1]) & g_valid[:, g : g + 1]
    candidate &= w_valid
    candidate[slow] = False
    query, slot = np.nonzero(candidate)
    confirmed = _confirmed_hits(retrieved, gold, query, slot)
    hits = np.zeros((n, k), dtype=np.bool_)
    query, slot = query[confirmed], slot[confirmed]
    hits[query, slot] = True
    # Each row's hits as bits (what the metrics look up), from the few hits instead of the whole matrix.
    code = np.zeros(n, dtype=np.intp)
    if k <= 16:
        code = np.bincount(query, weights=np.left_shift(1, slot), minlength=n).astype(np.intp)
    n_gold = np.minimum(g_len, GOLD_LIMIT)
    n_top = w_len.copy()

    if slow.any():
        queries = np.flatnonzero(slow)
        hits[queries], n_gold[queries], n_top[queries] = _slow_rows(retrieved, gold, queries, k)
        if k <= 16:
            code[queries] = (hits[queries].astype(np.intp) << np.arange(k, dtype=np.intp)).sum(axis=1)
    return hits, n_gold, n_top, code
