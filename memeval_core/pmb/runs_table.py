"""The PMB runs table: one row per run, its identity and re-derived aggregates (unrounded).

Everything a leaderboard row shows comes from this table (:func:`memeval_core.leaderboard.table_rows`), so a
warm start reads it alone (``pmb-runs.parquet`` in a snapshot or cache entry) and no case. Columns: see
docs/TABLES.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from memeval_core import SCORING_VERSION
from memeval_core.errors import SnapshotError
from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.models import Ingestion, RetrievalSummary
from memeval_core.pmb.pass_types import PASS_TYPES
from memeval_core.pmb.run import PmbRun, RunIdentity

IDENTITY_COLUMNS = tuple(f.name for f in dataclasses.fields(RunIdentity))
"""The run's identity: ``run_id``, ``display_name``, ``provider``, ``benchmark``, ``source``, ``sha256``."""

_LAYOUT_KEY, _LAYOUT = "memeval.runs_table", "3"
_SCORING_KEY = "memeval.scoring_version"

_CATEGORY = pa.struct(
    [("category", pa.string()), ("cases", pa.int64()), ("passed", pa.int64()),
     ("mean_precision", pa.float64()), ("mean_recall", pa.float64())]
)  # fmt: skip
_CATEGORY_FIELDS = tuple(field.name for field in _CATEGORY)

RUNS_SCHEMA = pa.schema(
    [
        *((name, pa.string()) for name in IDENTITY_COLUMNS),
        ("cases", pa.int64()),
        ("passed", pa.int64()),
        *((name, pa.int64()) for name in PASS_TYPES),
        ("mean_precision", pa.float64()),
        ("mean_recall", pa.float64()),
        ("mean_drift", pa.float64()),
        ("latency_count", pa.int64()),
        ("latency_mean_ms", pa.float64()),
        ("latency_p50_ms", pa.float64()),
        ("latency_p95_ms", pa.float64()),
        ("categories", pa.list_(_CATEGORY)),
        ("ingestion_total_ms", pa.float64()),
        ("ingestion_beliefs", pa.int64()),
        ("mismatches", pa.list_(pa.string())),
        ("provenance", pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))),
        ("extra_fields", pa.list_(pa.string())),
        ("stated", pa.string()),
        ("ingestion", pa.string()),
    ],
    metadata={_LAYOUT_KEY: _LAYOUT, _SCORING_KEY: SCORING_VERSION},
)
"""The table's schema, in column order; its metadata names the layout and the scoring code (:func:`is_current`)."""

REQUIRED = (
    *IDENTITY_COLUMNS,
    "cases",
    "passed",
    *PASS_TYPES,
    "latency_count",
    "categories",
    "mismatches",
    "provenance",
    "extra_fields",
    "stated",
)
"""Columns no row may leave null (the others are null where a run has no such value)."""

DETAIL_COLUMNS = ("extra_fields", "stated", "ingestion")
"""What only a page about one run needs: a header read (:data:`HEADER_COLUMNS`) leaves them out."""
HEADER_COLUMNS = tuple(name for name in RUNS_SCHEMA.names if name not in DETAIL_COLUMNS)
"""Every column a leaderboard row needs."""
ROW_GROUP_RUNS = 512
"""Runs per Parquet row group: reading one run's details decodes this many rows, not the whole table."""


def ingestion_beliefs(run: PmbRun) -> int | None:
    """Beliefs the run's ingestion covered: its per-belief timings, else the count it states; None without one."""
    ing = run.ingestion
    if ing is None:
        return None
    return len(ing.per_belief) if ing.per_belief else ing.belief_count


