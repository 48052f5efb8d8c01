"""The latency page, driven through URL query parameters over the public PMB data (Streamlit AppTest).

The page reads the runs table and a few case columns, and whole runs only for the ingestion chart; what it shows
and hands out is checked against an oracle computed from whole runs (:mod:`tests.test_explore_latency_view`).
"""

from __future__ import annotations

import io
import json
import math
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from memeval_core import leaderboard
from memeval_core.explore.latency_view import ingestion_distribution
from memeval_core.pmb.run import Benchmark, PmbRun
from memeval_core.pmb.runs_table import runs_table
from memeval_core.results import load_all_results
from tests.apptest import run_page, table
from tests.test_explore_latency_view import boxes_oracle, distribution_oracle, summary_oracle

pytestmark = pytest.mark.usefixtures("pmb_env")
PAGE = "pages/latency.py"


@pytest.fixture(autouse=True)
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The run ids of every whole-run read the page asks for; reading a whole suite fails the page."""
    import pages.ui

    asked: list[tuple[str, ...]] = []
    whole_runs = pages.ui.whole_runs

    def recorded(loaded: pages.ui.Loaded, run_ids: Sequence[str]) -> tuple[PmbRun, ...]:
        asked.append(tuple(run_ids))
        return whole_runs(loaded, run_ids)

    def refused(*_: object) -> None:
        raise AssertionError("the latency page read a whole suite")

    monkeypatch.setattr(pages.ui, "whole_runs", recorded)
    monkeypatch.setattr(pages.ui, "suite_runs", refused)
    return asked


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[], Any]]:
    """The data callables of download buttons that build their file only when clicked, by file name."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    seen: dict[str, Callable[[], Any]] = {}
    original = MediaFileManager.add_deferred

    def record(self: MediaFileManager, data: Callable[[], Any], mimetype: str | None, coordinates: str,
               file_name: str | None = None, **kwargs: Any) -> str:  # fmt: skip
        seen[str(file_name)] = data
        return original(self, data, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return seen


def ranked(runs: Sequence[PmbRun], benchmark: Benchmark) -> list[PmbRun]:
    """One suite's runs in leaderboard rank order, as the page lists them."""
    by_id = {r.identity.run_id: r for r in runs}
    return [by_id[row["run_id"]] for row in leaderboard.table_rows(runs_table(runs), benchmark)]


@pytest.fixture(scope="module")
def pmb_runs(pmb_results: Path) -> tuple[PmbRun, ...]:
    """The public PMB runs, whole: the oracle's input."""
    return load_all_results(pmb_results, pmb_results, cache_dir=None)[0].runs


def csv(df: pd.DataFrame) -> bytes:
    from pages.ui import frame_csv

    return frame_csv(df).encode()


def fastest_first(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """The oracle's summary as the page orders it: fastest median first, ties in rank order."""
    df = summary_oracle(runs).rename(columns={"count": "cases"})
    return df.sort_values("p50_ms", na_position="last", kind="stable").reset_index(drop=True)


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


# --- Against the oracle: the whole runs ---------------------------------------------------------------------


@pytest.mark.parametrize("benchmark", ["pmb-single-turn", "pmb-session"])
def test_what_the_page_hands_out_equals_the_oracle(
    benchmark: Benchmark, pmb_runs: tuple[PmbRun, ...], downloads: dict[str, bytes], whole_reads: list[Any]
) -> None:
    run_app(benchmark=benchmark)
    suite = ranked(pmb_runs, benchmark)
    assert downloads[f"memeval-latency-{benchmark}.csv"] == csv(fastest_first(suite))
    assert downloads[f"memeval-latency-per-case-{benchmark}.csv"] == csv(distribution_oracle(suite))
    assert downloads[f"memeval-ingestion-per-belief-{benchmark}.csv"] == csv(ingestion_distribution(suite))
    # Whole runs: once, only those whose runs-table row counts ingested beliefs (the others have no timings).
    ingested = [r.identity.run_id for r in suite if _beliefs(r) > 0]
    assert whole_reads == [tuple(ingested)] and len(ingested) < len(suite)


def _beliefs(run: PmbRun) -> int:
    """Beliefs the run's ingestion covered (0 without ingestion)."""
    ing = run.ingestion
    return 0 if ing is None else len(ing.per_belief) or ing.belief_count


def test_boxes_above_the_point_limit_equal_the_oracle(
    monkeypatch: pytest.MonkeyPatch, pmb_runs: tuple[PmbRun, ...], deferred: dict[str, Callable[[], Any]]
) -> None:
    import pages.ui

    monkeypatch.setattr(pages.ui, "POINTS_LIMIT", 100)
    at = run_app()
    suite = ranked(pmb_runs, "pmb-single-turn")
    expected = boxes_oracle(suite).rename(columns={"count": "cases"})
    shown = table(at, "q1_ms", "median_ms", "upper_fence_ms")
    numbers = [c for c in expected.columns if c not in ("display_name", "run_id", "benchmark")]
    pd.testing.assert_frame_equal(shown[numbers].reset_index(drop=True), expected[numbers], check_exact=True)
    (box,) = chart(at, "Retrieval latency of every case")["data"]
    order = list(fastest_first(suite)["display_name"])
    assert box["y"] == order[::-1] and box["q1"][-1] == float(expected.set_index("display_name").loc[order[0], "q1_ms"])
    # The per-case download is built when clicked, from the same case columns.
    assert deferred["memeval-latency-per-case-pmb-single-turn.csv"]() == csv(distribution_oracle(suite)).decode()


# --- More systems ingested than the ingestion chart draws ----------------------------------------------------

CLONES = 6
"""Copies of each single-turn report that records ingestion: 10 x 6 = 60 systems ingested, above the 50 charted."""


@pytest.fixture(scope="module")
def many_ingested(pmb_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder of the public fixture and CLONES renamed copies of each single-turn report with ingestion."""
    out = tmp_path_factory.mktemp("many-ingested")
    shutil.copytree(pmb_results / "fixtures", out / "fixtures")
    for path in sorted((pmb_results / "test-results").rglob("retrieval-report-*.json")):
        doc = orjson.loads(path.read_bytes())
        if path.name.startswith("session-") or not doc.get("ingestion"):
            continue
        for k in range(CLONES):
            folder = out / "runs" / f"copy{k}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / path.name).write_bytes(orjson.dumps({**doc, "provider": f"{doc['provider']}-{k}"}))
    return out


@pytest.fixture
def many_env(many_ingested: Path, pmb_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(many_ingested))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    yield many_ingested


@pytest.mark.usefixtures("many_env")
def test_ingestion_chart_reads_only_the_systems_it_draws(
    many_ingested: Path, whole_reads: list[tuple[str, ...]], deferred: dict[str, Callable[[], Any]]
) -> None:
    at = run_app(top="7")
    assert at.number_input(key="number-top").value == 7
    runs = ranked(load_all_results(many_ingested, many_ingested, cache_dir=None)[0].runs, "pmb-single-turn")
    ingested = fastest_first(runs).query("ingestion_beliefs > 0")
    assert len(ingested) == 10 * CLONES
    first = set(ingested["run_id"].iloc[:7])
    (read,) = whole_reads
    assert set(read) == first and len(read) == 7
    recorded = ingestion_distribution([r for r in runs if r.identity.run_id in first])
    ingestion = chart(at, "Ingestion time per belief")
    assert ingestion["layout"]["title"]["text"].endswith(", of the 7 fastest that ingested")
    assert {t["name"] for t in ingestion["data"]} == set(recorded["display_name"])
    # The download has every system's timings, in rank order, read when it is clicked.
    saved = deferred["memeval-ingestion-per-belief-pmb-single-turn.csv"]()
    assert saved == csv(ingestion_distribution(runs)).decode()
    assert len(whole_reads) == 1  # the download reads its runs itself, outside the cache of whole runs


@pytest.mark.usefixtures("many_env")
def test_ingestion_chart_draws_fifty_by_default(whole_reads: list[tuple[str, ...]]) -> None:
    at = run_app()
    assert at.number_input(key="number-top").value == 50
    assert [len(ids) for ids in whole_reads] == [50]
    assert len(summary(at)) == 10 * CLONES
    boxes = chart(at, "Retrieval latency of every case")["data"]
    assert len(boxes) == 10 * CLONES  # the per-case chart draws every system


@pytest.mark.usefixtures("many_env")
def test_no_ingestion_chart_when_the_fastest_record_no_timings(deferred: dict[str, Callable[[], Any]]) -> None:
    # The six copies of tenure are the fastest; each states its ingestion total but no per-belief timings.
    at = run_app(top=str(CLONES))
    assert not [s for s in specs(at) if s["layout"]["title"]["text"].startswith("Ingestion time per belief")]
    assert f"None of the {CLONES} fastest systems that ingested records per-belief timings." in [
        c.value for c in at.caption
    ]
    saved = pd.read_csv(io.StringIO(deferred["memeval-ingestion-per-belief-pmb-single-turn.csv"]()))
    assert len(set(saved["display_name"])) == 9 * CLONES and not saved["display_name"].str.startswith("tenure").any()
