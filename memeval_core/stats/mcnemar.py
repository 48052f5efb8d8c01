"""Exact McNemar test on paired pass/fail outcomes.

Two systems ran the same ``n`` cases. Of the discordant cases, ``b`` were passed by A only and
``c`` by B only. Under the null hypothesis (both systems are equally likely to pass) each
discordant case is a fair coin, so ``min(b, c) ~ Binomial(b + c, 1/2)`` and the exact two-sided
p-value is

    p = min(1, 2 * BinomCDF(min(b, c); b + c, 1/2)),    p = 1 when b + c = 0.

The binomial CDF is summed in exact integer arithmetic, ``sum_{i<=k} C(m, i) / 2^m``, and rounded
to float once, so small p-values keep full relative precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

METHOD = "exact McNemar (two-sided binomial test on discordant pairs, p = min(1, 2*BinomCDF(min(b,c); b+c, 0.5)))"


def mcnemar_exact_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts ``b`` (A only) and ``c`` (B only).

    ``p = min(1, 2 * sum_{i=0}^{min(b,c)} C(b+c, i) / 2^(b+c))``; 1 when ``b + c = 0``.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    m = b + c
    if m == 0:
        return 1.0
    # C(m, i+1) = C(m, i) * (m - i) / (i + 1), exact in integers: one multiply and divide per term.
    tail, term = 0, 1
    for i in range(min(b, c) + 1):
        tail += term
        term = term * (m - i) // (i + 1)
    # Integer numerator and denominator: one correctly rounded division, no underflow for large m.
    return min(1.0, (2 * tail) / (1 << m))


@dataclass(frozen=True)
class McNemarReport:
    """Outcome of an exact McNemar test of A against B."""

    method: str
    """The test, named with its formula."""
    alpha: float
    """Significance level the verdict uses."""
    n: int
    """Paired cases."""
    both_passed: int
    """Cases both passed."""
    b: int
    """Discordant cases A passed and B failed."""
    c: int
    """Discordant cases B passed and A failed."""
    both_failed: int
    """Cases both failed."""
    pass_rate_difference: float | None
    """Estimate: pass rate of A minus pass rate of B, ``(b - c) / n``; None when ``n = 0``."""
    p_value: float
    """Exact two-sided p-value."""

    @property
    def significant(self) -> bool:
        """True when ``p_value < alpha``."""
        return self.p_value < self.alpha


def mcnemar_exact(
    a_passed: Sequence[bool] | NDArray[np.bool_], b_passed: Sequence[bool] | NDArray[np.bool_], *, alpha: float = 0.05
) -> McNemarReport:
    """Exact McNemar test on paired verdicts (``a_passed[i]`` and ``b_passed[i]`` are the same case)."""
    if len(a_passed) != len(b_passed):
        raise ValueError(f"paired verdicts differ in length: a has {len(a_passed)}, b has {len(b_passed)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    a = np.asarray(a_passed, dtype=bool)
    b_arr = np.asarray(b_passed, dtype=bool)
    b = int(np.count_nonzero(a & ~b_arr))
    c = int(np.count_nonzero(b_arr & ~a))
    both = int(np.count_nonzero(a & b_arr))
    return mcnemar_from_counts(len(a), both, b, c, alpha=alpha)


def mcnemar_from_counts(n: int, both_passed: int, b: int, c: int, *, alpha: float = 0.05) -> McNemarReport:
    """The exact McNemar report of ``n`` paired cases from their counts (both passed, A only, B only)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if min(n, both_passed, b, c) < 0 or both_passed + b + c > n:
        raise ValueError(f"inconsistent counts: n={n}, both_passed={both_passed}, b={b}, c={c}")
    return McNemarReport(
        method=METHOD,
        alpha=alpha,
        n=n,
        both_passed=both_passed,
        b=b,
        c=c,
        both_failed=n - both_passed - b - c,
        pass_rate_difference=(b - c) / n if n else None,
        p_value=mcnemar_exact_p(b, c),
    )
