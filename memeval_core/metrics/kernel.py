"""Top-k hits of string ids by comparing the ids' bytes within each query: a compiled loop (numba).

Input is string offsets and UTF-8 bytes plus, per query, the start/end of its ids: the Arrow buffers themselves,
zero-copy (:mod:`memeval_core.metrics.arrow`; for ``list<dictionary<string>>`` also the indices, which map an id
to its dictionary entry), or the separated text that :mod:`memeval_core.metrics.lists` makes of Python lists.
Per query the kernel reads only the gold ids and the retrieved ids up to the ``k``-th distinct one. No
vocabulary is shared across queries, and nothing is hashed: each id is summed up by its length and two 8-byte
words, the first and the last eight bytes (:func:`summary`). For ids of up to 16 bytes, which covers the usual
``doc-123``/UUID-prefix/session ids, equal summaries mean equal strings; longer ids with equal
summaries are compared byte by byte. So the result is exact, and comparing two ids is three integer compares.

numba is optional. :func:`compiled` compiles (or loads from numba's on-disk cache, ``__pycache__`` next to this
file or ``$NUMBA_CACHE_DIR``) on first use; without numba, with ``MEMEVAL_NUMBA=0``, or for inputs below
:data:`MIN_QUERIES` (Python lists: :data:`memeval_core.metrics.lists.LISTS_MIN_QUERIES`) the caller uses the
numpy/pyarrow path (lists: the hash path) instead. All give identical results (tested).
The functions below are plain Python too, which is how the tests run them without numba.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

MIN_QUERIES = 200_000
"""Below this many queries of Arrow input the numpy path is used (Python lists have their own threshold,
:data:`memeval_core.metrics.lists.LISTS_MIN_QUERIES`). Measured (bench/bench_metrics.py, one fresh process
each): importing numba and loading the kernel from a warm cache takes 0.6-1.4 s, compiling it on an empty
cache 3-8 s, against about 8 us per query on the numpy path: the warm kernel pays off from about
100,000-200,000 queries, a cold compile from about a million."""


def word(data: NDArray[np.uint8], i: int) -> np.uint64:
    """The eight bytes ``data[i:i + 8]`` as one little-endian word. Compiled, this is one unaligned load
    (:func:`_unaligned_load`): LLVM does not merge the eight byte loads below, which made them most of the
    kernel's time."""
    return (
        np.uint64(data[i])
        | (np.uint64(data[i + 1]) << np.uint64(8))
        | (np.uint64(data[i + 2]) << np.uint64(16))
        | (np.uint64(data[i + 3]) << np.uint64(24))
        | (np.uint64(data[i + 4]) << np.uint64(32))
        | (np.uint64(data[i + 5]) << np.uint64(40))
        | (np.uint64(data[i + 6]) << np.uint64(48))
        | (np.uint64(data[i + 7]) << np.uint64(56))
    )


def summary(data: NDArray[np.uint8], start: int, size: int) -> tuple[np.uint64, np.uint64]:
    """Two words that, with the length, identify a string of up to 16 bytes: its first and its last eight bytes
    (overlapping when shorter than 16), or for fewer than eight bytes the bytes themselves and 0."""
    if size >= 8:
        return word(data, start), word(data, start + size - 8)
    packed = np.uint64(0)
    for i in range(start, start + size):
        packed = (packed << np.uint64(8)) | np.uint64(data[i])
    return packed, np.uint64(0)


def same_middle(a_data: NDArray[np.uint8], a0: int, b_data: NDArray[np.uint8], b0: int, size: int) -> bool:
    """Whether two strings of ``size`` bytes (> 16) with equal summaries also agree in bytes 8 .. size - 9."""
    for i in range(8, size - 8):  # noqa: SIM110 (numba compiles loops, not generator expressions)
        if a_data[a0 + i] != b_data[b0 + i]:
            return False
    return True


def find(
    count: int,
    slot_w0: NDArray[np.uint64],
    slot_w1: NDArray[np.uint64],
    slot_size: NDArray[np.int64],
    slot_at: NDArray[np.int64],
    slot_data: NDArray[np.uint8],
    w0: np.uint64,
    w1: np.uint64,
    size: int,
    at: int,
    data: NDArray[np.uint8],
) -> int:
    """The first of ``count`` remembered strings (summaries, sizes, where their bytes start in ``slot_data``)
    equal to the string of ``size`` bytes at ``data[at]`` with summary ``(w0, w1)``; -1 if none."""
    for b in range(count):
        if (
            slot_w0[b] == w0
            and slot_w1[b] == w1
            and slot_size[b] == size
            and (size <= 16 or same_middle(data, at, slot_data, slot_at[b], size))
        ):
            return b
    return -1


