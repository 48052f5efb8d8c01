"""The leaderboard.json model: fingerprint formula, validation, versioning, canonical JSON and the published schema."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from memeval_core.export import models
from memeval_core.export.models import InputFile, Leaderboard, QaCategory, QaRow, dumps, fingerprint, loads

ROOT = Path(__file__).resolve().parents[1]
SHA_A = "a" * 64
SHA_B = "b" * 64


def pmb_row(**over: Any) -> dict[str, Any]:
    """A valid PMB row."""
    row: dict[str, Any] = {
        "rank": 1,
        "run_id": "retrieval-report-x-0123456789",
        "display_name": "x",
        "provider": "x",
        "benchmark": "pmb-single-turn",
        "source": "reports/retrieval-report-x.json",
        "cases": 77,
        "passed": 9,
        "pass_types": {"active_retrieval": 0, "structural": 6, "trivially_empty": 3},
        "mean_precision": 0.0558,
        "mean_recall": 0.9884,
        "mean_drift": None,
        "latency_mean_ms": 70.5,
        "latency_p50_ms": 64.94,
        "latency_p95_ms": 120.0,
        "ingestion_total_ms": None,
        "verified": True,
        "mismatches": [],
    }
    row.update(over)
    return row


def doc(**over: Any) -> dict[str, Any]:
    """A valid leaderboard document with two inputs and one PMB table."""
    inputs = [
        {"path": "fixtures/retrieval.cases.json", "sha256": SHA_A, "role": "pmb-fixture"},
        {"path": "reports/retrieval-report-x.json", "sha256": SHA_B, "role": "pmb-report"},
    ]
    d: dict[str, Any] = {
        "schema_version": 1,
        "memeval_version": "0.1.0",
        "scoring_version": "pmb-1",
        "fingerprint": fingerprint([SHA_A, SHA_B], "pmb-1"),
        "rounding": {"rule": "half-up", "ratio_decimals": 4, "ms_decimals": 2},
        "inputs": inputs,
        "tables": [{"kind": "pmb", "benchmark": "pmb-single-turn", "rows": [pmb_row()]}],
    }
    d.update(over)
    return d


def test_fingerprint_is_sha256_of_sorted_digests_and_scoring_version() -> None:
    expected = hashlib.sha256(f"{SHA_A}\n{SHA_B}\npmb-1".encode()).hexdigest()
    assert fingerprint([SHA_B, SHA_A], "pmb-1") == expected
    assert fingerprint([SHA_A, SHA_B], "pmb-1") == expected
    assert fingerprint([SHA_A, SHA_B], "pmb-2") != expected
    assert fingerprint([SHA_A], "pmb-1") != expected


def test_valid_document_round_trips_byte_identically() -> None:
    board = Leaderboard.model_validate(doc())
    text = dumps(board)
    assert loads(text) == board
    assert dumps(loads(text)) == text
    assert text.endswith("}\n")
    parsed = json.loads(text)
    assert list(parsed)[:4] == ["schema_version", "memeval_version", "scoring_version", "fingerprint"]
    assert parsed["tables"][0]["rows"][0]["mean_precision"] == 0.0558


def test_fingerprint_must_match_inputs() -> None:
    with pytest.raises(ValidationError, match="does not match the inputs"):
        Leaderboard.model_validate(doc(fingerprint="c" * 64))


def test_loads_names_source_and_field() -> None:
    bad = doc()
    bad["tables"][0]["rows"][0]["mean_recall"] = 1.5
    with pytest.raises(ValueError, match=r"^board\.json: \$\.tables\[0\]\.pmb\.rows\[0\]\.mean_recall: "):
        loads(json.dumps(bad), "board.json")


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        Leaderboard.model_validate(doc(comment="hello"))


def test_newer_and_nonexistent_versions_are_refused() -> None:
    with pytest.raises(ValidationError, match="newer than this memeval understands"):
        Leaderboard.model_validate(doc(schema_version=2))
    with pytest.raises(ValidationError, match="schema_version 0 is not supported"):
        Leaderboard.model_validate(doc(schema_version=0))
    with pytest.raises(ValidationError, match="must be an integer"):
        Leaderboard.model_validate(doc(schema_version="1"))


def test_older_versions_are_migrated_step_by_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # A hypothetical version 0 called the fingerprint "input_fingerprint"; its migration renames it.
    def v0_to_v1(d: dict[str, Any]) -> dict[str, Any]:
        out = dict(d)
        out["fingerprint"] = out.pop("input_fingerprint")
        return out

    monkeypatch.setattr(models, "FIRST_VERSION", 0)
    monkeypatch.setitem(models.MIGRATIONS, 0, v0_to_v1)
    old = doc(schema_version=0)
    old["input_fingerprint"] = old.pop("fingerprint")
    board = Leaderboard.model_validate(old)
    assert board.schema_version == 1
    assert board.fingerprint == fingerprint([SHA_A, SHA_B], "pmb-1")


@pytest.mark.parametrize("path", ["/home/me/results/r.json", "../r.json", "a/../../r.json", "C:/r.json", "~/r.json"])
def test_input_paths_must_be_relative(path: str) -> None:
    with pytest.raises(ValidationError, match="must be relative"):
        InputFile(path=path, sha256=SHA_A, role="pmb-report")


def test_qa_row_sorts_categories_and_accepts_bare_accuracies() -> None:
    row = QaRow.model_validate(
        {
            "run_id": "r",
            "display_name": "mem0",
            "system": "mem0",
            "benchmark": "locomo",
            "rank_group": "locomo (without category 5)",
            "rank": 1,
            "n_questions": 1540,
            "accuracy": 0.6688,
            "majority_accuracy": None,
            "n_judges": 1,
            "failures": 0,
            "categories": {"10": 0.5, "2": {"name": "temporal", "n": 321, "accuracy": 0.55}, "x": None},
            "includes_adversarial": False,
            "publishable": False,
            "not_publishable_because": ["top-k not stated"],
        }
    )
    assert list(row.categories) == ["2", "10", "x"]
    assert row.categories["10"] == QaCategory(accuracy=0.5)
    assert row.categories["2"].n == 321
    assert row.categories["x"].accuracy is None


def test_qa_table_in_document() -> None:
    qa_row: dict[str, Any] = {
        "run_id": "q",
        "display_name": "zep",
        "system": "zep",
        "benchmark": "locomo",
        "rank_group": "locomo",
        "rank": None,
        "n_questions": 0,
        "accuracy": None,
        "majority_accuracy": None,
        "n_judges": 0,
        "failures": 0,
        "categories": {},
        "includes_adversarial": None,
        "publishable": False,
        "not_publishable_because": ["incomplete corpus: 0 of 1986 questions scored"],
    }
    d = doc()
    d["tables"].append({"kind": "qa", "benchmark": "locomo", "rows": [qa_row]})
    board = Leaderboard.model_validate(d)
    assert [t.kind for t in board.tables] == ["pmb", "qa"]
    assert len(board.pmb_rows()) == 1
    jsonschema.validate(json.loads(dumps(board)), models.json_schema(), cls=jsonschema.Draft202012Validator)


def test_committed_schema_equals_generated_schema() -> None:
    committed = (ROOT / "docs" / "leaderboard.schema.json").read_text(encoding="utf-8")
    assert committed == models.schema_text(), (
        "regenerate: python -m memeval_core.export.models > docs/leaderboard.schema.json"
    )


def test_schema_is_valid_and_documents_every_field() -> None:
    schema = models.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == models.SCHEMA_ID
    for name, definition in [("Leaderboard", schema), *schema["$defs"].items()]:
        for field, spec in definition.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{field} has no description"
    jsonschema.validate(doc(), schema, cls=jsonschema.Draft202012Validator)
    bad = doc()
    bad["tables"][0]["rows"][0]["verified"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
