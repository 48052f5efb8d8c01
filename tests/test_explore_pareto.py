"""Pareto front on hand-made points (ties, duplicates, dominance on one axis) and on the real runs; the points
come from the runs table, checked against an oracle computed from the whole runs."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pytest

from memeval_core.explore.pareto import (
    QUALITIES,
    ParetoPoint,
    Quality,
    pareto_frame,
    pareto_front,
    quality_latency_points,
)
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.pmb.run import PmbRun
from memeval_core.pmb.runs_table import runs_table


@pytest.fixture(scope="module")
def pmb(shared_loads: tuple[PmbLoad, object]) -> PmbLoad:
    return shared_loads[0]


def single_turn(pmb: PmbLoad) -> pa.Table:
    return runs_table([r for r in pmb.runs if r.identity.benchmark == "pmb-single-turn"])


def points_oracle(runs: Sequence[PmbRun], quality: Quality) -> tuple[ParetoPoint, ...]:
    """The per-run implementation the runs-table one replaces: each run's aggregate."""
    out = []
    for run in runs:
        agg = run.aggregate
        y = {
            "pass_rate": agg.pass_rate,
            "mean_precision": agg.mean_precision,
            "mean_recall": agg.mean_recall,
            "active_retrieval": float(agg.pass_types["active_retrieval"]),
        }[quality]
        if agg.latency.p50_ms is not None and y is not None:
            out.append(ParetoPoint(run.identity.display_name, agg.latency.p50_ms, y))
    return tuple(out)


def _pt(name: str, x: float, y: float) -> ParetoPoint:
    return ParetoPoint(name, x, y)


def _names(points: tuple[ParetoPoint, ...]) -> list[str]:
    return [p.name for p in points]


def test_staircase() -> None:
    pts = [
        _pt("slow-best", 100, 0.9),
        _pt("fast-bad", 10, 0.2),
        _pt("mid", 50, 0.6),
        _pt("dominated", 60, 0.5),
        _pt("worst", 120, 0.1),
    ]
    assert _names(pareto_front(pts)) == ["fast-bad", "mid", "slow-best"]


def test_equal_x_keeps_only_higher_y() -> None:
    # Same latency, lower quality: dominated (x equal, y strictly worse).
    assert _names(pareto_front([_pt("a", 10, 0.5), _pt("b", 10, 0.7)])) == ["b"]


def test_equal_y_keeps_only_lower_x() -> None:
    assert _names(pareto_front([_pt("a", 10, 0.5), _pt("b", 20, 0.5)])) == ["a"]


def test_duplicates_are_all_kept() -> None:
    front = pareto_front([_pt("b", 10, 0.5), _pt("a", 10, 0.5), _pt("c", 30, 0.4)])
    assert _names(front) == ["a", "b"]


def test_sorted_by_x() -> None:
    front = pareto_front([_pt("c", 30, 0.9), _pt("a", 5, 0.1), _pt("b", 12, 0.5)])
    assert [p.x for p in front] == [5, 12, 30]


def test_single_and_empty() -> None:
    assert pareto_front([]) == ()
    assert _names(pareto_front([_pt("only", 1, 0)])) == ["only"]


def test_non_finite_refused() -> None:
    with pytest.raises(ValueError, match="'bad'"):
        pareto_front([_pt("bad", float("nan"), 0.5)])


def test_points_equal_the_oracle(pmb: PmbLoad) -> None:
    suites = [[r for r in pmb.runs if r.identity.benchmark == b] for b in ("pmb-single-turn", "pmb-session")]
    for runs in [*suites, list(pmb.runs), list(reversed(pmb.runs))]:
        table = runs_table(runs)
        for quality in QUALITIES:
            assert quality_latency_points(table, quality) == points_oracle(runs, quality)


def test_runs_lacking_a_median_or_the_quality_are_left_out() -> None:
    table = pa.table(
        {
            "display_name": ["ok", "no-cases", "no-median", "no-precision"],
            "latency_p50_ms": [5.0, 7.0, None, 9.0],
            "cases": [4, 0, 4, 4],
            "passed": [3, 0, 4, 1],
            "mean_precision": [0.5, None, 1.0, None],
            "mean_recall": [0.25, None, 1.0, 0.0],
            "active_retrieval": [2, 0, 4, 0],
        }
    )
    assert quality_latency_points(table, "pass_rate") == (
        ParetoPoint("ok", 5.0, 0.75),
        ParetoPoint("no-precision", 9.0, 0.25),
    )
    assert [p.name for p in quality_latency_points(table, "mean_precision")] == ["ok"]
    assert [p.name for p in quality_latency_points(table, "mean_recall")] == ["ok", "no-precision"]
    assert [p.y for p in quality_latency_points(table, "active_retrieval")] == [2.0, 0.0, 0.0]


def test_real_runs(pmb: PmbLoad) -> None:
    runs = single_turn(pmb)
    pts = quality_latency_points(runs, "pass_rate")
    assert len(pts) == 13
    # tenure is both the fastest (p50 9.77 ms) and the best (77/77): it dominates everything.
    assert pareto_front(pts) == (ParetoPoint("tenure", 9.77, 1.0),)
    others = [p for p in pts if p.name != "tenure"]
    # Without tenure: a-mem fastest (13.80 ms), gbrain best (34/77); nomic (11/77), supermemory (21/77) between.
    assert _names(pareto_front(others)) == ["a-mem", "vector (nomic)", "supermemory", "gbrain"]
    with pytest.raises(ValueError, match="quality"):
        quality_latency_points(runs, "ndcg")  # type: ignore[arg-type]


def test_pareto_frame_marks_the_front() -> None:
    pts = [_pt("slow-good", 100.0, 0.9), _pt("fast-bad", 10.0, 0.1), _pt("dominated", 120.0, 0.5)]
    df = pareto_frame(pts)
    assert list(df.columns) == ["name", "x", "y", "on_front"]
    assert list(df["name"]) == ["fast-bad", "slow-good", "dominated"]
    assert list(df["on_front"]) == [True, True, False]
    assert pareto_frame([]).empty


def test_active_passes_quality(pmb: PmbLoad) -> None:
    pts = {p.name: p for p in quality_latency_points(single_turn(pmb), "active_retrieval")}
    assert (pts["tenure"].x, pts["tenure"].y) == (9.77, 43.0)
    assert (pts["gbrain"].y, pts["supermemory"].y, pts["mem0"].y) == (5.0, 4.0, 0.0)
    # Without tenure: a-mem fastest with 0 active passes, supermemory (4 at 69 ms), gbrain (5 at 544 ms).
    others = [p for p in pts.values() if p.name != "tenure"]
    assert _names(pareto_front(others)) == ["a-mem", "supermemory", "gbrain"]
