"""Recall at k (R@k).

``R@k = |top_k ∩ G| / |G|`` where ``top_k`` is the first ``k`` distinct retrieved ids (duplicates count once,
at their first occurrence) and ``G`` the set of gold ids; relevance is binary.

Same as ranx ``recall@k`` and trec_eval ``recall_k`` where gold is non-empty. Queries with no gold ids are
undefined (0/0): NaN here, 0 in ranx, left out by trec_eval. Nothing retrieved (or a failed query) scores 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.hits import TopKHits, undefined_where_no_gold


def recall_from_hits(hits: TopKHits) -> NDArray[np.float64]:
    """Per-query R@k from a hit matrix; NaN where the query has no gold."""
    # A query without gold divides by 1 here and is NaN below.
    values = hits.hit_count / np.maximum(hits.n_gold, 1)
    return undefined_where_no_gold(values, hits)
