"""The case page: one case across every system, driven through ``?case=`` (Streamlit AppTest)."""

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


def who(at: AppTest) -> pd.DataFrame:
    """The per-system table, indexed by system name (its cells are links to the run pages)."""
    df = table(at, "n_correct")
    return df.set_index(pd.Index([v.split("#", 1)[1] for v in df["display_name"]], name="system"))


def test_single_turn_case_across_providers(downloads: dict[str, bytes]) -> None:
    at = run_app(case="alias-kube-resolves")
    assert at.selectbox(key="choice-case").value == "alias-kube-resolves"
    assert "Alias resolution: Alias 'kube' drives text search retrieval" in [t.value for t in at.text]
    assert at.markdown[0].value == "1 of 13 systems passes this case: **tenure**."
    board = who(at)
    assert len(board) == 13 and "harness_drift" not in board.columns and "run_id" not in board.columns
    assert bool(board.loc["tenure", "passed"]) and board.loc["tenure", "pass_type"] == "active"
    assert board.loc["mem0", "pass_type"] == "—"  # failed: no pass type
    assert (board.loc["tenure", "latency_ms"], board.loc["mem0", "latency_ms"]) == (40.72, 81.59)
    assert board.loc["mem0", "precision"] == pytest.approx(1 / 9)
    assert board.loc["mem0", "failures"] == 16  # the messages are in the failure table and the download
    assert (
        board.loc["tenure", "n_pinned"],
        board.loc["tenure", "n_relevant"],
        board.loc["tenure", "n_open_questions"],
    ) == (
        2,
        2,
        1,
    )
    ids = table(at, "gold")
    assert list(ids.columns[:6]) == ["tier", "id", "belief", "gold", "tenure", "gbrain"]
    gha = ids[(ids["tier"] == "Relevant beliefs") & (ids["id"] == "b-ci-gha-entity")].iloc[0]
    assert (gha["tenure"], gha["gbrain"], gha["mem0"], bool(gha["gold"])) == (
        "✓ correct",
        "○ missing",
        "✓ correct",
        True,
    )
    assert gha["belief"].startswith("CI/CD runs on GitHub Actions.")
    saved = json.loads(downloads["memeval-case-alias-kube-resolves-ids.json"])
    assert len(saved) == len(ids)
    assert next(r for r in saved if r["id"] == "b-ci-gha-entity" and r["tier"] == "relevant")["gbrain"] == "missing"
    saved_who = pd.read_csv(io.BytesIO(downloads["memeval-case-alias-kube-resolves-providers.csv"]))
    assert list(saved_who["display_name"]) == list(board.index)
    assert "b-redis-code" in saved_who.set_index("display_name").loc["mem0", "failures"]
    assert "b-redis-code" in " ".join(table(at, "failure", "from_report")["failure"])


def test_every_belief_id_is_shown_with_its_text() -> None:
    at = run_app(case="happy-stack-repository-layer")
    expected = table(at, "expected").set_index("id")
    assert expected.loc["b-db-decision", "belief"] == "Decided on MongoDB after evaluating Postgres. Raw driver only."
    assert expected.loc["b-db-decision", "expected"] == "pinned facts: must include"
    assert expected.loc["b-auth-open-q", "expected"] == "open questions: must include"
    ids = table(at, "gold")
    assert len(ids) > 30
    assert all(isinstance(t, str) and len(t) > 10 and t != "(not in beliefs.seed.json)" for t in ids["belief"])
    texts = [t.value for t in at.text]
    assert "Relevant beliefs: none expected; anything returned there fails the case." in texts


def test_returned_nothing_only_when_every_tier_is_empty() -> None:
    # tenure's relevant tier is empty on this case, but it returned a pinned fact and an open question.
    board = who(run_app(case="happy-stack-repository-layer"))
    assert not board["returned_nothing"].any()
    assert (board.loc["tenure", "n_relevant"], board.loc["tenure", "n_returned"]) == (0, 3)
    # A cold-start user: tenure returns no id in any tier.
    cold = who(run_app(case="cold-start-user-no-beliefs"))
    assert bool(cold.loc["tenure", "returned_nothing"]) and cold.loc["tenure", "n_returned"] == 0
    assert (cold["returned_nothing"] == (cold["n_returned"] == 0)).all()


def test_session_turn_case() -> None:
    at = run_app(case=f"{MAIN}/3")
    assert "Session turn 3 (drift); topics: error-handling-team-debate" in [t.value for t in at.text]
    assert at.markdown[0].value == "1 of 11 systems passes this turn: **tenure**."
    board = who(at)
    # gbrain returned the pinned facts and no relevant belief: it did not return nothing.
    assert not bool(board.loc["gbrain", "returned_nothing"]) and not bool(board.loc["gbrain", "passed"])
    assert (board.loc["gbrain", "n_pinned"], board.loc["gbrain", "n_relevant"]) == (2, 0)
    assert pd.isna(board.loc["gbrain", "n_open_questions"])  # session reports do not record the tier
    assert board.loc["tenure", "harness_drift"] == 0.0
    exp = table(at, "assertion")
    assert exp["value"].iloc[0] == "b-error-handling, b-ts-pref, b-fastify-pref"


def test_default_and_unknown_case() -> None:
    at = run_app()
    assert at.selectbox(key="choice-case").value == "happy-stack-repository-layer"
    assert not at.warning
    at = run_app(case="<script>")
    assert at.selectbox(key="choice-case").value == "happy-stack-repository-layer"
    (warning,) = [w.value for w in at.warning]
    assert warning == (
        "The link asks for case=\\<script\\>, which is not a case of the fixture; "
        "showing happy\\-stack\\-repository\\-layer instead."
    )
    assert "case" not in at.query_params
    failures = run_app(case="happy-stack-repository-layer").expander
    assert any(e.label.startswith("Failure messages (") for e in failures)


def test_picking_a_case_writes_the_url() -> None:
    at = run_app()
    at.selectbox(key="choice-case").set_value("alias-kube-resolves").run()
    assert not at.exception
    assert at.query_params["case"] == "alias-kube-resolves"
    assert at.markdown[0].value == "1 of 13 systems passes this case: **tenure**."
