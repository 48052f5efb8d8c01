"""Latency per run: summary (mean, p50, p95, ingestion), per-case distribution, per-belief ingestion.

Percentiles are nearest-rank (:mod:`memeval_core.latency`), as PrecisionMemBench computes them, so
every p50/p95 is an observed latency. The summary reads the runs table (:mod:`memeval_core.pmb.runs_table`)
alone and the distributions :data:`CASE_COLUMNS` of the cases table, so a suite of thousands of runs is
charted without reading a whole run; only per-belief ingestion timings need whole runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from memeval_core.pmb.run import PmbRun

_SUMMARY_SOURCES = {"display_name": "display_name", "run_id": "run_id", "benchmark": "benchmark"}
_SUMMARY_SOURCES |= {"count": "latency_count", "mean_ms": "latency_mean_ms", "p50_ms": "latency_p50_ms"}
_SUMMARY_SOURCES |= {"p95_ms": "latency_p95_ms", "ingestion_total_ms": "ingestion_total_ms"}
_SUMMARY_SOURCES |= {"ingestion_beliefs": "ingestion_beliefs"}
"""Summary column -> the runs-table column it is read from."""
SUMMARY_COLUMNS = [*_SUMMARY_SOURCES, "ingestion_per_belief_ms"]
CASE_COLUMNS = ("run_id", "case_id", "turn_index", "category", "passed", "latency_ms")
"""The case columns :func:`latency_distribution` and :func:`latency_boxes` read (of every run they chart)."""
RUN_COLUMNS = ["display_name", "run_id", "benchmark"]
"""The runs-table columns that name each run in a result."""


def latency_summary(runs: pa.Table) -> pd.DataFrame:
    """One row per row of the runs table ``runs``, in its order: retrieval latency summary and ingestion cost.

    ``count, mean_ms, p50_ms, p95_ms`` are the table's ``latency_*`` columns; ``ingestion_total_ms`` is the sum
    of per-belief timings when the report has them, else the stated total; ``ingestion_beliefs`` the number of
    per-belief timings, else the stated belief count; ``ingestion_per_belief_ms = ingestion_total_ms /
    ingestion_beliefs`` when both are present and ``ingestion_beliefs > 0``. Ingestion columns are missing
    (NaN, ``<NA>``) when the run did not ingest (or ingested zero beliefs).
    """
    frame = pd.DataFrame({name: runs.column(col).to_pylist() for name, col in _SUMMARY_SOURCES.items()})
    frame = frame.astype(dict.fromkeys(("mean_ms", "p50_ms", "p95_ms", "ingestion_total_ms"), "float64"))
    beliefs = frame["ingestion_beliefs"].astype("float64")
    frame["ingestion_per_belief_ms"] = (frame["ingestion_total_ms"] / beliefs).where(beliefs > 0)
    frame["ingestion_beliefs"] = frame["ingestion_beliefs"].astype("Int64")
    return frame[SUMMARY_COLUMNS]


def _in_run_order(cases: pa.Table, runs: pa.Table) -> pa.Table:
    """The cases of the runs in ``runs``: runs in its order, each run's cases in their order in ``cases``.

    Column ``_run`` holds each case's row number in ``runs``; cases of other runs are left out.
    """
    row = pc.index_in(cases.column("run_id"), value_set=runs.column("run_id"))
    kept = cases.append_column("_run", row).filter(pc.is_valid(row))
    return kept.take(pc.sort_indices(kept, [("_run", "ascending")]))  # a stable sort


def latency_distribution(cases: pa.Table, runs: pa.Table) -> pd.DataFrame:
    """Tidy per-case latencies for ECDF and box plots: one row per run and case (session: turn).

    ``cases``: the :data:`CASE_COLUMNS` of the cases table, in any order; ``runs``: the runs table's rows,
    whose order the result keeps (each run's cases in their order). Columns: ``display_name, run_id,
    benchmark, case_id, turn_index`` (nullable Int64), ``category, passed, latency_ms``.
    """
    t = _in_run_order(cases, runs)
    names = runs.select(["display_name", "benchmark"]).take(t.column("_run"))
    frame = pd.concat([names.to_pandas(), t.select(list(CASE_COLUMNS)).to_pandas()], axis=1)
    ordered: pd.DataFrame = frame[["display_name", "run_id", "benchmark", *CASE_COLUMNS[1:]]]
    return ordered.astype({"turn_index": "Int64", "passed": bool, "latency_ms": "float64"})


def ingestion_distribution(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """Per-belief ingestion latencies of the runs that record them (others contribute no rows).

    Only whole runs hold them: pass the runs a chart draws. Columns: ``display_name, run_id, benchmark,
    belief_id, latency_ms``.
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


def _box_stats(lat: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Box statistics of each row of ``lat`` (one run's latencies per row): see :func:`latency_boxes`."""
    q1, median, q3 = np.percentile(lat, [25, 50, 75], axis=1)
    iqr = q3 - q1
    low = np.where(lat >= (q1 - 1.5 * iqr)[:, None], lat, np.inf).min(axis=1)
    high = np.where(lat <= (q3 + 1.5 * iqr)[:, None], lat, -np.inf).max(axis=1)
    return {
        "min_ms": lat.min(axis=1),
        "lower_fence_ms": low,
        "q1_ms": q1,
        "median_ms": median,
        "q3_ms": q3,
        "upper_fence_ms": high,
        "max_ms": lat.max(axis=1),
    }


def latency_boxes(cases: pa.Table, runs: pa.Table) -> pd.DataFrame:
    """Box-plot statistics of each run's per-case latencies, for views too large to draw every case.

    ``cases`` and ``runs`` as for :func:`latency_distribution`; one row per run that has cases, in the order
    of ``runs``. Quartiles interpolate linearly (``numpy.percentile``'s default, which is also plotly's
    ``quartilemethod="linear"``). Whiskers follow Tukey: ``lower_fence_ms`` is the smallest latency
    at or above ``q1 - 1.5 * IQR``, ``upper_fence_ms`` the largest at or below ``q3 + 1.5 * IQR``.
    """
    t = _in_run_order(cases, runs)
    run, lat = t.column("_run").to_numpy(), t.column("latency_ms").to_numpy()
    first = np.flatnonzero(np.diff(run, prepend=-1))  # where each run's cases start
    size = np.diff(first, append=len(run))
    # Runs with the same number of cases are stacked and summarised in one call per statistic (numpy
    # computes each row exactly as it would alone); a thousand separate np.percentile calls cost 0.3 s.
    parts = [
        pd.DataFrame({"_run": run[starts], "count": n, **_box_stats(lat[starts[:, None] + np.arange(n)])})
        for n in np.unique(size)
        for starts in [first[size == n]]
    ]
    if not parts:
        return pd.DataFrame(columns=BOX_COLUMNS)
    stats = pd.concat(parts).sort_values("_run").reset_index(drop=True)
    names = runs.select(RUN_COLUMNS).take(pa.array(stats["_run"].to_numpy())).to_pandas()
    boxes: pd.DataFrame = pd.concat([names, stats.drop(columns="_run")], axis=1)[BOX_COLUMNS]
    return boxes


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
