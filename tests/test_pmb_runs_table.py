"""The PMB runs table: written with every snapshot, read alone for the leaderboard, refused when malformed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memeval_core import leaderboard
from memeval_core.errors import SnapshotError
from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.runs_table import RUNS_SCHEMA, runs_table
from memeval_core.pmb.snapshot import RUNS_TABLE_FILE, read_runs_table, write_snapshot
from tests import _pmb_oracle as oracle
from tests._data import PMB_DIR, PROJECT, require


@pytest.fixture(scope="module")
def load() -> PmbLoad:
    return load_pmb(require(PMB_DIR))


@pytest.fixture
def snap(tmp_path: Path, load: PmbLoad) -> Path:
    write_snapshot(load, tmp_path / "snap")
    return tmp_path / "snap"


def test_the_runs_table_alone_gives_every_leaderboard_row(snap: Path, load: PmbLoad) -> None:
    table = read_runs_table(snap)
    assert table.num_rows == len(load.runs)
    assert leaderboard.table_rows(table) == oracle.rows(load.runs)
    for benchmark in ("pmb-single-turn", "pmb-session"):
        assert leaderboard.table_rows(table, benchmark) == oracle.rows(load.runs, benchmark)


def _rewrite(snap: Path, table: pa.Table) -> None:
    pq.write_table(table, snap / RUNS_TABLE_FILE)


def test_a_table_of_other_scoring_code_is_rebuilt_from_the_cases(snap: Path, load: PmbLoad) -> None:
    stale = runs_table(load.runs)
    stale = stale.set_column(stale.schema.get_field_index("passed"), "passed", pa.array([0] * stale.num_rows))
    _rewrite(snap, stale.replace_schema_metadata({b"memeval.runs_table": b"1", b"memeval.scoring_version": b"old"}))
    assert leaderboard.table_rows(read_runs_table(snap)) == oracle.rows(load.runs)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda t: t.drop_columns(["mismatches"]), "the columns are not those"),
        (lambda t: t.set_column(0, "run_id", pa.array([None] * t.num_rows, pa.string())), "'run_id' is empty"),
        (
            lambda t: t.set_column(
                t.schema.get_field_index("mean_recall"), "mean_recall", pa.array([float("nan")] * t.num_rows)
            ),
            "'mean_recall' holds NaN",
        ),
        (
            lambda t: t.set_column(t.schema.get_field_index("cases"), "cases", pa.array(["x"] * t.num_rows)),
            "does not have the runs table's type",
        ),
    ],
)
def test_a_malformed_table_is_refused_naming_file_and_column(
    snap: Path, load: PmbLoad, damage: Callable[[pa.Table], pa.Table], message: str
) -> None:
    _rewrite(snap, damage(runs_table(load.runs)).replace_schema_metadata(RUNS_SCHEMA.metadata))
    with pytest.raises(SnapshotError, match=message) as info:
        read_runs_table(snap)
    assert str(snap / RUNS_TABLE_FILE) in str(info.value)


def test_an_unreadable_table_is_one_sentence_on_the_command_line(snap: Path) -> None:
    (snap / RUNS_TABLE_FILE).write_bytes(b"not parquet")
    env = {**os.environ, "MEMEVAL_CACHE_DIR": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "memeval_core", "leaderboard", "--results", str(snap), "--kind", "pmb"],
        cwd=PROJECT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"error: {snap / RUNS_TABLE_FILE}: not a readable Parquet file" in done.stderr
