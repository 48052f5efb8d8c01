"""The home page (AppTest) over ../shared/data: one board per benchmark, chart beside table, the finding."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.apptest import run_page

PAGE = "pages/home.py"


@pytest.fixture(autouse=True)
def everything(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(shared_data))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    monkeypatch.delenv("MEMEVAL_DATASETS", raising=False)


def test_one_board_per_benchmark_with_its_chart() -> None:
    at = run_page(PAGE)
    assert [t.value for t in at.title] == ["Memory-system leaderboard"]
    titles = [s.value for s in at.subheader]
    assert titles[:3] == [
        "PrecisionMemBench · single\\-turn",
        "PrecisionMemBench · session",
        "LoCoMo \\(with category 5\\)",
    ]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(specs) == len(titles) == len([d for d in at.dataframe])
    first = specs[0]
    assert first["layout"]["title"]["text"].startswith("Pass rate by system")
    assert first["layout"]["xaxis"]["title"]["text"] == "Pass rate (% of cases), 95% interval"
    assert first["data"][0]["y"][0] == "tenure"
    lines = sorted(round(s["x0"], 1) for s in first["layout"]["shapes"])
    assert lines == [1.3, 28.6], "the reference systems as vertical lines"
    # Their labels sit in rows of a fixed height just above the plot, however tall it is; the title above them
    # holds the benchmark on a line of its own, so a long name never runs past the chart.
    notes = first["layout"]["annotations"]
    assert [(n["y"], n["yref"]) for n in notes] == [(1, "paper")] * 2 and len({n["yshift"] for n in notes}) == 2
    assert first["layout"]["title"]["text"] == "Pass rate by system<br>PrecisionMemBench · single-turn"


def test_the_table_ranks_and_badges() -> None:
    at = run_page(PAGE)
    board: pd.DataFrame = at.dataframe[0].value
    assert list(board.columns) == ["rank", "display_name", "pass_rate", "interval", "cases", "badge"]
    tenure = board.iloc[0]
    assert tenure["display_name"].endswith("#tenure") and tenure["display_name"].startswith("run?run=")
    assert tenure["interval"] == "95.2% – 100.0%"
    assert list(board["display_name"][-2:].str.split("#").str[1]) == [
        "Reference: returns nothing",
        "Reference: returns everything",
    ]
    assert any("11 of 13 runs pass fewer cases than a system that returns nothing" in m.value for m in at.markdown)


def test_publishable_only() -> None:
    at = run_page(PAGE, **{"publishable-only": "true"})
    locomo = [d.value for d in at.dataframe if "accuracy" in d.value.columns]
    assert all((df["badge"] == "✓ publishable").all() for df in locomo)
