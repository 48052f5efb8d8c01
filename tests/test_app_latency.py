"""The latency page, driven through URL query parameters over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import run_page, table

pytestmark = pytest.mark.usefixtures("pmb_env")
PAGE = "pages/latency.py"


def run_app(**query: str) -> AppTest:
    """The latency page after its first run with the given URL query parameters."""
    return run_page(PAGE, **query)


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_summary_table(downloads: dict[str, bytes]) -> None:
    df = table(run_app(), "p95_ms").set_index("display_name")
    assert len(df) == 13
    assert (df.loc["mem0", "p50_ms"], df.loc["mem0", "p95_ms"]) == (64.94, 156.89)
    assert df.loc["tenure", "p50_ms"] == 9.77
    assert df.loc["tenure", "ingestion_beliefs"] == 35
    assert df.loc["tenure", "ingestion_per_belief_ms"] == pytest.approx(984.62 / 35)
    assert pd.isna(df.loc["vector", "ingestion_total_ms"])
    saved = pd.read_csv(io.BytesIO(downloads["memeval-latency-pmb-single-turn.csv"]))
    assert saved.loc[saved["display_name"] == "mem0", "p50_ms"].iloc[0] == 64.94


def test_distribution_on_a_log_axis() -> None:
    box, ingestion, _ = specs(run_app())
    assert box["layout"]["xaxis"]["type"] == "log"
    names = [t["name"] for t in box["data"]]
    assert names[-1] == "tenure"  # leader on top
    assert len(names) == 13
    tenure = next(t for t in box["data"] if t["name"] == "tenure")
    assert len(tenure["x"]) == 77
    assert ingestion["layout"]["xaxis"]["type"] == "log"
    assert len(ingestion["data"]) == 9  # providers whose reports record per-belief ingestion


def test_pareto_frontier_active_passes() -> None:
    at = run_app()
    (front,) = [d.value for d in at.dataframe if "active_retrieval" in d.value.columns and "on_front" not in d.value]
    assert list(front["display_name"]) == ["tenure"]
    assert front["p50_ms"].iloc[0] == 9.77
    assert "**Pareto frontier (1 of 13), fastest first:**" in [m.value for m in at.markdown]
    scatter = specs(at)[2]
    assert scatter["layout"]["xaxis"]["type"] == "log"
    points, line = scatter["data"]
    assert len(points["x"]) == 13
    assert (line["x"], line["y"]) == ([9.77], [43.0])


def test_quality_from_the_url() -> None:
    at = run_app(quality="mean precision")
    assert at.segmented_control(key="quality").value == "mean precision"
    points = table(at, "on_front")
    assert "mean_precision" in points.columns
    assert list(points[points["on_front"]]["display_name"]) == ["tenure"]
    assert points.loc[points["display_name"] == "mem0", "mean_precision"].iloc[0] == pytest.approx(0.0558, abs=5e-5)


def test_session_suite() -> None:
    df = table(run_app(benchmark="pmb-session"), "p95_ms")
    assert len(df) == 11
    assert set(df["benchmark"]) == {"pmb-session"}
    assert df.loc[df["display_name"] == "tenure", "p50_ms"].iloc[0] == 47.79
