from __future__ import annotations

import json
import re

from _data import PROJECT

from memeval_core.qa.models import QaRun
from memeval_core.qa.schema import run_schema, schema_text

DOCS = PROJECT / "docs"


def test_committed_schema_is_current() -> None:
    committed = (DOCS / "qa-run.schema.json").read_text(encoding="utf-8")
    assert committed == schema_text(), "regenerate: python -m memeval_core.qa.schema docs/qa-run.schema.json"


def test_schema_describes_every_field() -> None:
    schema = run_schema()
    question = schema["$defs"]["QaQuestion"]["properties"]
    assert all(p.get("description") for p in question.values())
    assert set(schema["required"]) == {"run", "questions"}


def test_the_documented_example_validates() -> None:
    text = (DOCS / "QA_RUN_FORMAT.md").read_text(encoding="utf-8")
    block = re.search(r"## Example \(JSONL\)\s+```\n(.*?)```", text, re.S)
    assert block is not None
    lines = [json.loads(line) for line in block.group(1).strip().splitlines()]
    run = QaRun.model_validate({**lines[0], "questions": lines[1:]})
    assert len(run.questions) == 2 and run.questions[1].error
