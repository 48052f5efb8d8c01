"""Upload page: check files, show where a run would rank, save only on confirmation."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def results(pmb_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "results"
    shutil.copytree(pmb_results / "fixtures", root / "fixtures")
    shutil.copy(pmb_results / "test-results/baseline/retrieval-report-tenure.json", root / "tenure.json")
    monkeypatch.setenv("MEMEVAL_RESULTS", str(root))
    monkeypatch.delenv("MEMEVAL_READ_ONLY", raising=False)
    return root


def page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "upload.py"), default_timeout=120)
    at.session_state["memeval-navigated"] = True
    return at


def texts(at: AppTest) -> str:
    """Every message shown, with Markdown escapes removed (file names and messages are escaped on the page)."""
    parts = [e.value for kind in ("markdown", "error", "success", "info", "caption") for e in at.get(kind)]
    return re.sub(r"\\(.)", r"\1", "\n".join(str(p) for p in parts))


def test_valid_and_invalid_files_then_save(results: Path, pmb_results: Path) -> None:
    good = (pmb_results / "test-results/baseline/retrieval-report-mem0.json").read_bytes()
    doc = json.loads(good)
    doc["cases"][2]["caseId"] = "not-a-case"
    at = page()
    at.run()
    at.file_uploader[0].set_value(
        [("../../mem0 run.json", good, "application/json"), ("bad.json", json.dumps(doc).encode(), "application/json")]
    )
    at.run()
    shown = texts(at)
    assert "would be stored as `mem0-run.json`" in shown
    assert "$.cases[2].caseId: 'not-a-case' is not a case of retrieval.cases.json" in shown
    (table,) = [df.value for df in at.dataframe]
    assert table.iloc[0]["provisional_rank"] == "2 of 2" and table.iloc[0]["passed"] == 9
    assert not (results / "uploads").exists(), "nothing is written before confirmation"
    (save,) = [b for b in at.button if b.label.startswith("Save")]
    assert save.label == "Save 1 valid file(s) to the results directory"
    save.click().run()
    assert "mem0 run.json: saved as mem0-run.json" in texts(at)
    assert (results / "uploads" / "mem0-run.json").read_bytes() == good


def test_duplicate_is_not_stored_twice(results: Path, pmb_results: Path) -> None:
    tenure = (pmb_results / "test-results/baseline/retrieval-report-tenure.json").read_bytes()
    at = page()
    at.run()
    at.file_uploader[0].set_value(("copy.json", tenure, "application/json"))
    at.run()
    next(b for b in at.button if b.label.startswith("Save")).click().run()
    assert "copy.json: already stored (same SHA-256), not saved twice." in texts(at)
    assert not list((results / "uploads").iterdir()), "nothing written"


def test_read_only(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_READ_ONLY", "1")
    at = page()
    at.run()
    assert not at.exception
    assert "read-only" in texts(at) and not at.file_uploader
