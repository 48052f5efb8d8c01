"""A snapshot reconstructs the loaded runs exactly, and is byte-identical when rewritten."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memeval_core import leaderboard
from memeval_core.errors import SnapshotError
from memeval_core.pmb import snapshot
from memeval_core.pmb.ingest import load_pmb, scan_pmb
from memeval_core.pmb.run import PmbRun
from memeval_core.pmb.runs_table import runs_table
from memeval_core.pmb.snapshot import has_snapshot, open_snapshot, read_snapshot, write_runs, write_snapshot
from tests import _pmb_oracle as oracle
from tests._data import PMB_DIR, require


def test_round_trip_is_exact_and_deterministic(tmp_path: Path) -> None:
    load = load_pmb(require(PMB_DIR))
    paths = write_snapshot(load, tmp_path / "a")
    assert has_snapshot(tmp_path / "a")
    back = read_snapshot(tmp_path / "a")
    assert oracle.rows(back.runs) == oracle.rows(load.runs)
    assert [r.cases for r in back.runs] == [r.cases for r in load.runs]
    assert back.fixture is not None and load.fixture is not None
    assert back.fixture.cases == load.fixture.cases
    assert back.fixture.session_cases == load.fixture.session_cases
    assert back.fixture.category_order == load.fixture.category_order
    write_snapshot(back, tmp_path / "b")
    for p in paths:
        assert (tmp_path / "b" / p.name).read_bytes() == p.read_bytes(), p.name


def test_results_loader_prefers_a_snapshot(tmp_path: Path) -> None:
    from memeval_core.results import load_pmb_results

    load = load_pmb(require(PMB_DIR))
    write_snapshot(load, tmp_path)
    assert oracle.rows(load_pmb_results(tmp_path).runs) == oracle.rows(load.runs)


def _same_run(a: PmbRun, b: PmbRun) -> None:
    assert a.identity == b.identity and a.cases == b.cases and a.aggregate == b.aggregate
    assert (a.stated, a.ingestion, a.mismatches) == (b.stated, b.ingestion, b.mismatches)
    assert (a.extra_fields, a.provenance) == (b.extra_fields, b.provenance)


@pytest.mark.parametrize("rows_per_group", [snapshot.CASE_ROW_GROUP_ROWS, 50])
def test_runs_read_one_at_a_time_equal_the_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows_per_group: int
) -> None:
    # 50 rows per group: most runs straddle two row groups of the cases table, and the runs table has several.
    monkeypatch.setattr(snapshot, "CASE_ROW_GROUP_ROWS", rows_per_group)
    monkeypatch.setattr(snapshot, "ROW_GROUP_RUNS", max(1, rows_per_group // 20))
    load = load_pmb(require(PMB_DIR))
    write_snapshot(load, tmp_path / "a")
    opened = snapshot.open_snapshot(tmp_path / "a")
    assert leaderboard.table_rows(opened.table) == oracle.rows(load.runs)
    assert opened.fixture is not None and load.fixture is not None
    assert opened.fixture.cases == load.fixture.cases
    ids = [r.identity.run_id for r in load.runs]
    for want, got in zip(load.runs, opened.read_runs(ids[::-1])[::-1], strict=True):
        _same_run(want, got)
    with pytest.raises(KeyError):
        opened.read_runs(["no-such-run"])
    columns = ["run_id", "case_id", "turn_index", "passed", "latency_ms"]
    want = snapshot.cases_table(load.runs[2:5]).select(columns)
    assert opened.read_cases(columns, ids[2:5]).equals(want)
    assert snapshot.headers_of(load).read_cases(columns, ids[2:5]).equals(want)
    every = snapshot.cases_table(load.runs).to_pylist()
    for case_id, turn in (("happy-stack-repository-layer", None), ("session-drift-noise-10-turns-implicit-redis", 3)):
        rows = [r for r in every if r["case_id"] == case_id and r["turn_index"] == turn]
        assert rows
        assert opened.read_case(case_id, turn).to_pylist() == rows
        assert snapshot.headers_of(load).read_case(case_id, turn).to_pylist() == rows
    assert opened.read_case("no-such-case", None).num_rows == 0


def test_a_snapshot_without_a_current_runs_table_is_opened_from_a_whole_read(tmp_path: Path) -> None:
    load = load_pmb(require(PMB_DIR))
    write_snapshot(load, tmp_path / "a")
    (tmp_path / "a" / snapshot.RUNS_TABLE_FILE).unlink()
    opened = snapshot.open_snapshot(tmp_path / "a")
    assert leaderboard.table_rows(opened.table) == oracle.rows(load.runs)
    _same_run(opened.read_runs([load.runs[3].identity.run_id])[0], load.runs[3])


def test_cases_written_a_few_runs_at_a_time_are_one_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load = load_pmb(require(PMB_DIR))
    write_snapshot(load, tmp_path / "whole")
    monkeypatch.setattr(snapshot, "RUN_BATCH", 5)  # 24 runs: five batches
    monkeypatch.setattr(snapshot, "CASE_ROW_GROUP_ROWS", 300)  # row groups that span batches
    write_snapshot(load, tmp_path / "batched")
    table = snapshot.parquet.read(tmp_path / "batched" / snapshot.CASES_FILE)
    assert table.equals(snapshot.cases_table(load.runs))
    assert snapshot.parquet.pq.ParquetFile(tmp_path / "batched" / snapshot.CASES_FILE).num_row_groups > 1
    assert [(r.identity, r.cases) for r in read_snapshot(tmp_path / "batched").runs] == [
        (r.identity, r.cases) for r in load.runs
    ]


def test_the_cases_table_holds_every_case_as_the_run_gives_it() -> None:

    load = load_pmb(require(PMB_DIR))
    rows = [
        {"run_id": r.identity.run_id, **{k: list(v) if isinstance(v, tuple) else v for k, v in vars(c).items()}}
        for r in load.runs
        for c in r.cases
    ]
    assert snapshot.cases_table(load.runs).equals(pa.Table.from_pylist(rows, schema=snapshot.CASES_SCHEMA))


@pytest.mark.parametrize("n_runs", [0, 1, 13])
def test_the_runs_file_is_the_runs_document_one_run_per_line(n_runs: int) -> None:
    """The runs document made from the runs table holds what the runs' own models dump, one run per line."""
    import json

    runs = list(load_pmb(require(PMB_DIR)).runs[:n_runs])
    if runs:  # text that JSON must escape, and a number that needs its exponent
        runs[0] = dataclasses.replace(runs[0], mismatches=('quote " and\nbreak', "ünï 1.5e-07"))
    want = [
        {
            "identity": dataclasses.asdict(r.identity),
            "stated": r.stated.model_dump(mode="json", by_alias=True),
            "ingestion": None if r.ingestion is None else r.ingestion.model_dump(mode="json", by_alias=True),
            "mismatches": list(r.mismatches),
            "extra_fields": list(r.extra_fields),
            "provenance": [list(pair) for pair in r.provenance],
        }
        for r in runs
    ]
    text = snapshot._runs_json(runs_table(runs)).decode()
    assert json.loads(text) == {"runs": want, "snapshot_version": snapshot.SNAPSHOT_VERSION}
    assert len(text.splitlines()) == (len(runs) + 2 if runs else 1)


