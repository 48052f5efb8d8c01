"""Top-k hits of pyarrow list arrays with the compiled kernel (:mod:`memeval_core.metrics.kernel`), zero-copy.

Accepted: ``list``/``large_list`` of ``string``/``large_string`` or of ``dictionary<string>`` (as Parquet reads
string columns back with ``read_dictionary``), chunked or not, sliced or not, null lists counting as empty.
Anything else (integer ids, null ids, other value types) returns None and the caller takes the numpy/pyarrow
path of :func:`memeval_core.metrics.columnar.top_k_hits`, which gives identical results.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from memeval_core.metrics import kernel
from memeval_core.metrics.columnar import TopKHits, check_counts

NO_INDEX = np.zeros(0, dtype=np.int32)

QUERIES_PER_THREAD = 100_000
"""The kernel releases the GIL, so :func:`run_kernel` splits larger inputs among threads, one per available core,
each with at least this many queries (starting a thread costs about 0.1 ms, a query about 70 ns). Measured at a
million queries on two cores: 0.039 s in two threads against 0.070 s in one (median of 15)."""

MAX_THREADS = 8
"""At most this many threads per call, however many cores there are (the loop soon waits on memory)."""


def _single_array(values: Any) -> Any:
    if isinstance(values, pa.ChunkedArray):
        return values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    return values


def _strings(values: Any) -> tuple[NDArray[Any], NDArray[np.uint8]] | None:
    """Offsets (``len + 1``, sliced to the array) and UTF-8 bytes of a string array without nulls."""
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)) or values.null_count:
        return None
    _, offsets_buffer, data_buffer = values.buffers()
    dtype = np.int64 if pa.types.is_large_string(values.type) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=dtype)[values.offset : values.offset + len(values) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


Side = tuple[NDArray[Any], NDArray[Any], NDArray[Any], bool, NDArray[Any], NDArray[np.uint8]]
"""One side (retrieved or gold) as the kernel reads it: per query the start and end of its ids, then the index
from id position to string (with the flag saying whether it is used), the string offsets and the UTF-8 bytes."""


def _lists(values: Any) -> Side | None:
    """Per-list start/end in the child, then the child's index, indirect flag, string offsets and bytes
    (see :func:`memeval_core.metrics.kernel.top_k_hits_kernel`); None if unsupported."""
    values = _single_array(values)
    if not isinstance(values, pa.Array) or not (pa.types.is_list(values.type) or pa.types.is_large_list(values.type)):
        return None
    offsets = values.offsets.to_numpy()
    start, end = offsets[:-1], offsets[1:]
    if values.null_count:
        # A null list may still span child values: it counts as empty.
        valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
        end = np.where(valid, end, start)
    child = values.values
    if pa.types.is_dictionary(child.type):
        if child.null_count or not pa.types.is_integer(child.type.index_type):
            return None
        strings = _strings(child.dictionary)
        if strings is None:
            return None
        index = child.indices.to_numpy()
        # The kernel adds 1 to an index: uint64 plus a signed int is a float in numba. Indices fit int64.
        return start, end, index.astype(np.int64) if index.dtype == np.uint64 else index, True, *strings
    strings = _strings(child)
    if strings is None:
        return None
    return start, end, NO_INDEX, False, strings[0], strings[1]


def arrow_hits(retrieved: Any, gold: Any, k: int, min_queries: int | None = None) -> TopKHits | None:
    """Top-k hits with the compiled kernel, or None (numba missing or off, small input, unsupported types)."""
    limit = kernel.MIN_QUERIES if min_queries is None else min_queries
    if len(retrieved) < limit or not kernel.numba_enabled():
        return None
    r = _lists(retrieved)
    g = _lists(gold)
    if r is None or g is None:
        return None
    return run_kernel(r, g, k)


def _threads(n: int) -> int:
    """Threads for ``n`` queries: one per available core, at most :data:`MAX_THREADS`, each with at least
    :data:`QUERIES_PER_THREAD` queries."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_THREADS, n // QUERIES_PER_THREAD))


def run_kernel(retrieved: Side, gold: Side, k: int) -> TopKHits:
    """The compiled kernel over two sides laid out as :func:`_lists` returns them (one entry per query)."""
    if k < 1:  # the kernel does not check bounds: k = 0 would write outside its arrays
        raise ValueError(f"k must be >= 1, got {k}")
    n = len(retrieved[0])
    check_counts(n, len(gold[0]))
    hits = np.zeros((n, k), dtype=np.bool_)
    code = np.zeros(n, dtype=np.int64)
    n_gold = np.zeros(n, dtype=np.int64)
    n_top = np.zeros(n, dtype=np.int64)
    run = kernel.compiled()

    def part(lo: int, hi: int) -> None:
        # Each part has its own queries' start/end and output rows; ids, offsets and bytes are shared (read only).
        r_part = (retrieved[0][lo:hi], retrieved[1][lo:hi], *retrieved[2:])
        g_part = (gold[0][lo:hi], gold[1][lo:hi], *gold[2:])
        run(k, *r_part, *g_part, hits[lo:hi], code[lo:hi], n_gold[lo:hi], n_top[lo:hi])

    first, *rest = pairwise(np.linspace(0, n, _threads(n) + 1).astype(np.int64).tolist())
    if not rest:
        part(*first)
    else:
        with ThreadPoolExecutor(len(rest)) as pool:
            others = [pool.submit(part, *bounds) for bounds in rest]
            part(*first)  # this thread takes the first part itself
            for other in others:
                other.result()
    return TopKHits(k=k, hits=hits, n_gold=n_gold, n_retrieved=n_top).with_row_code(code.astype(np.intp, copy=False))
