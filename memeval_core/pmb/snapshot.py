"""A self-contained snapshot of loaded PMB runs: what an export ships and what a cache stores.

Three files reconstruct a :class:`PmbLoad` exactly, without the raw reports:

- ``pmb-fixture.json``: the fixture (cases, session cases, beliefs) in the harness's own spelling;
- ``pmb-runs.json``: per run its identity, stated aggregates, ingestion, mismatches;
- ``pmb-cases.parquet``: one row per re-derived case or turn (``run_id`` first), ids as list columns.

A fourth, ``pmb-runs.parquet`` (the runs table, :func:`runs_table`), holds one row per run with its
re-derived aggregates: a header-only read (:func:`read_runs_table`) gives every leaderboard row from it alone,
without reading a case. Snapshots written before it existed, or by other scoring code, are read whole instead.

Writing is deterministic (sorted keys, fixed row order, no timestamps) so equal inputs give
byte-identical files.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from memeval_core import parquet
from memeval_core.errors import IngestError, SnapshotError
from memeval_core.pmb.case_table import CASE_SCHEMA, CaseTable
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.pmb.models import Belief, Ingestion, RetrievalCase, RetrievalSummary, SessionCase
from memeval_core.pmb.run import PmbRun, RunIdentity, display_names, load_order
from memeval_core.pmb.runs_table import (
    DETAIL_COLUMNS,
    HEADER_COLUMNS,
    IDENTITY_COLUMNS,
    ROW_GROUP_RUNS,
    RUNS_SCHEMA,
    checked,
    is_current,
    run_from,
    runs_table,
)

FIXTURE_FILE = "pmb-fixture.json"
RUNS_FILE = "pmb-runs.json"
CASES_FILE = "pmb-cases.parquet"
RUNS_TABLE_FILE = "pmb-runs.parquet"
SNAPSHOT_VERSION = 1
CASE_ROW_GROUP_ROWS = 8192
"""Case rows per Parquet row group: reading one run's cases decodes about a hundred runs' rows, not all."""


def _dump_json(obj: Any) -> bytes:
    return (json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode()


CASES_SCHEMA = pa.schema([("run_id", pa.string()), *CASE_SCHEMA])
"""The cases table's columns: ``run_id``, then every :class:`ScoredCase` field (:data:`CASE_SCHEMA`)."""

RUN_BATCH = 256
"""Runs whose cases are held as one Arrow table at a time while a snapshot is written."""


def cases_table(runs: Sequence[PmbRun]) -> pa.Table:
    """All re-derived cases of all runs as one Arrow table (``run_id`` + every :class:`ScoredCase` field)."""
    if not runs:
        return CASES_SCHEMA.empty_table()
    table = pa.Table.from_batches([r.table.arrow for r in runs], schema=CASE_SCHEMA)
    which_run = pa.array(np.repeat(np.arange(len(runs)), [r.table.n for r in runs]))
    run_ids = pa.array([r.identity.run_id for r in runs], pa.string()).take(which_run)
    return table.add_column(0, CASES_SCHEMA.field("run_id"), run_ids)


def _batches(runs: Iterable[PmbRun]) -> Iterator[list[PmbRun]]:
    """:data:`RUN_BATCH` runs at a time."""
    it = iter(runs)
    while batch := list(itertools.islice(it, RUN_BATCH)):
        yield batch


def _run_doc(row: dict[str, Any]) -> dict[str, Any]:
    """A run's entry in the runs document, from its row of the runs table."""
    return {
        "identity": {name: row[name] for name in IDENTITY_COLUMNS},
        "stated": orjson.loads(row["stated"]),
        "ingestion": None if row["ingestion"] is None else orjson.loads(row["ingestion"]),
        "mismatches": row["mismatches"],
        "extra_fields": row["extra_fields"],
        "provenance": [[pair["key"], pair["value"]] for pair in row["provenance"]],
    }


