"""Pages over many runs (a synthetic folder of 60 single-turn runs built from the real reports): charts draw the
leaders only, while tables and downloads keep every provider, and long lists become tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_app import make_results
from tests._data import PMB_DIR, require
from tests.apptest import run_page, table

RUNS = 60


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(PMB_DIR)
    out = tmp_path_factory.mktemp("many-runs") / "results"
    make_results(out, RUNS, 77)
    return out


@pytest.fixture(autouse=True)
def _env(many_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(many_runs))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)


def _spec(at: object, n: int) -> dict[str, object]:
    chart = at.get("plotly_chart")[n]  # type: ignore[attr-defined]
    spec: dict[str, object] = json.loads(chart.proto.spec)
    return spec


def test_categories_chart_the_leaders_and_list_everyone(downloads: dict[str, bytes]) -> None:
    at = run_page("pages/categories.py")
    assert at.number_input[0].value == 50
    heat = _spec(at, 0)["data"][0]  # type: ignore[index]
    assert len(heat["y"]) == 50
    bars = _spec(at, 1)["data"][0]  # type: ignore[index]
    assert len(bars["x"]) == 50
    assert len(table(at, "display_name", "active_retrieval", "failed")) == RUNS
    heatmap_csv = next(v for k, v in downloads.items() if k.startswith("memeval-categories-") and k.endswith(".csv"))
    assert heatmap_csv.decode().count("\n") == RUNS + 1


def test_categories_chart_size_from_the_url() -> None:
    at = run_page("pages/categories.py", top="12")
    assert len(_spec(at, 0)["data"][0]["y"]) == 12  # type: ignore[index]


def test_leaderboard_lists_mismatches_in_one_table() -> None:
    at = run_page("pages/leaderboard.py")
    board = table(at, "display_name", "passed", "mean_precision")
    assert len(board) == RUNS
    # Closed, the long list is not built at all (opening the expander reruns the page).
    assert not [d for d in at.dataframe if "mismatch" in d.value.columns]
    at = run_page("pages/leaderboard.py", **{"mismatches-pmb-single-turn": "true"})
    mismatches = table(at, "display_name", "source", "mismatch")
    # Clones of the three real reports that state wrong aggregates carry their mismatches.
    assert len(set(mismatches["source"])) > 30
    assert not any("mismatch" in c.value and ": " in c.value for c in at.code)


def test_latency_draws_one_box_per_provider() -> None:
    at = run_page("pages/latency.py")
    boxes = _spec(at, 2)["data"]  # after the medians chart and the Pareto chart
    assert len(boxes) == RUNS  # 60 x 77 cases is below the per-point limit: one trace each, every case a point
    assert len(table(at, "cases", "p95_ms", "ingestion_total_ms")) == RUNS


def test_a_tall_medians_chart_shows_its_scale_and_legend_on_top() -> None:
    layout = _spec(run_page("pages/latency.py"), 0)["layout"]
    assert "the 40 fastest of 60" in layout["title"]["text"]  # type: ignore[index]
    assert layout["xaxis"]["side"] == "top"  # type: ignore[index]  # 40 rows: the foot is screens down
    assert layout["legend"]["yanchor"] == "top" and layout["legend"]["y"] > 0.9  # type: ignore[index]


def test_latency_boxes_from_quartiles_above_the_point_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import pages.ui

    monkeypatch.setattr(pages.ui, "POINTS_LIMIT", 1_000)
    at = run_page("pages/latency.py")
    boxes = _spec(at, 2)["data"]
    assert len(boxes) == 1 and len(boxes[0]["y"]) == RUNS  # type: ignore[index, arg-type]
    assert "boxpoints" not in boxes[0]  # type: ignore[index, operator]
    stats = table(at, "q1_ms", "median_ms", "q3_ms", "lower_fence_ms")
    assert len(stats) == RUNS and (stats["q1_ms"] <= stats["q3_ms"]).all()


def test_home_shows_the_top_of_each_board_and_links_to_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from memeval_core.explore import front

    monkeypatch.setattr(front, "TOP_ROWS", 25)
    at = run_page("pages/home.py")
    single = at.dataframe[0].value
    assert len(single) == 25 + 2  # the top 25 runs, then the two reference systems
    assert list(single["rank"][:25]) == list(range(1, 26))
    assert any(c.value == f"The top 25 of {RUNS} runs; every run is on PMB details." for c in at.caption)
    (link,) = [e.proto for e in at.get("page_link")]  # one board is cut: single-turn (session has 12 runs)
    assert (link.label, link.page, link.query_string) == (
        "Every run: PMB details",
        "leaderboard",
        "benchmark=pmb-single-turn",
    )
    title = _spec(at, 0)["layout"]["title"]["text"]  # type: ignore[index]
    assert title.startswith(f"Pass rate by top 25 of {RUNS} systems")
