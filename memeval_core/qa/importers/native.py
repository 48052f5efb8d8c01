"""memeval's own QA run format, written directly by a harness (see ``docs/QA_RUN_FORMAT.md``).

JSON: one object ``{"schema_version": 1, "run": {...}, "questions": [...]}``. JSONL: the first line
is ``{"schema_version": 1, "run": {...}}``, every further line one question.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from memeval_core.qa.columns import ColumnRun
from memeval_core.qa.importers._common import Source, check_unique_ids, fail
from memeval_core.qa.models import QaRun


def sniff(data: Any, path: str) -> bool:
    """True for a memeval run document (JSON object or JSONL rows whose first row holds ``run``)."""
    if isinstance(data, dict):
        return "run" in data and "questions" in data
    return bool(data) and isinstance(data, list) and isinstance(data[0], dict) and "run" in data[0]


def load(src: Source) -> list[ColumnRun]:
    """Validate the document; errors name the offending JSON path (JSONL: ``$[line - 1]``)."""
    data = src.data
    jsonl = isinstance(data, list)
    doc = {**data[0], "questions": data[1:]} if jsonl else data
    try:
        run = QaRun.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        if jsonl and loc[:1] == ["questions"] and len(loc) > 1 and isinstance(loc[1], int):
            loc = [loc[1] + 1, *loc[2:]]
        elif jsonl:
            loc = [0, *loc]
        fail(src, loc, f"{err['msg']}", "see docs/QA_RUN_FORMAT.md and docs/qa-run.schema.json")
    # JSON Lines: the first question is the file's second record.
    ids = [q.question_id for q in run.questions]
    check_unique_ids(src, ids, (), 1) if jsonl else check_unique_ids(src, ids)
    return [ColumnRun.of(run).with_meta(source_file=src.rel, source_sha256=src.sha256)]
