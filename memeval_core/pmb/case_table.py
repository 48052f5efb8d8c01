"""Columnar storage of a run's re-scored cases: one numpy array per field instead of one object per case.

At 1,000 runs x 2,000 cases a :class:`~memeval_core.pmb.rescore.ScoredCase` object per case (with its
tuples and strings) costs several KiB each, gigabytes in all, and unpickling them is what a warm start
and every page would pay. A :class:`CaseTable` keeps the same information in about 200 bytes per case:

- text fields (case id, category, description, …) as int32 codes into a :class:`StringPool` shared by
  every run of a load, so a string repeated across runs is stored once;
- id lists and message lists (returned ids, failures, …) in CSR layout: int32 codes plus offsets;
- optional numbers as float64 with a presence mask, optional ints and the pass type as small ints.

Aggregations read the arrays directly (:meth:`CaseTable.column`, :meth:`CaseTable.present`);
:meth:`CaseTable.case` and :meth:`CaseTable.cases` rebuild identical :class:`ScoredCase` objects for the
few cases a view shows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, filterfalse, repeat
from operator import is_not, itemgetter
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from memeval_core.pmb.pass_types import PASS_TYPES
from memeval_core.pmb.rescore import ScoredCase, ScoredColumns, columns_of

FieldKind = Literal["text", "ids", "optional_ids", "bool", "pass_type", "number", "optional_number", "optional_int"]

_KIND_OF_TYPE: dict[str, FieldKind] = {
    "str": "text",
    "tuple[str, ...]": "ids",
    "tuple[str, ...] | None": "optional_ids",
    "bool": "bool",
    "PassType | None": "pass_type",
    "float": "number",
    "float | None": "optional_number",
    "int | None": "optional_int",
}

FIELDS: tuple[tuple[str, FieldKind], ...] = tuple(
    (f.name, _KIND_OF_TYPE[str(f.type)]) for f in dataclasses.fields(ScoredCase)
)
"""Every field of :class:`ScoredCase`, in constructor order, with how it is stored (a new field type fails here)."""


def _named(*kinds: FieldKind) -> tuple[str, ...]:
    return tuple(name for name, kind in FIELDS if kind in kinds)


_CODED = _named("text", "ids", "optional_ids")
_LISTS = _named("ids", "optional_ids")
_BOOLS = _named("bool")
_NUMBERS = _named("number")
_OPTIONAL_NUMBERS = _named("optional_number")
_OPTIONAL_LISTS = _named("optional_ids")
_MASKED = (*_OPTIONAL_NUMBERS, *_named("optional_ids", "optional_int"))
"""Fields stored with a presence mask; optional numbers first, as their masks line up with the float rows."""
_FLOATS = (*_NUMBERS, *_OPTIONAL_NUMBERS)

_TWINS = {"stated_category": "category", "stated_failures": "failures", "stated_noise_ids": "noise_ids"}
"""Stated fields whose values usually equal those of the re-derived field named."""

_NO_PASS = -1
_PASS_CODE: dict[str | None, int] = {None: _NO_PASS, **{t: i for i, t in enumerate(PASS_TYPES)}}
_NONE_AS_ZERO: dict[None, int] = {None: 0}
"""``_NONE_AS_ZERO.get(v, v)``: 0 for None, else ``v`` (a C-level map over values)."""


class StringPool:
    """Text interned as int32 codes: one entry per distinct string, shared by every table of a load.

    Codes are insertion positions, so :attr:`strings` is the dict's key order and never needs re-sorting.
    """

    __slots__ = ("_codes", "_strings")

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self._strings: list[str] = []

    def encode(self, values: Sequence[str]) -> NDArray[np.int32]:
        """Codes of ``values`` (new strings are added)."""
        codes = self._codes
        if len(values) < 2:  # itemgetter of one key returns the value itself, of none raises
            return np.array([codes.setdefault(v, len(codes)) for v in values], np.int32)
        # itemgetter looks every value up in one call at C speed. After a load's first runs nearly every string
        # is known; when some are not, the distinct values are added in first-seen order (the codes adding
        # values one by one gives) and the lookup repeated.
        lookup = itemgetter(*values)
        try:
            found = lookup(codes)
        except KeyError:
            new = dict.fromkeys(filterfalse(codes.__contains__, values))
            codes.update(zip(new, range(len(codes), len(codes) + len(new)), strict=True))
            found = lookup(codes)
        return np.fromiter(found, np.int32, len(values))

    def code_of(self, value: str) -> int | None:
        """The code of ``value``, or None when the pool has never seen it."""
        return self._codes.get(value)

    @property
    def strings(self) -> list[str]:
        """Every string, indexed by its code."""
        if len(self._strings) != len(self._codes):
            self._strings = list(self._codes)
        return self._strings

    def __len__(self) -> int:
        return len(self._codes)


def _stacked(values: Iterable[Any], dtype: type[np.generic], rows: int, n: int) -> NDArray[Any]:
    """``rows`` columns of ``n`` values each, chained, as the rows of one 2-D array."""
    return np.fromiter(values, dtype, rows * n).reshape(rows, n)


@dataclass(frozen=True, eq=False)
class CaseTable:
    """The re-scored cases of one run, column by column (see the module docstring).

    ``columns`` maps each field of :data:`FIELDS` to its array (``ids`` fields: the flat codes); ``offsets``
    holds the CSR offsets of list fields and ``masks`` the presence of optional fields.
    """

    n: int
    """Number of cases."""
    pool: StringPool
    """The string pool the text and id codes refer to."""
    columns: dict[str, NDArray[Any]]
    """Field name -> values (text/ids: int32 codes; bool; pass_type: int8, -1 for none; numbers: float64)."""
    offsets: dict[str, NDArray[np.int32]]
    """List fields: CSR offsets (``n + 1`` entries) into ``columns[field]``."""
    masks: dict[str, NDArray[np.bool_]]
    """Optional fields: True where the value is present (not None)."""

    @classmethod
    def from_cases(cls, cases: Sequence[ScoredCase], pool: StringPool | None = None) -> CaseTable:
        """Pack ``cases`` (in order) into columns; text goes into ``pool`` (a new pool when None)."""
        return cls.from_columns(columns_of(cases), pool)

    @classmethod
    def from_columns(cls, cols: ScoredColumns, pool: StringPool | None = None) -> CaseTable:
        """:meth:`from_cases` of cases given as columns (see :func:`~memeval_core.pmb.rescore.columns`)."""
        # A run has tens of cases, so the cost is per numpy call more than per value: fields of one kind are
        # packed as one 2-D array (each field a row of it), values pass through C-level maps, and all text
        # is encoded in one call.
        pool = StringPool() if pool is None else pool
        n = len(cols["case_id"])
        arrays: dict[str, NDArray[Any]] = {}
        masks: dict[str, NDArray[np.bool_]] = {}

        lists: dict[str, Sequence[Sequence[str]]] = {name: cols[name] for name in _LISTS}
        for name in _OPTIONAL_LISTS:  # absent lists are stored empty (and masked below)
            if None in lists[name]:
                lists[name] = [() if v is None else v for v in lists[name]]
        ends = chain.from_iterable(accumulate(map(len, values), initial=0) for values in lists.values())
        offsets = dict(zip(lists, _stacked(ends, np.int32, len(lists), n + 1), strict=True))

        # A report usually states exactly the re-derived failures (and the fixture's categories): such a
        # column has the codes of its twin, which comes earlier in field order.
        same = [name for name, twin in _TWINS.items() if cols[name] == cols[twin]]
        coded = [name for name in _CODED if name not in same]
        text: list[str] = []
        text_ends: list[int] = []
        for name in coded:
            if name in lists:
                text.extend(chain.from_iterable(lists[name]))
            else:
                text += cols[name]
            text_ends.append(len(text))
        codes = pool.encode(text)
        start = 0
        for name, end in zip(coded, text_ends, strict=True):
            arrays[name] = codes[start:end]
            start = end
        for name in same:
            arrays[name] = arrays[_TWINS[name]]

        def chained(names: Sequence[str]) -> Iterator[Any]:
            return chain.from_iterable(cols[name] for name in names)

        # All flags (bool fields, then the presence of optional ones) in one array, all floats in another.
        flags = chain(chained(_BOOLS), map(is_not, chained(_MASKED), repeat(None)))
        flag_rows = _stacked(flags, np.bool_, len(_BOOLS) + len(_MASKED), n)
        arrays.update(zip(_BOOLS, flag_rows[: len(_BOOLS)], strict=True))
        present = flag_rows[len(_BOOLS) :]
        masks.update(zip(_MASKED, present, strict=True))
        floats = _stacked(chained(_FLOATS), np.float64, len(_FLOATS), n)
        # None converts to NaN; an absent value is stored as 0 (a NaN that is a value stays).
        np.copyto(floats[len(_NUMBERS) :], 0.0, where=~present[: len(_OPTIONAL_NUMBERS)])
        arrays.update(zip(_FLOATS, floats, strict=True))
        turns = cols["turn_index"]
        arrays["turn_index"] = np.fromiter(map(_NONE_AS_ZERO.get, turns, turns), np.int64, n)
        arrays["pass_type"] = np.fromiter(map(_PASS_CODE.__getitem__, cols["pass_type"]), np.int8, n)
        return cls(
            n=n,
            pool=pool,
            columns={name: arrays[name] for name, _ in FIELDS},
            offsets=offsets,
            masks={name: masks[name] for name, _ in FIELDS if name in masks},
        )

    @classmethod
    def concat(cls, tables: Sequence[CaseTable]) -> CaseTable:
        """One table of the cases of ``tables`` (at least one), in order: in their pool when they share one, else
        in a new one."""
        pool = tables[0].pool if all(t.pool is tables[0].pool for t in tables) else StringPool()
        tables = [t.recoded(pool) for t in tables]
        offsets = {}
        for name in tables[0].offsets:
            ends = np.cumsum([t.offsets[name][-1] for t in tables[:-1]], dtype=np.int32)
            starts = [np.zeros(1, np.int32), *ends]  # each table's first item in the joined list
            shifted = [t.offsets[name][:-1] + start for t, start in zip(tables, starts, strict=True)]
            offsets[name] = np.concatenate([*shifted, tables[-1].offsets[name][-1:] + starts[-1]])
        return cls(
            n=sum(t.n for t in tables),
            pool=pool,
            columns={name: np.concatenate([t.columns[name] for t in tables]) for name in tables[0].columns},
            offsets=offsets,
            masks={name: np.concatenate([t.masks[name] for t in tables]) for name in tables[0].masks},
        )

    def recoded(self, pool: StringPool) -> CaseTable:
        """The same table with its text coded in ``pool`` (itself when it already is)."""
        if pool is self.pool:
            return self
        mapping = pool.encode(self.pool.strings)
        coded = {name for name, kind in FIELDS if kind in ("text", "ids", "optional_ids")}
        columns = {name: mapping[col] if name in coded else col for name, col in self.columns.items()}
        return CaseTable(n=self.n, pool=pool, columns=columns, offsets=self.offsets, masks=self.masks)

    def arrow_columns(self, strings: pa.Array) -> list[pa.Array]:
        """Every field as an Arrow array, in :data:`FIELDS` order.

        ``strings``: the pool's strings as one Arrow array (``pa.array(pool.strings, pa.string())``), made once
        for all the tables of a pool. Text is taken from it by code, list fields are built from their offsets:
        no Python value per case. The values are those of :meth:`cases` (id lists as lists, None as null).
        """
        out: list[pa.Array] = []
        for name, kind in FIELDS:
            col = self.columns[name]
            absent = ~self.masks[name] if name in self.masks else None
            if kind == "text":
                out.append(strings.take(pa.array(col)))
            elif kind in ("ids", "optional_ids"):
                items = strings.take(pa.array(col))
                nulls = None if absent is None else pa.array(absent)
                out.append(pa.ListArray.from_arrays(pa.array(self.offsets[name]), items, mask=nulls))
            elif kind == "pass_type":
                # Built here, not at import: pa.array imports pandas, which importing the CLI otherwise does not.
                out.append(pa.array(PASS_TYPES, pa.string()).take(pa.array(col, mask=col == _NO_PASS)))
            else:
                out.append(pa.array(col, mask=absent))
        return out

    def column(self, name: str) -> NDArray[Any]:
        """The raw array of one non-list field (text: codes; optional numbers: 0 where absent, see :meth:`present`)."""
        if name in self.offsets:
            raise ValueError(f"{name} is a list field; use ids_of()")
        return self.columns[name]

    def present(self, name: str) -> NDArray[np.bool_]:
        """True where an optional field has a value (all True for required fields)."""
        mask = self.masks.get(name)
        return np.ones(self.n, np.bool_) if mask is None else mask

    def texts(self, name: str, rows: NDArray[np.int64] | None = None) -> list[str]:
        """A text field decoded, one string per case (per row of ``rows`` when given)."""
        strings = self.pool.strings
        codes = self.columns[name] if rows is None else self.columns[name][rows]
        return [strings[c] for c in codes.tolist()]

    def pass_types(self) -> list[str | None]:
        """The pass type of every case (None when failed)."""
        return [None if c == _NO_PASS else PASS_TYPES[c] for c in self.columns["pass_type"].tolist()]

    def index_of(self, case_id: str, turn_index: int | None = None) -> int | None:
        """Row of the case ``case_id`` (session: with ``turn_index``), or None when the run lacks it."""
        code = self.pool.code_of(case_id)
        if code is None:
            return None
        rows = np.flatnonzero(self.columns["case_id"] == code)
        if turn_index is None:
            rows = rows[~self.masks["turn_index"][rows]]
        else:
            rows = rows[self.masks["turn_index"][rows] & (self.columns["turn_index"][rows] == turn_index)]
        return int(rows[0]) if rows.size else None

    def _values(self, name: str, kind: FieldKind, rows: NDArray[np.int64]) -> list[Any]:
        strings = self.pool.strings
        col = self.columns[name]
        if kind == "text":
            return [strings[c] for c in col[rows].tolist()]
        if kind in ("ids", "optional_ids"):
            off = self.offsets[name]
            starts, ends = off[rows].tolist(), off[rows + 1].tolist()
            # A few rows (one case across many runs): slice the array; many rows: convert it once.
            codes: Any = col.tolist() if 4 * len(starts) >= self.n else col
            out: list[Any] = [
                tuple([strings[c] for c in (codes[s:e] if codes is not col else col[s:e].tolist())])
                for s, e in zip(starts, ends, strict=True)
            ]
            if kind == "optional_ids":
                have = self.masks[name][rows].tolist()
                out = [v if h else None for v, h in zip(out, have, strict=True)]
            return out
        if kind == "pass_type":
            return [None if c == _NO_PASS else PASS_TYPES[c] for c in col[rows].tolist()]
        values: list[Any] = col[rows].tolist()
        if kind in ("optional_number", "optional_int"):
            have = self.masks[name][rows].tolist()
            return [v if h else None for v, h in zip(values, have, strict=True)]
        return values

    def cases(self, rows: Sequence[int] | NDArray[np.int64] | None = None) -> tuple[ScoredCase, ...]:
        """The cases at ``rows`` (all, in order, when None) as :class:`ScoredCase` objects."""
        idx = np.arange(self.n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        if idx.size == 0:
            return ()
        cols = [self._values(name, kind, idx) for name, kind in FIELDS]
        return tuple(ScoredCase(*row) for row in zip(*cols, strict=True))

    def case(self, row: int) -> ScoredCase:
        """The case at ``row`` (scalar reads: a view of one case across a thousand runs calls this per run)."""
        if not 0 <= row < self.n:
            raise IndexError(f"row {row} out of range for {self.n} cases")
        strings = self.pool.strings
        values: list[Any] = []
        for name, kind in FIELDS:
            col = self.columns[name]
            if kind == "text":
                values.append(strings[col[row]])
            elif kind in ("ids", "optional_ids"):
                off = self.offsets[name]
                ids = tuple([strings[c] for c in col[off[row] : off[row + 1]].tolist()])
                values.append(None if kind == "optional_ids" and not self.masks[name][row] else ids)
            elif kind == "pass_type":
                code = int(col[row])
                values.append(None if code == _NO_PASS else PASS_TYPES[code])
            elif kind in ("optional_number", "optional_int"):
                values.append(col[row].item() if self.masks[name][row] else None)
            else:
                values.append(col[row].item())
        return ScoredCase(*values)
