"""The shared vectorised form of ranked retrieval results: flat id codes with offsets, then a top-k hit matrix.

Two steps, both numpy over all queries at once:

1. :class:`RankedColumns` (CSR layout). Query ``i``'s ranked ids are
   ``retrieved_codes[retrieved_offsets[i]:retrieved_offsets[i + 1]]`` and its gold ids are
   ``gold_codes[gold_offsets[i]:gold_offsets[i + 1]]``. Ids are integer codes of one vocabulary shared by
   retrieved and gold, so "is this id relevant to this query" is an integer comparison.
   Built from Python lists (:func:`columns_from_lists`), pyarrow list arrays (:func:`columns_from_arrow`)
   or offsets + flat arrays (:func:`columns_from_flat`).
2. :class:`TopKHits`: a boolean ``(queries x k)`` matrix, ``hits[i, r]`` = the ``r+1``-th distinct id retrieved
   for query ``i`` is in its gold set, plus ``|gold|`` per query. Every metric in this package is a few
   array operations on it (:func:`top_k_hits`).

Relevance is binary. Duplicates in a ranked list count once, at their first occurrence: the list is
deduplicated in order before it is cut at ``k`` (so a repeated id does not take a rank slot; this is what
PrecisionMemBench does, and what ranx/trec_eval see when the run dict is built from first occurrences).
Gold ids are a set: repeats in gold are ignored.

Conversion with ``depth=k`` only converts what the top k can need: each query's first ``k`` ids, and the whole
list only for the few queries whose first ``k`` ids contain a repeat.

:func:`hits_at_k` (and so every metric and :func:`memeval_core.metrics.evaluate`) skips step 1 where it can, as
relevance only asks whether an id is in *its own query's* gold set:

- Python lists: :mod:`memeval_core.metrics.lists` compares hashes within each query, confirmed with ``==``
  (exact; Python equality, so ids may be any hashable objects); with numba, large inputs of ``str`` ids go
  through the compiled kernel below instead, comparing UTF-8 bytes (the same result for ``str``).
- pyarrow string lists (``list<string>``, ``list<dictionary<string>>``) of at least
  :data:`memeval_core.metrics.kernel.MIN_QUERIES` queries, when numba is installed: the compiled kernel of
  :mod:`memeval_core.metrics.kernel` compares the ids' bytes within each query, zero-copy.
- Otherwise (integer Arrow ids, small Arrow inputs, no numba): the two steps above. All paths give identical hit
  matrices (tests/test_metrics_fast_paths.py).

Metrics read each row of the hit matrix as a ``k``-bit number (:attr:`TopKHits.row_code`) and look their values
up in tables of ``2**k`` entries (:func:`hit_tables`), for ``k <= 16``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import chain
from operator import eq, itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
"""A 1-D array of int64."""

RetrievedLists = Sequence[Sequence[str]]
"""Ranked ids per query, best first."""
GoldSets = Sequence[Collection[str]]
"""Relevant ids per query (order and repeats ignored)."""

# Keys are query * n_codes + code in int64; stay well below 2**63.
_KEY_LIMIT = 2**62
# Up to this many gold ids per query, hits come from a padded (queries x k x gold) comparison.
_PADDED_GOLD_LIMIT = 16


@dataclass(frozen=True, eq=False)
class RankedColumns:
    """Ranked ids and gold ids of many queries as integer codes in CSR layout (offsets + flat codes)."""

    retrieved_offsets: IntArray
    """Shape ``(queries + 1,)``, non-decreasing, starts at 0 and ends at ``len(retrieved_codes)``."""
    retrieved_codes: IntArray
    """Codes of the ranked ids of all queries, query after query, best first within a query; may repeat."""
    gold_offsets: IntArray
    """Shape ``(queries + 1,)``, same conventions as ``retrieved_offsets``."""
    gold_codes: IntArray
    """Codes of the gold ids of all queries, query after query; may repeat."""
    n_codes: int
    """Every code is in ``[0, n_codes)``; retrieved and gold share the code space."""

    def __post_init__(self) -> None:
        _check_offsets(self.retrieved_offsets, len(self.retrieved_codes), "retrieved_offsets")
        _check_offsets(self.gold_offsets, len(self.gold_codes), "gold_offsets")
        if len(self.retrieved_offsets) != len(self.gold_offsets):
            raise ValueError(
                f"retrieved_offsets describe {len(self.retrieved_offsets) - 1} queries "
                f"but gold_offsets describe {len(self.gold_offsets) - 1}"
            )
        for name, codes in (("retrieved_codes", self.retrieved_codes), ("gold_codes", self.gold_codes)):
            if len(codes) and (int(codes.min()) < 0 or int(codes.max()) >= self.n_codes):
                raise ValueError(f"{name} must lie in [0, n_codes={self.n_codes})")
        if self.n_queries * max(self.n_codes, 1) >= _KEY_LIMIT:
            raise ValueError(f"{self.n_queries} queries x {self.n_codes} codes is too many for int64 keys")

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.retrieved_offsets) - 1


@dataclass(frozen=True, eq=False)
class TopKHits:
    """Binary relevance of the top k distinct retrieved ids of every query, and the size of every gold set."""

    k: int
    """Rank cutoff."""
    hits: NDArray[np.bool_]
    """Shape ``(queries, k)``: ``hits[i, r]`` is True iff the ``(r+1)``-th distinct retrieved id is gold.
    Slots past the end of a short list are False."""
    n_gold: IntArray
    """Shape ``(queries,)``: number of distinct gold ids; 0 means every metric is undefined (NaN)."""
    n_retrieved: IntArray
    """Shape ``(queries,)``: number of distinct retrieved ids within the top k (``<= k``)."""

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.hits.shape[0])

    @cached_property
    def row_code(self) -> NDArray[np.intp] | None:
        """Shape ``(queries,)``: each row of ``hits`` as a ``k``-bit number (bit ``r`` = rank ``r + 1`` is a hit),
        for ``k <= 16``; None above. Metrics look their per-row values up in tables of ``2**k`` entries
        (:func:`hit_tables`) instead of reducing the matrix row by row, which is several times faster."""
        if self.k > _CODE_BITS or self.n_queries == 0:
            return None
        packed = np.packbits(self.hits, axis=1, bitorder="little")
        if packed.shape[1] == 1:
            code: NDArray[np.intp] = packed[:, 0].astype(np.intp)
        else:
            code = packed[:, 0].astype(np.intp) | (packed[:, 1].astype(np.intp) << 8)
        return code

    def with_row_code(self, code: NDArray[np.intp]) -> TopKHits:
        """Record an already computed :attr:`row_code` (a kernel that fills ``hits`` can count bits as it goes)."""
        if self.k <= _CODE_BITS and self.n_queries:
            self.__dict__["row_code"] = code
        return self

    @cached_property
    def hit_count(self) -> IntArray:
        """Shape ``(queries,)``: relevant ids within the top k, ``|top_k ∩ G|``."""
        if self.row_code is not None:
            counts: IntArray = hit_tables(self.k).count[self.row_code]
            return counts
        counts = self.hits.sum(axis=1, dtype=np.int64)
        return counts

    @property
    def has_gold(self) -> NDArray[np.bool_]:
        """Shape ``(queries,)``: True where the query has at least one gold id (metrics are defined)."""
        return self.n_gold > 0

    @cached_property
    def no_gold_nan(self) -> NDArray[np.float64]:
        """Shape ``(queries,)``: 0.0 where the query has gold, NaN where not. Adding it to a non-negative score
        leaves the score exactly as it is and makes it NaN where undefined, in one pass shared by every metric."""
        return np.where(self.has_gold, 0.0, np.nan)


_CODE_BITS = 16


@dataclass(frozen=True, eq=False)
class HitTables:
    """Per-row values of every possible hit row at cutoff ``k``, indexed by :attr:`TopKHits.row_code`."""

    count: IntArray
    """Number of hits in the row."""
    dcg: NDArray[np.float64]
    """``Σ_r hit_r / log2(r + 1)`` (ranks from 1), summed in rank order."""
    first: IntArray
    """Rank (1-based) of the first hit; 0 if none."""
    reciprocal_rank: NDArray[np.float64]
    """``1 / first``; 0 if no hit."""


@cache
def hit_tables(k: int) -> HitTables:
    """:class:`HitTables` for cutoff ``k`` (``k <= 16``: ``2**k`` rows)."""
    code = np.arange(2**k, dtype=np.int64)
    bits = ((code[:, None] >> np.arange(k, dtype=np.int64)) & 1).astype(np.bool_)
    discounts = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
    first = np.where(bits.any(axis=1), np.argmax(bits, axis=1) + 1, 0).astype(np.int64)
    reciprocal_rank = np.zeros(len(code))
    np.divide(1.0, first, out=reciprocal_rank, where=first > 0)
    return HitTables(
        count=bits.sum(axis=1, dtype=np.int64),
        dcg=bits.astype(np.float64) @ discounts,
        first=first,
        reciprocal_rank=reciprocal_rank,
    )


def _check_offsets(offsets: IntArray, n_values: int, name: str) -> None:
    if offsets.ndim != 1 or len(offsets) < 1:
        raise ValueError(f"{name} must be a 1-D array of length queries + 1, got shape {offsets.shape}")
    if offsets[0] != 0 or offsets[-1] != n_values:
        raise ValueError(f"{name} must start at 0 and end at {n_values}, got {offsets[0]} .. {offsets[-1]}")
    if len(offsets) > 1 and bool((np.diff(offsets) < 0).any()):
        raise ValueError(f"{name} must be non-decreasing")


def _offsets(lengths: IntArray) -> IntArray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _segment_positions(lengths: IntArray) -> tuple[IntArray, IntArray]:
    """Query index and position within the query of every element of a CSR array with these lengths."""
    total = int(lengths.sum())
    query = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    position = np.arange(total, dtype=np.int64) - np.repeat(_offsets(lengths)[:-1], lengths)
    return query, position


def _gather_index(starts: IntArray, lengths: IntArray) -> IntArray:
    """Flat indices ``starts[i] + 0 .. starts[i] + lengths[i] - 1`` for every segment, in segment order."""
    _, position = _segment_positions(lengths)
    return np.repeat(starts, lengths) + position


def _check_depth(depth: int | None) -> None:
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1 or None, got {depth}")


# ---------------------------------------------------------------- encoding ids to codes


def _as_id_array(values: Any, name: str) -> Any:
    """Turn flat ids into a pyarrow array of strings or integers with no nulls."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        try:
            values = pa.array(arr) if arr.dtype != object else pa.array(arr.tolist())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{name}: ids must be all strings or all integers ({exc})") from exc
    if values.null_count:
        raise ValueError(f"{name}: {values.null_count} id(s) are null")
    typ = values.type
    if pa.types.is_dictionary(typ):
        values = values.dictionary_decode()
        typ = values.type
    if not (pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ)):
        raise ValueError(f"{name}: ids must be strings or integers, got arrow type {typ}")
    return values


