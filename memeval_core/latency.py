"""Latency summaries. Percentiles use the nearest-rank method, as PrecisionMemBench does.

Nearest rank: for ``n`` sorted values ``v[0] <= ... <= v[n-1]`` the p-th percentile is
``v[ceil(p * n) - 1]`` (p in (0, 1]); no interpolation, so the result is always an observed value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def nearest_rank(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile (0 < p <= 1) by nearest rank; None for no values."""
    if not 0 < p <= 1:
        raise ValueError(f"percentile must be in (0, 1], got {p}")
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(p * len(ordered)) - 1, 0)]


@dataclass(frozen=True)
class LatencySummary:
    """Mean, p50 and p95 of a set of latencies, in milliseconds (unrounded)."""

    count: int
    """Number of latencies."""
    mean_ms: float | None
    """Arithmetic mean."""
    p50_ms: float | None
    """Median by nearest rank."""
    p95_ms: float | None
    """95th percentile by nearest rank."""


def summarize(values: Sequence[float]) -> LatencySummary:
    """Summarise latencies; an empty sequence gives Nones, never zeros."""
    if not values:
        return LatencySummary(0, None, None, None)
    return LatencySummary(
        count=len(values),
        mean_ms=math.fsum(values) / len(values),
        p50_ms=nearest_rank(values, 0.5),
        p95_ms=nearest_rank(values, 0.95),
    )
