"""Reciprocal rank at k (averaged over queries: MRR@k).

``RR@k = 1 / r`` where ``r`` is the rank (1-based) of the first gold id among the first ``k`` distinct retrieved
ids, and 0 if none of them is gold. The cutoff matches the protocol's k (ranx ``mrr@k``); a first hit below rank
``k`` scores 0. Duplicates count once, at their first occurrence, so a repeated non-gold id does not push the
first hit down. Relevance is binary.

Same as ranx ``mrr@k`` where gold is non-empty. trec_eval ``recip_rank`` has no cutoff: it differs exactly when
the first hit is below rank ``k``. No gold: NaN here, 0 in ranx, left out by trec_eval. Nothing retrieved: 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.hits import TopKHits, undefined_where_no_gold


def reciprocal_rank_from_hits(hits: TopKHits) -> NDArray[np.float64]:
    """Per-query RR@k from a hit matrix; NaN where the query has no gold."""
    any_hit = hits.hits.any(axis=1)
    first_rank = np.argmax(hits.hits, axis=1) + 1  # rank of the first True (argmax says 0 for a row without one)
    values = np.where(any_hit, 1.0 / first_rank, 0.0)
    return undefined_where_no_gold(values, hits)
