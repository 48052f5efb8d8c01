"""Latency summary, per-case distribution and ingestion tables on the real PMB runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval_core.explore.latency_view import ingestion_distribution, latency_distribution, latency_summary
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
