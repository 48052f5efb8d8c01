"""Top-k hits of Arrow string lists by comparing the ids' bytes within each query: a compiled loop (numba).

Input is the Arrow buffers themselves, zero-copy: per query the start/end of its ids in the list's child array,
the child's string offsets and UTF-8 bytes (for ``list<dictionary<string>>`` also the indices, which map an id to
its dictionary entry). Per query the kernel reads only the gold ids and the retrieved ids up to the ``k``-th
distinct one. Each id gets a 64-bit fingerprint of its bytes (for a dictionary, one table computed in a single
pass over the dictionary); ids with equal fingerprints are then compared byte by byte, so the result is exact.
No vocabulary is shared across queries.

numba is optional. :func:`compiled` compiles (or loads from numba's on-disk cache, ``__pycache__`` next to this
file or ``$NUMBA_CACHE_DIR``) on first use; without numba, with ``MEMEVAL_NUMBA=0``, or for inputs below
:data:`MIN_QUERIES` the caller uses the numpy/pyarrow path instead. Both give identical results (tested).
The functions below are plain Python too, which is how the tests run them without numba.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

MIN_QUERIES = 200_000
"""Below this many queries the numpy path is used. Measured (bench/bench_metrics.py, one fresh process each):
importing numba and loading the kernel from a warm cache takes 0.6-1.4 s, compiling it on an empty cache 4-8 s,
against about 8 us per query on the numpy path: the warm kernel pays off from about 100,000-200,000 queries,
a cold compile from about a million."""


_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


def fingerprint(s: int, offsets: NDArray[Any], data: NDArray[np.uint8]) -> np.uint64:
    """A 64-bit fingerprint of string ``s``'s bytes: equal strings have equal fingerprints (never the converse:
    equal fingerprints are always compared byte by byte).

    The length, then the bytes eight at a time as little-endian words (which the compiler turns into single
    loads; the last word ends at the last byte and may overlap the previous one), each mixed in with an xor
    and a multiply by an odd constant. Both steps are one-to-one, so two strings of equal length that differ
    in a single word never share a fingerprint.
    """
    start = offsets[s]
    end = offsets[s + 1]
    h = (_FNV_OFFSET ^ np.uint64(end - start)) * _FNV_PRIME
    if end - start < 8:
        word = np.uint64(0)
        for i in range(start, end):
            word = (word << np.uint64(8)) | np.uint64(data[i])
        return (h ^ word) * _FNV_PRIME
    i = start
    while True:
        # The last word may overlap the one before it: fine, the same bytes are read for equal strings.
        i = min(i, end - 8)
        word = (
            np.uint64(data[i])
            | (np.uint64(data[i + 1]) << np.uint64(8))
            | (np.uint64(data[i + 2]) << np.uint64(16))
            | (np.uint64(data[i + 3]) << np.uint64(24))
            | (np.uint64(data[i + 4]) << np.uint64(32))
            | (np.uint64(data[i + 5]) << np.uint64(40))
            | (np.uint64(data[i + 6]) << np.uint64(48))
            | (np.uint64(data[i + 7]) << np.uint64(56))
        )
        h = (h ^ word) * _FNV_PRIME
        i += 8
        if i >= end:
            return h


def fingerprints(offsets: NDArray[Any], data: NDArray[np.uint8]) -> NDArray[np.uint64]:
    """:func:`fingerprint` of every string of an Arrow string array (a dictionary), in one sequential pass."""
    out = np.empty(len(offsets) - 1, dtype=np.uint64)
    for s in range(len(offsets) - 1):
        out[s] = fingerprint(s, offsets, data)
    return out


def same_id(
    a: int,
    a_offsets: NDArray[Any],
    a_data: NDArray[np.uint8],
    b: int,
    b_offsets: NDArray[Any],
    b_data: NDArray[np.uint8],
) -> bool:
    """Whether string ``a`` of one Arrow string array equals string ``b`` of another (lengths, then bytes)."""
    a0 = a_offsets[a]
    b0 = b_offsets[b]
    size = a_offsets[a + 1] - a0
    if b_offsets[b + 1] - b0 != size:
        return False
    for i in range(size):  # noqa: SIM110 (numba compiles loops, not generator expressions)
        if a_data[a0 + i] != b_data[b0 + i]:
            return False
    return True


def top_k_hits_kernel(
    k: int,
    r_start: NDArray[Any],
    r_end: NDArray[Any],
    r_index: NDArray[Any],
    r_indirect: bool,
    r_offsets: NDArray[Any],
    r_data: NDArray[np.uint8],
    r_table: NDArray[np.uint64],
    g_start: NDArray[Any],
    g_end: NDArray[Any],
    g_index: NDArray[Any],
    g_indirect: bool,
    g_offsets: NDArray[Any],
    g_data: NDArray[np.uint8],
    g_table: NDArray[np.uint64],
    hits: NDArray[np.bool_],
    code: NDArray[np.int64],
    n_gold: NDArray[np.int64],
    n_top: NDArray[np.int64],
) -> None:
    """Fill ``hits`` (queries x k), ``code`` (each row of ``hits`` as bits, for ``k <= 63``), ``n_gold`` and
    ``n_top`` for every query.

    Query ``q``'s retrieved ids are child positions ``r_start[q] .. r_end[q] - 1``; position ``p`` is string
    ``r_index[p]`` if ``r_indirect`` (a dictionary, whose fingerprints are ``r_table``) else string ``p``
    (fingerprinted here). Likewise gold. Ids with equal fingerprints are compared byte by byte, so the result is
    exact. Retrieved ids are deduplicated in order (first occurrence wins) and cut at ``k`` distinct; gold ids
    count once.
    """
    widest = 0
    for q in range(len(g_start)):
        widest = max(widest, g_end[q] - g_start[q])
    gold_string = np.empty(widest, dtype=np.int64)
    gold_print = np.empty(widest, dtype=np.uint64)
    kept_string = np.empty(k, dtype=np.int64)
    kept_print = np.empty(k, dtype=np.uint64)
    for q in range(len(r_start)):
        distinct = 0
        for a in range(g_start[q], g_end[q]):
            sa = g_index[a] if g_indirect else a
            fa = g_table[sa] if g_indirect else fingerprint(sa, g_offsets, g_data)
            repeated = False
            for b in range(distinct):
                if gold_print[b] == fa and same_id(sa, g_offsets, g_data, gold_string[b], g_offsets, g_data):
                    repeated = True
                    break
            if not repeated:
                gold_string[distinct] = sa
                gold_print[distinct] = fa
                distinct += 1
        n_gold[q] = distinct
        rank = 0
        for p in range(r_start[q], r_end[q]):
            sp = r_index[p] if r_indirect else p
            fp = r_table[sp] if r_indirect else fingerprint(sp, r_offsets, r_data)
            repeated = False
            for t in range(rank):
                if kept_print[t] == fp and same_id(sp, r_offsets, r_data, kept_string[t], r_offsets, r_data):
                    repeated = True
                    break
            if repeated:
                continue
            kept_string[rank] = sp
            kept_print[rank] = fp
            for b in range(distinct):
                if gold_print[b] == fp and same_id(sp, r_offsets, r_data, gold_string[b], g_offsets, g_data):
                    hits[q, rank] = True
                    if rank < 63:
                        code[q] |= 1 << rank
                    break
            rank += 1
            if rank == k:
                break
        n_top[q] = rank


_compiled: tuple[Callable[..., None], Callable[..., NDArray[np.uint64]]] | None = None


def numba_enabled() -> bool:
    """numba is installed and not switched off with ``MEMEVAL_NUMBA=0``."""
    if os.environ.get("MEMEVAL_NUMBA", "1") == "0":
        return False
    try:
        importlib.import_module("numba")
    except ImportError:
        return False
    return True


def compiled() -> tuple[Callable[..., None], Callable[..., NDArray[np.uint64]]]:
    """The kernel and :func:`fingerprints` compiled with ``numba.njit(cache=True)`` (cache checked on first call)."""
    global _compiled
    if _compiled is None:
        numba: Any = importlib.import_module("numba")
        # The kernels call these helpers through this module's globals: make them numba functions first.
        for helper in (fingerprint, same_id):
            globals()[helper.__name__] = numba.njit(cache=True, inline="always")(helper)
        _compiled = (
            numba.njit(cache=True, nogil=True)(top_k_hits_kernel),
            numba.njit(cache=True, nogil=True)(fingerprints),
        )
    return _compiled
