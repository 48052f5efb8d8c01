"""A QA run whose questions are held as columns: the shape a load imports, joins and scores.

A run of 1,540 questions as 1,540 pydantic objects costs more to build and copy than to parse the file it
came from. :class:`ColumnRun` keeps the run's metadata as a :class:`~memeval_core.qa.models.RunMeta` and its
questions as :data:`Columns`: one list per :class:`~memeval_core.qa.models.QaQuestion` field, in field order,
plus ``extra`` (each question's unknown fields as a dict, None when it has none). Row ``i`` of every list is
question ``i``.

The columns are validated with pydantic as a whole (:func:`validate_columns`: one list per field, each
element checked against the field's own annotation), so a value the model would refuse is refused here too.
:attr:`ColumnRun.questions` rebuilds the questions as models, for code and tests that want objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from types import GenericAlias
from typing import Any

from pydantic import BaseModel, create_model

from memeval_core.qa.models import QaQuestion, QaRun, RunMeta

Columns = dict[str, list[Any]]
"""Column name -> one value per question, in run order."""

FIELDS: tuple[str, ...] = tuple(QaQuestion.model_fields)
"""The question's own fields, in :class:`QaQuestion` order (the columns besides ``extra``)."""

_KNOWN = frozenset(FIELDS)
_REQUIRED = object()
"""Stands in for a required field a question lacks; :func:`validate_columns` refuses it."""


def _default(name: str) -> Any:
    info = QaQuestion.model_fields[name]
    return _REQUIRED if info.is_required() else info.default


_DEFAULTS: dict[str, Any] = {name: _default(name) for name in FIELDS}

_ColumnsModel: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "QuestionColumns",
    **{name: (GenericAlias(list, (info.annotation,)), ...) for name, info in QaQuestion.model_fields.items()},
)
"""One list per question field, each element validated against that field's annotation."""


def validate_columns(columns: Columns) -> Columns:
    """The columns with every value validated as :class:`QaQuestion` would (raise pydantic's ValidationError).

    An error's location is ``(field, row, ...)``. ``extra`` is kept as it is, as the model keeps unknown fields.
    """
    checked = _ColumnsModel.model_validate({name: columns[name] for name in FIELDS})
    return {**dict(checked), "extra": columns["extra"]}


def _extra(question: dict[str, Any]) -> dict[str, Any] | None:
    if question.keys() <= _KNOWN:
        return None
    return {k: v for k, v in question.items() if k not in _KNOWN}


def columns_from_dicts(questions: Sequence[dict[str, Any]]) -> Columns:
    """Question records (field -> value, absent fields take the model's default) as columns, not yet validated."""
    if not questions:
        return complete_columns({}, 0)
    names = tuple(questions[0])
    if all(tuple(q) == names for q in questions):
        # The usual case: an importer writes the same fields in the same order for every record.
        values = zip(*(q.values() for q in questions), strict=True)
        return complete_columns(dict(zip(names, map(list, values), strict=True)), len(questions))
    columns: Columns = {name: [q.get(name, default) for q in questions] for name, default in _DEFAULTS.items()}
    columns["extra"] = [_extra(q) for q in questions]
    return columns


def complete_columns(given: Columns, n: int) -> Columns:
    """Columns for ``n`` questions: ``given`` plus every absent field at its default; other names become ``extra``."""
    # A default list is shared by the rows here; validation gives every row a list of its own.
    columns = {name: given[name] if name in given else [default] * n for name, default in _DEFAULTS.items()}
    others = [name for name in given if name not in _KNOWN]
    extras = zip(*(given[name] for name in others), strict=True)
    columns["extra"] = [dict(zip(others, values, strict=True)) for values in extras] if others else [None] * n
    return columns


def columns_of(questions: Sequence[QaQuestion]) -> Columns:
    """Validated questions as columns."""
    columns: Columns = {name: [getattr(q, name) for q in questions] for name in FIELDS}
    columns["extra"] = [q.model_extra or None for q in questions]
    return columns


def rows(columns: Columns) -> list[dict[str, Any]]:
    """The questions as records again: each field, then its unknown fields."""
    names = (*FIELDS, "extra")
    out = []
    for values in zip(*(columns[n] for n in names), strict=True):
        record = dict(zip(FIELDS, values, strict=False))
        extra = values[-1]
        out.append({**record, **extra} if extra else record)
    return out


@dataclass(frozen=True)
class ColumnRun:
    """A run in memeval's format with its questions as columns (see the module docstring)."""

    run: RunMeta
    """Run metadata (named as in :class:`QaRun`)."""
    columns: Columns
    """One list per question field plus ``extra``; validated."""

    @classmethod
    def of(cls, run: QaRun) -> ColumnRun:
        """A run of question models, as columns."""
        return cls(run.run, columns_of(run.questions))

    @property
    def size(self) -> int:
        """Number of questions."""
        return len(self.columns["question_id"])

    @cached_property
    def questions(self) -> list[QaQuestion]:
        """The questions as models (validated again), in run order."""
        return [QaQuestion.model_validate(r) for r in rows(self.columns)]

    def with_meta(self, **update: Any) -> ColumnRun:
        """This run with some metadata fields replaced (the questions are shared)."""
        return replace(self, run=self.run.model_copy(update=update))
