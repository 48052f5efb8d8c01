"""Publish page: preview, diff against the last export, and a push with the CLI's behaviour."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.hub_standin import HUB_TOKEN

ROOT = Path(__file__).resolve().parents[1]
SPACE = "standin-user/memeval-board"


@pytest.fixture
def setup(pmb_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "results"
    shutil.copytree(pmb_results / "fixtures", root / "fixtures")
    for name in ("retrieval-report-tenure.json", "retrieval-report-mem0.json"):
        shutil.copy(pmb_results / "test-results/baseline" / name, root / name)
    monkeypatch.setenv("MEMEVAL_RESULTS", str(root))
    monkeypatch.setenv("MEMEVAL_EXPORT_DIR", str(tmp_path / "hf_export"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.delenv("MEMEVAL_READ_ONLY", raising=False)
    return tmp_path / "hf_export"


def page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "publish.py"), default_timeout=120)
    at.session_state["memeval-navigated"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def everything_shown(at: AppTest) -> str:
    kinds = ("markdown", "error", "success", "info", "caption", "code", "json", "text", "warning")
    return "\n".join(str(getattr(e, "value", "")) for kind in kinds for e in at.get(kind))


def push(at: AppTest, token: str, dry_run: bool) -> AppTest:
    at.text_input(key="space").set_value(SPACE)
    at.text_input(key="hf_token").set_value(token)
    at.checkbox(key="dry_run").set_value(dry_run)
    at.run()
    next(b for b in at.button if b.label == "Push").click().run()
    return at


def test_preview_diff_and_push(setup: Path, hub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN")
    at = page()
    shown = everything_shown(at)
    assert "leaderboard.json" in shown and "sdk: docker" in shown
    assert "Last export: `none`" in shown and "2 row(s) added" in shown
    push(at, HUB_TOKEN, dry_run=True)
    assert any(s.value.startswith("Dry run:") for s in at.success)
    assert hub.commits == [] and not setup.exists()
    push(at, HUB_TOKEN, dry_run=False)
    (commit,) = hub.commits
    fingerprint = (setup / "leaderboard.json").read_text().split('"fingerprint": "')[1][:64]
    assert fingerprint in commit.message
    push(at, HUB_TOKEN, dry_run=False)
    assert len(hub.commits) == 1
    assert "nothing committed" in at.success[-1].value
    assert HUB_TOKEN not in everything_shown(at)


def test_bad_token_is_one_sentence_and_never_shown(setup: Path, hub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN")
    wrong = "hf_" + "NotTheToken" * 4
    at = push(page(), wrong, dry_run=False)
    (err,) = at.error
    assert err.value.startswith("The Hugging Face Hub rejected the token (401 Unauthorized)"), err.value
    assert not setup.exists(), "a failed push leaves the last export as it was"
    assert wrong not in everything_shown(at)
    assert hub.commits == []


def test_read_only(setup: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_READ_ONLY", "1")
    at = page()
    assert "read-only" in everything_shown(at) and not at.button
