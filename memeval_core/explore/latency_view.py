"""Latency per run: summary (mean, p50, p95, ingestion), per-case distribution, per-belief ingestion.

Percentiles are nearest-rank (:mod:`memeval_core.latency`), as PrecisionMemBench computes them, so
every p50/p95 is an observed latency.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    rows = [
        {
            "display_name": run.identity.display_name,
            "run_id": run.identity.run_id,
            "benchmark": run.identity.benchmark,
            "case_id": c.case_id,
            "turn_index": c.turn_index,
            "category": c.category,
            "passed": c.passed,
            "latency_ms": c.latency_ms,
        }
        for run in runs
        for c in run.cases
    ]
    columns = ["display_name", "run_id", "benchmark", "case_id", "turn_index", "category", "passed", "latency_ms"]
    frame = pd.DataFrame(rows, columns=columns)
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