def _runs_json(table: pa.Table) -> bytes:
    """The runs document of a runs table, one run per line, so that a person can still read and compare it run
    by run; written by the standard library's C encoder (an indented dump runs in Python: seconds at thousands
    of runs)."""
    lines = [
        json.dumps(_run_doc(row), sort_keys=True, ensure_ascii=False, allow_nan=False)
        for batch in table.to_batches(max_chunksize=RUN_BATCH)
        for row in batch.to_pylist()
    ]
    body = "[\n" + ",\n".join(lines) + "\n]" if lines else "[]"
    return f'{{"runs": {body}, "snapshot_version": {SNAPSHOT_VERSION}}}\n'.encode()


def _arranged(table: pa.Table) -> pa.Table:
    """The runs table in load order (:func:`load_order`), each run under its display name (:func:`display_names`)."""
    identities = [RunIdentity(**row) for row in table.select(IDENTITY_COLUMNS).to_pylist()]
    order = sorted(range(len(identities)), key=lambda i: load_order(identities[i]))
    names = display_names([identities[i] for i in order])
    table = table.take(pa.array(order, pa.int64()))
    column = table.schema.get_field_index("display_name")
    return table.set_column(column, table.schema.field(column), pa.array(names, pa.string()))


def write_runs(fixture: PmbFixture, runs: Iterable[PmbRun], out: Path, *, arrange: bool = False) -> list[Path]:
    """Write a snapshot of ``runs`` into ``out`` while they are made, holding :data:`RUN_BATCH` runs at a time
    (and every run's row of the runs table).

    Cases are written in the order the runs come; the runs document and table list them in that order with
    the names they have, or with ``arrange`` in load order under their display names (runs fresh from the
    reports, see :func:`memeval_core.pmb.ingest.scan_pmb`). Returns the files' paths.
    """
    out.mkdir(parents=True, exist_ok=True)
    fixture_doc = {
        "snapshot_version": SNAPSHOT_VERSION,
        "cases": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in fixture.cases],
        "session_cases": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in fixture.session_cases],
        "beliefs": [b.model_dump(mode="json", by_alias=True) for b in fixture.beliefs],
        "sha256": dict(fixture.sha256),
    }
    paths = [out / FIXTURE_FILE, out / RUNS_FILE, out / CASES_FILE, out / RUNS_TABLE_FILE]
    paths[0].write_bytes(_dump_json(fixture_doc))
    rows = [RUNS_SCHEMA.empty_table()]

    def case_batches() -> Iterator[pa.Table]:
        for batch in _batches(runs):
            rows.append(runs_table(batch))
            yield cases_table(batch)

    parquet.write_batches(case_batches(), CASES_SCHEMA, paths[2], CASE_ROW_GROUP_ROWS)
    table = pa.concat_tables(rows).combine_chunks()
    if arrange:
        table = _arranged(table)
    paths[1].write_bytes(_runs_json(table))
    parquet.write(table, paths[3], ROW_GROUP_RUNS)
    return paths


def write_snapshot(load: PmbLoad, out: Path) -> list[Path]:
    """Write the snapshot files of ``load`` into ``out``; returns their paths."""
    if load.fixture is None:
        raise SnapshotError("a snapshot needs the fixture the runs were scored against")
    return write_runs(load.fixture, load.runs, out)


def has_snapshot(directory: Path) -> bool:
    """True when ``directory`` holds the three snapshot files."""
    return all((directory / f).is_file() for f in (FIXTURE_FILE, RUNS_FILE, CASES_FILE))


def versioned_document(path: Path, version: int = SNAPSHOT_VERSION) -> dict[str, Any]:
    """A JSON document of a snapshot (PMB or QA), checked: an object of layout ``version``. orjson refuses what no
    writer could write back (invalid UTF-8, lone surrogates, NaN); every problem is a :class:`SnapshotError`
    naming the file."""
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise SnapshotError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    if not isinstance(doc, dict):
        raise SnapshotError(f"{path}: expected a JSON object")
    if doc.get("snapshot_version") != version:
        raise SnapshotError(f"{path}: snapshot_version {doc.get('snapshot_version')!r} is not supported")
    return doc


