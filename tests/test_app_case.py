"""The case page: one case across every provider, driven through ``?case=`` (Streamlit AppTest)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import run_page, table

pytestmark = pytest.mark.usefixtures("pmb_env")
PAGE = "pages/case.py"
MAIN = "session-drift-noise-10-turns-implicit-redis"


def run_app(**query: str) -> AppTest:
    """The case page after its first run with the given URL query parameters."""
    return run_page(PAGE, **query)


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
