"""How memeval writes and reads Parquet: one layout for the cache, the snapshot and the export's details.

zstd compression, row groups of :data:`ROW_GROUP_ROWS` rows with column statistics, so that a reader
that wants a few runs (``run_id`` filters, see docs/ENGINE.md) skips the row groups of the others instead
of decoding the whole file. Writing is deterministic: equal tables give equal bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from memeval_core.errors import SnapshotError

ROW_GROUP_ROWS = 65_536
"""Rows per row group: small enough for filtered reads to skip most of a large file."""


def write(table: pa.Table, path: Path, row_group_rows: int | None = None) -> None:
    """Write ``table`` to ``path`` in memeval's layout (row groups of ``row_group_rows`` rows, by default
    :data:`ROW_GROUP_ROWS`). The writer's page breaks follow the columns' chunks, so equal rows give equal bytes
    only when they come in equal chunks (:func:`write_batches` writes a table made in pieces as one chunk)."""
    rows = ROW_GROUP_ROWS if row_group_rows is None else row_group_rows
    pq.write_table(table, path, compression="zstd", write_statistics=True, row_group_size=rows)


def write_batches(tables: Iterable[pa.Table], schema: pa.Schema, path: Path, row_group_rows: int | None = None) -> None:
    """:func:`write` of ``tables`` (each of ``schema``) one after the other, as one file, holding little more
    than one row group of them at a time: a large table can be written while it is made, batch by batch.

    Every row group is full but the last, and goes to the writer as one chunk per column (chunk borders would move
    the writer's page breaks), so the file is that of pyarrow's ``write_table`` of the whole table in one chunk.
    """
    rows = ROW_GROUP_ROWS if row_group_rows is None else row_group_rows
    with pq.ParquetWriter(path, schema, compression="zstd", write_statistics=True) as writer:
        pending = schema.empty_table()
        written = 0
        for table in tables:
            pending = pa.concat_tables([pending, table])
            while pending.num_rows >= rows:
                # One chunk per column, as write() hands the writer: chunk borders would move its page breaks.
                writer.write_table(pending.slice(0, rows).combine_chunks(), row_group_size=rows)
                pending = pending.slice(rows)
                written += 1
        if pending.num_rows or not written:  # as write(): an empty table is one empty row group
            writer.write_table(pending.combine_chunks(), row_group_size=rows)


def read(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """The table in ``path`` (only ``columns`` when given), read with the Parquet reader alone.

    ``pyarrow.parquet.ParquetFile`` rather than ``read_table``: the latter imports pyarrow's dataset
    layer, which costs more than reading a runs table.
    """
    with pq.ParquetFile(path) as f:
        return f.read(columns=None if columns is None else list(columns))


def schema(path: Path) -> pa.Schema:
    """The Arrow schema of the table in ``path`` (with its metadata), read from the footer alone."""
    with pq.ParquetFile(path) as f:
        return f.schema_arrow


def run_spans(path: Path, column: str = "run_id") -> dict[str, tuple[int, int]]:
    """:func:`spans` of ``column`` in the file ``path``, reading that one column only (a run's id repeats, so it
    is stored in a few bytes per run)."""
    return spans(read(path, [column]).column(column), f"{path}: the rows of {column}")


def spans(values: pa.ChunkedArray, what: str) -> dict[str, tuple[int, int]]:
    """Each value's rows ``[start, stop)``, for a column that holds each value's rows together.
    :class:`SnapshotError` (``what`` + the value + "are not together") when a value's rows are apart."""
    runs = pc.run_end_encode(values.combine_chunks())
    ends = runs.run_ends.to_pylist()
    found: dict[str, tuple[int, int]] = {}
    for value, start, stop in zip(runs.values.to_pylist(), [0, *ends], ends, strict=False):
        if value in found:
            raise SnapshotError(f"{what} {value!r} are not together")
        found[value] = (start, stop)
    return found


def read_spans(path: Path, spans: Sequence[tuple[int, int]], columns: Sequence[str] | None = None) -> list[pa.Table]:
    """Rows ``[start, stop)`` of the table in ``path`` for each span, as tables of their own, in the order given.

    Only the row groups holding the rows are decoded, the spans taken in file order (the groups of the span
    before are kept until a span needs others), so a row group is decoded once unless spans straddle it.
    Each table is a copy of its rows: a slice would keep every row group it was cut from alive for as long
    as the table lives.
    """
    with pq.ParquetFile(path) as f:
        names = None if columns is None else list(columns)
        empty = f.schema_arrow.empty_table() if names is None else f.schema_arrow.empty_table().select(names)
        sizes = [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)]
        firsts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))  # first row of each group, then the end
        held: list[int] = []
        decoded = empty
        out: dict[int, pa.Table] = {}
        for n in sorted(range(len(spans)), key=lambda n: spans[n]):  # file order: each row group decoded once
            start, stop = spans[n]
            lo = max(int(np.searchsorted(firsts, start, side="right")) - 1, 0)
            groups = list(range(lo, int(np.searchsorted(firsts, stop, side="left")))) if stop > start else []
            if not groups:
                out[n] = empty
                continue
            if groups != held:
                held, decoded = groups, f.read_row_groups(groups, columns=names)
            offset = int(firsts[groups[0]])
            out[n] = decoded.take(np.arange(start - offset, stop - offset))
        return [out[n] for n in range(len(spans))]


def rows_equal(table: pa.Table, equal: Mapping[str, object]) -> pa.ChunkedArray:
    """True for the rows of ``table`` whose columns ``equal`` hold the values given (None matches null only)."""
    masks = [pc.is_null(table[k]) if v is None else pc.equal(table[k], v) for k, v in equal.items()]
    return functools.reduce(pc.and_, masks).fill_null(False)


def read_where(path: Path, equal: Mapping[str, object]) -> pa.Table:
    """The rows of the table in ``path`` whose columns ``equal`` hold the values given (None: null), read one row
    group at a time: memory holds one decoded row group and the rows kept, whatever the size of the file."""
    with pq.ParquetFile(path) as f:
        kept = []
        for i in range(f.metadata.num_row_groups):
            mask = rows_equal(f.read_row_group(i, columns=list(equal)), equal)
            if pc.any(mask).as_py():
                kept.append(f.read_row_group(i).filter(mask))
        return pa.concat_tables(kept) if kept else f.schema_arrow.empty_table()