def row_of(run: PmbRun) -> dict[str, Any]:
    """The runs-table row of one run as Python values: its :data:`HEADER_COLUMNS` (see :func:`details_of`)."""
    a = run.aggregate
    return {
        **{name: getattr(run.identity, name) for name in IDENTITY_COLUMNS},
        "cases": a.cases,
        "passed": a.passed,
        **{name: a.pass_types[name] for name in PASS_TYPES},
        "mean_precision": a.mean_precision,
        "mean_recall": a.mean_recall,
        "mean_drift": a.mean_drift,
        "latency_count": a.latency.count,
        "latency_mean_ms": a.latency.mean_ms,
        "latency_p50_ms": a.latency.p50_ms,
        "latency_p95_ms": a.latency.p95_ms,
        "categories": [{name: getattr(c, name) for name in _CATEGORY_FIELDS} for c in a.categories],
        "ingestion_total_ms": run.ingestion_total_ms,
        "ingestion_beliefs": ingestion_beliefs(run),
        "mismatches": list(run.mismatches),
        "provenance": [{"key": k, "value": v} for k, v in run.provenance],
    }


def details_of(run: PmbRun) -> dict[str, Any]:
    """The :data:`DETAIL_COLUMNS` of one run: stated aggregates and ingestion as JSON in the harness's spelling."""
    ingestion = None if run.ingestion is None else run.ingestion.model_dump_json(by_alias=True)
    return {
        "extra_fields": list(run.extra_fields),
        "stated": run.stated.model_dump_json(by_alias=True),
        "ingestion": ingestion,
    }


def runs_table(runs: Sequence[PmbRun]) -> pa.Table:
    """The runs table of ``runs``, one row each in their order (:data:`RUNS_SCHEMA`)."""
    return pa.Table.from_pylist([{**row_of(r), **details_of(r)} for r in runs], schema=RUNS_SCHEMA)


def run_from(header: dict[str, Any], details: dict[str, Any], cases: CaseTable) -> PmbRun:
    """The run a row of the table (``header`` and ``details`` as Python values) and its cases describe."""
    ingestion = details["ingestion"]
    run = PmbRun.from_table(
        identity=RunIdentity(**{name: header[name] for name in IDENTITY_COLUMNS}),
        table=cases,
        stated=RetrievalSummary.model_validate_json(details["stated"]),
        ingestion=None if ingestion is None else Ingestion.model_validate_json(ingestion),
        mismatches=tuple(header["mismatches"]),
        extra_fields=tuple(details["extra_fields"]),
    )
    return dataclasses.replace(run, provenance=tuple((p["key"], p["value"]) for p in header["provenance"]))


def is_current(schema: pa.Schema) -> bool:
    """True when a table of ``schema`` was written in this layout by this scoring code (else its numbers may be
    stale)."""
    meta = schema.metadata or {}
    return meta.get(_LAYOUT_KEY.encode()) == _LAYOUT.encode() and meta.get(_SCORING_KEY.encode()) == (
        SCORING_VERSION.encode()
    )


def checked(table: pa.Table, path: Path) -> pa.Table:
    """``table`` (all columns, or :data:`HEADER_COLUMNS`) as :data:`RUNS_SCHEMA` has them, or ``ValueError`` naming
    ``path`` and the column that is wrong."""
    if table.schema.names not in (RUNS_SCHEMA.names, list(HEADER_COLUMNS)):
        raise SnapshotError(f"{path}: the columns are not those of this memeval's runs table; export again")
    schema = pa.schema([RUNS_SCHEMA.field(name) for name in table.schema.names], metadata=RUNS_SCHEMA.metadata)
    try:
        # Parquet names list items ``element``: cast back to the schema (same values).
        table = table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SnapshotError(f"{path}: a column does not have the runs table's type ({exc}); export again") from exc
    for name in (name for name in REQUIRED if name in schema.names):
        if table[name].null_count:
            raise SnapshotError(f"{path}: column {name!r} is empty in {table[name].null_count} row(s); export again")
    for field in schema:
        if pa.types.is_floating(field.type) and pc.any(pc.is_nan(table[field.name])).as_py():
            raise SnapshotError(f"{path}: column {field.name!r} holds NaN, which no run can have; export again")
    return table
