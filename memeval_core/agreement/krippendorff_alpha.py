"""Krippendorff's alpha for nominal and interval verdicts, with missing values.

Input: an ``(items x raters)`` array, NaN/None = missing (note: the ``krippendorff`` package takes the transpose,
``raters x items``). Only *pairable* values count: those of items with at least two verdicts; ``n`` is their
number, ``m_u`` the number of verdicts of item ``u``.

``α = 1 − D_o / D_e`` with observed disagreement ``D_o = (1/n) Σ_u Σ_{i≠j in u} δ(v_i, v_j) / (m_u − 1)`` and
expected disagreement ``D_e = 1/(n (n − 1)) Σ_{i≠j over all pairable values} δ(v_i, v_j)``, so
``α = 1 − (n − 1) · Σ_u [Σ_{i≠j in u} δ / (m_u − 1)] / Σ_{i≠j} δ``.

- nominal, ``δ = [v_i ≠ v_j]``: ``Σ_{i≠j in u} δ = m_u² − Σ_c n_uc²`` and ``Σ_{i≠j} δ = n² − Σ_c n_c²``;
- interval, ``δ = (v_i − v_j)²``: ``Σ_{i≠j in u} δ = 2 (m_u S2_u − S1_u²)`` with ``S1_u = Σ v``,
  ``S2_u = Σ v²`` over the item, and ``Σ_{i≠j} δ = 2 (n S2 − S1²)`` over all pairable values.

Undefined (NaN) when the expected disagreement is 0 (all pairable values equal) or nothing is pairable.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from memeval_core.agreement.kappa import FloatArray, ItemTerms, as_verdict_matrix, category_counts, safe_divide

Level = Literal["nominal", "interval"]
"""Level of measurement."""


def _nominal_terms(matrix: FloatArray) -> ItemTerms:
    counts, _ = category_counts(matrix)
    m = counts.sum(axis=1)
    usable = m >= 2
    counts, m = counts[usable].astype(np.float64), m[usable].astype(np.float64)
    within = (m**2 - (counts**2).sum(axis=1)) / (m - 1)
    features = np.column_stack([m, within, counts])

    def finish(sums: FloatArray) -> FloatArray:
        n = sums[:, 0]
        expected = n**2 - (sums[:, 2:] ** 2).sum(axis=1)
        return 1.0 - (n - 1) * safe_divide(sums[:, 1], expected)

    return ItemTerms("krippendorff_alpha_nominal", features, finish)


def _interval_terms(matrix: FloatArray) -> ItemTerms:
    present = ~np.isnan(matrix)
    m = present.sum(axis=1)
    usable = m >= 2
    values = matrix[usable]
    # Differences are shift-invariant; centring keeps n·S2 − S1² from cancelling catastrophically.
    pairable = values[~np.isnan(values)]
    centred = np.where(np.isnan(values), 0.0, values - (pairable.mean() if len(pairable) else 0.0))
    m_u = m[usable].astype(np.float64)
    s1 = centred.sum(axis=1)
    s2 = (centred**2).sum(axis=1)
    within = (m_u * s2 - s1**2) / (m_u - 1)
    features = np.column_stack([m_u, within, s1, s2])

    def finish(sums: FloatArray) -> FloatArray:
        n = sums[:, 0]
        expected = n * sums[:, 3] - sums[:, 2] ** 2
        # Rounding can leave a tiny non-zero expected disagreement when all values are equal.
        expected = np.where(np.abs(expected) <= 1e-12 * np.maximum(n * np.abs(sums[:, 3]), 1.0), 0.0, expected)
        return 1.0 - (n - 1) * safe_divide(sums[:, 1], expected)

    return ItemTerms("krippendorff_alpha_interval", features, finish)


def krippendorff_alpha_terms(verdicts: Any, level: Level = "nominal") -> ItemTerms:
    """Krippendorff's alpha of an ``(items x raters)`` verdict array (NaN = missing; formulas in the module doc):
    one row of item terms per item with at least two verdicts."""
    matrix = as_verdict_matrix(verdicts)
    if level == "nominal":
        return _nominal_terms(matrix)
    if level == "interval":
        return _interval_terms(matrix)
    raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
