"""A QA run's questions and their scores as one Arrow table: how a load keeps, caches and ships them.

One row per question, in run order. The columns are the fields of :class:`~memeval_core.qa.models.QaQuestion`
(documented there and in docs/TABLES.md), ``extra`` (the question's unknown fields as JSON text, null when it
has none) and the fields of :class:`~memeval_core.qa.scoring.QuestionScore` that the question does not
already carry: ``failure``, ``score``, ``correct``, ``majority``, ``per_judge`` and ``fama``. Verdicts are a
list of structs (``judge, score, scale, model, label, extra``).

Pages that aggregate read columns; a page that shows questions one by one rebuilds them with
:func:`questions_from_table`, which validates each row with pydantic, as a file would be.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from memeval_core.qa.models import QaQuestion, Verdict
from memeval_core.qa.scoring import QuestionScore

_VERDICT = pa.struct(
    [
        ("judge", pa.string()),
        ("score", pa.float64()),
        ("scale", pa.string()),
        ("model", pa.string()),
        ("label", pa.string()),
        ("extra", pa.string()),
    ]
)
_STRINGS = pa.list_(pa.string())

QUESTION_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("benchmark", pa.string()),
    ("question_id", pa.string()),
    ("question", pa.string()),
    ("conversation", pa.string()),
    ("question_index", pa.int64()),
    ("category", pa.string()),
    ("category_name", pa.string()),
    ("kind", pa.string()),
    ("gold_answer", pa.string()),
    ("answer", pa.string()),
    ("retrieved_ids", _STRINGS),
    ("gold_evidence_ids", _STRINGS),
    ("verdicts", pa.list_(_VERDICT)),
    ("latency_ms", pa.float64()),
    ("retrieval_latency_ms", pa.float64()),
    ("tokens", pa.int64()),
    ("error", pa.bool_()),
    ("error_message", pa.string()),
    ("scored", pa.bool_()),
    ("is_abstention", pa.bool_()),
    ("abstained", pa.bool_()),
    ("mpa", pa.float64()),
    ("faa", pa.float64()),
)
"""The question's own fields, in :class:`QaQuestion` order."""

SCORE_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("failure", pa.string()),
    ("score", pa.float64()),
    ("correct", pa.bool_()),
    ("majority", pa.bool_()),
    ("per_judge", pa.map_(pa.string(), pa.float64())),
    ("fama", pa.float64()),
)
"""The question's score (:class:`QuestionScore` fields the question does not carry itself)."""

SCHEMA = pa.schema([*QUESTION_COLUMNS, ("extra", pa.string()), *SCORE_COLUMNS])
"""The table's schema."""

_FIELDS = tuple(name for name, _ in QUESTION_COLUMNS)


def _extra_text(extra: dict[str, Any] | None) -> str | None:
    return json.dumps(extra, ensure_ascii=False, allow_nan=False) if extra else None


def _verdict_row(v: Verdict) -> dict[str, Any]:
    return {"judge": v.judge, "score": v.score, "scale": v.scale, "model": v.model, "label": v.label,
            "extra": _extra_text(v.model_extra)}  # fmt: skip


def _column(values: list[Any], name: str) -> list[Any]:
    if name == "verdicts":
        return [[_verdict_row(v) for v in verdicts] for verdicts in values]
    return values


def questions_table(questions: Sequence[QaQuestion], scores: Sequence[QuestionScore]) -> pa.Table:
    """The questions and their scores (same order, same length) as one table of :data:`SCHEMA`."""
    if len(questions) != len(scores):
        raise ValueError(f"{len(questions)} questions but {len(scores)} scores")
    columns: dict[str, list[Any]] = {name: [getattr(q, name) for q in questions] for name in _FIELDS}
    columns = {name: _column(values, name) for name, values in columns.items()}
    columns["extra"] = [_extra_text(q.model_extra) for q in questions]
    for name, _ in SCORE_COLUMNS:
        values = [getattr(s, name) for s in scores]
        columns[name] = [list(v.items()) for v in values] if name == "per_judge" else values
    return pa.Table.from_pydict(columns, schema=SCHEMA)


def _verdict(row: dict[str, Any]) -> dict[str, Any]:
    extra = row.pop("extra")
    return {**row, **json.loads(extra)} if extra else row


def questions_from_table(table: pa.Table) -> list[QaQuestion]:
    """The questions of a table, each validated again by pydantic (equal to the ones the table was made from)."""
    rows = table.select([*_FIELDS, "extra"]).to_pylist()
    out = []
    for row in rows:
        extra = row.pop("extra")
        row["verdicts"] = [_verdict(v) for v in row["verdicts"]]
        out.append(QaQuestion.model_validate({**row, **json.loads(extra)} if extra else row))
    return out


def scores_from_table(table: pa.Table) -> tuple[QuestionScore, ...]:
    """The per-question scores of a table."""
    cols = table.select(["question_id", "category", "scored", *(name for name, _ in SCORE_COLUMNS)]).to_pydict()
    cols["per_judge"] = [dict(pairs) for pairs in cols["per_judge"]]
    names = [f for f in QuestionScore.__dataclass_fields__]
    return tuple(QuestionScore(*values) for values in zip(*(cols[n] for n in names), strict=True))
