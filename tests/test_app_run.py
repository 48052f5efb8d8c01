"""The run page (AppTest): a run found by id or name, its headline, tables and verification."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apptest import run_page

PAGE = "pages/run.py"


@pytest.fixture(autouse=True)
def everything(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)


def test_the_leader_by_default_and_a_run_by_name() -> None:
    at = run_page(PAGE)
    assert [t.value for t in at.title] == ["tenure"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Pass rate": "100.0%", "Rank": "1 of 13", "Cases": "77", "Status": "✓ verified"}
    at = run_page(PAGE, run="mem0")
    assert at.query_params["run"].startswith("retrieval-report-mem0-")
    assert {m.label: m.value for m in at.metric}["Status"] == "✗ 7 mismatches"
    assert any("$.retrieval.categories[1].caseCount" in c.value for c in at.code)


def test_a_qa_run(shared_data: Path) -> None:
    from memeval_core.results import load_qa_results

    zep = next(q for q in load_qa_results(shared_data).runs if q.display_name == "zep")
    at = run_page(PAGE, run=zep.run_id)
    assert {m.label: m.value for m in at.metric}["Accuracy"] == "78.4%"
    assert any("top-k not stated" in c.value for c in at.code)


def test_an_unknown_run_is_named() -> None:
    at = run_page(PAGE, run="<img src=x>")
    (warning,) = at.warning
    assert "run=\\<img src=x\\>" in warning.value and "showing tenure" in warning.value
