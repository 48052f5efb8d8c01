"""A run's re-scored cases as one Arrow record batch: a row per case, a column per :class:`ScoredCase` field.

The columns are those of the cases table a snapshot writes (``pmb-cases.parquet``, :data:`CASE_SCHEMA` after its
``run_id``): a run read back from a snapshot is its rows of that file, and a snapshot's cases table is the runs'
batches one after the other. Id lists are list columns and an absent value is a null.

Aggregations read whole columns (:meth:`CaseTable.column`, :meth:`CaseTable.present`); :meth:`CaseTable.cases`
and :meth:`CaseTable.case` rebuild :class:`ScoredCase` objects for the cases a view shows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from memeval_core.pmb.rescore import ScoredCase, ScoredColumns

_TYPES: dict[str, pa.DataType] = {
    "str": pa.string(),
    "tuple[str, ...]": pa.list_(pa.string()),
    "tuple[str, ...] | None": pa.list_(pa.string()),
    "bool": pa.bool_(),
    "PassType | None": pa.string(),
    "float": pa.float64(),
    "float | None": pa.float64(),
    "int | None": pa.int64(),
}

CASE_SCHEMA = pa.schema([(f.name, _TYPES[str(f.type)]) for f in dataclasses.fields(ScoredCase)])
"""Every field of :class:`ScoredCase`, in constructor order (a field of a new type fails here)."""

_LISTS = frozenset(f.name for f in CASE_SCHEMA if pa.types.is_list(f.type))


@dataclass(frozen=True, eq=False)
class CaseTable:
    """The re-scored cases of one run (see the module docstring), in report order."""

    arrow: pa.RecordBatch
    """One row per case, with the columns of :data:`CASE_SCHEMA`."""

    @classmethod
    def from_columns(cls, cols: ScoredColumns) -> CaseTable:
        """The table of cases given as columns (see :func:`~memeval_core.pmb.rescore.columns`), in order."""
        return cls(pa.RecordBatch.from_pydict({name: cols[name] for name in CASE_SCHEMA.names}, schema=CASE_SCHEMA))

    @classmethod
    def from_arrow(cls, table: pa.Table) -> CaseTable:
        """The rows of an Arrow table with the columns of :data:`CASE_SCHEMA` (a snapshot's cases of one run; other
        columns are left out). ``ValueError`` naming the column when one is missing or of another type."""
        for field in CASE_SCHEMA:
            if field.name not in table.column_names:
                raise ValueError(f"the cases have no column {field.name!r}")
            found = table.schema.field(field.name).type
            if found != field.type:
                raise ValueError(f"the cases' column {field.name!r} holds {found}, not {field.type}")
        columns = [column.combine_chunks() for column in table.select(CASE_SCHEMA.names).columns]
        return cls(pa.RecordBatch.from_arrays(columns, schema=CASE_SCHEMA))

    @classmethod
    def from_ipc(cls, data: bytes) -> CaseTable:
        """The table :meth:`ipc` wrote."""
        return cls(pa.ipc.read_record_batch(pa.py_buffer(data), CASE_SCHEMA))

    def ipc(self) -> bytes:
        """The rows in Arrow's IPC format: how a worker process hands them over (pickling small Arrow tables costs
        several times as much)."""
        data: bytes = self.arrow.serialize().to_pybytes()
        return data

    @property
    def n(self) -> int:
        """Number of cases."""
        rows: int = self.arrow.num_rows
        return rows

    def column(self, name: str) -> NDArray[Any]:
        """A number or flag field as a (read-only) array, 0 where it is absent (see :meth:`present`)."""
        values = self.arrow.column(name)
        if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type) or values.type == pa.bool_()):
            raise ValueError(f"{name} is not a number or flag field; use values() or cases()")
        filled: NDArray[Any] = values.fill_null(False if values.type == pa.bool_() else 0).to_numpy(
            zero_copy_only=False
        )
        return filled

    def present(self, name: str) -> NDArray[np.bool_]:
        """True where a field has a value (all True for required fields)."""
        valid: NDArray[np.bool_] = self.arrow.column(name).is_valid().to_numpy(zero_copy_only=False)
        return valid

    def values(self, name: str, rows: NDArray[np.int64] | None = None) -> list[Any]:
        """A field's values as Python values, one per case (per row of ``rows`` when given); id lists as lists."""
        values = self.arrow.column(name)
        out: list[Any] = (values if rows is None else values.take(rows)).to_pylist()
        return out

    def index_of(self, case_id: str, turn_index: int | None = None) -> int | None:
        """Row of the case ``case_id`` (session: with ``turn_index``), or None when the run lacks it."""
        keys = zip(self.values("case_id"), self.values("turn_index"), strict=True)
        return next((row for row, key in enumerate(keys) if key == (case_id, turn_index)), None)

    def cases(self, rows: Sequence[int] | NDArray[np.int64] | None = None) -> tuple[ScoredCase, ...]:
        """The cases at ``rows`` (all, in order, when None) as :class:`ScoredCase` objects."""
        batch = self.arrow if rows is None else self.arrow.take(np.asarray(rows, dtype=np.int64))
        cols = [_values(name, batch.column(name).to_pylist()) for name in CASE_SCHEMA.names]
        return tuple(ScoredCase(*row) for row in zip(*cols, strict=True))

    def case(self, row: int) -> ScoredCase:
        """The case at ``row``."""
        if not 0 <= row < self.n:
            raise IndexError(f"row {row} out of range for {self.n} cases")
        return self.cases([row])[0]


def _values(name: str, values: list[Any]) -> list[Any]:
    """A column's Python values as :class:`ScoredCase` holds them: id lists as tuples."""
    if name not in _LISTS:
        return values
    return [None if v is None else tuple(v) for v in values]
