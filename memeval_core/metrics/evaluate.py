"""All five retrieval metrics per query from one hits matrix, and their means as a separate step.

Per query (see each metric's module for its formula): NDCG@k, P@k, R@k, RR@k (its mean is MRR@k) and F1@k, with
binary relevance and duplicates counted once. A query with no gold ids has every metric undefined: NaN.
A failed query scores zero: the caller passes an empty retrieved list for it.

Aggregation (:func:`aggregate`) is the arithmetic mean over the queries where the metric is defined:
NaN (and None, in :func:`mean_over_queries`) values are left out of both the sum and the count, and the mean
of no defined values is None (not 0, not NaN), so "no data" never reads as a score.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.f1 import f1_from_hits
from memeval_core.metrics.hits import GoldSets, IntArray, RetrievedLists, hits_at_k
from memeval_core.metrics.mrr import reciprocal_rank_from_hits
from memeval_core.metrics.ndcg import ndcg_from_hits
from memeval_core.metrics.precision import precision_from_hits
from memeval_core.metrics.recall import recall_from_hits

METRICS = ("ndcg", "precision", "recall", "mrr", "f1")
"""Metric names, in the order ranx lists them as ``ndcg@k, precision@k, recall@k, mrr@k, f1@k``."""


@dataclass(frozen=True, eq=False)
class QueryScores:
    """Per-query scores of the five metrics at one cutoff (arrays aligned with the input queries)."""

    k: int
    """Rank cutoff."""
    ndcg: NDArray[np.float64]
    """NDCG@k per query; NaN where the query has no gold."""
    precision: NDArray[np.float64]
    """P@k per query (hits / k); NaN where the query has no gold."""
    recall: NDArray[np.float64]
    """R@k per query (hits / |gold|); NaN where the query has no gold."""
    mrr: NDArray[np.float64]
    """Reciprocal rank of the first hit within the top k (0 if none); NaN where the query has no gold."""
    f1: NDArray[np.float64]
    """F1@k per query; NaN where the query has no gold."""
    n_gold: IntArray
    """Distinct gold ids per query."""
    n_retrieved: IntArray
    """Distinct retrieved ids within the top k per query."""

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.n_gold)


@dataclass(frozen=True)
class MeanScores:
    """Means over queries of the five metrics (None when no query has gold)."""

    k: int
    """Rank cutoff."""
    n_queries: int
    """All queries, including those without gold."""
    n_scored: int
    """Queries with gold: the ones averaged."""
    ndcg: float | None
    """Mean NDCG@k."""
    precision: float | None
    """Mean P@k."""
    recall: float | None
    """Mean R@k."""
    mrr: float | None
    """MRR@k: mean reciprocal rank within the top k."""
    f1: float | None
    """Mean F1@k (the mean of per-query F1, not the F1 of mean P and mean R)."""


def evaluate(retrieved: RetrievedLists, gold: GoldSets, k: int = 5) -> QueryScores:
    """Per-query NDCG@k, P@k, R@k, RR@k and F1@k from one hits matrix of the input.

    ``retrieved``/``gold``: per-query Python lists (``retrieved[i]`` ranked best first, ``gold[i]`` any
    collection).
    """
    hits = hits_at_k(retrieved, gold, k)
    return QueryScores(
        k=k,
        ndcg=ndcg_from_hits(hits),
        precision=precision_from_hits(hits),
        recall=recall_from_hits(hits),
        mrr=reciprocal_rank_from_hits(hits),
        f1=f1_from_hits(hits),
        n_gold=hits.n_gold,
        n_retrieved=hits.n_retrieved,
    )


def mean_over_queries(values: Iterable[float | None] | NDArray[np.float64]) -> float | None:
    """Arithmetic mean of the defined values: None and NaN are left out; None if nothing is left.

    ``mean = Σ_{q defined} v_q / #{q defined}``.
    """
    if isinstance(values, np.ndarray):
        array = values.astype(np.float64, copy=False).ravel()
    else:
        array = np.fromiter((math.nan if v is None else v for v in values), dtype=np.float64)
    defined = array[~np.isnan(array)]
    return float(defined.mean()) if len(defined) else None


def aggregate(scores: QueryScores) -> MeanScores:
    """Means over the queries that have gold (see the module docstring for the NaN/None rules)."""
    return MeanScores(
        k=scores.k,
        n_queries=scores.n_queries,
        n_scored=int((scores.n_gold > 0).sum()),
        ndcg=mean_over_queries(scores.ndcg),
        precision=mean_over_queries(scores.precision),
        recall=mean_over_queries(scores.recall),
        mrr=mean_over_queries(scores.mrr),
        f1=mean_over_queries(scores.f1),
    )
