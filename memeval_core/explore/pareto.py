"""Quality against latency: the Pareto-optimal runs.

A point ``p = (x, y)`` (x = p50 latency, lower is better; y = quality, higher is better) is
dominated when some other point ``q`` has ``q.x <= p.x`` and ``q.y >= p.y`` with at least one strict
inequality. The Pareto front is the set of points no other point dominates. Identical points do
not dominate each other, so duplicates on the front are all kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

Quality = Literal["pass_rate", "mean_precision", "mean_recall", "active_retrieval"]
QUALITIES: tuple[Quality, ...] = ("pass_rate", "mean_precision", "mean_recall", "active_retrieval")
"""``active_retrieval`` is the count of active-retrieval passes, the only pass a system cannot get by
returning everything or nothing; the others are the run's aggregate ratios."""


@dataclass(frozen=True)
class ParetoPoint:
    """One run placed by latency and quality."""

    name: str
    """Label (display name)."""
    x: float
    """Latency (p50, ms): lower is better."""
    y: float
    """Quality: higher is better."""


def pareto_front(points: Sequence[ParetoPoint]) -> tuple[ParetoPoint, ...]:
    """The non-dominated points, sorted by x, then by y descending, then by name."""
    for p in points:
        if not (math.isfinite(p.x) and math.isfinite(p.y)):
            raise ValueError(f"point {p.name!r} has a non-finite coordinate ({p.x}, {p.y})")
    if not points:
        return ()
    x = np.array([p.x for p in points], dtype=np.float64)
    y = np.array([p.y for p in points], dtype=np.float64)
    # dominated[i, j]: point j dominates point i (an n x n comparison; n is a handful of runs).
    no_worse = (x[None, :] <= x[:, None]) & (y[None, :] >= y[:, None])
    better = (x[None, :] < x[:, None]) | (y[None, :] > y[:, None])
    dominated: npt.NDArray[np.bool_] = np.any(no_worse & better, axis=1)
    front = [p for i, p in enumerate(points) if not dominated[i]]
    return tuple(sorted(front, key=lambda p: (p.x, -p.y, p.name)))


def _quality(row: dict[str, Any], quality: Quality) -> float | None:
    """One quality of a runs-table row: ``pass_rate = passed / cases`` (None without cases), ``mean_precision``,
    ``mean_recall`` (None where undefined) or ``active_retrieval`` (a count, as a float)."""
    if quality == "pass_rate":
        return row["passed"] / row["cases"] if row["cases"] else None
    if quality == "active_retrieval":
        return float(row["active_retrieval"])
    value: float | None = row[quality]
    return value


def quality_latency_points(runs: pa.Table, quality: Quality = "pass_rate") -> tuple[ParetoPoint, ...]:
    """One point per row of the runs table ``runs`` (in its order): x = ``latency_p50_ms``, y = the chosen
    quality (:func:`_quality`); runs lacking either are left out.

    Qualities: ``pass_rate``, ``mean_precision``, ``mean_recall`` (aggregate ratios) and
    ``active_retrieval`` (number of active-retrieval passes).
    """
    if quality not in QUALITIES:
        raise ValueError(f"quality must be one of {QUALITIES}, got {quality!r}")
    columns = ["display_name", "latency_p50_ms", "cases", "passed", "mean_precision", "mean_recall", "active_retrieval"]
    points = ((r["display_name"], r["latency_p50_ms"], _quality(r, quality)) for r in runs.select(columns).to_pylist())
    return tuple(ParetoPoint(name, x, y) for name, x, y in points if x is not None and y is not None)


def pareto_frame(points: Sequence[ParetoPoint]) -> pd.DataFrame:
    """Every point with its Pareto status, for the scatter and its download.

    Columns: ``name, x, y, on_front`` (True for the points :func:`pareto_front` keeps); rows sorted
    by x, then y descending, then name.
    """
    front = {(p.name, p.x, p.y) for p in pareto_front(points)}
    ordered = sorted(points, key=lambda p: (p.x, -p.y, p.name))
    frame = pd.DataFrame(
        [{"name": p.name, "x": p.x, "y": p.y, "on_front": (p.name, p.x, p.y) in front} for p in ordered],
        columns=["name", "x", "y", "on_front"],
    )
    frame["x"] = frame["x"].astype("float64")
    frame["y"] = frame["y"].astype("float64")
    frame["on_front"] = frame["on_front"].astype(bool)
    return frame
