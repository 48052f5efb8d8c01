"""Precision at k (P@k).

``P@k = |top_k ∩ G| / k`` where ``top_k`` is the first ``k`` distinct retrieved ids (duplicates count once, at
their first occurrence) and ``G`` the gold set; relevance is binary.

The denominator is always ``k``, even when fewer than ``k`` ids were retrieved (a short list is not rewarded).
ranx ``precision@k`` and trec_eval ``P_k`` divide by ``k`` too, so the three agree. Queries with no gold ids are
undefined: NaN here, 0 in ranx, left out by trec_eval. Nothing retrieved (also a failed query, which the caller
passes as an empty list) scores 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.hits import TopKHits, undefined_where_no_gold


def precision_from_hits(hits: TopKHits) -> NDArray[np.float64]:
    """Per-query P@k from a hit matrix; NaN where the query has no gold."""
    values = hits.hit_count / float(hits.k)
    return undefined_where_no_gold(values, hits)
