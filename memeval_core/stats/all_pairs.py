"""Exact McNemar tests and paired bootstrap intervals for every pair among R runs over N shared items, at once.

Inputs: a pass matrix ``P`` (R x N, ``P[r, i]`` = run r passed item i) and a score matrix ``X`` (R x N, e.g.
per-item precision, or ``P`` as 0/1). Pairs are ``(a, b)`` with ``a < b`` in row-major upper-triangle order.

McNemar, all pairs from two matrix products: ``B = P @ (1 - P).T`` (``B[a, b]`` = items a passed and b failed,
the discordant count ``b`` of the pair), ``both = P @ P.T``; ``c = B.T``. The exact two-sided p-value
``p = min(1, 2 * BinomCDF(min(b, c); b + c, 1/2))`` (1 when ``b + c = 0``) is evaluated for all pairs at once
with the regularised incomplete beta function (``scipy.special.bdtr``), which agrees with the exact integer sum
of :func:`memeval_core.stats.mcnemar.mcnemar_exact_p` to a few 1e-12 relative (scipy's ``binomtest`` uses the
same function).

Paired bootstrap, all pairs from one index matrix: ``I = default_rng(seed).integers(0, N, (n_resamples, N))``,
the very draw :func:`memeval_core.stats.bootstrap.paired_bootstrap` makes for any one pair with the same seed.
With the resample-count matrix ``C[r, i] = #{j : I[r, j] = i}``, the resampled item sums of every run are
``S = X @ C.T`` (R x n_resamples) and the bootstrap replicates of pair (a, b) are

    theta*_r = (S[a, r] - S[b, r]) / N  =  mean_j (X[a] - X[b])[I[r, j]],

the paired bootstrap of ``mean(X[a]) - mean(X[b])`` with the same indices for every pair. Subtracting the sums
before dividing keeps integer-valued scores (0/1 passes) bit-identical to the pair-by-pair computation;
other scores agree to rounding (~1e-15). Percentile and BCa intervals, standard error (ddof 1) and the
constant-difference point interval follow :mod:`memeval_core.stats.bootstrap` exactly.

Cost: one ``(n_resamples x N)`` draw and count matrix shared by all pairs, one ``(R x N) @ (N x n_resamples)``
product, then per pair only its ``n_resamples`` differences, processed one run's pairs at a time so memory
stays ``O(R * n_resamples)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import bdtr, ndtr, ndtri

from memeval_core.stats.bootstrap import METHOD_NAMES, BootstrapMethod, BootstrapReport
from memeval_core.stats.holm import holm_adjust
from memeval_core.stats.mcnemar import METHOD as MCNEMAR_METHOD
from memeval_core.stats.mcnemar import McNemarReport

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class AllPairsReport:
    """Exact McNemar test and paired bootstrap interval of every pair of runs (arrays aligned by pair)."""

    labels: tuple[str, ...]
    """Run names, in input row order."""
    bootstrap_method: str
    """Resampling scheme and interval method of the bootstrap."""
    mcnemar_method: str
    """The test, named with its formula."""
    seed: int
    """Seed of ``numpy.random.default_rng`` (one index matrix shared by all pairs)."""
    n_resamples: int
    """Bootstrap resamples drawn."""
    alpha: float
    """Intervals have confidence ``1 - alpha``; a p-value below ``alpha`` is significant."""
    n_items: int
    """Shared items every run was scored on."""
    a: IntArray
    """Per pair: row of run A (``a < b``)."""
    b: IntArray
    """Per pair: row of run B."""
    estimate: FloatArray
    """Per pair: ``mean(X[a] - X[b])``."""
    ci_low: FloatArray
    """Per pair: lower bootstrap confidence bound."""
    ci_high: FloatArray
    """Per pair: upper bootstrap confidence bound."""
    standard_error: FloatArray
    """Per pair: standard deviation (ddof 1) of the bootstrap replicates."""
    both_passed: IntArray
    """Per pair: items both runs passed."""
    a_only: IntArray
    """Per pair: discordant items A passed and B failed (McNemar's ``b``)."""
    b_only: IntArray
    """Per pair: discordant items B passed and A failed (McNemar's ``c``)."""
    p_value: FloatArray
    """Per pair: exact two-sided McNemar p-value."""

    @property
    def n_pairs(self) -> int:
        """Number of pairs, ``R (R - 1) / 2``."""
        return len(self.a)

    @property
    def p_holm(self) -> FloatArray:
        """Holm-adjusted McNemar p-values over all pairs (family-wise error control)."""
        return holm_adjust(self.p_value)

    def index(self, a: int, b: int) -> int:
        """Position of pair (a, b), ``a < b``, in the per-pair arrays."""
        r = len(self.labels)
        if not 0 <= a < b < r:
            raise ValueError(f"need 0 <= a < b < {r}, got a={a}, b={b}")
        return a * r - a * (a + 1) // 2 + (b - a - 1)

    def bootstrap(self, a: int, b: int) -> BootstrapReport:
        """The bootstrap interval of pair (a, b) as :func:`memeval_core.stats.bootstrap.paired_bootstrap` reports it."""
        i = self.index(a, b)
        return BootstrapReport(
            method=self.bootstrap_method,
            statistic=f"mean difference ({self.labels[a]} - {self.labels[b]})",
            seed=self.seed,
            n_resamples=self.n_resamples,
            alpha=self.alpha,
            n=self.n_items,
            estimate=float(self.estimate[i]),
            ci_low=float(self.ci_low[i]),
            ci_high=float(self.ci_high[i]),
            standard_error=float(self.standard_error[i]),
        )

    def mcnemar(self, a: int, b: int) -> McNemarReport:
        """The McNemar test of pair (a, b) as :func:`memeval_core.stats.mcnemar.mcnemar_exact` reports it."""
        i = self.index(a, b)
        n, both, bo, co = self.n_items, int(self.both_passed[i]), int(self.a_only[i]), int(self.b_only[i])
        return McNemarReport(
            method=self.mcnemar_method,
            alpha=self.alpha,
            n=n,
            both_passed=both,
            b=bo,
            c=co,
            both_failed=n - both - bo - co,
            pass_rate_difference=(bo - co) / n if n else None,
            p_value=float(self.p_value[i]),
        )


def mcnemar_p_values(b: npt.ArrayLike, c: npt.ArrayLike) -> FloatArray:
    """Exact two-sided McNemar p-values for arrays of discordant counts: ``min(1, 2 BinomCDF(min; b + c, 1/2))``."""
    bb = np.asarray(b, dtype=np.int64)
    cc = np.asarray(c, dtype=np.int64)
    if (bb < 0).any() or (cc < 0).any():
        raise ValueError("discordant counts must be non-negative")
    m = bb + cc
    k = np.minimum(bb, cc)
    p = np.ones(m.shape, dtype=np.float64)
    some = m > 0
    p[some] = np.minimum(1.0, 2.0 * bdtr(k[some], m[some], 0.5))
    return p


def resample_counts(idx: IntArray, n: int, *, overwrite: bool = False) -> FloatArray:
    """``C[r, i]`` = how often item ``i`` occurs in resample ``r`` of the index matrix ``idx`` (one bincount).

    Row ``r``'s indices are shifted to ``r * n + i`` so one ``bincount`` over the flat matrix counts every row;
    ``overwrite=True`` shifts ``idx`` in place instead of allocating a second index matrix.
    """
    rows = idx.shape[0]
    shift = np.arange(rows, dtype=np.int64)[:, None] * n
    flat = np.add(idx, shift, out=idx if overwrite else None)
    return np.bincount(flat.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


def _matrix(values: npt.ArrayLike, name: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a (runs x items) matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds a non-finite value; drop unpaired or missing items first")
    return arr


def _bca_levels(d: FloatArray, theta: FloatArray, theta_b: FloatArray, alpha: float) -> FloatArray:
    """BCa quantile levels per pair (rows of ``d``), as :func:`memeval_core.stats.bootstrap._bca_levels`."""
    n = d.shape[1]
    below = np.count_nonzero(theta_b < theta[:, None], axis=1)
    at_or_below = np.count_nonzero(theta_b <= theta[:, None], axis=1)
    z0 = ndtri((below + at_or_below) / (2 * theta_b.shape[1]))
    theta_i = (d.sum(axis=1, keepdims=True) - d) / (n - 1)
    u = (n - 1) * (theta_i.mean(axis=1, keepdims=True) - theta_i)
    den = np.sum(u**2, axis=1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        # A constant difference divides 0 by 0; its interval is the point estimate, set by the caller.
        a_hat = (np.sum(u**3, axis=1) / n**3) / (6 * den**1.5)
    levels = np.empty((len(theta), 2), dtype=np.float64)
    for j, z in enumerate((float(ndtri(alpha / 2)), float(ndtri(1 - alpha / 2)))):
        num = z0 + z
        levels[:, j] = ndtr(z0 + num / (1 - a_hat * num))
    return levels


def all_pairs(
    scores: npt.ArrayLike,
    passed: npt.ArrayLike,
    *,
    seed: int,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    method: BootstrapMethod = "percentile",
    labels: Sequence[str] | None = None,
) -> AllPairsReport:
    """McNemar on ``passed`` and the paired bootstrap of mean ``scores`` for every pair of rows (module docstring).

    ``scores`` and ``passed`` are ``(runs x items)``; row ``r`` of both is run ``r``, column ``i`` the same item in
    every run. Pass ``passed`` as 0/1 scores too when pass rate is the statistic.
    """
    x = _matrix(scores, "scores")
    p_arr = np.asarray(passed)
    if p_arr.shape != x.shape:
        raise ValueError(f"passed has shape {p_arr.shape} but scores has {x.shape}: give both as (runs x items)")
    if p_arr.dtype != np.bool_ and not np.isin(p_arr, (0, 1)).all():
        raise ValueError("passed must hold booleans or 0/1")
    runs, n = x.shape
    if runs < 2:
        raise ValueError(f"need at least 2 runs to form a pair, got {runs}")
    if n == 0:
        raise ValueError("no shared items to compare")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    if method not in METHOD_NAMES:
        raise ValueError(f"method must be one of {sorted(METHOD_NAMES)}, got {method!r}")
    names = tuple(labels) if labels is not None else tuple(f"run {r}" for r in range(runs))
    if len(names) != runs:
        raise ValueError(f"{len(names)} labels for {runs} runs")

    a_idx, b_idx = np.triu_indices(runs, k=1)
    a_idx = a_idx.astype(np.int64)
    b_idx = b_idx.astype(np.int64)

    # McNemar: every pair's 2x2 table from two integer matrix products.
    pi = p_arr.astype(np.int64)
    both = pi @ pi.T
    a_not_b = pi @ (1 - pi).T
    a_only = a_not_b[a_idx, b_idx]
    b_only = a_not_b[b_idx, a_idx]
    p_value = mcnemar_p_values(a_only, b_only)

    # Bootstrap: one index matrix (the same draw paired_bootstrap makes), resampled sums of every run.
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n), dtype=np.int64)
    sums = x @ resample_counts(idx, n, overwrite=True).T
    del idx

    n_pairs = len(a_idx)
    estimate = np.empty(n_pairs)
    ci_low = np.empty(n_pairs)
    ci_high = np.empty(n_pairs)
    std_err = np.empty(n_pairs)
    start = 0
    for a in range(runs - 1):
        # All pairs (a, b > a) at once: their replicates are rows of one (runs - a - 1) x n_resamples block.
        stop = start + runs - a - 1
        d = x[a] - x[a + 1 :]
        theta_b = (sums[a] - sums[a + 1 :]) / n
        theta = d.mean(axis=1)
        estimate[start:stop] = theta
        std_err[start:stop] = theta_b.std(axis=1, ddof=1) if n_resamples > 1 else 0.0
        if method == "percentile":
            q = np.quantile(theta_b, (alpha / 2, 1 - alpha / 2), axis=1)
            low, high = q[0], q[1]
        else:
            levels = _bca_levels(d, theta, theta_b, alpha)
            if not np.isfinite(levels[np.ptp(d, axis=1) != 0]).all():
                raise ValueError(
                    "the BCa interval is undefined for a pair with a degenerate bootstrap distribution; "
                    "use method='percentile'"
                )
            low = np.empty(len(theta))
            high = np.empty(len(theta))
            for j in range(len(theta)):
                # Levels differ per pair; numpy's linear quantile per row keeps the pair-by-pair values.
                if np.isfinite(levels[j]).all():
                    low[j], high[j] = np.quantile(theta_b[j], levels[j])
        constant = np.ptp(d, axis=1) == 0
        low = np.where(constant, theta, low)
        high = np.where(constant, theta, high)
        ci_low[start:stop] = low
        ci_high[start:stop] = high
        start = stop

    return AllPairsReport(
        labels=names,
        bootstrap_method=METHOD_NAMES[method],
        mcnemar_method=MCNEMAR_METHOD,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        n_items=n,
        a=a_idx,
        b=b_idx,
        estimate=estimate,
        ci_low=ci_low,
        ci_high=ci_high,
        standard_error=std_err,
        both_passed=both[a_idx, b_idx],
        a_only=a_only,
        b_only=b_only,
        p_value=p_value,
    )
