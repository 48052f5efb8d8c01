"""memeval's Parquet layout: deterministic bytes, row groups with statistics that a run filter can skip by."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from memeval_core import parquet


def _table(n: int) -> pa.Table:
    return pa.table({"run_id": [f"run-{i // 1000:05d}" for i in range(n)], "score": [i % 7 / 7 for i in range(n)]})


def test_equal_tables_give_equal_bytes_and_read_back_equal(tmp_path: Path) -> None:
    table = _table(2_000)
    parquet.write(table, tmp_path / "a.parquet")
    parquet.write(table, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert pq.read_table(tmp_path / "a.parquet").equals(table)


def test_row_groups_carry_statistics_so_a_run_filter_skips_the_others(tmp_path: Path) -> None:
    table = _table(3 * parquet.ROW_GROUP_ROWS)
    parquet.write(table, tmp_path / "t.parquet")
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert meta.num_row_groups == 3
    stats = meta.row_group(1).column(0).statistics
    assert stats is not None and stats.has_min_max and stats.min <= "run-00100" <= stats.max
    fragment = next(iter(ds.dataset(tmp_path / "t.parquet").get_fragments()))
    wanted = ds.field("run_id") == "run-00001"
    assert len(fragment.split_by_row_group(wanted)) == 1  # the other two groups are skipped unread
    assert ds.dataset(tmp_path / "t.parquet").to_table(filter=wanted).num_rows == 1000
