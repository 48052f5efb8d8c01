"""The latency page, driven through URL query parameters over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
import math
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


def chart(at: AppTest, title_starts: str) -> dict[str, Any]:
    """The one chart whose in-figure title starts with ``title_starts``."""
    (found,) = [s for s in specs(at) if s["layout"]["title"]["text"].startswith(title_starts)]
    return found


def headers(at: AppTest, column: str) -> dict[str, str]:
    """Machine key -> shown header of the one table that has ``column``."""
    (found,) = [d for d in at.dataframe if column in d.value.columns]
    config = json.loads(found.proto.columns)
    return {k: v["label"] for k, v in config.items() if "label" in v}


def summary(at: AppTest) -> pd.DataFrame:
    """The per-system table with its system names (a linked column holds ``run?run=<id>#<name>``)."""
    df = table(at, "p95_ms")
    return df.assign(display_name=[str(v).rsplit("#", 1)[-1] for v in df["display_name"]])


def tick_value(text: str) -> float:
    """``'20 ms'`` -> 20, ``'1 s'`` -> 1000, ``'1,000 s'`` -> 1e6: what a latency tick label says."""
    number, unit = text.split(" ")
    return float(number.replace(",", "")) * (1000 if unit == "s" else 1)


def test_summary_table(downloads: dict[str, bytes]) -> None:
    at = run_app()
    df = summary(at).set_index("display_name")
    assert len(df) == 13
    assert (df.loc["mem0", "p50_ms"], df.loc["mem0", "p95_ms"]) == (64.94, 156.89)
    assert df.loc["tenure", "p50_ms"] == 9.77
    assert df.loc["tenure", "ingestion_beliefs"] == 35
    assert df.loc["tenure", "ingestion_per_belief_ms"] == pytest.approx(984.62 / 35)
    assert pd.isna(df.loc["vector", "ingestion_total_ms"])
    saved = pd.read_csv(io.BytesIO(downloads["memeval-latency-pmb-single-turn.csv"]))
    assert saved.loc[saved["display_name"] == "mem0", "p50_ms"].iloc[0] == 64.94


def test_summary_reads_in_human_words_fastest_first() -> None:
    at = run_app()
    df = summary(at)
    assert list(df["p50_ms"]) == sorted(df["p50_ms"])  # fastest median first
    assert table(at, "p95_ms")["display_name"].iloc[0].startswith("run?run=")  # each system opens its run
    assert "run_id" not in df.columns and "benchmark" not in df.columns
    shown = headers(at, "p95_ms")
    assert (shown["display_name"], shown["p50_ms"], shown["p95_ms"], shown["cases"]) == (
        "System",
        "Median",
        "p95",
        "Cases",
    )
    assert not any("_" in h for h in shown.values())
    assert at.radio(key="choice-benchmark").options == [  # radio labels are Markdown: escaped
        "PrecisionMemBench · single\\-turn",
        "PrecisionMemBench · session",
    ]


def test_answer_first_median_and_p95_per_system() -> None:
    at = run_app()
    order = [getattr(e, "type", "") for e in at.main][1:]
    assert order[0] == "title" and at.title[0].value == "Latency"  # nothing before the title
    assert order.index("plotly_chart") < order.index("dataframe")  # the chart answers first
    answer = specs(at)[0]  # the first chart on the page is the answer
    assert answer["layout"]["title"]["text"].startswith("Retrieval latency per case by system")
    _, p50, p95 = answer["data"]
    assert (p50["name"], p95["name"]) == ("Median (p50)", "95th percentile (p95)")
    assert p50["y"][0] == "tenure" and p50["x"][0] == 9.77
    assert answer["layout"]["yaxis"]["autorange"] == "reversed"  # fastest on top


def test_every_chart_has_a_title_axis_titles_and_a_legend_clear_of_the_toolbar() -> None:
    for at in (run_app(), run_app(benchmark="pmb-session", quality="mean precision")):
        charts = specs(at)
        assert len(charts) == 4
        for spec in charts:
            layout = spec["layout"]
            assert layout["title"]["text"]
            assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]
            if "legend" in layout:
                assert layout["legend"]["orientation"] == "h" and layout["legend"]["y"] <= 0


def test_log_axes_label_real_values() -> None:
    for spec in specs(run_app()):
        xaxis = spec["layout"]["xaxis"]
        assert xaxis["type"] == "log"
        for value, text in zip(xaxis["tickvals"], xaxis["ticktext"], strict=True):
            assert tick_value(text) == pytest.approx(value), (value, text)
        low, high = xaxis["range"]  # log10 units: every tick in view, none made up
        assert sum(low <= math.log10(v) <= high for v in xaxis["tickvals"]) >= 2
    answer = chart(run_app(), "Retrieval latency per case by system")
    assert {"10 ms", "100 ms", "1 s"} <= set(answer["layout"]["xaxis"]["ticktext"])


def test_distribution_on_a_log_axis() -> None:
    at = run_app()
    box = chart(at, "Retrieval latency of every case")
    ingestion = chart(at, "Ingestion time per belief")
    assert box["layout"]["xaxis"]["type"] == "log"
    names = [t["name"] for t in box["data"]]
    assert names[-1] == "tenure"  # the fastest on top
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
    scatter = chart(at, "Active passes against median latency")
    assert scatter["layout"]["xaxis"]["type"] == "log"
    others, frontier = scatter["data"]
    assert len(others["x"]) + len(frontier["x"]) == 13
    assert (frontier["x"], frontier["y"]) == ([9.77], [43.0])
    # Only the frontier is named on the chart; the others are named on hover, so labels never pile up.
    assert "text" in frontier["mode"] and "text" not in others["mode"]
    assert frontier["line"]["shape"] == "hv"


def test_quality_from_the_url() -> None:
    at = run_app(quality="mean precision")
    assert at.radio(key="choice-quality").value == "mean precision"
    points = table(at, "on_front")
    assert "mean_precision" in points.columns
    assert list(points[points["on_front"]]["display_name"]) == ["tenure"]
    assert points.loc[points["display_name"] == "mem0", "mean_precision"].iloc[0] == pytest.approx(0.0558, abs=5e-5)
    assert chart(at, "Mean precision against median latency")["layout"]["yaxis"]["tickformat"] == ".0%"


def test_session_suite(downloads: dict[str, bytes]) -> None:
    at = run_app(benchmark="pmb-session")
    assert at.radio(key="choice-benchmark").value == "pmb-session"
    df = summary(at)
    assert len(df) == 11
    assert df.loc[df["display_name"] == "tenure", "p50_ms"].iloc[0] == 47.79
    saved = pd.read_csv(io.BytesIO(downloads["memeval-latency-pmb-session.csv"]))
    assert set(saved["benchmark"]) == {"pmb-session"}


def test_an_unknown_benchmark_in_the_link_is_named() -> None:
    at = run_app(benchmark="no-such-suite")
    (warning,) = at.warning
    assert "no\\-such\\-suite" in warning.value and "single\\-turn instead" in warning.value
    assert len(summary(at)) == 13
