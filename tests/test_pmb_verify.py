"""Verification finds exactly the real mismatches on the shared data, and catches planted ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memeval_core.pmb.ingest import load_pmb
from tests._data import PMB_DIR, require


def test_real_mismatches_on_shared_data() -> None:
    load = load_pmb(require(PMB_DIR))
    found = {r.identity.display_name + "/" + r.identity.benchmark: r.mismatches for r in load.runs if r.mismatches}
    assert sorted(found) == ["mem0/pmb-single-turn", "qwen3 (vector)/pmb-single-turn", "vector (nomic)/pmb-single-turn"]
    # The embedding variants state pass types their own per-case data does not support.
    assert found["vector (nomic)/pmb-single-turn"] == (
        "$.retrieval.activeRetrievalPasses: stated 1, re-derived 0",
        "$.retrieval.passTypes.activeRetrieval: stated 1, re-derived 0",
        "$.retrieval.passTypes.structural: stated 0, re-derived 8",
        "$.retrieval.passTypes.triviallyEmpty: stated 10, re-derived 3",
    )
    assert found["qwen3 (vector)/pmb-single-turn"] == (
        "$.retrieval.activeRetrievalPasses: stated 1, re-derived 0",
        "$.retrieval.passTypes.activeRetrieval: stated 1, re-derived 0",
        "$.retrieval.passTypes.structural: stated 7, re-derived 8",
    )
    # mem0's category block counts one Scope disambiguation case as Cross-user isolation,
    # although its own per-case entry says Scope disambiguation.
    assert found["mem0/pmb-single-turn"][0] == "$.retrieval.categories[1].caseCount: stated 11, re-derived 12"
    assert len(found["mem0/pmb-single-turn"]) == 7


def test_planted_mismatches_are_found(tmp_path: Path) -> None:
    pmb = require(PMB_DIR)
    shutil.copytree(pmb / "fixtures", tmp_path / "fixtures")
    data = json.loads((pmb / "test-results/baseline/retrieval-report-tenure.json").read_text())
    data["retrieval"]["p95LatencyMs"] = 1.0
    data["cases"][0]["passed"] = False
    (tmp_path / "retrieval-report-tenure.json").write_text(json.dumps(data))
    (run,) = load_pmb(tmp_path).runs
    assert "$.retrieval.p95LatencyMs: stated 1, re-derived 53.99" in run.mismatches
    first = data["cases"][0]["caseId"]
    assert f"$.cases[0].passed ({first}): stated false, re-derived true" in run.mismatches
    assert not run.verified


def test_changing_returned_ids_changes_the_verdict(tmp_path: Path) -> None:
    pmb = require(PMB_DIR)
    shutil.copytree(pmb / "fixtures", tmp_path / "fixtures")
    data = json.loads((pmb / "test-results/baseline/retrieval-report-tenure.json").read_text())
    idx = next(i for i, c in enumerate(data["cases"]) if c["caseId"] == "happy-alias-match-kubernetes")
    data["cases"][idx]["relevantBeliefs"].append("b-react-entity")
    (tmp_path / "retrieval-report-tenure.json").write_text(json.dumps(data))
    (run,) = load_pmb(tmp_path).runs
    assert run.aggregate.passed == 76
    assert run.aggregate.pass_types["active_retrieval"] == 42
    assert any(m.startswith(f"$.cases[{idx}].passed") for m in run.mismatches)
    assert "$.retrieval.totalPassed: stated 77, re-derived 76" in run.mismatches


def test_ingestion_totals_are_checked_against_per_belief_timings(tmp_path: Path) -> None:
    pmb = require(PMB_DIR)
    shutil.copytree(pmb / "fixtures", tmp_path / "fixtures")
    data = json.loads((pmb / "test-results/baseline/retrieval-report-a-mem.json").read_text())
    assert data["ingestion"]["perBelief"], "a-mem records per-belief ingestion timings"
    data["ingestion"]["totalMs"] = 5.0
    (tmp_path / "retrieval-report-a-mem.json").write_text(json.dumps(data))
    (run,) = load_pmb(tmp_path).runs
    assert run.mismatches == ("$.ingestion.totalMs: stated 5, re-derived 178773.93",)
