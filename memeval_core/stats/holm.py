"""Holm's step-down adjustment of p-values for testing several hypotheses at once.

With ``m`` p-values sorted ascending ``p_(1) <= ... <= p_(m)``, the adjusted value of the j-th
smallest is

    p~_(j) = min(1, max_{i <= j} (m - i + 1) * p_(i)),

returned in the input order. Rejecting ``p~ < alpha`` controls the family-wise error rate at
``alpha`` under any dependence between the tests. The running maximum keeps the adjusted values
monotone in the raw ones, and tied raw values get equal adjusted values (the later of a tie
inherits the earlier's larger ``(m - i + 1) * p`` through the maximum).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def holm_adjust(p_values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Holm-adjusted p-values, same order and length as ``p_values`` (vectorised)."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {p.shape}")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise ValueError("p_values must be finite numbers in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted_sorted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty(m, dtype=np.float64)
    out[order] = adjusted_sorted
    return out
