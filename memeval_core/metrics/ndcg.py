"""Normalised discounted cumulative gain at k (NDCG@k), binary relevance.

``DCG@k = Σ_{i=1..k} rel_i / log2(i + 1)`` over the first ``k`` distinct retrieved ids (``rel_i`` = 1 if the
i-th is gold, else 0; duplicates count once, at their first occurrence).
``IDCG@k = Σ_{i=1..min(|G|, k)} 1 / log2(i + 1)`` (all gold ids ranked first).
``NDCG@k = DCG@k / IDCG@k``.

Same as ranx ``ndcg@k`` (Järvelin-Kekäläinen gains) and trec_eval ``ndcg_cut_k`` with relevance 1 where gold is
non-empty. No gold (IDCG = 0): NaN here, 0 in ranx, left out by trec_eval. Nothing retrieved: 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.columnar import (
    GoldSets,
    RankedInput,
    TopKHits,
    hit_tables,
    hits_at_k,
    undefined_where_no_gold,
)


def discounts(k: int) -> NDArray[np.float64]:
    """``1 / log2(i + 1)`` for ranks ``i = 1 .. k``."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def ndcg_from_hits(hits: TopKHits) -> NDArray[np.float64]:
    """Per-query NDCG@k from a hit matrix; NaN where the query has no gold."""
    weights = discounts(hits.k)
    code = hits.row_code
    dcg = hits.hits.astype(np.float64) @ weights if code is None else hit_tables(hits.k).dcg[code]
    # IDCG by the number of gold ids that fit in the top k; without gold it is 0, where the score is undefined
    # (NaN, added below): dividing by 1 there instead keeps the division to a single pass.
    ideal_cumulative = np.concatenate([[1.0], np.cumsum(weights)])
    values: NDArray[np.float64] = np.true_divide(dcg, ideal_cumulative[np.minimum(hits.n_gold, hits.k)])
    return undefined_where_no_gold(values, hits)


def ndcg_at_k(retrieved: RankedInput, gold: GoldSets | Any | None = None, k: int = 5) -> NDArray[np.float64]:
    """Per-query NDCG@k (see the module docstring) of lists, pyarrow list arrays, RankedColumns or TopKHits."""
    return ndcg_from_hits(hits_at_k(retrieved, gold, k))