def _common_type(retrieved: Any, gold: Any) -> tuple[Any, Any]:
    """Cast gold ids to the retrieved ids' type (string vs large_string, int widths); refuse str vs int."""
    rt, gt = retrieved.type, gold.type
    if rt == gt:
        return retrieved, gold
    if pa.types.is_integer(rt) and pa.types.is_integer(gt):
        return retrieved.cast(pa.int64()), gold.cast(pa.int64())
    if pa.types.is_integer(rt) != pa.types.is_integer(gt):
        if len(retrieved) == 0:
            return pa.array([], gt), gold
        if len(gold) == 0:
            return retrieved, pa.array([], rt)
        raise ValueError(f"retrieved ids are {rt} but gold ids are {gt}: use one id type for both")
    return retrieved, gold.cast(rt)


class _Vocabulary:
    """Codes for string or integer ids; ids seen in a later call keep the codes of earlier calls."""

    def __init__(self) -> None:
        self._strings: Any = None
        self._integers: IntArray | None = None
        self._integer_codes_sorted: IntArray = np.zeros(0, dtype=np.int64)
        self.n_codes = 0

    def encode(self, *parts: Any) -> list[IntArray]:
        """Codes of each part (pyarrow arrays of one type), jointly encoded with everything seen before."""
        splits = np.cumsum([len(p) for p in parts])[:-1]
        if pa.types.is_integer(parts[0].type):
            flat = np.concatenate([np.asarray(p.to_numpy(zero_copy_only=False), dtype=np.int64) for p in parts])
            return np.split(self._integer_codes(flat), splits)
        known = [] if self._strings is None else [self._strings.cast(parts[0].type)]
        encoded = pc.dictionary_encode(pa.concat_arrays([*known, *parts]))
        flat = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        # Known ids come first and are unique, so they keep codes 0 .. len(known) - 1.
        flat = flat[len(known[0]) if known else 0 :]
        self._strings = encoded.dictionary
        self.n_codes = len(self._strings)
        return np.split(flat, splits)

    def _integer_codes(self, flat: IntArray) -> IntArray:
        if self._integers is None and (len(flat) == 0 or (flat.min() >= 0 and flat.max() < 2**31)):
            # Small non-negative integer ids are their own codes: no hashing needed.
            self.n_codes = max(self.n_codes, int(flat.max()) + 1 if len(flat) else 0)
            return flat
        if self._integers is None:
            # Ids seen so far (if any) were their own codes 0 .. n_codes - 1.
            self._integers = np.arange(self.n_codes, dtype=np.int64)
            self._integer_codes_sorted = np.arange(self.n_codes, dtype=np.int64)
        ids, ids_codes = self._integers, self._integer_codes_sorted
        slot = np.searchsorted(ids, flat)
        found = slot < len(ids)
        found[found] = ids[slot[found]] == flat[found]
        codes = np.empty(len(flat), dtype=np.int64)
        codes[found] = ids_codes[slot[found]]
        new_ids, new_inverse = np.unique(flat[~found], return_inverse=True)
        codes[~found] = self.n_codes + new_inverse
        new_codes = self.n_codes + np.arange(len(new_ids), dtype=np.int64)
        merged = np.concatenate([ids, new_ids])
        order = np.argsort(merged, kind="stable")
        self._integers = merged[order]
        self._integer_codes_sorted = np.concatenate([ids_codes, new_codes])[order]
        self.n_codes += len(new_ids)
        return codes


