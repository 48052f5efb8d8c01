"""Bootstrap confidence intervals over items for the agreement statistics of this package.

Items (questions) are resampled with replacement, ``n_resamples`` times: a resample is a vector of multiplicities
``w ~ Multinomial(N, 1/N, …, 1/N)`` over the ``N`` items, and the statistic is ``finish(w @ features)``
(see :class:`memeval_core.agreement.kappa.ItemTerms`), so all resamples are one matrix product per chunk.

Interval: percentile method, ``[q(α/2), q(1 − α/2)]`` of the resampled values (numpy's default linear
quantile), over the resamples where the statistic is defined; resamples where it is undefined (e.g. kappa when a
resample holds one category only) are counted in ``n_undefined`` and left out. Same seed, same numbers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from memeval_core.agreement.kappa import (
    FloatArray,
    ItemTerms,
    cohen_kappa_terms,
    fleiss_kappa_terms,
    raw_agreement_terms,
    unanimity_terms,
)
from memeval_core.agreement.krippendorff_alpha import krippendorff_alpha_terms
from memeval_core.agreement.rank_correlation import kendall_tau_terms

AgreementStatistic = Literal[
    "raw_agreement",
    "unanimity",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_interval",
]
"""Statistics :func:`agreement_terms` knows by name."""

# Resample weights are (chunk x items) float64; keep a chunk around 16 MB.
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class BootstrapReport:
    """A statistic over items with its percentile bootstrap interval."""

    statistic: str
    """Which statistic."""
    estimate: float
    """Value on all items (NaN if undefined)."""
    low: float
    """Lower bound, the ``alpha/2`` quantile of the resampled values (NaN if no resample is defined)."""
    high: float
    """Upper bound, the ``1 − alpha/2`` quantile."""
    standard_error: float
    """Standard deviation (ddof=1) of the defined resampled values; NaN with fewer than two."""
    alpha: float
    """Two-sided level: the interval covers ``1 − alpha``."""
    n_resamples: int
    """Resamples drawn."""
    n_undefined: int
    """Resamples where the statistic was undefined (left out of the interval)."""
    n_items: int
    """Items resampled (those that take part in the statistic)."""
    seed: int
    """Seed of ``numpy.random.default_rng``."""
    method: str = "percentile"
    """Interval method."""


def _check(seed: int, n_resamples: int, alpha: float) -> None:
    if not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def _weights(n: int, *, seed: int, n_resamples: int) -> Iterator[tuple[int, FloatArray]]:
    """Resample weights ``w ~ Multinomial(n, 1/n, ...)`` from ``default_rng(seed)``, a chunk at a time:
    (index of the chunk's first resample, its weights, one row per resample)."""
    rng = np.random.default_rng(seed)
    probabilities = np.full(n, 1.0 / n)
    chunk = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        yield start, rng.multinomial(n, probabilities, size=size).astype(np.float64)


def resampled_together(terms: Sequence[ItemTerms], *, seed: int, n_resamples: int) -> list[FloatArray]:
    """Each statistic of ``terms`` (all over the same items) on the same ``n_resamples`` bootstrap resamples
    (NaN where undefined): :func:`resampled_values` of each, with the weights drawn once."""
    _check(seed, n_resamples, 0.5)
    if len({t.n_items for t in terms}) > 1:
        raise ValueError(f"statistics resampled together must be over the same items, got {[t.n_items for t in terms]}")
    out = [np.full(n_resamples, np.nan) for _ in terms]
    if not terms or terms[0].n_items == 0:
        return out
    for start, weights in _weights(terms[0].n_items, seed=seed, n_resamples=n_resamples):
        for t, values in zip(terms, out, strict=True):
            values[start : start + len(weights)] = t.finish(weights @ t.features)
    return out


def resampled_values(terms: ItemTerms, *, seed: int, n_resamples: int) -> FloatArray:
    """The statistic on ``n_resamples`` bootstrap resamples of the items (NaN where undefined)."""
    return resampled_together([terms], seed=seed, n_resamples=n_resamples)[0]


def percentile_report(terms: ItemTerms, values: FloatArray, *, seed: int, alpha: float) -> BootstrapReport:
    """The statistic of ``terms`` with the percentile interval of its resampled ``values`` (drawn with ``seed``)."""
    defined = values[~np.isnan(values)]
    if len(defined):
        low, high = (float(q) for q in np.quantile(defined, [alpha / 2, 1 - alpha / 2]))
    else:
        low = high = float("nan")
    return BootstrapReport(
        statistic=terms.name,
        estimate=terms.value(),
        low=low,
        high=high,
        standard_error=float(defined.std(ddof=1)) if len(defined) > 1 else float("nan"),
        alpha=alpha,
        n_resamples=len(values),
        n_undefined=int(len(values) - len(defined)),
        n_items=terms.n_items,
        seed=int(seed),
    )


def bootstrap(terms: ItemTerms, *, seed: int, n_resamples: int, alpha: float) -> BootstrapReport:
    """Percentile bootstrap interval of any item statistic (see the module docstring)."""
    _check(seed, n_resamples, alpha)
    return percentile_report(terms, resampled_values(terms, seed=seed, n_resamples=n_resamples), seed=seed, alpha=alpha)


def bootstrap_many(
    terms: Sequence[ItemTerms], *, seed: int, n_resamples: int, alpha: float
) -> tuple[BootstrapReport, ...]:
    """:func:`bootstrap` of several statistics, with the same numbers.

    ``bootstrap`` draws the same weights for every statistic over the same number of items ``N`` (the same
    seed): here they are drawn once per distinct ``N`` and every statistic of that size is evaluated on them
    (the multinomial draw dominates the cost).
    """
    _check(seed, n_resamples, alpha)
    by_size: dict[int, list[int]] = {}
    for i, t in enumerate(terms):
        by_size.setdefault(t.n_items, []).append(i)
    values: dict[int, FloatArray] = {}
    for members in by_size.values():
        together = resampled_together([terms[i] for i in members], seed=seed, n_resamples=n_resamples)
        values.update(zip(members, together, strict=True))
    return tuple(percentile_report(t, values[i], seed=seed, alpha=alpha) for i, t in enumerate(terms))


def agreement_terms(verdicts: Any, statistic: AgreementStatistic, raters: tuple[int, int] = (0, 1)) -> ItemTerms:
    """Item terms of a named agreement statistic; ``raters`` picks the two columns for Cohen's kappa."""
    if statistic == "raw_agreement":
        return raw_agreement_terms(verdicts)
    if statistic == "unanimity":
        return unanimity_terms(verdicts)
    if statistic == "fleiss_kappa":
        return fleiss_kappa_terms(verdicts)
    if statistic == "krippendorff_alpha_nominal":
        return krippendorff_alpha_terms(verdicts, "nominal")
    if statistic == "krippendorff_alpha_interval":
        return krippendorff_alpha_terms(verdicts, "interval")
    if statistic == "cohen_kappa":
        matrix = np.asarray(verdicts, dtype=np.float64)
        a, b = raters
        if matrix.ndim != 2 or not (0 <= a < matrix.shape[1] and 0 <= b < matrix.shape[1]) or a == b:
            raise ValueError(f"raters {raters} must be two distinct columns of the (items x raters) verdicts")
        return cohen_kappa_terms(matrix[:, a], matrix[:, b])
    raise ValueError(f"unknown statistic {statistic!r}")


def bootstrap_kendall_tau(
    scores_a: Any, scores_b: Any, *, seed: int, n_resamples: int, alpha: float
) -> BootstrapReport:
    """Bootstrap interval over items of Kendall's tau-b between run rankings under two conditions.

    ``scores_a``/``scores_b``: ``(items x runs)`` per-item scores; each resample ranks runs by their mean score.
    """
    return bootstrap(kendall_tau_terms(scores_a, scores_b), seed=seed, n_resamples=n_resamples, alpha=alpha)
