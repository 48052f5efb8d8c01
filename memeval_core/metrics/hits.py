"""The hits matrix every metric is computed from: for each query, which of its top k distinct ids are gold.

For query ``q`` with ranked ids ``retrieved[q]`` (best first) and gold ids ``gold[q]``:

- ``top_k`` is the first ``k`` *distinct* retrieved ids: a repeated id counts once, at its first occurrence,
  so it never takes a second rank slot (what ranx and trec_eval see when their run dict is built from first
  occurrences);
- ``hits[q, r]`` is True iff the ``(r+1)``-th id of ``top_k`` is in the gold set; slots past the end of a
  short list are False;
- ``n_gold[q]`` is the number of distinct gold ids (0: every metric is undefined for ``q``, NaN);
- ``n_retrieved[q]`` is ``len(top_k)``.

Ids may be any hashable Python objects and compare as in a ``set`` (``1 == 1.0``, ``"1" != 1``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
"""A 1-D array of int64."""

RetrievedLists = Sequence[Sequence[Any]]
"""Ranked ids per query, best first."""
GoldSets = Sequence[Collection[Any]]
"""Relevant ids per query (order and repeats ignored)."""


@dataclass(frozen=True, eq=False)
class TopKHits:
    """Binary relevance of the top k distinct retrieved ids of every query, and the size of every gold set."""

    k: int
    """Rank cutoff."""
    hits: NDArray[np.bool_]
    """Shape ``(queries, k)``: ``hits[q, r]`` is True iff the ``(r+1)``-th distinct retrieved id is gold."""
    n_gold: IntArray
    """Shape ``(queries,)``: number of distinct gold ids; 0 means every metric is undefined (NaN)."""
    n_retrieved: IntArray
    """Shape ``(queries,)``: number of distinct retrieved ids within the top k (``<= k``)."""

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.hits.shape[0])

    @property
    def hit_count(self) -> IntArray:
        """Shape ``(queries,)``: relevant ids within the top k, ``|top_k ∩ G|``."""
        counts: IntArray = self.hits.sum(axis=1, dtype=np.int64)
        return counts

    @property
    def has_gold(self) -> NDArray[np.bool_]:
        """Shape ``(queries,)``: True where the query has at least one gold id (metrics are defined)."""
        return self.n_gold > 0


def first_k_distinct(ranked: Sequence[Any], k: int) -> list[Any]:
    """The first ``k`` distinct ids of a ranked list, in rank order (each at its first occurrence)."""
    distinct = dict.fromkeys(ranked[:k])
    if len(distinct) < k and len(ranked) > k:
        # A repeat within the first k ids: the k-th distinct id lies further down the list.
        distinct = dict.fromkeys(ranked)
    return list(distinct)[:k]


def hits_at_k(retrieved: RetrievedLists, gold: GoldSets, k: int = 5) -> TopKHits:
    """The hits matrix of per-query Python lists (see the module docstring)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if len(retrieved) != len(gold):
        raise ValueError(
            f"retrieved has {len(retrieved)} queries but gold has {len(gold)}: give one gold set per query"
        )
    return _hits(_checked_ranked(retrieved), _checked_gold(gold), len(retrieved), k)


def _hits(retrieved: Iterable[Sequence[Any]], gold: Iterable[Collection[Any]], n: int, k: int) -> TopKHits:
    """The definition, one query at a time: the hit flags of its top k distinct ids, padded to k."""
    flags: list[bool] = []
    n_gold: list[int] = []
    n_retrieved: list[int] = []
    try:
        for ranked, gold_ids in zip(retrieved, gold, strict=True):
            gold_set = set(gold_ids)
            top = first_k_distinct(ranked, k)
            flags += [d in gold_set for d in top]
            flags += [False] * (k - len(top))  # slots past the end of a short list
            n_gold.append(len(gold_set))
            n_retrieved.append(len(top))
    except TypeError as exc:
        raise ValueError(f"ids must be hashable ({exc})") from exc
    return TopKHits(
        k=k,
        hits=np.array(flags, dtype=np.bool_).reshape(n, k),
        n_gold=np.array(n_gold, dtype=np.int64),
        n_retrieved=np.array(n_retrieved, dtype=np.int64),
    )


_NOT_STRINGS = "retrieved and gold must be sequences of id collections, not strings"


def _checked_ranked(retrieved: RetrievedLists) -> RetrievedLists:
    """Refuse a string, or an unordered collection (a set, a dict) as a ranked list: it has no rank order."""
    if isinstance(retrieved, str):
        raise ValueError(_NOT_STRINGS)
    for kind in set(map(type, retrieved)):
        if issubclass(kind, str):
            raise ValueError(_NOT_STRINGS)
        if issubclass(kind, AbstractSet | Mapping) or not hasattr(kind, "__getitem__"):
            raise ValueError(f"a ranked list must be an ordered sequence (list, tuple...), got {kind.__name__}")
    return retrieved


def _checked_gold(gold: GoldSets) -> GoldSets:
    """Refuse a string, or a one-shot iterator as a gold set (a caller's mistake that would score silently)."""
    if isinstance(gold, str):
        raise ValueError(_NOT_STRINGS)
    for kind in set(map(type, gold)):
        if issubclass(kind, str):
            raise ValueError(_NOT_STRINGS)
        if not issubclass(kind, Collection):
            raise ValueError(f"gold sets must be collections (list, tuple, set...), got {kind.__name__}")
    return gold


def undefined_where_no_gold(values: NDArray[np.float64], hits: TopKHits) -> NDArray[np.float64]:
    """Per-query values, with NaN where the query has no gold ids (the metric is undefined there)."""
    return np.where(hits.has_gold, values, np.nan)