def _window_has_repeats(codes: IntArray, lengths: IntArray, n_codes: int) -> NDArray[np.bool_]:
    """Per query: True if its codes contain a repeated id."""
    query = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    keys = np.sort(query * max(n_codes, 1) + codes)
    repeated = keys[1:][keys[1:] == keys[:-1]] // max(n_codes, 1)
    out = np.zeros(len(lengths), dtype=np.bool_)
    out[repeated] = True
    return out


def _assemble(
    window_lengths: IntArray,
    window_values: Any,
    full_lengths: IntArray,
    gold_lengths: IntArray,
    gold_values: Any,
    depth: int | None,
    fetch_full: Callable[[IntArray], Any],
) -> RankedColumns:
    """Encode the first ``depth`` ids of every query, widening to the whole list where the window repeats an id."""
    window_values, gold_values = _common_type(window_values, gold_values)
    vocabulary = _Vocabulary()
    window_codes, gold_codes = vocabulary.encode(window_values, gold_values)
    lengths = window_lengths
    codes = window_codes
    if depth is not None:
        widen = _window_has_repeats(window_codes, window_lengths, vocabulary.n_codes) & (full_lengths > window_lengths)
        if widen.any():
            queries = np.flatnonzero(widen)
            extra_values = fetch_full(queries)
            if not pa.types.is_integer(window_values.type):
                extra_values = extra_values.cast(window_values.type)
            (extra_codes,) = vocabulary.encode(extra_values)
            lengths = np.where(widen, full_lengths, window_lengths)
            w_query = np.repeat(np.arange(len(window_lengths), dtype=np.int64), window_lengths)
            keep = ~widen[w_query]
            e_query = np.repeat(queries, full_lengths[queries])
            # One query is either wholly from the window or wholly from its full list; a stable sort by
            # query puts every element back in query order with positions in order.
            all_query = np.concatenate([w_query[keep], e_query])
            order = np.argsort(all_query, kind="stable")
            codes = np.concatenate([window_codes[keep], extra_codes])[order]
    return RankedColumns(
        retrieved_offsets=_offsets(lengths),
        retrieved_codes=codes,
        gold_offsets=_offsets(gold_lengths),
        gold_codes=gold_codes,
        n_codes=max(vocabulary.n_codes, 1),
    )


