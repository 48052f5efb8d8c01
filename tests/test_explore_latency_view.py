"""Latency summary, per-case distribution and ingestion tables on the real PMB runs.

The summary, distribution and boxes read the runs table and a few case columns; each is checked against an
oracle computed from the whole runs (:class:`PmbRun` objects, the way the page computed them before it read
columns), on the shared data and on reorderings of its tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from memeval_core import leaderboard
from memeval_core.explore.latency_view import (
    BOX_COLUMNS,
    CASE_COLUMNS,
    SUMMARY_COLUMNS,
    ingestion_distribution,
    latency_boxes,
    latency_distribution,
    latency_summary,
    log_ticks,
)
from memeval_core.latency import nearest_rank
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.pmb.run import PmbRun
from memeval_core.pmb.runs_table import runs_table
from memeval_core.pmb.snapshot import cases_table, open_snapshot, write_snapshot


@pytest.fixture(scope="module")
def pmb(shared_loads: tuple[PmbLoad, object]) -> PmbLoad:
    return shared_loads[0]


def tables(runs: Sequence[PmbRun]) -> tuple[pa.Table, pa.Table]:
    """The runs table and the :data:`CASE_COLUMNS` of the cases table of ``runs``, in their order."""
    return runs_table(runs), cases_table(tuple(runs)).select(list(CASE_COLUMNS))


def suites(pmb: PmbLoad) -> list[list[PmbRun]]:
    """Each suite's runs in leaderboard rank order (as the page reads them), then all runs in load order."""
    by_id = {r.identity.run_id: r for r in pmb.runs}
    table = runs_table(pmb.runs)
    ranked = [
        [by_id[row["run_id"]] for row in leaderboard.table_rows(table, b)] for b in ("pmb-single-turn", "pmb-session")
    ]
    return [*ranked, list(pmb.runs)]


# --- The oracle: the per-run implementations the columnar functions replace --------------------------------


def summary_oracle(runs: Sequence[PmbRun]) -> pd.DataFrame:
    rows = []
    for run in runs:
        lat, ing, total = run.aggregate.latency, run.ingestion, run.ingestion_total_ms
        beliefs = None if ing is None else (len(ing.per_belief) if ing.per_belief else ing.belief_count)
        rows.append(
            {
                "display_name": run.identity.display_name,
                "run_id": run.identity.run_id,
                "benchmark": run.identity.benchmark,
                "count": lat.count,
                "mean_ms": lat.mean_ms,
                "p50_ms": lat.p50_ms,
                "p95_ms": lat.p95_ms,
                "ingestion_total_ms": total,
                "ingestion_beliefs": beliefs,
                "ingestion_per_belief_ms": total / beliefs if total is not None and beliefs else None,
            }
        )
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    for col in ("mean_ms", "p50_ms", "p95_ms", "ingestion_total_ms", "ingestion_per_belief_ms"):
        frame[col] = frame[col].astype("float64")
    frame["ingestion_beliefs"] = frame["ingestion_beliefs"].astype("Int64")
    return frame


