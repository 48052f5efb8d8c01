"""The session drift page over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import run_page, table

pytestmark = pytest.mark.usefixtures("pmb_env")
PAGE = "pages/session_drift.py"
TURNS = [
    "0 · establishes_topic",
    *(f"{i} · drift" for i in range(1, 9)),
    "9 · implicit_continuation",
    "10 · re_entry",
    "0 · implicit_continuation (case 2)",
]


def run_app(**query: str) -> AppTest:
    """The session drift page after its first run with the given URL query parameters."""
    return run_page(PAGE, **query)


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_gbrain_is_flagged_as_returning_nothing() -> None:
    at = run_app()
    assert "returned nothing on some turns" in at.warning[0].value
    empty = table(at, "display_name", "turns", "returned_nothing", leading=True).set_index("display_name")
    assert (empty.loc["gbrain", "turns"], empty.loc["gbrain", "returned_nothing"]) == (12, 12)
    assert empty.loc["gbrain", "required_missing"] == 11
    assert "tenure" in empty.index  # tenure's turn 9: nothing returned, nothing required
    harness = specs(at)[0]
    gbrain = next(t for t in harness["data"] if t["name"] == "gbrain")
    # No point on gbrain's line: an empty answer is not drawn as drift 0.
    assert gbrain["y"] == [None] * 12
    nothing = next(t for t in harness["data"] if t["name"] == "returned nothing")
    assert nothing["x"] == TURNS
    assert all("gbrain" in c for c in nothing["customdata"])
    assert nothing["marker"]["symbol"] == "circle-open"
    assert all(y < 0 for y in nothing["y"])
    assert harness["layout"]["yaxis"]["ticktext"][0] == "returned nothing"


def test_turn_axis_and_drift_lines() -> None:
    harness, topic, _ = specs(run_app())
    assert harness["layout"]["xaxis"]["title"]["text"] == "turn index · label"
    assert harness["layout"]["xaxis"]["categoryarray"] == TURNS
    mem0 = next(t for t in harness["data"] if t["name"] == "mem0")
    assert mem0["x"] == TURNS
    assert mem0["y"][0] == pytest.approx(1 - 1 / 18, abs=0.1)  # mostly noise
    assert all(s == "x" for s in mem0["marker"]["symbol"])  # mem0 fails every turn
    tenure = next(t for t in harness["data"] if t["name"] == "tenure")
    assert tenure["y"][:9] == [0.0] * 9
    assert set(tenure["marker"]["symbol"]) == {"circle"}
    assert "noise ids" in tenure["hovertemplate"]
    # Eight drift turns shaded.
    assert len(harness["layout"]["shapes"]) == 8
    assert topic["layout"]["yaxis"]["title"]["text"] == "topic drift (README definition)"


def test_both_drift_definitions_explained() -> None:
    text = " ".join(m.value for m in run_app().markdown)
    assert "**Harness drift**" in text and "`1 − precision`" in text
    assert "**Topic drift** (the benchmark README's definition)" in text
    assert "not isolation" in text


def test_noise_and_drift_turn_topics(downloads: dict[str, bytes]) -> None:
    at = run_app()
    topics = table(at, "case_id", "turn_index", "topics", "introduced", leading=True)
    assert len(topics) == 8
    assert topics["introduced"].iloc[0] == "kubernetes-probes"
    noise = table(at, "display_name", "turn", "topics", "passed", "noise_ids", leading=True)
    assert len(noise) == 20
    first = noise.iloc[0]
    assert (first["display_name"], first["turn"]) == ("yourmemory", "10 · re_entry")
    assert first["noise_ids"] == "b-kubernetes-entity, b-react-entity"
    saved = pd.read_csv(io.BytesIO(downloads["memeval-session-noise.csv"]))
    assert list(saved["noise_ids"]) == list(noise["noise_ids"])
    timeline = table(at, "display_name", "run_id", "case_id", leading=True)
    assert len(timeline) == 132
    assert set(timeline.loc[timeline["display_name"] == "gbrain", "status"]) == {
        "returned nothing: required belief missing",
        "returned nothing: nothing required",
    }


def test_latency_against_single_turn_p50() -> None:
    at = run_app()
    ratios = table(at, "display_name", "session_run_id", leading=True).set_index("display_name")
    assert ratios.loc["tenure", "ratio"] == pytest.approx(4.89, abs=0.005)
    assert ratios.loc["mem0", "ratio"] == pytest.approx(5.82, abs=0.005)
    assert ratios.loc["tenure", "single_turn_p50_ms"] == 9.77
    chart = specs(at)[2]
    assert chart["layout"]["yaxis"]["type"] == "log"
    assert chart["layout"]["yaxis"]["title"]["text"] == "× single-turn p50"
    assert [s["y0"] for s in chart["layout"]["shapes"]] == [1]
    absolute = specs(run_app(latency="absolute"))[2]
    assert absolute["layout"]["yaxis"]["title"]["text"] == "latency (ms)"
