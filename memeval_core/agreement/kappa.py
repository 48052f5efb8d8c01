"""Agreement between judges on nominal verdicts: raw agreement, unanimity, Cohen's kappa, Fleiss' kappa.

Input everywhere: an ``(items x raters)`` array of verdicts (bools or ints are categories; floats for interval
data elsewhere); NaN or None marks a missing verdict.

Every statistic here is written as ``finish(Σ_i w_i · x_i)``: per-item feature rows ``x_i`` summed with weights
``w_i`` (1 for the estimate, bootstrap multiplicities for a resample, see :mod:`memeval_core.agreement.intervals`),
so a point estimate and thousands of resamples share one vectorised code path (:class:`ItemTerms`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
"""A float64 array."""


@dataclass(frozen=True, eq=False)
class ItemTerms:
    """A statistic over items as ``finish(Σ_i w_i · features[i])``; the estimate uses ``w_i = 1``."""

    name: str
    """Which statistic (for reports)."""
    features: FloatArray
    """Shape ``(items, d)``: one row per item that takes part (items that cannot contribute are dropped)."""
    finish: Callable[[FloatArray], FloatArray]
    """Maps weighted feature sums of shape ``(B, d)`` to ``B`` statistic values (NaN where undefined)."""

    @property
    def n_items(self) -> int:
        """Items that take part."""
        return int(self.features.shape[0])

    def value(self) -> float:
        """The statistic on all items once (NaN where undefined)."""
        return float(self.finish(self.features.sum(axis=0, keepdims=True))[0])


def as_verdict_matrix(verdicts: Any) -> FloatArray:
    """``(items x raters)`` float array with NaN for missing (None, NaN); bools become 0/1."""
    try:
        matrix = np.asarray(verdicts, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"verdicts must be numbers, bools, None or NaN ({exc})") from exc
    if matrix.ndim != 2:
        raise ValueError(f"verdicts must be a 2-D (items x raters) array, got shape {matrix.shape}")
    if matrix.shape[1] < 2:
        raise ValueError(f"verdicts need at least 2 raters (columns), got {matrix.shape[1]}")
    if np.isinf(matrix).any():
        raise ValueError("verdicts contain infinite values")
    return matrix


def category_counts(matrix: FloatArray) -> tuple[NDArray[np.int64], FloatArray]:
    """Per item, how many raters gave each category: ``(items x categories)`` counts and the sorted categories."""
    present = ~np.isnan(matrix)
    categories = np.unique(matrix[present])
    codes = np.searchsorted(categories, np.where(present, matrix, categories[0] if len(categories) else 0.0))
    rows = np.broadcast_to(np.arange(matrix.shape[0])[:, None], matrix.shape)
    flat = (rows * max(len(categories), 1) + codes)[present]
    counts = np.bincount(flat, minlength=matrix.shape[0] * len(categories))
    return counts.reshape(matrix.shape[0], len(categories)).astype(np.int64), categories


def safe_divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """``numerator / denominator`` elementwise, NaN where the denominator is 0 (an undefined statistic)."""
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _kappa(observed: FloatArray, chance: FloatArray) -> FloatArray:
    """``(p_o − p_e) / (1 − p_e)``; NaN where ``p_e = 1``."""
    return safe_divide(observed - chance, 1.0 - chance)


def _pair_agreement_per_item(counts: NDArray[np.int64]) -> tuple[FloatArray, NDArray[np.bool_]]:
    """``P_i = Σ_c n_ic (n_ic − 1) / (m_i (m_i − 1))`` and the mask of items with ``m_i >= 2`` ratings."""
    m = counts.sum(axis=1)
    usable = m >= 2
    pairs = (counts * (counts - 1)).sum(axis=1).astype(np.float64)
    return safe_divide(pairs, (m * (m - 1)).astype(np.float64)), usable


def _mean_terms(name: str, values: FloatArray) -> ItemTerms:
    features = np.column_stack([np.ones(len(values)), values])

    def finish(sums: FloatArray) -> FloatArray:
        return safe_divide(sums[:, 1], sums[:, 0])

    return ItemTerms(name, features, finish)


def raw_agreement_terms(verdicts: Any) -> ItemTerms:
    """Raw agreement: mean share of agreeing rater pairs per item (Fleiss' ``P̄``; for two raters: share of equal
    verdicts).

    ``P_i = Σ_c n_ic (n_ic − 1) / (m_i (m_i − 1))`` with ``n_ic`` raters giving category ``c`` to item ``i`` and
    ``m_i`` ratings of item ``i``; averaged over items with ``m_i >= 2``. NaN if there is no such item.
    """
    counts, _ = category_counts(as_verdict_matrix(verdicts))
    per_item, usable = _pair_agreement_per_item(counts)
    return _mean_terms("raw_agreement", per_item[usable])


def unanimity_terms(verdicts: Any) -> ItemTerms:
    """Unanimity: share of items (with at least 2 verdicts) on which all present verdicts are equal."""
    counts, _ = category_counts(as_verdict_matrix(verdicts))
    m = counts.sum(axis=1)
    usable = m >= 2
    unanimous = (counts.max(axis=1, initial=0) == m).astype(np.float64)
    return _mean_terms("unanimity", unanimous[usable])


def cohen_kappa_terms(rater_a: Any, rater_b: Any) -> ItemTerms:
    """Cohen's kappa of two raters' verdicts (1-D, aligned by item); items missing either verdict are dropped.

    ``κ = (p_o − p_e) / (1 − p_e)``, ``p_o`` = share of items with equal verdicts,
    ``p_e = Σ_c p_a(c) · p_b(c)`` with ``p_r(c)`` the share of items rater ``r`` put in category ``c``.
    NaN when ``p_e = 1`` (both raters used one and the same category throughout) or no item remains.
    Item terms: per item ``[1, agree, onehot_a (C), onehot_b (C)]``.
    """
    matrix = as_verdict_matrix(
        np.column_stack([np.asarray(rater_a, dtype=np.float64).ravel(), np.asarray(rater_b, dtype=np.float64).ravel()])
    )
    both = matrix[~np.isnan(matrix).any(axis=1)]
    categories = np.unique(both)
    codes = np.searchsorted(categories, both)
    c = len(categories)
    features = np.zeros((len(both), 2 + 2 * c))
    rows = np.arange(len(both))
    features[:, 0] = 1.0
    features[:, 1] = codes[:, 0] == codes[:, 1]
    features[rows, 2 + codes[:, 0]] = 1.0
    features[rows, 2 + c + codes[:, 1]] = 1.0

    def finish(sums: FloatArray) -> FloatArray:
        n = sums[:, :1]
        observed = safe_divide(sums[:, 1], sums[:, 0])
        chance = (safe_divide(sums[:, 2 : 2 + c], n) * safe_divide(sums[:, 2 + c :], n)).sum(axis=1)
        return _kappa(observed, chance)

    return ItemTerms("cohen_kappa", features, finish)


def fleiss_kappa_terms(verdicts: Any) -> ItemTerms:
    """Fleiss' kappa of ``m`` raters over items; items with any missing verdict are dropped (listwise).

    With ``n_ic`` = raters giving item ``i`` category ``c`` (``Σ_c n_ic = m``) over ``N`` items:
    ``P_i = (Σ_c n_ic² − m) / (m (m − 1))``, ``P̄ = mean_i P_i``, ``p_c = Σ_i n_ic / (N m)``,
    ``P̄_e = Σ_c p_c²``, ``κ = (P̄ − P̄_e) / (1 − P̄_e)``. NaN when ``P̄_e = 1`` (one category only).
    For missing verdicts use Krippendorff's alpha instead, which needs no complete items.
    Item terms: per complete item ``[1, P_i, n_i1 .. n_iC]``.
    """
    matrix = as_verdict_matrix(verdicts)
    complete = matrix[~np.isnan(matrix).any(axis=1)]
    raters = matrix.shape[1]
    counts, _ = category_counts(complete)
    per_item, _ = _pair_agreement_per_item(counts)
    features = np.column_stack([np.ones(len(complete)), per_item, counts.astype(np.float64)])

    def finish(sums: FloatArray) -> FloatArray:
        n_items = sums[:, :1]
        mean_agreement = safe_divide(sums[:, 1], sums[:, 0])
        shares = safe_divide(sums[:, 2:], n_items * raters)
        return _kappa(mean_agreement, (shares**2).sum(axis=1))

    return ItemTerms("fleiss_kappa", features, finish)
