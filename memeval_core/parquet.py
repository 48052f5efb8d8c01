"""How memeval writes and reads Parquet: one layout for the cache, the snapshot and the export's details.

zstd compression, row groups of :data:`ROW_GROUP_ROWS` rows with column statistics, so that a reader
that wants a few runs (``run_id`` filters, see docs/ENGINE.md) skips the row groups of the others instead
of decoding the whole file. Writing is deterministic: equal tables give equal bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 65_536
"""Rows per row group: small enough for filtered reads to skip most of a large file."""


def write(table: pa.Table, path: Path) -> None:
    """Write ``table`` to ``path`` in memeval's layout."""
    pq.write_table(table, path, compression="zstd", write_statistics=True, row_group_size=ROW_GROUP_ROWS)


def read(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """The table in ``path`` (only ``columns`` when given), read with the Parquet reader alone.

    ``pyarrow.parquet.ParquetFile`` rather than ``read_table``: the latter imports pyarrow's dataset
    layer, which costs more than reading a runs table.
    """
    with pq.ParquetFile(path) as f:
        return f.read(columns=None if columns is None else list(columns))
