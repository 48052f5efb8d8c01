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

from memeval_core.qa.columns import Columns
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


def _verdicts_array(column: Sequence[Sequence[Verdict]]) -> pa.Array:
    """The ``verdicts`` column: a list of verdict structs per question, built from flat per-field lists."""
    offsets = [0]
    flat: list[Verdict] = []
    for verdicts in column:
        flat.extend(verdicts)
        offsets.append(len(flat))
    fields = {"judge": [v.judge for v in flat], "score": [v.score for v in flat],
              "scale": [v.scale for v in flat], "model": [v.model for v in flat],
              "label": [v.label for v in flat], "extra": [_extra_text(v.model_extra) for v in flat]}  # fmt: skip
    structs = pa.StructArray.from_arrays([pa.array(fields[f.name], f.type) for f in _VERDICT], fields=list(_VERDICT))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), structs, type=pa.list_(_VERDICT))


def table_of(columns: Columns, scores: Columns) -> pa.Table:
    """Question columns (:mod:`memeval_core.qa.columns`) and their score columns as one table of :data:`SCHEMA`."""
    data: dict[str, Any] = {name: columns[name] for name in _FIELDS}
    data["verdicts"] = _verdicts_array(columns["verdicts"])
    data["extra"] = [_extra_text(extra) for extra in columns["extra"]]
    data.update({name: scores[name] for name, _ in SCORE_COLUMNS})
    data["per_judge"] = [list(per_judge.items()) for per_judge in scores["per_judge"]]
    return pa.Table.from_pydict(data, schema=SCHEMA)


def _with_extra(row: dict[str, Any]) -> dict[str, Any]:
    """A question's or verdict's row with its ``extra`` column spread back into unknown fields."""
    extra = row.pop("extra")
    return {**row, **json.loads(extra)} if extra else row


def questions_from_table(table: pa.Table) -> list[QaQuestion]:
    """The questions of a table, each validated again by pydantic (equal to the ones the table was made from)."""
    rows = table.select([*_FIELDS, "extra"]).to_pylist()
    for row in rows:
        row["verdicts"] = [_with_extra(v) for v in row["verdicts"]]
    return [QaQuestion.model_validate(_with_extra(row)) for row in rows]


def scores_from_table(table: pa.Table) -> tuple[QuestionScore, ...]:
    """The per-question scores of a table."""
    cols = table.select(["question_id", "category", "scored", *(name for name, _ in SCORE_COLUMNS)]).to_pydict()
    cols["per_judge"] = [dict(pairs) for pairs in cols["per_judge"]]
    names = [f for f in QuestionScore.__dataclass_fields__]
    return tuple(QuestionScore(*values) for values in zip(*(cols[n] for n in names), strict=True))
