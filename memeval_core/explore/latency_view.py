"""Latency per run: summary (mean, p50, p95, ingestion), per-case distribution, per-belief ingestion.

Percentiles are nearest-rank (:mod:`memeval_core.latency`), as PrecisionMemBench computes them, so
every p50/p95 is an observed latency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from memeval_core.pmb.run import PmbRun

SUMMARY_COLUMNS = [
    "display_name",
    "run_id",
    "benchmark",
    "count",
    "mean_ms",
    "p50_ms",
    "p95_ms",
    "ingestion_total_ms",
    "ingestion_beliefs",
    "ingestion_per_belief_ms",
]


def latency_summary(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """One row per run: retrieval latency summary and ingestion cost.

    ``ingestion_total_ms`` is :attr:`PmbRun.ingestion_total_ms` (sum of per-belief timings when
    present, else the stated total); ``ingestion_beliefs`` is the number of per-belief timings (else
    the stated belief count); ``ingestion_per_belief_ms = ingestion_total_ms / ingestion_beliefs``.
    Ingestion columns are NaN when the run did not ingest (or ingested zero beliefs).
    """
    rows = []
    for run in runs:
        lat = run.aggregate.latency
        ing = run.ingestion
        total = run.ingestion_total_ms
        beliefs = None if ing is None else (len(ing.per_belief) if ing.per_belief else ing.belief_count)
        rows.append(
            {
                "display_name": run.identity.display_name,
                "run_id": run.identity.run_id,
                "benchmark": run.identity.benchmark,
                "count": lat.count,
                "mean_ms": lat.mean_ms,
                "p50_ms": lat.p50_ms,
                "p95_ms": lat.p95_ms,
                "ingestion_total_ms": total,
                "ingestion_beliefs": beliefs,
                "ingestion_per_belief_ms": total / beliefs if total is not None and beliefs else None,
            }
        )
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    for col in ("mean_ms", "p50_ms", "p95_ms", "ingestion_total_ms", "ingestion_per_belief_ms"):
        frame[col] = frame[col].astype("float64")
    frame["ingestion_beliefs"] = frame["ingestion_beliefs"].astype("Int64")
    return frame


def latency_distribution(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """Tidy per-case latencies for ECDF and box plots: one row per run and case (session: turn).

    Columns: ``display_name, run_id, benchmark, case_id, turn_index`` (nullable Int64),
    ``category, passed, latency_ms``.
    """
    columns = ["display_name", "run_id", "benchmark", "case_id", "turn_index", "category", "passed", "latency_ms"]
    # Straight from each run's case columns: no per-case objects, which matters at thousands of runs.
    parts = []
    for run in runs:
        t = run.table
        turn = pd.array(t.column("turn_index"), dtype="Int64")
        turn[~t.present("turn_index")] = pd.NA
        parts.append(
            pd.DataFrame(
                {
                    "display_name": run.identity.display_name,
                    "run_id": run.identity.run_id,
                    "benchmark": run.identity.benchmark,
                    "case_id": t.texts("case_id"),
                    "turn_index": turn,
                    "category": t.texts("category"),
                    "passed": t.column("passed"),
                    "latency_ms": t.column("latency_ms"),
                },
                columns=columns,
            )
        )
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    frame["turn_index"] = frame["turn_index"].astype("Int64")
    frame["passed"] = frame["passed"].astype(bool)
    frame["latency_ms"] = frame["latency_ms"].astype("float64")
    return frame


def ingestion_distribution(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """Per-belief ingestion latencies of the runs that record them (others contribute no rows).

    Columns: ``display_name, run_id, benchmark, belief_id, latency_ms``.
    """
    rows = [
        {
            "display_name": run.identity.display_name,
            "run_id": run.identity.run_id,
            "benchmark": run.identity.benchmark,
            "belief_id": b.belief_id,
            "latency_ms": b.latency_ms,
        }
        for run in runs
        if run.ingestion is not None
        for b in run.ingestion.per_belief
    ]
    frame = pd.DataFrame(rows, columns=["display_name", "run_id", "benchmark", "belief_id", "latency_ms"])
    frame["latency_ms"] = frame["latency_ms"].astype("float64")
    return frame


BOX_COLUMNS = ["display_name", "run_id", "benchmark", "count", "min_ms", "lower_fence_ms", "q1_ms", "median_ms"]
BOX_COLUMNS += ["q3_ms", "upper_fence_ms", "max_ms"]


def latency_boxes(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """Box-plot statistics of each run's per-case latencies, for views too large to draw every case.

    Quartiles interpolate linearly (``numpy.percentile``'s default, which is also plotly's
    ``quartilemethod="linear"``). Whiskers follow Tukey: ``lower_fence_ms`` is the smallest latency
    at or above ``q1 - 1.5 * IQR``, ``upper_fence_ms`` the largest at or below ``q3 + 1.5 * IQR``.
    Runs without cases are left out.
    """
    # Runs with the same number of cases are stacked and summarised in one call per statistic (numpy
    # computes each row exactly as it would alone); a thousand separate np.percentile calls cost 0.3 s.
    by_size: dict[int, list[int]] = {}
    for i, run in enumerate(runs):
        by_size.setdefault(run.table.n, []).append(i)
    stats: dict[int, dict[str, float | int]] = {}
    for size, members in by_size.items():
        if size == 0:
            continue
        lat = np.stack([runs[i].table.column("latency_ms") for i in members])
        q1, median, q3 = np.percentile(lat, [25, 50, 75], axis=1)
        iqr = q3 - q1
        low = np.where(lat >= (q1 - 1.5 * iqr)[:, None], lat, np.inf).min(axis=1)
        high = np.where(lat <= (q3 + 1.5 * iqr)[:, None], lat, -np.inf).max(axis=1)
        for j, i in enumerate(members):
            stats[i] = {
                "count": size,
                "min_ms": float(lat[j].min()),
                "lower_fence_ms": float(low[j]),
                "q1_ms": float(q1[j]),
                "median_ms": float(median[j]),
                "q3_ms": float(q3[j]),
                "upper_fence_ms": float(high[j]),
                "max_ms": float(lat[j].max()),
            }
    rows = [
        {
            "display_name": run.identity.display_name,
            "run_id": run.identity.run_id,
            "benchmark": run.identity.benchmark,
            **stats[i],
        }
        for i, run in enumerate(runs)
        if i in stats
    ]
    return pd.DataFrame(rows, columns=BOX_COLUMNS)


TickUnit = Literal["ms", "×"]


def _tick_text(value: float, unit: TickUnit) -> str:
    if unit == "×":
        return f"{value:,g}×"
    return f"{value:,g} ms" if value < 1000 else f"{value / 1000:,g} s"


def log_ticks(
    low: float, high: float, unit: TickUnit = "ms", steps: Sequence[int] | None = None
) -> tuple[list[float], list[str]]:
    """Tick values and their text for a log axis that shows ``low`` to ``high`` (both positive).

    The ticks run from the last one at or below ``low`` to the first at or above ``high``: 1-2-3-5-7 steps
    when the range spans at most one decade, 1-2-5 up to three, powers of ten beyond. Each text reads as the
    value it marks: ``1 ms``, ``100 ms``, ``1 s``, ``10 s`` (milliseconds from 1,000 as seconds), or ``2×``, ``40×``.
    ``steps`` (mantissas from 1 to 9, e.g. ``(1, 3)`` for a short axis) replaces the automatic choice.
    """
    if not (math.isfinite(low) and math.isfinite(high) and 0 < low <= high):
        raise ValueError(f"a log axis needs 0 < low <= high, got {low}, {high}")
    span = math.log10(high / low)
    if steps is None:
        steps = (1, 2, 3, 5, 7) if span <= 1 else (1, 2, 5) if span <= 3 else (1,)
    elif 1 not in steps or not all(1 <= m <= 9 for m in steps):
        raise ValueError(f"log axis steps must include 1 and lie in 1..9, got {list(steps)}")
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    values = [float(f"{m * 10.0**e:.6g}") for e in range(first, last + 1) for m in steps]
    start = max(i for i, v in enumerate(values) if v <= low)
    end = min(i for i, v in enumerate(values) if v >= high)
    values = values[start : end + 1]
    return values, [_tick_text(v, unit) for v in values]