def test_runs_written_as_scored_give_the_loads_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan written run by run (each run with its own strings, a few runs per batch), then put in load order
    and named: the runs document, runs table and fixture of the whole load's snapshot, byte for byte, and the
    same runs and cases read back."""
    root = require(PMB_DIR)
    load = load_pmb(root)
    write_snapshot(load, tmp_path / "load")
    monkeypatch.setattr(snapshot, "RUN_BATCH", 5)
    scan = scan_pmb(root)
    assert scan.fixture is not None
    write_runs(scan.fixture, scan.runs, tmp_path / "scan", arrange=True)
    for name in (snapshot.RUNS_FILE, snapshot.RUNS_TABLE_FILE, snapshot.FIXTURE_FILE):
        assert (tmp_path / "scan" / name).read_bytes() == (tmp_path / "load" / name).read_bytes(), name
    back = read_snapshot(tmp_path / "scan")
    assert [r.identity for r in back.runs] == [r.identity for r in load.runs]
    assert [r.cases for r in back.runs] == [r.cases for r in load.runs]
    assert (tuple(scan.errors), tuple(scan.skipped)) == (load.errors, load.skipped)


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("label", None, "no column 'label'"),
        ("turn_index", pa.float64(), "column 'turn_index' holds double, not int64"),
        ("case_id", pa.large_string(), "column 'case_id' holds large_string, not string"),
    ],
)
def test_a_cases_file_of_another_layout_is_named(tmp_path: Path, column: str, values: Any, message: str) -> None:
    """Cases of another type are refused, not cast (an int64 case id would silently become text)."""
    load = load_pmb(require(PMB_DIR))
    write_snapshot(load, tmp_path)
    path = tmp_path / snapshot.CASES_FILE
    cases = pq.read_table(path)
    at = cases.schema.get_field_index(column)
    cases = cases.remove_column(at) if values is None else cases.set_column(at, column, cases[column].cast(values))
    pq.write_table(cases, path)
    with pytest.raises(SnapshotError, match=f"{snapshot.CASES_FILE}: the cases.* {message}"):
        read_snapshot(tmp_path)
    with pytest.raises(SnapshotError, match=f"{snapshot.CASES_FILE}: the cases.* {message}"):
        open_snapshot(tmp_path).read_runs([load.runs[0].identity.run_id])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text.replace('"tenure"', '"ten\\ud83dure"', 1), "not valid JSON"),
        (lambda text: "[1, 2]", "expected a JSON object"),
    ],
)
def test_a_snapshot_document_no_writer_could_have_written_is_named(tmp_path: Path, edit: Any, message: str) -> None:
    """A snapshot may come from anywhere (an export, a Hub dataset): a lone surrogate escape or another shape is
    a SnapshotError naming the file, not a crash when the runs are written again."""
    write_snapshot(load_pmb(require(PMB_DIR)), tmp_path)
    runs = tmp_path / snapshot.RUNS_FILE
    runs.write_text(edit(runs.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(SnapshotError, match=f"{snapshot.RUNS_FILE}: {message}"):
        read_snapshot(tmp_path)
