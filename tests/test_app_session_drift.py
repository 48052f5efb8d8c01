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
TICKS = [*(str(i) for i in range(11)), "s2·0"]
"""The turn axis, in the order a session runs its turns: turn 0 to 10, then the second session's turn 0."""
POSITIONS = list(range(12))
SYSTEMS = 11


def run_app(**query: str) -> AppTest:
    """The session drift page after its first run with the given URL query parameters."""
    return run_page(PAGE, **query)


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def trace(spec: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(t for t in spec["data"] if t["name"] == name)
    return found


def axes(layout: dict[str, Any], letter: str) -> list[dict[str, Any]]:
    """Every x (or y) axis of a figure's layout: one per panel."""
    return [v for k, v in layout.items() if k.startswith(f"{letter}axis")]


def test_gbrain_is_flagged_as_returning_nothing() -> None:
    at = run_app()
    assert "returned nothing on some turns" in at.warning[0].value
    empty = table(at, "display_name", "turns", "turns_returned_nothing", leading=True).set_index("display_name")
    assert (empty.loc["gbrain", "turns"], empty.loc["gbrain", "turns_returned_nothing"]) == (12, 12)
    assert empty.loc["gbrain", "turns_required_missing"] == 11
    assert "tenure" in empty.index  # tenure's turn 9: nothing returned, nothing required
    harness = specs(at)[0]
    # No point on gbrain's line: an empty answer is not drawn as drift 0.
    assert trace(harness, "gbrain")["y"] == [None] * 12
    nothing = trace(harness, "gbrain: returned nothing")
    assert nothing["x"] == POSITIONS
    assert nothing["marker"]["symbol"] == "circle-open"
    assert all(y < 0 for y in nothing["y"])
    assert trace(harness, "tenure: returned nothing")["x"] == [9]
    assert harness["layout"]["yaxis"]["ticktext"][0] == "returned nothing"


def test_turn_axis_in_session_order_and_drift_lines() -> None:
    harness = specs(run_app())[0]
    layout = harness["layout"]
    for xaxis in axes(layout, "x"):  # numeric positions, labelled in the order the session runs them
        assert (xaxis["tickvals"], xaxis["ticktext"]) == (POSITIONS, TICKS)
        assert xaxis["range"] == [-0.5, 11.5]
    mem0 = trace(harness, "mem0")
    assert mem0["x"] == POSITIONS  # turn 0 first, never after turn 10
    assert mem0["y"][0] == pytest.approx(1 - 1 / 18, abs=0.1)  # mostly noise
    assert all(s == "x" for s in mem0["marker"]["symbol"])  # mem0 fails every turn
    assert mem0["customdata"][0][0] == "0 · establishes_topic" and mem0["customdata"][-1][0].endswith("(case 2)")
    tenure = trace(harness, "tenure")
    assert tenure["y"][:9] == [0.0] * 9
    assert set(tenure["marker"]["symbol"]) == {"circle"}
    assert "noise ids" in tenure["hovertemplate"]
    # Turns 1-8 drift: one shaded band per panel.
    bands = [s for s in layout["shapes"] if s["type"] == "rect"]
    assert len(bands) == SYSTEMS and {(s["x0"], s["x1"]) for s in bands} == {(0.5, 8.5)}


def test_one_panel_per_system_in_leaderboard_order() -> None:
    at = run_app()
    order = [getattr(e, "type", "") for e in at.main][1:]
    assert order[0] == "title" and at.title[0].value == "Session drift"  # nothing before the title
    assert order.index("plotly_chart") < min(order.index("dataframe"), order.index("markdown"))  # answer first
    harness = specs(at)[0]
    titles = [a["text"] for a in harness["layout"]["annotations"]]
    assert titles[:3] == ["tenure", "gbrain", "yourmemory"] and len(titles) == SYSTEMS
    lines = [t for t in harness["data"] if t.get("showlegend") is False and ": " not in t["name"]]
    assert [t["name"] for t in lines] == titles
    assert len(axes(harness["layout"], "x")) == 12  # a 3 x 4 grid, the last cell empty


def test_a_large_suite_shows_its_leaders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pages.ui.SESSION_SYSTEMS", 4)  # the shared data's 11 session systems count as many
    at = run_app()
    assert at.number_input[0].value == 4
    titles = [a["text"] for a in specs(at)[0]["layout"]["annotations"]]
    assert titles == ["tenure", "gbrain", "yourmemory", titles[3]] and len(titles) == 4
    assert len(specs(run_app(top="7"))[0]["layout"]["annotations"]) == 7


def test_measure_from_the_url() -> None:
    at = run_app(measure="topic")
    assert at.radio(key="choice-measure").value == "topic"
    topic = specs(at)[0]
    assert topic["layout"]["title"]["text"].startswith("Topic drift per turn")
    assert trace(topic, "tenure")["y"][:9] == [0.0] * 9
    at = run_app(measure="sideways")
    assert "measure=sideways" in at.warning[0].value
    assert specs(at)[0]["layout"]["title"]["text"].startswith("Harness drift")


def test_every_chart_has_a_title_axis_titles_and_a_legend_clear_of_the_toolbar() -> None:
    for at in (run_app(), run_app(measure="topic", latency="absolute")):
        for spec in specs(at):
            layout = spec["layout"]
            assert layout["title"]["text"]
            assert any(a.get("title", {}).get("text") == "Turn" for a in axes(layout, "x"))
            assert all(a.get("title", {}).get("text") for a in (layout["yaxis"],))
            legend = layout["legend"]
            assert legend["orientation"] == "h" and legend["y"] <= 0
    drift = specs(run_app())[0]
    assert [t["name"] for t in drift["data"] if t.get("showlegend") is not False] == [
        "Turn passed",
        "Turn failed",
        "Returned nothing",
        "Drift turns (shaded)",
    ]


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
    timeline = table(at, "display_name", "case_id", "turn_index", leading=True)
    assert len(timeline) == 132
    gbrain = timeline[timeline["display_name"].str.endswith("#gbrain")]
    assert set(gbrain["turn_status"]) == {
        "returned nothing: required belief missing",
        "returned nothing: nothing required",
    }
    assert "status" in pd.read_csv(io.BytesIO(downloads["memeval-session-timeline.csv"])).columns


def test_tables_show_registry_headers() -> None:
    at = run_app()
    for d in at.dataframe:
        config = json.loads(d.proto.columns)
        for key, column in config.items():
            if "label" in column:
                assert "_" not in column["label"] and column["help"], (key, column)
    (timeline,) = [d for d in at.dataframe if "turn_status" in d.value.columns]
    assert json.loads(timeline.proto.columns)["turn_status"]["label"] == "Outcome"


def test_latency_against_single_turn_p50() -> None:
    at = run_app()
    ratios = table(at, "display_name", "session_p50_ms", leading=True).set_index("display_name")
    assert ratios.loc["tenure", "ratio"] == pytest.approx(4.89, abs=0.005)
    assert ratios.loc["mem0", "ratio"] == pytest.approx(5.82, abs=0.005)
    assert ratios.loc["tenure", "single_turn_p50_ms"] == 9.77
    latency = specs(at)[1]
    layout = latency["layout"]
    assert layout["yaxis"]["type"] == "log"
    assert layout["yaxis"]["title"]["text"] == "× single-turn"
    assert [s["y0"] for s in layout["shapes"] if s["type"] == "line"] == [1] * SYSTEMS
    assert trace(latency, "tenure")["x"] == POSITIONS
    absolute = specs(run_app(latency="absolute"))[1]
    assert absolute["layout"]["yaxis"]["title"]["text"] == "Latency"
    assert absolute["layout"]["title"]["text"] == "Retrieval latency per turn, in milliseconds"


def test_latency_log_ticks_label_real_values() -> None:
    ratio = specs(run_app())[1]["layout"]["yaxis"]
    assert all(t.endswith("×") for t in ratio["ticktext"])
    assert [float(t[:-1]) for t in ratio["ticktext"]] == ratio["tickvals"]
    assert {"1×", "10×"} <= set(ratio["ticktext"])
    absolute = specs(run_app(latency="absolute"))[1]["layout"]["yaxis"]
    for value, text in zip(absolute["tickvals"], absolute["ticktext"], strict=True):
        number, unit = text.split(" ")
        assert float(number.replace(",", "")) * (1000 if unit == "s" else 1) == pytest.approx(value)
