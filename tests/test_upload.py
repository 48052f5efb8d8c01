"""Previewing an upload: what it is, why it fails, where it would rank — nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from memeval_core.pmb.ingest import load_pmb
from memeval_core.upload import preview, validate_any
from tests import _pmb_oracle as oracle
from tests._data import PMB_DIR, SHARED_DATA, require

MEMOBASE_0503 = SHARED_DATA / "memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"


def test_pmb_report_is_placed_among_existing_runs() -> None:
    load = load_pmb(require(PMB_DIR))
    existing = oracle.rows([r for r in load.runs if r.identity.provider != "gbrain"])
    data = (PMB_DIR / "test-results/baseline/retrieval-report-gbrain.json").read_bytes()
    p = preview("my gbrain.json", data, load.fixture, existing, [])
    assert p.ok and p.kind == "pmb" and p.safe_name == "my-gbrain.json"
    (row,) = p.rows
    assert (row["passed"], row["provisional_rank"], row["of"], row["verified"]) == (34, 2, 13, True)


def test_bad_pmb_report_names_the_path() -> None:
    load = load_pmb(require(PMB_DIR))
    doc = json.loads((PMB_DIR / "test-results/baseline/retrieval-report-mem0.json").read_text())
    doc["cases"][5]["retrievalLatencyMs"] = "slow"
    p = preview("r.json", json.dumps(doc).encode(), load.fixture, [], [])
    assert not p.ok and p.kind == "invalid"
    assert (p.errors[0].file, p.errors[0].path) == ("r.json", "$.cases[5].retrievalLatencyMs")


def test_qa_run_is_recognised_and_ranked(tmp_path: Path) -> None:
    data = require(MEMOBASE_0503).read_bytes()
    locomo_dir = SHARED_DATA / "locomo" / "data"
    group = "locomo (without category 5)"
    existing = [
        {"benchmark": "locomo", "rank_group": group, "accuracy": 0.75},
        {"benchmark": "locomo", "rank_group": "locomo (with category 5)", "accuracy": 0.9},
    ]
    p = preview("memobase_eval_0503_3000.json", data, None, [], existing, locomo_dir)
    assert p.ok and p.kind == "qa"
    (row,) = p.rows
    assert (row["n_questions"], row["accuracy"]) == (1540, 0.7091)
    # Ranked only against runs that agree on category 5: one better run there, the 0.9 run is apart.
    assert (row["rank_group"], row["provisional_rank"], row["of"]) == (group, 2, 2)


def test_garbage_is_rejected_with_a_reason() -> None:
    p = preview("notes.json", b'{"hello": "world"}', None, [], [])
    assert not p.ok and "not a result file memeval can read" in p.errors[0].message
    p = preview("x.json", b"{", None, [], [])
    assert p.errors[0].message.startswith("not valid JSON")


def test_validator_accepts_both_kinds() -> None:
    load = load_pmb(require(PMB_DIR))
    validate = validate_any(load.fixture)
    validate("r.json", (PMB_DIR / "test-results/baseline/retrieval-report-mem0.json").read_bytes())
    validate("m.json", require(MEMOBASE_0503).read_bytes())