# ---------------------------------------------------------------- constructors


def _string_array(flat: list[Any], name: str) -> Any:
    try:
        return pa.array(flat, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        try:
            arr = pa.array(flat)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{name}: ids must be all strings or all integers ({exc})") from exc
        return _as_id_array(arr, name)


def check_counts(n_retrieved: int, n_gold: int) -> None:
    """Refuse inputs that do not give one gold set per query."""
    if n_retrieved != n_gold:
        raise ValueError(f"retrieved has {n_retrieved} queries but gold has {n_gold}: give one gold set per query")


def _hash_codes(ids: list[Any], hashes: IntArray) -> tuple[IntArray, int] | None:
    """Dense codes of Python ids from their hashes, verified exact; None for mixed id types or a hash collision.

    One stable sort of the hashes groups equal hashes; the code of an id is its group's rank. Only ids whose
    hash equals their sorted neighbour's are compared (``==``, in C), and equality is transitive, so a group
    holding two different ids (a 64-bit hash collision) is always found; the caller then falls back to the
    slower exact path.
    """
    kinds = set(map(type, ids))
    if not (kinds <= {str} or kinds <= {int}):
        return None
    order = np.argsort(hashes, kind="stable")
    ranked = hashes[order]
    same = ranked[1:] == ranked[:-1]
    left, right = order[:-1][same].tolist(), order[1:][same].tolist()
    if not all(map(eq, map(ids.__getitem__, left), map(ids.__getitem__, right))):
        return None
    group = np.zeros(len(ids), dtype=np.int64)
    np.cumsum(~same, out=group[1:])
    codes = np.empty(len(ids), dtype=np.int64)
    codes[order] = group
    return codes, int(group[-1]) + 1 if len(ids) else 0


def _codes_from_lists(
    retrieved: RetrievedLists, gold: GoldSets, depth: int | None, full_lengths: IntArray, gold_lengths: IntArray
) -> RankedColumns | None:
    """Encode Python ids without a Python-level loop per id (:func:`_hash_codes`); None to use pyarrow instead.

    Python computes ``hash`` in C and caches it on each string, so hashing is one cheap pass over the ids.
    """
    n = len(retrieved)
    window_lengths = full_lengths if depth is None else np.minimum(full_lengths, depth)
    windows: Iterable[Sequence[str]] = retrieved if depth is None else map(itemgetter(slice(0, depth)), retrieved)
    n_window = int(window_lengths.sum())
    ids = list(chain(chain.from_iterable(windows), chain.from_iterable(gold)))
    try:
        hashes = np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids))
    except TypeError:
        return None  # unhashable ids: pyarrow names the problem
    lengths = window_lengths
    widen = np.zeros(n, dtype=np.bool_)
    queries = np.zeros(0, dtype=np.int64)
    if depth is not None:
        # Windows that repeat a hash (a repeated id, or a harmless collision) are widened to their whole list.
        # With at most ``depth`` ids per window, comparing every slot pair of a padded matrix beats sorting.
        w_query, position = _segment_positions(window_lengths)
        padded = np.zeros((n, depth), dtype=np.int64)
        filled = np.zeros((n, depth), dtype=np.bool_)
        padded[w_query, position] = hashes[:n_window]
        filled[w_query, position] = True
        for a in range(depth - 1):
            for b in range(a + 1, depth):
                widen |= filled[:, b] & (padded[:, a] == padded[:, b])
        widen &= full_lengths > window_lengths
        if widen.any():
            queries = np.flatnonzero(widen)
            extra = list(chain.from_iterable(retrieved[i] for i in queries.tolist()))
            ids += extra
            hashes = np.concatenate([hashes, np.fromiter(map(hash, extra), dtype=np.int64, count=len(extra))])
    encoded = _hash_codes(ids, hashes)
    if encoded is None:
        return None
    flat, n_codes = encoded
    n_ids = n_window + int(gold_lengths.sum())
    codes, gold_codes = flat[:n_window], flat[n_window:n_ids]
    if len(queries):
        lengths = np.where(widen, full_lengths, window_lengths)
        w_query = np.repeat(np.arange(n, dtype=np.int64), window_lengths)
        keep = ~widen[w_query]
        e_query = np.repeat(queries, full_lengths[queries])
        # A query is wholly from its window or wholly from its full list; a stable sort by query restores order.
        order = np.argsort(np.concatenate([w_query[keep], e_query]), kind="stable")
        codes = np.concatenate([codes[keep], flat[n_ids:]])[order]
    return RankedColumns(
        retrieved_offsets=_offsets(lengths),
        retrieved_codes=codes,
        gold_offsets=_offsets(gold_lengths),
        gold_codes=gold_codes,
        n_codes=max(n_codes, 1),
    )


