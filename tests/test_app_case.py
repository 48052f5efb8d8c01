"""The case page: one case across every provider, driven through ``?case=`` (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = "pages/case.py"
MAIN = "session-drift-noise-10-turns-implicit-redis"


@pytest.fixture(autouse=True)
def pmb_env(pmb_results: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the public PMB data."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(pmb_results))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return pmb_results


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Bytes handed to every download button, by file name."""
    seen: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(
        self: MemoryMediaFileStorage, data: str | bytes, mimetype: str, kind: Any, filename: str | None = None
    ) -> str:
        if filename is not None and isinstance(data, bytes):
            seen[filename] = data
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def run_app(**query: str) -> AppTest:
    """The case page after its first run with the given URL query parameters."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def table(at: AppTest, column: str) -> pd.DataFrame:
    """The one shown table with ``column``."""
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(found) == 1, f"{column}: {len(found)} tables"
    value: pd.DataFrame = found[0]
    return value


def test_single_turn_case_across_providers(downloads: dict[str, bytes]) -> None:
    at = run_app(case="alias-kube-resolves")
    assert at.selectbox(key="case").value == "alias-kube-resolves"
    assert "Alias resolution: Alias 'kube' drives text search retrieval" in [t.value for t in at.text]
    assert "1 of 13 providers passed. Rows in leaderboard rank order." in [c.value for c in at.caption]
    who = table(at, "n_correct").set_index("display_name")
    assert len(who) == 13 and "drift" not in who.columns
    assert bool(who.loc["tenure", "passed"]) and who.loc["tenure", "pass_type"] == "active_retrieval"
    assert (who.loc["tenure", "latency_ms"], who.loc["mem0", "latency_ms"]) == (40.72, 81.59)
    assert who.loc["mem0", "precision"] == pytest.approx(1 / 9)
    assert "b-redis-code" in who.loc["mem0", "failures"]
    ids = table(at, "id")
    assert list(ids.columns[:4]) == ["tier", "id", "tenure", "gbrain"]
    gha = ids[(ids["tier"] == "relevant") & (ids["id"] == "b-ci-gha-entity")].iloc[0]
    assert (gha["tenure"], gha["gbrain"], gha["mem0"]) == ("correct", "missing", "correct")
    saved = json.loads(downloads["memeval-case-alias-kube-resolves-ids.json"])
    assert len(saved) == len(ids)
    saved_who = pd.read_csv(io.BytesIO(downloads["memeval-case-alias-kube-resolves-providers.csv"]))
    assert list(saved_who["display_name"]) == list(who.index)


def test_session_turn_case() -> None:
    at = run_app(case=f"{MAIN}/3")
    assert "Session turn 3 (drift); topics: error-handling-team-debate" in [t.value for t in at.text]
    assert "1 of 11 providers passed. Rows in leaderboard rank order." in [c.value for c in at.caption]
    who = table(at, "n_correct").set_index("display_name")
    assert bool(who.loc["gbrain", "returned_nothing"]) and not bool(who.loc["gbrain", "passed"])
    assert who.loc["tenure", "drift"] == 0.0
    exp = table(at, "assertion")
    assert exp["value"].iloc[0] == "b-error-handling, b-ts-pref, b-fastify-pref"


def test_default_and_unknown_case() -> None:
    assert run_app().selectbox(key="case").value == "happy-stack-repository-layer"
    at = run_app(case="<script>")
    assert at.selectbox(key="case").value == "happy-stack-repository-layer"
    failures = run_app(case="happy-stack-repository-layer").expander
    assert any(e.label.startswith("Failure messages (") for e in failures)
