"""Latency summary, per-case distribution and ingestion tables on the real PMB runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memeval_core.explore.latency_view import (
    ingestion_distribution,
    latency_boxes,
    latency_distribution,
    latency_summary,
    log_ticks,
)
from memeval_core.latency import nearest_rank
from memeval_core.pmb.ingest import PmbLoad, load_pmb

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "precisionmembench"


@pytest.fixture(scope="module")
def pmb() -> PmbLoad:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    return load_pmb(DATA / "test-results", DATA / "fixtures")


def test_summary(pmb: PmbLoad) -> None:
    s = latency_summary(pmb.runs)
    assert len(s) == 24
    single = s[s["benchmark"] == "pmb-single-turn"].set_index("display_name")
    assert single.loc["mem0", "p50_ms"] == 64.94
    assert single.loc["tenure", "p50_ms"] == 9.77
    assert single.loc["tenure", "count"] == 77
    # mem0 records 35 per-belief timings summing to 111262.72 ms.
    assert single.loc["mem0", "ingestion_beliefs"] == 35
    assert single.loc["mem0", "ingestion_total_ms"] == pytest.approx(111262.72)
    assert single.loc["mem0", "ingestion_per_belief_ms"] == pytest.approx(111262.72 / 35)
    # The vector baselines did not ingest through a provider: no ingestion numbers.
    assert single[["ingestion_total_ms", "ingestion_per_belief_ms"]].loc["vector"].isna().all()
    assert single["ingestion_beliefs"].isna().sum() == 3


def test_distribution_reproduces_percentiles(pmb: PmbLoad) -> None:
    d = latency_distribution(pmb.runs)
    assert len(d) == 13 * 77 + 11 * 12
    mem0 = d[(d["display_name"] == "mem0") & (d["benchmark"] == "pmb-single-turn")]["latency_ms"].tolist()
    assert len(mem0) == 77
    assert nearest_rank(mem0, 0.5) == 64.94
    sess = d[d["benchmark"] == "pmb-session"]
    assert sess["turn_index"].notna().all()
    assert d[d["benchmark"] == "pmb-single-turn"]["turn_index"].isna().all()


def test_ingestion_distribution(pmb: PmbLoad) -> None:
    ing = ingestion_distribution(pmb.runs)
    counts = ing.groupby(["display_name", "benchmark"]).size()
    assert counts[("mem0", "pmb-single-turn")] == 35
    assert counts[("gbrain", "pmb-session")] == 35
    # tenure states its ingestion total but no per-belief timings, so it has no rows here.
    assert "tenure" not in set(ing["display_name"])
    mem0 = ing[(ing["display_name"] == "mem0") & (ing["benchmark"] == "pmb-single-turn")]
    assert mem0["latency_ms"].sum() == pytest.approx(111262.72)


def test_latency_boxes_match_the_real_latencies_and_tukey_fences(pmb: PmbLoad) -> None:
    boxes = latency_boxes(pmb.runs).set_index("run_id")
    dist = latency_distribution(pmb.runs)
    assert len(boxes) == 24
    for run_id, group in dist.groupby("run_id"):
        lat = sorted(group["latency_ms"])
        row = boxes.loc[run_id]
        assert row["count"] == len(lat)
        assert (row["min_ms"], row["max_ms"]) == (lat[0], lat[-1])
        q1, q3 = row["q1_ms"], row["q3_ms"]
        assert q1 <= row["median_ms"] <= q3
        inside = [v for v in lat if q1 - 1.5 * (q3 - q1) <= v <= q3 + 1.5 * (q3 - q1)]
        assert (row["lower_fence_ms"], row["upper_fence_ms"]) == (min(inside), max(inside))


def test_latency_boxes_hand_computed() -> None:
    # Latencies 1..8 and 100: linear quartiles 3, 5, 7; IQR 4, so 100 lies beyond 7 + 6 = 13.
    from dataclasses import replace

    from tests.test_explore_compare import _case, _run

    lat = [*range(1, 9), 100]
    run = _run("x", [replace(_case(f"c{i}", False, None), latency_ms=float(v)) for i, v in enumerate(lat)])
    row = latency_boxes([run]).iloc[0]
    assert (row["q1_ms"], row["median_ms"], row["q3_ms"]) == (3.0, 5.0, 7.0)
    assert (row["lower_fence_ms"], row["upper_fence_ms"], row["max_ms"]) == (1.0, 8.0, 100.0)


def test_latency_boxes_equal_numpy_run_by_run(pmb: PmbLoad) -> None:
    boxes = latency_boxes(pmb.runs).set_index("run_id")
    for run in pmb.runs:
        lat = run.table.column("latency_ms")
        q1, median, q3 = np.percentile(lat, [25, 50, 75])
        row = boxes.loc[run.identity.run_id]
        assert (row["q1_ms"], row["median_ms"], row["q3_ms"]) == (q1, median, q3)


def test_log_ticks_read_as_the_values_they_mark() -> None:
    values, text = log_ticks(0.04, 4_872)  # over three decades: powers of ten
    assert values == [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
    assert text == ["0.01 ms", "0.1 ms", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
    _, text = log_ticks(9.77, 2604.84)  # the single-turn p50/p95 range, 2.4 decades: 1-2-5 steps
    assert text == ["5 ms", "10 ms", "20 ms", "50 ms", "100 ms", "200 ms", "500 ms", "1 s", "2 s", "5 s"]
    values, text = log_ticks(12, 850)
    assert text[:4] == ["10 ms", "20 ms", "50 ms", "100 ms"] and text[-1] == "1 s"
    assert values[-1] == 1000.0
    _, text = log_ticks(1.5, 40, unit="×")
    assert "40×" not in text and text[:3] == ["1×", "2×", "5×"] and text[-1] == "50×"
    _, text = log_ticks(3, 9, unit="×")  # within a decade: finer steps, from the last at or below the low end
    assert text == ["3×", "5×", "7×", "10×"]
    _, text = log_ticks(0.4, 250_000)
    assert text[0] == "0.1 ms" and "1,000 s" in text
    _, text = log_ticks(0.6, 45, unit="×", steps=(1, 3))  # a short axis: fewer, still honest, ticks
    assert text == ["0.3×", "1×", "3×", "10×", "30×", "100×"]
    with pytest.raises(ValueError, match="steps"):
        log_ticks(1, 10, steps=(2, 5))


@pytest.mark.parametrize(("low", "high"), [(0, 10), (-1, 10), (10, 1), (1, float("inf")), (float("nan"), 1)])
def test_log_ticks_refuse_a_range_a_log_axis_cannot_show(low: float, high: float) -> None:
    with pytest.raises(ValueError, match="log axis"):
        log_ticks(low, high)