def columns_from_lists(retrieved: RetrievedLists, gold: GoldSets, depth: int | None = None) -> RankedColumns:
    """Columnar form of per-query Python lists.

    ``retrieved[i]`` is query ``i``'s ranked ids (best first), ``gold[i]`` its relevant ids (any collection).
    With ``depth=k`` only each query's first ``k`` ids are converted (plus whole lists where those repeat an id),
    which is all that metrics at cutoff ``k`` need. Ids must be all strings (or all integers).

    Codes come from the ids' Python hashes, verified exact, in C-level passes (:func:`_hash_codes`); other id
    types (numpy scalars, mixed types) go through pyarrow, which names the problem.
    """
    _check_depth(depth)
    check_counts(len(retrieved), len(gold))
    if isinstance(retrieved, str) or any(isinstance(x, str) for x in (*retrieved[:1], *gold[:1])):
        raise ValueError("retrieved and gold must be sequences of id collections, not strings")
    n = len(retrieved)
    full_lengths = np.fromiter(map(len, retrieved), dtype=np.int64, count=n)
    gold_lengths = np.fromiter(map(len, gold), dtype=np.int64, count=n)
    fast = _codes_from_lists(retrieved, gold, depth, full_lengths, gold_lengths)
    if fast is not None:
        return fast
    windows: Sequence[Sequence[str]] = retrieved if depth is None else [r[:depth] for r in retrieved]
    window_lengths = full_lengths if depth is None else np.minimum(full_lengths, depth)
    window_values = _string_array(list(chain.from_iterable(windows)), "retrieved")
    gold_values = _string_array(list(chain.from_iterable(gold)), "gold")

    def fetch_full(queries: IntArray) -> Any:
        return _string_array(list(chain.from_iterable(retrieved[i] for i in queries.tolist())), "retrieved")

    return _assemble(window_lengths, window_values, full_lengths, gold_lengths, gold_values, depth, fetch_full)


