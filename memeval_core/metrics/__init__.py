"""Retrieval metrics at a cutoff k (NDCG@k, P@k, R@k, MRR@k, F1@k), per query, with numpy.

Relevance is binary; duplicates in a ranked list count once (first occurrence); queries with no gold are NaN
and left out of means. :func:`hits_at_k` turns the input into a hits matrix (:mod:`memeval_core.metrics.hits`);
each metric (one module each, its formula in the docstring) computes per-query scores from that matrix, and
:func:`aggregate` averages them.
"""

from memeval_core.metrics.evaluate import METRICS, MeanScores, QueryScores, aggregate, evaluate, mean_over_queries
from memeval_core.metrics.f1 import f1_at_k, f1_from_hits
from memeval_core.metrics.hits import TopKHits, hits_at_k
from memeval_core.metrics.mrr import mrr_at_k, reciprocal_rank_from_hits
from memeval_core.metrics.ndcg import ndcg_at_k, ndcg_from_hits
from memeval_core.metrics.precision import precision_at_k, precision_from_hits
from memeval_core.metrics.recall import recall_at_k, recall_from_hits

__all__ = [
    "METRICS",
    "MeanScores",
    "QueryScores",
    "TopKHits",
    "aggregate",
    "evaluate",
    "f1_at_k",
    "f1_from_hits",
    "hits_at_k",
    "mean_over_queries",
    "mrr_at_k",
    "ndcg_at_k",
    "ndcg_from_hits",
    "precision_at_k",
    "precision_from_hits",
    "recall_at_k",
    "recall_from_hits",
    "reciprocal_rank_from_hits",
]
