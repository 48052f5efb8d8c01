"""F1 at k.

``F1@k = 2 · P@k · R@k / (P@k + R@k)``, and 0 when both are 0; with ``h = |top_k ∩ G|`` this equals
``2h / (k + |G|)``. ``P@k`` divides by ``k`` even when fewer than ``k`` ids were retrieved (see
:mod:`memeval_core.metrics.precision`). Duplicates count once; relevance is binary.

Same as ranx ``f1@k`` where gold is non-empty (trec_eval has no F1 at a cutoff: its ``set_F`` uses the whole
retrieved list). No gold: NaN here, 0 in ranx. Nothing retrieved (or a failed query): 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memeval_core.metrics.hits import TopKHits, undefined_where_no_gold


def f1_from_hits(hits: TopKHits) -> NDArray[np.float64]:
    """Per-query F1@k from a hit matrix; NaN where the query has no gold."""
    # 2PR / (P + R) with P = h/k and R = h/|G| is 2h / (k + |G|) (0 when h = 0): one division, same value to
    # rounding (tests compare with the P/R form to 1e-12).
    values = 2.0 * hits.hit_count / (hits.k + hits.n_gold)
    return undefined_where_no_gold(values, hits)
