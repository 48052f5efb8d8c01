"""Normalised discounted cumulative gain at k (NDCG@k), binary relevance.

``DCG@k = Σ_{i=1..k} rel_i / log2(i + 1)`` over the first ``k`` distinct retrieved ids (``rel_i`` = 1 if the
i-th is gold, else 0; duplicates count once, at their first occurrence).
``IDCG@k = Σ_{i=1..min(|G|, k)} 1 / log2(i + 1)`` (all gold ids ranked first).
``NDCG@k = DCG@k / IDCG@k``.

Same as ranx ``ndcg@k`` (Järvelin-Kekäläinen gains) and trec_eval ``ndcg_cut_k`` with relevance 1 where gold is
non-empty. No gold (IDCG = 0): NaN here, 0 in ranx, left out by trec_eval. Nothing retrieved: 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.hits import TopKHits, undefined_where_no_gold


def discounts(k: int) -> NDArray[np.float64]:
    """``1 / log2(i + 1)`` for ranks ``i = 1 .. k``."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def ndcg_from_hits(hits: TopKHits) -> NDArray[np.float64]:
    """Per-query NDCG@k from a hit matrix; NaN where the query has no gold."""
    weights = discounts(hits.k)
    dcg = np.zeros(hits.n_queries)
    for rank in range(hits.k):  # summed in rank order, so every query's sum is rounded the same way
        dcg += np.where(hits.hits[:, rank], weights[rank], 0.0)
    # IDCG[g] for g gold ids within the top k; a query without gold divides by 1 here and is NaN below.
    idcg = np.concatenate([[1.0], np.cumsum(weights)])
    values = dcg / idcg[np.minimum(hits.n_gold, hits.k)]
    return undefined_where_no_gold(values, hits)
