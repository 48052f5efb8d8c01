"""The categories page, driven through URL query parameters over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from memeval_core.pmb.ingest import load_pmb
from tests.apptest import run_page

pytestmark = pytest.mark.usefixtures("pmb_env")
PAGE = "pages/categories.py"
RANKED = [
    "tenure",
    "gbrain",
    "supermemory",
    "yourmemory",
    "qwen3 (vector)",
    "vector",
    "vector (nomic)",
    "atomicmemory",
    "zep",
    "hindsight",
    "mem0",
    "a-mem",
    "agentmemory",
]


def run_app(**query: str) -> AppTest:
    """The categories page after its first run with the given URL query parameters."""
    return run_page(PAGE, **query)


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_heatmap_categories_in_benchmark_order_with_pass_rates(pmb_results: Path) -> None:
    fixture = load_pmb(pmb_results / "test-results", pmb_results / "fixtures").fixture
    assert fixture is not None
    (heat,) = specs(run_app())[0]["data"]
    assert heat["type"] == "heatmap"
    assert heat["x"] == list(fixture.category_order)
    assert heat["x"][:3] == ["Alias resolution", "Scope disambiguation", "Fuzzy matching and prefix guards"]
    assert heat["y"] == RANKED
    z = dict(zip(heat["y"], heat["z"], strict=True))
    assert z["tenure"] == [1.0] * 13
    assert z["gbrain"][:3] == pytest.approx([3 / 23, 9 / 12, 2 / 7])
    assert heat["text"][1][:3] == ["13%", "75%", "29%"]
    assert (heat["zmin"], heat["zmax"]) == (0, 1)
    layout = specs(run_app())[0]["layout"]
    assert layout["title"]["text"].startswith("Pass rate by system and category")
    assert (layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]) == ("Category", "System")
    # The category names above the cells and the title pinned above them: both on the first screen however many
    # systems the map holds.
    assert layout["xaxis"]["side"] == "top" and (layout["title"]["yref"], layout["title"]["y"]) == ("container", 1)


def test_metric_from_the_url(downloads: dict[str, bytes]) -> None:
    at = run_app(metric="mean_precision")
    assert at.radio(key="choice-metric").value == "mean_precision"
    (heat,) = specs(at)[0]["data"]
    z = dict(zip(heat["y"], heat["z"], strict=True))
    # Precision is undefined (an empty cell) where nothing was expected and nothing returned.
    undefined = [6, 8, 11, 12]  # persona prelude, supersession, cross-user isolation, cold start
    assert [i for i, v in enumerate(z["tenure"]) if v is None] == undefined
    assert all(heat["text"][0][i] == "" for i in undefined)
    assert all(v == 1.0 for v in z["tenure"] if v is not None)
    # mem0 returns almost everything: precision near zero wherever it is defined.
    assert z["mem0"][0] == pytest.approx(0.097631, abs=1e-6)
    assert all(v is None or v < 0.12 for v in z["mem0"])
    csv = pd.read_csv(io.BytesIO(downloads["memeval-categories-pmb-single-turn-mean_precision.csv"]))
    assert list(csv["display_name"]) == RANKED
    assert list(csv.columns[1:]) == heat["x"]
    assert csv.loc[csv["display_name"] == "mem0", "Alias resolution"].iloc[0] == pytest.approx(z["mem0"][0])


def test_an_unknown_metric_in_the_link_is_named() -> None:
    at = run_app(metric="nope")
    assert [w.value for w in at.warning] == [
        "The link asks for metric=nope, which is not here; showing Pass rate instead."
    ]


def test_session_heatmap() -> None:
    (heat,) = specs(run_app(benchmark="pmb-session"))[0]["data"]
    assert heat["x"] == ["Session-level noise isolation"]
    assert len(heat["y"]) == 11
    z = dict(zip(heat["y"], heat["z"], strict=True))
    assert z["tenure"] == [1.0]
    assert z["gbrain"] == [pytest.approx(1 / 12)]


def test_pass_quality_bars_and_reference_lines() -> None:
    at = run_app()
    bars = specs(at)[1]
    by_type = {t["name"]: t["y"] for t in bars["data"]}
    assert bars["data"][0]["x"] == RANKED
    assert by_type["Active passes"][:3] == [43, 5, 4]
    assert by_type["Structural passes"][:2] == [25, 20]
    assert by_type["Empty passes"][:2] == [9, 9]
    assert bars["layout"]["yaxis"]["title"]["text"] == "Passed cases (of 77)"
    assert bars["layout"]["legend"]["y"] < 0, "the legend sits below the plot, away from the toolbar"
    lines = sorted((s["y0"], s["line"]["dash"]) for s in bars["layout"]["shapes"])
    assert lines == [(1, "dot"), (22, "dash")]
    notes = {a["text"] for a in bars["layout"]["annotations"]}
    assert notes == {"returns nothing: 22", "returns everything: 1"}
    text = " ".join(m.value for m in at.markdown)
    assert "A system that returns nothing passes 22 of 77 (0 active, 15 structural, 7 trivially empty)" in text
    assert "one that returns everything passes 1 of 77" in text
    assert "assumed satisfied for the references; 8 of their passes rest on that" in text


def test_tables_and_downloads(downloads: dict[str, bytes]) -> None:
    at = run_app()
    quality, refs = (d.value for d in at.dataframe)
    quality = quality.assign(display_name=[v.split("#", 1)[1] for v in quality["display_name"]])
    assert list(quality["display_name"]) == RANKED
    assert (quality["active_retrieval"] + quality["structural"] + quality["trivially_empty"] == quality["passed"]).all()
    assert list(refs["display_name"]) == ["Reference: returns nothing", "Reference: returns everything"]
    assert list(refs["passed"]) == [22, 1]
    saved = json.loads(downloads["memeval-reference-systems-pmb-single-turn.json"])
    assert [r["passed"] for r in saved] == [22, 1]
    saved_quality = pd.read_csv(io.BytesIO(downloads["memeval-pass-quality-pmb-single-turn.csv"]))
    assert set(quality.columns) < set(saved_quality.columns) and "run_id" in saved_quality.columns
    assert list(saved_quality["passed"]) == list(quality["passed"])
