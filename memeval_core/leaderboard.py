"""Leaderboard rows: one per run, every number re-derived from per-case data, with its verification.

Rows are plain dicts with the keys of :data:`COLUMNS` so that the CLI, the app and the exports
all show exactly the same thing. Numbers are rounded by :mod:`memeval_core.rounding`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from memeval_core import csvsafe
from memeval_core.pmb.pass_types import PASS_TYPES
from memeval_core.pmb.run import Benchmark
from memeval_core.rounding import MS_DECIMALS, RATIO_DECIMALS

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


def sort_key(r: dict[str, Any]) -> tuple[Any, ...]:
    """Rank order within a benchmark: active passes first (the only passes that show retrieval)."""
    return (
        -r["pass_types"]["active_retrieval"],
        -r["passed"],
        r["mean_drift"] if r["mean_drift"] is not None else 0.0,
        -(r["mean_precision"] or 0.0),
        r["display_name"],
    )


_ROW_INPUTS = (
    "run_id", "display_name", "provider", "benchmark", "cases", "passed", *PASS_TYPES, "mean_precision",
    "mean_recall", "mean_drift", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "ingestion_total_ms",
    "mismatches",
)  # fmt: skip
"""The runs-table columns a leaderboard row reads (not the categories or provenance)."""


RANK_ORDER: tuple[tuple[str, str], ...] = (
    ("later_benchmark", "ascending"),  # single-turn runs first
    ("active_retrieval", "descending"),  # -r["pass_types"]["active_retrieval"]
    ("passed", "descending"),  # -r["passed"]
    ("drift_or_zero", "ascending"),  # r["mean_drift"], 0.0 when None
    ("precision_or_zero", "descending"),  # -(r["mean_precision"] or 0.0)
    ("display_name", "ascending"),  # r["display_name"]
)
"""Rank order as sort keys over the columns of :func:`_rank_inputs`: single-turn runs first, then :func:`sort_key`
(the comments give its terms), in one stable sort: ties keep the table's order, as Python's ``sorted`` keeps the
list's (tests/_pmb_oracle.py ranks rows that way, one at a time)."""

ROW_BATCH = 250
"""Rows converted to Python values at a time by :func:`row_batches`."""


def _js_round(values: pa.ChunkedArray, decimals: int) -> pa.ChunkedArray:
    """:func:`memeval_core.rounding.js_round` of every value, nulls kept: ``floor(x * 10**d + 0.5) / 10**d``, the
    same IEEE operations in the same order, so the same values bit for bit (files state no duration above
    :data:`memeval_core.rounding.MAX_MS`, so ``x * 10**d`` stays finite)."""
    scale = 10.0**decimals
    return pc.divide(pc.floor(pc.add(pc.multiply(values, scale), 0.5)), scale)


def _row_columns(table: pa.Table) -> pa.Table:
    """The columns of :data:`_ROW_INPUTS` with each number as a leaderboard row states it (ratios and durations
    rounded by :mod:`memeval_core.rounding`; drift of session runs only)."""
    columns = {name: table[name] for name in _ROW_INPUTS}
    for name in ("mean_precision", "mean_recall"):
        columns[name] = _js_round(table[name], RATIO_DECIMALS)
    for name in ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "ingestion_total_ms"):
        columns[name] = _js_round(table[name], MS_DECIMALS)
    columns["mean_drift"] = _session_drift(table)
    return pa.table(columns)


def _session_drift(table: pa.Table) -> pa.ChunkedArray:
    """The mean drift of every row as a leaderboard shows it: rounded for session runs, null for the others."""
    session = pc.equal(table["benchmark"], "pmb-session")
    return pc.if_else(session, _js_round(table["mean_drift"], RATIO_DECIMALS), pa.scalar(None, pa.float64()))


def _rank_inputs(table: pa.Table) -> pa.Table:
    """The columns :data:`RANK_ORDER` sorts, from a runs table's (rounded as :func:`_row_columns` rounds them)."""
    return pa.table(
        {
            "later_benchmark": pc.not_equal(table["benchmark"], "pmb-single-turn"),
            "active_retrieval": table["active_retrieval"],
            "passed": table["passed"],
            "drift_or_zero": pc.fill_null(_session_drift(table), 0.0),
            "precision_or_zero": pc.fill_null(_js_round(table["mean_precision"], RATIO_DECIMALS), 0.0),
            "display_name": table["display_name"],
        }
    )


