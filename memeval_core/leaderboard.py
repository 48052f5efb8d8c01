"""Leaderboard rows: one per run, every number re-derived from per-case data, with its verification.

Rows are plain dicts with the keys of :data:`COLUMNS` so that the CLI, the app and the exports
all show exactly the same thing. Numbers are rounded by :mod:`memeval_core.rounding`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from memeval_core import csvsafe
from memeval_core.pmb.run import Benchmark, PmbRun
from memeval_core.rounding import ms, ratio

COLUMNS: tuple[str, ...] = (
    "run_id",
    "display_name",
    "provider",
    "benchmark",
    "cases",
    "passed",
    "pass_types",
    "mean_precision",
    "mean_recall",
    "mean_drift",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "ingestion_total_ms",
    "verified",
    "mismatches",
)

COLUMN_HELP: dict[str, str] = {
    "run_id": "Stable id of the run: file name plus the first 10 hex digits of the file's SHA-256.",
    "display_name": "Provider name; runs sharing a provider string get the variant from their file name.",
    "provider": "Provider string as the report states it.",
    "benchmark": "pmb-single-turn (77 cases) or pmb-session (12 turns of 2 multi-turn cases).",
    "cases": "Cases scored (turns for session runs).",
    "passed": "Cases where every assertion held, re-derived from the returned ids.",
    "active_retrieval": (
        "Passes with a positive precision: the system returned the gold beliefs and nothing else. "
        "The only pass a system cannot get by returning everything or nothing."
    ),
    "structural": (
        "Passes in structural categories (scope, supersession, routing, budget, ranking, isolation) without precision."
    ),
    "trivially_empty": "Passes that a system returning nothing also gets.",
    "mean_precision": "Mean over cases with a precision: share of returned relevant beliefs that are gold.",
    "mean_recall": (
        "Mean over cases with a recall: share of gold beliefs returned. Recall alone misleads: a system "
        "that returns the whole corpus scores 1.0."
    ),
    "mean_drift": "Session runs: mean of 1 - precision per turn (0 when nothing returned). 0 is perfect isolation.",
    "latency_mean_ms": "Mean retrieval latency per case, milliseconds.",
    "latency_p50_ms": "Median retrieval latency, nearest rank (as PMB computes it).",
    "latency_p95_ms": "95th-percentile retrieval latency, nearest rank.",
    "ingestion_total_ms": "Total time to ingest the belief corpus, when the report records it.",
    "verified": "True when every aggregate and per-case value the report states matches the re-derived one.",
    "mismatches": "Stated values that differ from the re-derived ones.",
}


def row(run: PmbRun) -> dict[str, Any]:
    """The leaderboard row of one run."""
    a = run.aggregate
    session = run.identity.benchmark == "pmb-session"
    return {
        "run_id": run.identity.run_id,
        "display_name": run.identity.display_name,
        "provider": run.identity.provider,
        "benchmark": run.identity.benchmark,
        "cases": a.cases,
        "passed": a.passed,
        "pass_types": dict(a.pass_types),
        "mean_precision": ratio(a.mean_precision),
        "mean_recall": ratio(a.mean_recall),
        "mean_drift": ratio(a.mean_drift) if session else None,
        "latency_mean_ms": ms(a.latency.mean_ms),
        "latency_p50_ms": ms(a.latency.p50_ms),
        "latency_p95_ms": ms(a.latency.p95_ms),
        "ingestion_total_ms": ms(run.ingestion_total_ms),
        "verified": run.verified,
        "mismatches": list(run.mismatches),
    }


def sort_key(r: dict[str, Any]) -> tuple[Any, ...]:
    """Rank order within a benchmark: active passes first (the only passes that show retrieval)."""
    return (
        -r["pass_types"]["active_retrieval"],
        -r["passed"],
        r["mean_drift"] if r["mean_drift"] is not None else 0.0,
        -(r["mean_precision"] or 0.0),
        r["display_name"],
    )


def rows(runs: Sequence[PmbRun], benchmark: Benchmark | None = None) -> list[dict[str, Any]]:
    """Leaderboard rows, best first, optionally for one benchmark."""
    out = [row(r) for r in runs if benchmark is None or r.identity.benchmark == benchmark]
    return sorted(out, key=lambda r: (r["benchmark"] != "pmb-single-turn", *sort_key(r)))


def flat(r: dict[str, Any]) -> dict[str, Any]:
    """A row with pass types as three columns and mismatches joined, for tables and CSV."""
    out = {k: v for k, v in r.items() if k not in ("pass_types", "mismatches")}
    for k, v in r["pass_types"].items():
        out[k] = v
    out["mismatches"] = "; ".join(r["mismatches"])
    order = [c for c in COLUMNS if c != "pass_types"]
    order[order.index("passed") + 1 : order.index("passed") + 1] = list(r["pass_types"])
    return {k: out[k] for k in order}


def to_json(rs: Sequence[dict[str, Any]]) -> str:
    """JSON text of rows (stable key order, UTF-8, no NaN)."""
    return json.dumps(list(rs), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(rs: Sequence[dict[str, Any]]) -> str:
    """CSV text of flattened rows."""
    return csv_text([flat(r) for r in rs])


def csv_text(flat_rows: Sequence[dict[str, Any]]) -> str:
    """CSV of flat rows (header from the first row's keys); empty text for no rows."""
    buf = io.StringIO()
    if flat_rows:
        safe = csvsafe.rows(flat_rows)  # spreadsheet formulas in report text are made inert
        w = csv.DictWriter(buf, fieldnames=list(safe[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(safe)
    return buf.getvalue()


def to_table(rs: Sequence[dict[str, Any]]) -> str:
    """A fixed-width text table for terminals."""
    cols = [
        ("display_name", "run"),
        ("benchmark", "benchmark"),
        ("passed", "passed"),
        ("active_retrieval", "active"),
        ("structural", "struct"),
        ("trivially_empty", "empty"),
        ("mean_precision", "prec"),
        ("mean_recall", "recall"),
        ("mean_drift", "drift"),
        ("latency_p50_ms", "p50 ms"),
        ("latency_p95_ms", "p95 ms"),
        ("verified", "verified"),
    ]
    body = []
    for r in rs:
        f = flat(r)
        cells = []
        for key, _ in cols:
            v = f[key]
            if key == "passed":
                v = f"{v}/{f['cases']}"
            elif key == "verified":
                v = "yes" if v else f"NO ({len(r['mismatches'])})"
            cells.append("-" if v is None else str(v))
        body.append(cells)
    return text_table([h for _, h in cols], body)


def text_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Left-aligned fixed-width columns, two spaces apart, for terminals."""
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=False)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in [head, *body]]
    return "\n".join(lines) + "\n"
