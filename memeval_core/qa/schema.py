"""The JSON Schema of memeval's QA run format, generated from :class:`memeval_core.qa.models.QaRun`.

``docs/qa-run.schema.json`` is this output, committed; a test asserts it equals a fresh generation.
Regenerate with ``python -m memeval_core.qa.schema docs/qa-run.schema.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from memeval_core.qa.models import SCHEMA_VERSION, QaRun

SCHEMA_ID = "https://github.com/memeval/memeval/docs/qa-run.schema.json"


def run_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one run document (``{"schema_version", "run", "questions"}``)."""
    schema = QaRun.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"memeval QA run (schema_version {SCHEMA_VERSION})",
        **schema,
    }


def schema_text() -> str:
    """The schema as committed: 2-space indent, sorted keys, trailing newline."""
    return json.dumps(run_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema(path: Path) -> None:
    """Write :func:`schema_text` to ``path``."""
    path.write_text(schema_text(), encoding="utf-8")


if __name__ == "__main__":
    write_schema(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/qa-run.schema.json"))
