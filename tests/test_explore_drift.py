"""Session drift timeline on the real PMB session reports, and the topic attribution it rests on."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from memeval_core.explore.drift import (
    STATUS_CLEAN,
    STATUS_EMPTY_MISSING,
    STATUS_EMPTY_OK,
    drift_spans,
    drift_timeline,
    drift_turns,
    label_turns,
    returned_nothing_summary,
    session_latency,
    topic_map,
    turn_axis,
    turn_labels,
    turn_latency,
)
from memeval_core.pmb.ingest import PmbLoad, load_pmb

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "precisionmembench"
MAIN = "session-drift-noise-10-turns-implicit-redis"
CROSS = "cross-session-formative-turn-surfaces-via-belief-join"


@pytest.fixture(scope="module")
def pmb() -> PmbLoad:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    return load_pmb(DATA / "test-results", DATA / "fixtures")


def test_topic_map(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    tm = topic_map(pmb.fixture)
    # Turns 1-8 are drift turns, each with one new topic; turn 0's Redis topic is not drift.
    assert tm.drift_topics == {
        "kubernetes-probes",
        "react-websocket-dashboard",
        "error-handling-team-debate",
        "ci-pipeline-performance",
        "auth-token-decision",
        "functional-etl-pipeline",
        "biome-linting-config",
        "repository-design-patterns",
    }
    # Named as wanted in turns 0, 10 (Redis) and 5 (auth), never via the noise lists.
    assert tm.belief_topics["b-redis-code"] == {"redis-cache-performance", "auth-token-decision"}
    assert tm.belief_topics["b-kubernetes-entity"] == {"kubernetes-probes"}
    # Created at turn 4 (createBeliefAtTurn), so it belongs to the CI topic.
    assert tm.belief_topics["b-ci-parallel-decision"] == {"ci-pipeline-performance"}
    assert "b-hosting-resolved" not in tm.belief_topics
    turns = drift_turns(pmb.fixture)
    assert turns["turn_index"].tolist() == list(range(1, 9))
    assert turns.loc[0, "topics"] == ("kubernetes-probes",)


def test_gbrain_returned_nothing_is_flagged_not_isolation(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    t = drift_timeline(pmb.runs, pmb.fixture)
    g = t[t["display_name"] == "gbrain"]
    assert len(g) == 12
    # Every turn: empty relevant tier, harness drift 0 by construction, no topic-drift fraction.
    assert g["returned_nothing"].all()
    assert (g["harness_drift"] == 0).all()
    assert g["topic_drift"].isna().all()
    assert not (g["status"] == STATUS_CLEAN).any()
    # Turn 9 wants no relevant belief and gets its pinned fact: the one pass, flagged as an empty answer.
    t9 = g[(g["case_id"] == MAIN) & (g["turn_index"] == 9)].iloc[0]
    assert t9["passed"] and t9["status"] == STATUS_EMPTY_OK
    assert (g["status"] == STATUS_EMPTY_MISSING).sum() == 11
    assert g["passed"].sum() == 1


def test_tenure_has_no_drift(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    t = drift_timeline(pmb.runs, pmb.fixture)
    ten = t[t["display_name"] == "tenure"]
    assert ten["passed"].all() and (ten["harness_drift"] == 0).all()
    assert (ten["n_drift_beliefs"] == 0).all() and (ten["n_unattributed"] == 0).all()
    assert ten["noise_ids"].map(len).sum() == 0
    # Turn 9 returned nothing and nothing was wanted; every other turn is clean.
    assert (ten["status"] == STATUS_CLEAN).sum() == 11
    assert ten["returned_nothing"].sum() == 1
    # Fixture order: the main session first, then the cross-session case.
    assert ten["case_id"].tolist() == [MAIN] * 11 + [CROSS]
    assert ten["turn_index"].tolist() == [*range(11), 0]


def test_mem0_topic_drift_counts(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    t = drift_timeline(pmb.runs, pmb.fixture)
    m = t[(t["display_name"] == "mem0") & (t["case_id"] == MAIN)].set_index("turn_index")
    # Turn 9 (implicit continuation of the Redis topic).
    row = m.loc[9]
    assert row["n_returned"] == 18
    # Non-pinned: 18 minus the 8 pinned seeds it returned (comm-pushback, chapter-structure-q, comm-response-length,
    # narrator-voice, pinned-resolved-interaction, protagonist-entity, auth-open-q, prose-style-user-edited).
    assert row["n_non_pinned"] == 10
    # Drift beliefs: b-ci-gha-entity (CI) and b-functional-pipeline (ETL); the rest no turn names.
    assert set(row["drift_belief_ids"]) == {"b-ci-gha-entity", "b-functional-pipeline"}
    assert row["n_unattributed"] == 8
    assert row["topic_drift"] == pytest.approx(2 / 10)
    assert row["noise_ids"] == ("b-ci-gha-entity", "b-functional-pipeline")
    assert row["harness_drift"] == 1.0 and row["status"] == "drift"
    # On its own topic's turn a belief is not drift: turn 1 (Kubernetes) returns b-kubernetes-entity.
    assert "b-kubernetes-entity" not in m.loc[1, "drift_belief_ids"]
    assert "b-kubernetes-entity" in m.loc[0, "drift_belief_ids"]


def test_session_latency_ratio(pmb: PmbLoad) -> None:
    lat = session_latency(pmb.runs).set_index("display_name")
    assert len(lat) == 11
    assert lat.loc["tenure", "session_p50_ms"] == 47.79
    assert lat.loc["tenure", "single_turn_p50_ms"] == 9.77
    assert lat.loc["tenure", "ratio"] == pytest.approx(47.79 / 9.77)
    assert lat.loc["mem0", "ratio"] == pytest.approx(377.93 / 64.94)
    # The session "vector" run pairs with the single-turn run named "vector", not its nomic/qwen3 variants.
    assert lat.loc["vector", "single_turn_p50_ms"] == 71.87


def test_session_latency_without_single_turn_partner(pmb: PmbLoad) -> None:
    sessions = [r for r in pmb.runs if r.identity.benchmark == "pmb-session"]
    lat = session_latency(sessions)
    assert lat["single_turn_p50_ms"].isna().all() and lat["ratio"].isna().all()
    assert not math.isnan(lat["session_p50_ms"].iloc[0])


def test_turn_labels_are_unique_and_in_fixture_order(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    labels = turn_labels(pmb.fixture)
    assert list(labels.values())[:3] == ["0 · establishes_topic", "1 · drift", "2 · drift"]
    assert labels[(MAIN, 10)] == "10 · re_entry"
    assert labels[(CROSS, 0)] == "0 · implicit_continuation (case 2)"
    assert len(set(labels.values())) == len(labels) == 12


def test_label_turns_and_turn_latency(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    timeline = label_turns(drift_timeline(pmb.runs, pmb.fixture), pmb.fixture)
    assert list(timeline.columns[3:5]) == ["turn_index", "turn"]
    with pytest.raises(ValueError, match="not in the session fixture"):
        label_turns(pd.DataFrame({"case_id": ["nope"], "turn_index": [0]}), pmb.fixture)
    lat = turn_latency(pmb.runs, pmb.fixture)
    assert len(lat) == 132
    tenure = lat[lat["display_name"] == "tenure"]
    assert set(tenure["single_turn_p50_ms"]) == {9.77}
    first = tenure.iloc[0]
    assert first["turn"] == "0 · establishes_topic"
    assert first["ratio"] == pytest.approx(first["latency_ms"] / 9.77)


def test_returned_nothing_summary(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    summary = returned_nothing_summary(drift_timeline(pmb.runs, pmb.fixture)).set_index("display_name")
    assert summary.loc["gbrain"].to_dict() == {"turns": 12, "returned_nothing": 12, "required_missing": 11}
    assert summary.loc["tenure"].to_dict() == {"turns": 12, "returned_nothing": 1, "required_missing": 0}
    assert "mem0" not in summary.index


def test_turn_axis_is_numeric_and_in_session_order(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    axis = turn_axis(pmb.fixture)
    assert list(axis["position"]) == list(range(12))
    assert list(axis["turn"]) == list(turn_labels(pmb.fixture).values())
    assert list(axis["tick"]) == [*(str(i) for i in range(11)), "s2·0"]
    assert list(axis["turn_index"])[:3] == [0, 1, 2] and axis["case_id"].iloc[-1] == CROSS
    assert list(axis["is_drift_turn"]) == [False, *[True] * 8, False, False, False]
    assert drift_spans(axis) == [(1, 8)]


def test_drift_spans_split_at_non_drift_turns() -> None:
    axis = pd.DataFrame({"position": range(6), "is_drift_turn": [True, False, True, True, False, True]})
    assert drift_spans(axis) == [(0, 0), (2, 3), (5, 5)]
    assert drift_spans(axis.assign(is_drift_turn=False)) == []