def read_fixture(directory: Path) -> PmbFixture:
    """The fixture a snapshot's runs were scored against."""
    doc = versioned_document(directory / FIXTURE_FILE)
    return PmbFixture(
        cases=tuple(RetrievalCase.model_validate(c) for c in doc["cases"]),
        session_cases=tuple(SessionCase.model_validate(c) for c in doc["session_cases"]),
        beliefs=tuple(Belief.model_validate(b) for b in doc["beliefs"]),
        source=str(directory),
        sha256=doc.get("sha256", {}),
    )


def read_snapshot(directory: Path) -> PmbLoad:
    """Rebuild the :class:`PmbLoad` a snapshot was written from."""
    fixture = read_fixture(directory)
    runs_doc = versioned_document(directory / RUNS_FILE)
    table = parquet.read(directory / CASES_FILE)
    spans = parquet.spans(table.column("run_id"), f"{CASES_FILE}: the rows of run")
    runs = []
    for r in runs_doc["runs"]:
        ident = RunIdentity(**r["identity"])
        lo, hi = spans.get(ident.run_id, (0, 0))
        run = PmbRun.from_table(
            identity=ident,
            table=_cases_of(table.slice(lo, hi - lo), directory),
            stated=RetrievalSummary.model_validate(r["stated"]),
            ingestion=None if r["ingestion"] is None else Ingestion.model_validate(r["ingestion"]),
            mismatches=tuple(r["mismatches"]),
            extra_fields=tuple(r["extra_fields"]),
        )
        runs.append(dataclasses.replace(run, provenance=tuple((k, v) for k, v in r.get("provenance", []))))
    return PmbLoad(tuple(runs), (), fixture, ())


def read_runs_table(directory: Path) -> pa.Table:
    """The runs table's :data:`HEADER_COLUMNS` alone (:mod:`memeval_core.pmb.runs_table`): no fixture, no case.

    A snapshot without it, or whose table another layout or scoring code wrote, is read whole and the table
    made from its runs. ``ValueError`` naming the file and column when the table is unreadable or malformed.
    """
    path = directory / RUNS_TABLE_FILE
    if not path.is_file():
        return runs_table(read_snapshot(directory).runs).select(HEADER_COLUMNS)
    try:
        table = parquet.read(path, HEADER_COLUMNS)
    except (OSError, pa.ArrowException) as exc:
        raise SnapshotError(f"{path}: not a readable Parquet file ({exc}); export again") from exc
    if not is_current(table.schema):
        return runs_table(read_snapshot(directory).runs).select(HEADER_COLUMNS)
    return checked(table, path)


RunsReader = Callable[[Sequence[str]], tuple[PmbRun, ...]]
"""Reads the runs of the given ids, cases included, in that order; ``KeyError`` for an id it does not hold."""
CasesReader = Callable[[Sequence[str], Sequence[str]], pa.Table]
"""``(columns, run_ids)``: those columns of the cases table (:func:`cases_table`) for the cases of those runs."""
CaseReader = Callable[[str, int | None], pa.Table]
"""``(case_id, turn_index)``: every column of the cases table (:func:`cases_table`) for that case (a session turn,
or with None a single-turn case) of every run that reports it."""


def _one_case(case_id: str, turn_index: int | None) -> dict[str, object]:
    """The key columns of one case, for :func:`memeval_core.parquet.read_where`."""
    return {"case_id": case_id, "turn_index": turn_index}


def _runs_rows(table: pa.Table, run_ids: Sequence[str]) -> pa.Table:
    return table.filter(pc.is_in(table["run_id"], value_set=pa.array(list(run_ids), pa.string())))


@dataclass(frozen=True)
class PmbHeaders:
    """A PMB load opened for reading: the runs table's headers and the fixture in memory, whole runs on request."""

    table: pa.Table
    """The runs table's :data:`HEADER_COLUMNS` (every leaderboard row), one row per run in load order."""
    fixture: PmbFixture | None
    """The fixture the runs were scored against; None when no fixture was found (then there is no run)."""
    read_runs: RunsReader
    """Whole runs (cases included) by id."""
    read_cases: CasesReader
    """Some columns of many runs' cases (a page that charts every run of a suite reads only what it draws)."""
    read_case: CaseReader
    """One case of every run (a page that shows one case across every system reads only its rows)."""
    errors: tuple[IngestError, ...] = ()
    """One error per file that could not be loaded."""
    skipped: tuple[str, ...] = ()
    """JSON files that are neither PMB reports nor fixtures."""


