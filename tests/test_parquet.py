"""memeval's Parquet layout: deterministic bytes, row groups with statistics that a run filter can skip by."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from memeval_core import parquet


def _pyarrow_write(table: pa.Table, path: Path, row_group_rows: int) -> None:
    """The oracle: pyarrow's own writer, with memeval's options, of the table in one chunk per column."""
    pq.write_table(
        table.combine_chunks(), path, compression="zstd", write_statistics=True, row_group_size=row_group_rows
    )


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


def test_read_rows_decodes_only_the_row_groups_holding_the_rows(tmp_path: Path) -> None:
    table = _table(5_000)
    parquet.write(table, tmp_path / "t.parquet", row_group_rows=700)
    for start, stop in ((0, 1), (690, 710), (1_000, 2_000), (4_999, 5_000), (1_400, 2_800), (3, 3)):
        assert parquet.read_spans(tmp_path / "t.parquet", [(start, stop)])[0].equals(table.slice(start, stop - start))
    assert parquet.read_spans(tmp_path / "t.parquet", [(10, 12)], ["score"])[0].equals(
        table.select(["score"]).slice(10, 2)
    )


def test_run_spans_give_each_runs_rows_and_refuse_scattered_runs(tmp_path: Path) -> None:
    table = _table(3_500)
    parquet.write(table, tmp_path / "t.parquet", row_group_rows=600)
    spans = parquet.run_spans(tmp_path / "t.parquet")
    assert spans == {f"run-{i:05d}": (1000 * i, min(1000 * (i + 1), 3_500)) for i in range(4)}
    scattered = pa.table({"run_id": ["a", "a", "b", "a"]})
    parquet.write(scattered, tmp_path / "s.parquet")
    with pytest.raises(ValueError, match=r"s\.parquet: the rows of run_id 'a' are not together"):
        parquet.run_spans(tmp_path / "s.parquet")


def test_a_span_read_owns_only_its_rows(tmp_path: Path) -> None:
    # A slice of the decoded row group would keep all of it (10 MB) alive for as long as the 10 rows live.
    parquet.write(pa.table({"s": ["x" * 100] * 100_000}), tmp_path / "t.parquet", row_group_rows=100_000)
    rows = parquet.read_spans(tmp_path / "t.parquet", [(10, 20)])[0]
    assert rows.num_rows == 10
    # The buffers the rows hold, counted whole (a slice would count the row group it was cut from): a property
    # of the table itself, which other threads of the test process allocating meanwhile cannot change.
    assert rows.get_total_buffer_size() < 100_000


def test_spans_read_together_equal_spans_read_alone(tmp_path: Path) -> None:
    table = pa.table({"x": list(range(1_000)), "s": [str(i) for i in range(1_000)]})
    parquet.write(table, tmp_path / "t.parquet", row_group_rows=64)
    spans = [(0, 0), (0, 1), (63, 65), (64, 128), (999, 1_000), (0, 1_000), (10, 20), (5, 70), (1_000, 1_000)]
    for order in (spans, spans[::-1]):  # any order in, the same order out
        for (start, stop), got in zip(order, parquet.read_spans(tmp_path / "t.parquet", order), strict=True):
            assert got.equals(table.slice(start, stop - start)), (start, stop)


@pytest.mark.parametrize("sizes", [[], [0], [5], [3, 4, 10, 1], [7, 7, 7, 7], [100]])
def test_writing_in_batches_gives_the_file_of_the_whole_table(tmp_path: Path, sizes: list[int]) -> None:
    whole = _table(sum(sizes))
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    batches = [whole.slice(start, n) for start, n in zip(starts, sizes, strict=True)]
    _pyarrow_write(whole, tmp_path / "whole.parquet", 7)
    parquet.write_batches(batches, whole.schema, tmp_path / "batches.parquet", 7)
    assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "batches.parquet").read_bytes()
    assert pq.ParquetFile(tmp_path / "batches.parquet").metadata.num_row_groups == max(1, -(-sum(sizes) // 7))


def test_batches_of_long_text_give_the_pages_of_the_whole_table(tmp_path: Path) -> None:
    # Column chunks above a page (about 1 MiB) are split into pages; batch borders must not move the splits.
    text = pa.array([f"{i:06d}" + "x" * 300 for i in range(4 * 4_000)])
    whole = pa.table({"run_id": pa.array([f"run-{i // 77:05d}" for i in range(len(text))]), "text": text})
    batches = [whole.slice(start, 4_000) for start in range(0, whole.num_rows, 4_000)]
    _pyarrow_write(whole, tmp_path / "whole.parquet", 8_192)
    parquet.write_batches(batches, whole.schema, tmp_path / "batches.parquet", 8_192)
    assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "batches.parquet").read_bytes()


def test_the_pages_follow_the_chunks_so_a_table_made_in_pieces_is_combined_first(tmp_path: Path) -> None:
    # A table put together from many small ones (a run's cases each) gives other bytes than its rows in one chunk:
    # what writes such a table combines its chunks (write_batches, the export's PMB details).
    text = pa.array([f"{i:06d}" + "x" * 300 for i in range(4 * 4_000)])
    whole = pa.table({"n": pa.array(range(len(text))), "text": text})
    chunked = pa.concat_tables([whole.slice(start, 40) for start in range(0, whole.num_rows, 40)])
    _pyarrow_write(whole, tmp_path / "whole.parquet", 8_192)
    parquet.write(chunked, tmp_path / "chunked.parquet", 8_192)
    parquet.write_batches([chunked], chunked.schema, tmp_path / "batches.parquet", 8_192)
    assert (tmp_path / "whole.parquet").read_bytes() != (tmp_path / "chunked.parquet").read_bytes()
    assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "batches.parquet").read_bytes()
