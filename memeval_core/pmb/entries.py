"""A report's entries validated column by column: one list per field instead of one pydantic object per entry.

A load reads each entry field once (to score it) and keeps none of the entry objects, so building and then
taking apart a :class:`~memeval_core.pmb.models.SingleTurnEntry` per entry is pure cost. Here every field of
the entry model becomes a column (the field's values over all entries, in entry order) and pydantic validates
the columns: the same types and constraints, read from the entry model, so the two cannot drift apart.

Validation errors still come from the entry model: whenever the columns do not validate, or the entries have a
shape the columns do not handle (a non-object entry, a missing required field, a field spelt by its Python
name), :func:`report_columns` returns None and the caller validates the whole report the usual way, whose
messages name the exact JSON path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypedDict

from memeval_core.pmb.models import (
    PmbModel,
    ReportHeader,
    SessionEntry,
    SessionReport,
    SingleTurnEntry,
    SingleTurnReport,
)

Columns = dict[str, list[Any]]
"""Entry field name (the Python spelling) -> that field of every entry, in entry order."""


@dataclass(frozen=True)
class _ColumnSchema:
    """How to read the entries of one report kind as columns, and the pydantic type that validates them."""

    required: tuple[tuple[str, str], ...]
    """(field name, JSON name) of the fields every entry must state."""
    optional: tuple[tuple[str, str, Any], ...]
    """(field name, JSON name, default) of the fields an entry may leave out."""
    python_only_names: frozenset[str]
    """Field names that differ from their JSON names: pydantic accepts them too, the columns do not."""
    adapter: TypeAdapter[Any]
    """Validates a dict of columns: each field's list of values, with the entry model's type and constraints."""


def _schema(entry: type[PmbModel]) -> _ColumnSchema:
    required: list[tuple[str, str]] = []
    optional: list[tuple[str, str, Any]] = []
    types: dict[str, Any] = {}
    for name, info in entry.model_fields.items():
        alias = info.alias or name
        if info.is_required():
            required.append((name, alias))
        else:
            optional.append((name, alias, info.get_default(call_default_factory=True)))
        item = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        types[name] = list[item]  # type: ignore[valid-type]
    columns_type = TypedDict(f"{entry.__name__}Columns", types)  # type: ignore[misc]
    return _ColumnSchema(
        required=tuple(required),
        optional=tuple(optional),
        python_only_names=frozenset(n for n, info in entry.model_fields.items() if info.alias not in (None, n)),
        adapter=TypeAdapter(columns_type),
    )


_SINGLE_TURN = _schema(SingleTurnEntry)
_SESSION = _schema(SessionEntry)


def _columns(entries: Sequence[Any], schema: _ColumnSchema) -> Columns | None:
    """The entries as validated columns; None when they are not all JSON objects of the plain shape, or when a
    value fails validation (the caller then lets the entry model say what is wrong)."""
    if not all(type(e) is dict for e in entries):
        return None
    if schema.python_only_names.intersection(*entries):
        return None
    raw: Columns = {}
    try:
        for name, alias in schema.required:
            raw[name] = [entry[alias] for entry in entries]
    except KeyError:
        return None
    for name, alias, default in schema.optional:
        raw[name] = [entry.get(alias, default) for entry in entries]
    try:
        validated: Columns = schema.adapter.validate_python(raw)
    except ValidationError:
        return None
    return validated


@dataclass(frozen=True)
class ReportColumns:
    """A validated report: its top-level fields as a model, its entries as columns."""

    header: ReportHeader
    """Provider, stated aggregates, ingestion, provenance and unknown top-level fields."""
    entries: Columns
    """Every entry field as a column (see :data:`Columns`)."""
    session: bool
    """A session report (entries are turns)."""

    @property
    def n(self) -> int:
        """Number of entries."""
        return len(self.entries["case_id"])


def report_columns(data: dict[str, Any], session: bool) -> ReportColumns | None:
    """``data`` (a parsed report with a ``cases`` list) validated as columns; None when it does not validate
    that way, in which case :func:`columns_of_report` of the validated report model gives the same result."""
    top = {k: v for k, v in data.items() if k != "cases"}
    try:
        header = ReportHeader.model_validate(top)
    except ValidationError:
        return None
    entries = _columns(data["cases"], _SESSION if session else _SINGLE_TURN)
    return None if entries is None else ReportColumns(header, entries, session)


def columns_of_report(report: SingleTurnReport | SessionReport) -> ReportColumns:
    """A report model as :class:`ReportColumns` (what :func:`report_columns` gives for the same data)."""
    session = isinstance(report, SessionReport)
    entry = SessionEntry if session else SingleTurnEntry
    entries = {name: [getattr(e, name) for e in report.cases] for name in entry.model_fields}
    header = ReportHeader(
        provider=report.provider,
        retrieval=report.retrieval,
        ingestion=report.ingestion,
        provenance=report.provenance,
        **(report.model_extra or {}),
    )
    return ReportColumns(header, entries, session)