def top_k_hits_kernel(
    k: int,
    r_start: NDArray[Any],
    r_end: NDArray[Any],
    r_index: NDArray[Any],
    r_indirect: bool,
    r_offsets: NDArray[Any],
    r_data: NDArray[np.uint8],
    g_start: NDArray[Any],
    g_end: NDArray[Any],
    g_index: NDArray[Any],
    g_indirect: bool,
    g_offsets: NDArray[Any],
    g_data: NDArray[np.uint8],
    hits: NDArray[np.bool_],
    code: NDArray[np.int64],
    n_gold: NDArray[np.int64],
    n_top: NDArray[np.int64],
) -> None:
    """Fill ``hits`` (queries x k), ``code`` (each row of ``hits`` as bits, for ``k <= 63``), ``n_gold`` and
    ``n_top`` for every query.

    Query ``q``'s retrieved ids are child positions ``r_start[q] .. r_end[q] - 1``; position ``p`` is string
    ``r_index[p]`` if ``r_indirect`` (a dictionary) else string ``p``. Likewise gold. Retrieved ids are
    deduplicated in order (first occurrence wins) and cut at ``k`` distinct; gold ids count once.
    """
    n = len(r_start)
    widest = 0
    for q in range(len(g_start)):
        widest = max(widest, g_end[q] - g_start[q])
    gold_at = np.empty(widest, dtype=np.int64)
    gold_size = np.empty(widest, dtype=np.int64)
    gold_w0 = np.empty(widest, dtype=np.uint64)
    gold_w1 = np.empty(widest, dtype=np.uint64)
    kept_at = np.empty(k, dtype=np.int64)
    kept_size = np.empty(k, dtype=np.int64)
    kept_w0 = np.empty(k, dtype=np.uint64)
    kept_w1 = np.empty(k, dtype=np.uint64)
    for q in range(n):
        distinct = 0
        for a in range(g_start[q], g_end[q]):
            s = g_index[a] if g_indirect else a
            at = g_offsets[s]
            size = g_offsets[s + 1] - at
            w0, w1 = summary(g_data, at, size)
            if find(distinct, gold_w0, gold_w1, gold_size, gold_at, g_data, w0, w1, size, at, g_data) >= 0:
                continue
            gold_at[distinct] = at
            gold_size[distinct] = size
            gold_w0[distinct] = w0
            gold_w1[distinct] = w1
            distinct += 1
        n_gold[q] = distinct
        rank = 0
        row = 0
        for p in range(r_start[q], r_end[q]):
            s = r_index[p] if r_indirect else p
            at = r_offsets[s]
            size = r_offsets[s + 1] - at
            w0, w1 = summary(r_data, at, size)
            if find(rank, kept_w0, kept_w1, kept_size, kept_at, r_data, w0, w1, size, at, r_data) >= 0:
                continue
            kept_at[rank] = at
            kept_size[rank] = size
            kept_w0[rank] = w0
            kept_w1[rank] = w1
            if find(distinct, gold_w0, gold_w1, gold_size, gold_at, g_data, w0, w1, size, at, r_data) >= 0:
                hits[q, rank] = True
                if rank < 63:
                    row |= 1 << rank
            rank += 1
            if rank == k:
                break
        n_top[q] = rank
        code[q] = row


def _unaligned_load() -> Callable[[NDArray[np.uint8], int], np.uint64]:
    """A numba intrinsic reading the eight bytes at ``data[i]`` as one (unaligned) 64-bit load.

    The byte order is the machine's; on a big-endian machine the words differ from :func:`word`'s, but equal
    bytes still give equal words, which is all the kernel compares.
    """
    ir: Any = importlib.import_module("llvmlite.ir")
    types: Any = importlib.import_module("numba.core.types")
    intrinsic: Any = importlib.import_module("numba.extending").intrinsic

    def load_word(typingctx: Any, data: Any, i: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            array = context.make_array(signature.args[0])(context, builder, args[0])
            address = builder.bitcast(builder.gep(array.data, [args[1]]), ir.IntType(64).as_pointer())
            return builder.load(address, align=1)

        return types.uint64(data, i), codegen

    return intrinsic(load_word)  # type: ignore[no-any-return]


load_word: Callable[[NDArray[np.uint8], int], np.uint64] = word
""":func:`word` as the kernel calls it: the intrinsic of :func:`_unaligned_load` once compiled."""


def word_compiled(data: NDArray[np.uint8], i: int) -> np.uint64:
    """:func:`word` through :data:`load_word` (what :func:`compiled` puts in place of :func:`word`)."""
    return load_word(data, i)


_compiled: Callable[..., None] | None = None
_compiling = threading.Lock()
"""Held while :func:`compiled` replaces this module's functions (two app-server threads may ask at once)."""


def numba_enabled() -> bool:
    """numba is installed and not switched off with ``MEMEVAL_NUMBA=0``."""
    if os.environ.get("MEMEVAL_NUMBA", "1") == "0":
        return False
    try:
        importlib.import_module("numba")
    except ImportError:
        return False
    return True


def compiled() -> Callable[..., None]:
    """The kernel compiled with ``numba.njit(cache=True)`` (cache checked on first call).

    ``nogil=True``, so that :func:`memeval_core.metrics.arrow.run_kernel` can run parts of the queries in plain
    threads. Not ``parallel=True``: that more than doubled the compile time, and numba's default threading layer
    aborts when two threads of the app server call such a function at once."""
    global _compiled
    with _compiling:
        if _compiled is None:
            numba: Any = importlib.import_module("numba")
            # The kernel calls these through this module's globals: make them numba functions first.
            globals()["load_word"] = _unaligned_load()
            globals()["word"] = numba.njit(cache=True, inline="always")(word_compiled)
            for helper in (summary, same_middle, find):
                globals()[helper.__name__] = numba.njit(cache=True, inline="always")(helper)
            _compiled = numba.njit(cache=True, nogil=True)(top_k_hits_kernel)
        return _compiled