def headers_of(load: PmbLoad) -> PmbHeaders:
    """:class:`PmbHeaders` over a load already in memory."""
    by_id = {r.identity.run_id: r for r in load.runs}
    table = runs_table(load.runs).select(HEADER_COLUMNS)

    def read_cases(columns: Sequence[str], run_ids: Sequence[str]) -> pa.Table:
        return cases_table(tuple(by_id[i] for i in run_ids)).select(list(columns))

    def read_case(case_id: str, turn_index: int | None) -> pa.Table:
        cases = cases_table(load.runs)
        return cases.filter(parquet.rows_equal(cases, _one_case(case_id, turn_index)))

    return PmbHeaders(
        table, load.fixture, lambda ids: tuple(by_id[i] for i in ids), read_cases, read_case, load.errors,
        load.skipped,
    )  # fmt: skip


def has_current_runs_table(directory: Path) -> bool:
    """True when the snapshot holds a runs table of this layout and scoring code (else it is read whole)."""
    path = directory / RUNS_TABLE_FILE
    if not path.is_file():
        return False
    try:
        return is_current(parquet.schema(path))
    except (OSError, pa.ArrowException) as exc:
        raise SnapshotError(f"{path}: not a readable Parquet file ({exc}); export again") from exc


def open_snapshot(directory: Path) -> PmbHeaders:
    """A snapshot opened for per-run reads: the runs table's headers now, each run's cases when it is asked for.

    A run costs the Parquet row groups holding its row of the runs table (:data:`ROW_GROUP_RUNS` rows) and its
    cases (:data:`CASE_ROW_GROUP_ROWS` rows), whatever the number of runs. A snapshot without a current runs table
    is read whole.
    """
    if not has_current_runs_table(directory):
        return headers_of(read_snapshot(directory))
    table = read_runs_table(directory)
    rows = {run_id: i for i, run_id in enumerate(table.column("run_id").to_pylist())}

    @functools.cache
    def spans() -> dict[str, tuple[int, int]]:  # read on the first request: a leaderboard never needs it
        return parquet.run_spans(directory / CASES_FILE)

    def read_runs(run_ids: Sequence[str]) -> tuple[PmbRun, ...]:
        at = [rows[i] for i in run_ids]
        details = parquet.read_spans(directory / RUNS_TABLE_FILE, [(n, n + 1) for n in at], DETAIL_COLUMNS)
        cases = parquet.read_spans(directory / CASES_FILE, [spans().get(i, (0, 0)) for i in run_ids])
        return tuple(_run(table, n, d, c, directory) for n, d, c in zip(at, details, cases, strict=True))

    def read_cases(columns: Sequence[str], run_ids: Sequence[str]) -> pa.Table:
        wanted = list(dict.fromkeys(["run_id", *columns]))
        return _runs_rows(parquet.read(directory / CASES_FILE, wanted), run_ids).select(list(columns))

    def read_case(case_id: str, turn_index: int | None) -> pa.Table:
        return parquet.read_where(directory / CASES_FILE, _one_case(case_id, turn_index))

    return PmbHeaders(table, read_fixture(directory), read_runs, read_cases, read_case)


def _run(table: pa.Table, row: int, details: pa.Table, cases: pa.Table, directory: Path) -> PmbRun:
    """Run number ``row`` of the runs table, from its detail columns and its rows of the cases table."""
    header = table.slice(row, 1).to_pylist()[0]
    return run_from(header, details.to_pylist()[0], _cases_of(cases, directory))


def _cases_of(rows: pa.Table, directory: Path) -> CaseTable:
    """A run's rows of the snapshot's cases table; a :class:`SnapshotError` naming the file when they are not of
    its layout (a snapshot may come from anywhere: an export, a Hub dataset)."""
    try:
        return CaseTable.from_arrow(rows)
    except ValueError as exc:
        raise SnapshotError(f"{directory / CASES_FILE}: {exc}; export again") from exc