def rank_order(table: pa.Table, benchmark: Benchmark | None = None) -> pa.Array:
    """Positions of a runs table's rows in rank order (:func:`sort_key`), of one benchmark's runs when one is
    given: ``table.select(columns).take(rank_order(table))`` is a board of just those columns."""
    order = pc.sort_indices(_rank_inputs(table), sort_keys=RANK_ORDER)
    if benchmark is None:
        return order
    return pc.filter(order, pc.equal(pc.take(table["benchmark"], order), benchmark))


def _batch_rows(shown: pa.Table) -> list[dict[str, Any]]:
    """The leaderboard row (keys of :data:`COLUMNS`) of every row of :func:`_row_columns`'s, converted column by
    column: pass types as one dict, ``verified`` when there is no mismatch."""
    values = {name: shown[name].to_pylist() for name in shown.column_names}
    counts = zip(*(values[name] for name in PASS_TYPES), strict=True)
    values["pass_types"] = [dict(zip(PASS_TYPES, row, strict=True)) for row in counts]
    values["verified"] = [not mismatches for mismatches in values["mismatches"]]
    by_row = zip(*(values[name] for name in COLUMNS), strict=True)
    return [dict(zip(COLUMNS, row, strict=True)) for row in by_row]


def row_batches(table: pa.Table, benchmark: Benchmark | None = None) -> Iterator[list[dict[str, Any]]]:
    """:func:`table_rows` in batches of :data:`ROW_BATCH`: one batch at a time is held as Python values, so
    printing every row of a large table takes little memory. Ranked and rounded in Arrow; tests/_pmb_oracle.py
    holds the same rules row by row."""
    shown = _row_columns(table)
    order = rank_order(table, benchmark)
    for start in range(0, len(order), ROW_BATCH):
        yield _batch_rows(shown.take(order.slice(start, ROW_BATCH)))


def table_rows(table: pa.Table, benchmark: Benchmark | None = None) -> list[dict[str, Any]]:
    """Leaderboard rows of a runs table (:mod:`memeval_core.pmb.runs_table`), best first, optionally for one
    benchmark. Only the columns a row shows are converted to Python values."""
    return [r for batch in row_batches(table, benchmark) for r in batch]


def flat(r: dict[str, Any]) -> dict[str, Any]:
    """A row with pass types as three columns and mismatches joined, for tables and CSV."""
    out = {k: v for k, v in r.items() if k not in ("pass_types", "mismatches")}
    for k, v in r["pass_types"].items():
        out[k] = v
    out["mismatches"] = "; ".join(r["mismatches"])
    order = [c for c in COLUMNS if c != "pass_types"]
    order[order.index("passed") + 1 : order.index("passed") + 1] = list(r["pass_types"])
    return {k: out[k] for k in order}


def json_chunks(batches: Iterable[Sequence[dict[str, Any]]]) -> Iterator[bytes]:
    """UTF-8 JSON of the rows of ``batches``, a batch at a time, so rows can be printed as they are made: key order
    kept, two-space indent (the text ``json.dumps(indent=2, ensure_ascii=False)`` gives for these rows, and a final
    line break).

    orjson, because the standard library's encoder is pure Python once it indents: thousands of rows cost
    more to print than to load. Rows hold no NaN: reports are validated at the boundary and a runs table read
    from disk is checked (:func:`memeval_core.pmb.runs_table.checked`).

    A batch's indented text is that of its rows inside the whole list: ``[`` + a line break, the rows
    separated by ``,`` + a line break, a line break + ``]``. Each batch's text without its brackets is
    therefore a piece of the whole, the pieces joined by commas."""
    first = True
    for batch in batches:
        if batch:
            text = orjson.dumps(batch, option=orjson.OPT_INDENT_2)
            yield (b"[" if first else b",") + text.removeprefix(b"[").removesuffix(b"\n]")
            first = False
    yield b"[]\n" if first else b"\n]\n"


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