def _arrow_lists(values: Any, name: str) -> tuple[IntArray, Any]:
    """Lengths and flat ids of a pyarrow list array (a null list counts as empty)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array) or not (pa.types.is_list(values.type) or pa.types.is_large_list(values.type)):
        raise ValueError(f"{name} must be a pyarrow list array (list<string> or list<int>), got {type(values)}")
    lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return lengths, values.flatten()


def _shared_dictionary_codes(flat: Any, gold_flat: Any) -> tuple[Any, Any] | None:
    """Dictionary-encoded ids (as Parquet dictionary pages read back): unified indices, no hashing per value.

    ``unify_dictionaries`` maps both arrays onto one dictionary (work proportional to the dictionaries, not to
    the values), so equal ids get equal indices, which are then used as codes directly.
    """
    if not (pa.types.is_dictionary(flat.type) and pa.types.is_dictionary(gold_flat.type)):
        return None
    if flat.type.value_type != gold_flat.type.value_type:
        return None
    if flat.type != gold_flat.type:
        # Different index widths: widen both (a cast of the indices only; the dictionaries stay as they are).
        target = pa.dictionary(pa.int64(), flat.type.value_type)
        flat, gold_flat = flat.cast(target), gold_flat.cast(target)
    unified = pa.chunked_array([flat, gold_flat]).unify_dictionaries()
    return unified.chunk(0).indices, unified.chunk(1).indices


def columns_from_arrow(retrieved: Any, gold: Any, depth: int | None = None) -> RankedColumns:
    """Columnar form of two pyarrow list arrays (``list<string>``, ``list<int>`` or ``list<dictionary<..>>``).

    Dictionary-encoded ids (e.g. a Parquet column read with ``read_dictionary``) are not hashed again: both
    dictionaries are unified and the indices are the codes.

    A null retrieved list counts as nothing retrieved; a null gold list as no gold. ``depth`` as in
    :func:`columns_from_lists`: only the first ``depth`` ids of each list are hashed.
    """
    _check_depth(depth)
    full_lengths, flat = _arrow_lists(retrieved, "retrieved")
    gold_lengths, gold_flat = _arrow_lists(gold, "gold")
    shared = _shared_dictionary_codes(flat, gold_flat)
    if shared is not None:
        flat, gold_flat = shared
    return _from_flat_arrays(
        full_lengths, _as_id_array(flat, "retrieved ids"), gold_lengths, _as_id_array(gold_flat, "gold ids"), depth
    )


def columns_from_flat(
    retrieved_offsets: Any,
    retrieved_ids: Any,
    gold_offsets: Any,
    gold_ids: Any,
    depth: int | None = None,
) -> RankedColumns:
    """Columnar form of offsets + flat id arrays (numpy or pyarrow; ids strings or integers).

    Query ``i``'s ranked ids are ``retrieved_ids[retrieved_offsets[i]:retrieved_offsets[i+1]]``, likewise gold.
    Non-negative integer ids below 2**31 are used as codes directly (no hashing).
    """
    _check_depth(depth)
    r_off = np.asarray(retrieved_offsets, dtype=np.int64)
    g_off = np.asarray(gold_offsets, dtype=np.int64)
    r_ids = _as_id_array(retrieved_ids, "retrieved_ids")
    g_ids = _as_id_array(gold_ids, "gold_ids")
    _check_offsets(r_off, len(r_ids), "retrieved_offsets")
    _check_offsets(g_off, len(g_ids), "gold_offsets")
    check_counts(len(r_off) - 1, len(g_off) - 1)
    return _from_flat_arrays(np.diff(r_off), r_ids, np.diff(g_off), g_ids, depth)


def _from_flat_arrays(
    full_lengths: IntArray, flat: Any, gold_lengths: IntArray, gold_flat: Any, depth: int | None
) -> RankedColumns:
    check_counts(len(full_lengths), len(gold_lengths))
    starts = _offsets(full_lengths)[:-1]
    window_lengths = full_lengths if depth is None else np.minimum(full_lengths, depth)
    window = flat if depth is None else flat.take(pa.array(_gather_index(starts, window_lengths)))

    def fetch_full(queries: IntArray) -> Any:
        return flat.take(pa.array(_gather_index(starts[queries], full_lengths[queries])))

    return _assemble(window_lengths, window, full_lengths, gold_lengths, gold_flat, depth, fetch_full)


RankedInput = RetrievedLists | RankedColumns | TopKHits | Any
"""Python lists of ranked ids, a pyarrow list array, :class:`RankedColumns` or :class:`TopKHits`."""


def _is_arrow(value: Any) -> bool:
    return isinstance(value, pa.Array | pa.ChunkedArray)


def to_columns(retrieved: RankedInput, gold: GoldSets | Any | None = None, depth: int | None = None) -> RankedColumns:
    """Columnar form of any accepted input: :class:`RankedColumns` as is (then ``gold`` must be None),
    pyarrow list arrays (both), or Python sequences (both)."""
    if isinstance(retrieved, RankedColumns):
        if gold is not None:
            raise ValueError("gold must be None when retrieved is already RankedColumns (it holds the gold ids)")
        return retrieved
    if isinstance(retrieved, TopKHits):
        raise ValueError("TopKHits hold only the top-k hits: pass them to a metric, not to to_columns")
    if gold is None:
        raise ValueError("gold is required unless retrieved is RankedColumns or TopKHits")
    if _is_arrow(retrieved) or _is_arrow(gold):
        return columns_from_arrow(retrieved, gold, depth)
    return columns_from_lists(retrieved, gold, depth)


def top_k_hits(columns: RankedColumns, k: int) -> TopKHits:
    """Top-k hit matrix of columnar input.

    Per query: deduplicate the ranked codes in order (first occurrence wins), keep the first ``k``,
    and mark each kept code that is in the query's gold set. All in numpy over every query at once.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n = columns.n_queries
    width = columns.n_codes
    lengths = np.diff(columns.retrieved_offsets)
    query, _ = _segment_positions(lengths)
    keys = query * width + columns.retrieved_codes

    sorted_keys = np.sort(keys)
    if not bool((sorted_keys[1:] == sorted_keys[:-1]).any()):
        # No repeated id anywhere (the usual case): rank is the position in the list.
        rank = np.arange(1, len(keys) + 1, dtype=np.int64) - np.repeat(columns.retrieved_offsets[:-1], lengths)
        keep = rank <= k
    else:
        # First occurrences: a stable sort keeps equal keys in rank order, so the first of each run is the earliest.
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        first_sorted = np.ones(len(keys), dtype=np.bool_)
        first_sorted[1:] = sorted_keys[1:] != sorted_keys[:-1]
        is_first = np.empty(len(keys), dtype=np.bool_)
        is_first[order] = first_sorted
        distinct_before = np.concatenate([[0], np.cumsum(is_first, dtype=np.int64)])
        rank = distinct_before[1:] - np.repeat(distinct_before[columns.retrieved_offsets[:-1]], lengths)
        keep = is_first & (rank <= k)

    gold_query = np.repeat(np.arange(n, dtype=np.int64), np.diff(columns.gold_offsets))
    gold_keys = np.sort(gold_query * width + columns.gold_codes)
    if len(gold_keys) > 1:
        gold_keys = gold_keys[np.concatenate([[True], gold_keys[1:] != gold_keys[:-1]])]
    n_gold = np.bincount(gold_keys // width, minlength=n).astype(np.int64)

    gold_lengths = np.diff(columns.gold_offsets)
    max_gold = int(gold_lengths.max()) if n else 0
    if max_gold <= _PADDED_GOLD_LIMIT:
        # Small gold sets: compare each top-k slot with each gold slot of its query (n x k x max_gold equalities),
        # which beats a binary search of every kept id in the sorted gold keys.
        top = np.full((n, k), -1, dtype=np.int64)
        top[query[keep], rank[keep] - 1] = columns.retrieved_codes[keep]
        _, gold_position = _segment_positions(gold_lengths)
        padded = np.full((n, max(max_gold, 1)), -2, dtype=np.int64)
        padded[gold_query, gold_position] = columns.gold_codes
        hits = (top[:, :, None] == padded[:, None, :]).any(axis=2)
    else:
        kept_keys = keys[keep]
        slot = np.searchsorted(gold_keys, kept_keys)
        is_hit = np.zeros(len(kept_keys), dtype=np.bool_)
        inside = slot < len(gold_keys)
        is_hit[inside] = gold_keys[slot[inside]] == kept_keys[inside]
        hits = np.zeros((n, k), dtype=np.bool_)
        hits[query[keep], rank[keep] - 1] = is_hit
    n_retrieved = np.bincount(query[keep], minlength=n).astype(np.int64)
    return TopKHits(k=k, hits=hits, n_gold=n_gold, n_retrieved=n_retrieved)


def hits_at_k(retrieved: RankedInput, gold: GoldSets | Any | None = None, k: int = 5) -> TopKHits:
    """Top-k hit matrix of any accepted input (see :func:`to_columns`); a :class:`TopKHits` with the same ``k``
    is returned as is, so several metrics can share one conversion.

    Python lists and (with numba, from :data:`memeval_core.metrics.kernel.MIN_QUERIES` queries) Arrow string
    lists take the per-query fast paths described in the module docstring; results are the same. From Python
    lists, ids compare with Python's ``==`` (as in a ``set``: ``1 == 1.0``, ``"1" != 1``), so mixed id types
    simply do not match, where :func:`to_columns` refuses them (one exception on the compiled path, for ids no
    results file produces: a ``str`` subclass that redefines ``==`` or ``__hash__``; see
    :mod:`memeval_core.metrics.lists`)."""
    if isinstance(retrieved, TopKHits):
        if gold is not None:
            raise ValueError("gold must be None when retrieved is already TopKHits")
        if retrieved.k != k:
            raise ValueError(f"TopKHits were computed at k={retrieved.k}, asked for k={k}")
        return retrieved
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if gold is not None and not isinstance(retrieved, RankedColumns) and not (_is_arrow(retrieved) or _is_arrow(gold)):
        from memeval_core.metrics.lists import hits_from_lists

        check_counts(len(retrieved), len(gold))
        if isinstance(retrieved, str) or any(isinstance(x, str) for x in (*retrieved[:1], *gold[:1])):
            raise ValueError("retrieved and gold must be sequences of id collections, not strings")
        return hits_from_lists(retrieved, gold, k)
    if gold is not None and _is_arrow(retrieved) and _is_arrow(gold):
        from memeval_core.metrics.arrow import arrow_hits

        compiled = arrow_hits(retrieved, gold, k)
        if compiled is not None:
            return compiled
    return top_k_hits(to_columns(retrieved, gold, depth=k), k)


def undefined_where_no_gold(values: NDArray[np.float64], hits: TopKHits) -> NDArray[np.float64]:
    """Set per-query values (non-negative, in place) to NaN where the query has no gold ids (the metric is
    undefined there): adds :attr:`TopKHits.no_gold_nan`, one pass instead of a masked write."""
    np.add(values, hits.no_gold_nan, out=values)
    return values