def distribution_oracle(runs: Sequence[PmbRun]) -> pd.DataFrame:
    columns = ["display_name", "run_id", "benchmark", "case_id", "turn_index", "category", "passed", "latency_ms"]
    parts = []
    for run in runs:
        t = run.table
        turn = pd.array(t.column("turn_index"), dtype="Int64")
        turn[~t.present("turn_index")] = pd.NA
        ident = run.identity
        parts.append(
            pd.DataFrame(
                {
                    "display_name": ident.display_name,
                    "run_id": ident.run_id,
                    "benchmark": ident.benchmark,
                    "case_id": t.values("case_id"),
                    "turn_index": turn,
                    "category": t.values("category"),
                    "passed": t.column("passed"),
                    "latency_ms": t.column("latency_ms"),
                },
                columns=columns,
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    return frame.astype({"turn_index": "Int64", "passed": bool, "latency_ms": "float64"})


def boxes_oracle(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """One run at a time: numpy's linear quartiles and the Tukey fences, written out."""
    rows = []
    for run in runs:
        lat = run.table.column("latency_ms")
        if len(lat) == 0:
            continue
        q1, median, q3 = np.percentile(lat, [25, 50, 75])
        iqr = q3 - q1
        ident = run.identity
        rows.append(
            {
                "display_name": ident.display_name,
                "run_id": ident.run_id,
                "benchmark": ident.benchmark,
                "count": len(lat),
                "min_ms": float(lat.min()),
                "lower_fence_ms": float(min(v for v in lat if v >= q1 - 1.5 * iqr)),
                "q1_ms": float(q1),
                "median_ms": float(median),
                "q3_ms": float(q3),
                "upper_fence_ms": float(max(v for v in lat if v <= q3 + 1.5 * iqr)),
                "max_ms": float(lat.max()),
            }
        )
    return pd.DataFrame(rows, columns=BOX_COLUMNS)


def interleaved(cases: pa.Table) -> pa.Table:
    """``cases`` with the runs' cases taken in turn (each run's first case, then each run's second, ...), so no
    run's cases lie together; each run's cases keep their order."""
    run = pd.Series(cases.column("run_id").to_pylist())
    position = run.groupby(run, sort=False).cumcount().to_numpy()
    return cases.take(np.lexsort((run.factorize()[0], position)))


# --- Against the oracle -------------------------------------------------------------------------------------


def test_summary_equals_the_oracle(pmb: PmbLoad) -> None:
    for runs in suites(pmb):
        runs_t, _ = tables(runs)
        pd.testing.assert_frame_equal(latency_summary(runs_t), summary_oracle(runs), check_exact=True)
        backwards = runs[::-1]
        pd.testing.assert_frame_equal(latency_summary(runs_table(backwards)), summary_oracle(backwards))


def test_distribution_equals_the_oracle_in_the_runs_order(pmb: PmbLoad) -> None:
    for runs in suites(pmb):
        runs_t, cases = tables(runs)
        expected = distribution_oracle(runs)
        pd.testing.assert_frame_equal(latency_distribution(cases, runs_t), expected, check_exact=True)
        # The cases in another order than the runs (runs interleaved, or listed backwards): same rows.
        pd.testing.assert_frame_equal(latency_distribution(interleaved(cases), runs_t), expected, check_exact=True)
        _, backwards = tables(runs[::-1])
        pd.testing.assert_frame_equal(latency_distribution(backwards, runs_t), expected, check_exact=True)


def test_boxes_equal_the_oracle_whatever_the_case_order(pmb: PmbLoad) -> None:
    rng = np.random.default_rng(7)
    for runs in suites(pmb):
        runs_t, cases = tables(runs)
        expected = boxes_oracle(runs)
        pd.testing.assert_frame_equal(latency_boxes(cases, runs_t), expected, check_exact=True)
        shuffled = cases.take(rng.permutation(cases.num_rows))
        pd.testing.assert_frame_equal(latency_boxes(shuffled, runs_t), expected, check_exact=True)


def test_cases_read_from_a_snapshot_in_load_order(pmb: PmbLoad, tmp_path: Path) -> None:
    # The page reads a snapshot's case columns, which come in the file's (load) order, not the suite's rank order.
    write_snapshot(pmb, tmp_path / "snap")
    snap = open_snapshot(tmp_path / "snap")
    for runs in suites(pmb):
        cases = snap.read_cases(CASE_COLUMNS, [r.identity.run_id for r in runs])
        runs_t = runs_table(runs)
        pd.testing.assert_frame_equal(latency_distribution(cases, runs_t), distribution_oracle(runs))
        pd.testing.assert_frame_equal(latency_boxes(cases, runs_t), boxes_oracle(runs))
        header = snap.table.take([snap.table.column("run_id").to_pylist().index(r.identity.run_id) for r in runs])
        pd.testing.assert_frame_equal(latency_summary(header), summary_oracle(runs))


def test_runs_without_cases_and_cases_of_other_runs_are_left_out(pmb: PmbLoad) -> None:
    single = suites(pmb)[0]
    runs_t, cases = tables(single)
    kept, dropped = single[1:], single[0].identity.run_id
    no_cases = cases.filter(pc.not_equal(cases.column("run_id"), dropped))
    pd.testing.assert_frame_equal(latency_boxes(no_cases, runs_t), boxes_oracle(kept))
    pd.testing.assert_frame_equal(latency_distribution(no_cases, runs_t), distribution_oracle(kept))
    # Cases of runs the runs table does not list (the other suite) contribute nothing.
    _, every_case = tables(pmb.runs)
    pd.testing.assert_frame_equal(latency_boxes(every_case, runs_t), boxes_oracle(single))
    assert latency_boxes(cases.slice(0, 0), runs_t).empty
    assert latency_distribution(cases.slice(0, 0), runs_t).empty


# --- What the numbers are -----------------------------------------------------------------------------------


def test_summary(pmb: PmbLoad) -> None:
    s = latency_summary(runs_table(pmb.runs))
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


def test_summary_per_belief_needs_beliefs() -> None:
    runs = pa.table(
        {
            "display_name": ["a", "b", "c"],
            "run_id": ["a1", "b1", "c1"],
            "benchmark": ["pmb-single-turn"] * 3,
            "latency_count": [3, 3, 0],
            "latency_mean_ms": [2.0, 4.0, None],
            "latency_p50_ms": [2.0, 4.0, None],
            "latency_p95_ms": [3.0, 5.0, None],
            "ingestion_total_ms": [100.0, 0.0, None],
            "ingestion_beliefs": pa.array([4, 0, None], pa.int64()),
        }
    )
    s = latency_summary(runs)
    assert s["ingestion_per_belief_ms"].iloc[0] == 25.0
    assert s["ingestion_per_belief_ms"].iloc[1:].isna().all()  # zero beliefs, no ingestion: no per-belief cost
    assert list(s["ingestion_beliefs"].isna()) == [False, False, True]
    assert s["p50_ms"].isna().iloc[2] and list(s.columns) == SUMMARY_COLUMNS


def test_distribution_reproduces_percentiles(pmb: PmbLoad) -> None:
    d = latency_distribution(*reversed(tables(pmb.runs)))
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
    # Only runs whose runs-table row counts ingested beliefs can have per-belief rows (the page reads only those).
    table = runs_table(pmb.runs).to_pandas()
    ingested = set(table.loc[table["ingestion_beliefs"].fillna(0) > 0, "run_id"])
    assert set(ing["run_id"]) < ingested


def test_latency_boxes_match_the_real_latencies_and_tukey_fences(pmb: PmbLoad) -> None:
    runs_t, cases = tables(pmb.runs)
    boxes = latency_boxes(cases, runs_t).set_index("run_id")
    dist = latency_distribution(cases, runs_t)
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
    row = latency_boxes(*reversed(tables([run]))).iloc[0]
    assert (row["q1_ms"], row["median_ms"], row["q3_ms"]) == (3.0, 5.0, 7.0)
    assert (row["lower_fence_ms"], row["upper_fence_ms"], row["max_ms"]) == (1.0, 8.0, 100.0)
    assert row["count"] == 9


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
