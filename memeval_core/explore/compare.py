"""Compare two runs of the same suite case by case: the paired table, one case opened, statistics.

Cases are paired on ``(case_id, turn_index)``; only cases both runs reported are compared. This is the PMB
adapter of :mod:`memeval_core.explore.paired`: :func:`outcome_table` turns two runs into its paired outcome
table (outcome = passed, value = precision) and :func:`compare_stats` hands it over; "every system against
A" (:func:`win_tie_loss`) goes through :func:`memeval_core.explore.paired.compare_pairs`.

Precision is compared over the cases where *both* runs have a non-null precision (a null precision means
nothing was returned and nothing was expected: there is no precision to compare).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from memeval_core.explore.case_view import CaseView, case_key, case_view
from memeval_core.explore.paired import TABLE_COLUMNS, PairedReport, Terms, compare_pairs, paired_stats
from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import Benchmark, PmbRun
from memeval_core.stats.bootstrap import BootstrapMethod

PAIR_COLUMNS = [
    "case_id",
    "turn_index",
    "label",
    "category",
    "description",
    "a_passed",
    "b_passed",
    "outcome",
    "a_precision",
    "b_precision",
    "a_recall",
    "b_recall",
    "a_latency_ms",
    "b_latency_ms",
]


def _case_rows(run: PmbRun) -> dict[tuple[str, int | None], int]:
    """Each case's row by ``(case_id, turn_index)`` (turn None for a single-turn case), in row order; a ValueError
    naming the run's file when a case appears twice."""
    rows: dict[tuple[str, int | None], int] = {}
    keys = zip(run.table.values("case_id"), run.table.values("turn_index"), strict=True)
    for row, key in enumerate(keys):
        if rows.setdefault(key, row) != row:
            raise ValueError(f"{run.identity.source}: a case (case id and turn) appears twice")
    return rows


def paired_rows(run_a: PmbRun, run_b: PmbRun) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Row numbers of the cases both runs reported, as (rows of A, matching rows of B) in A's order."""
    _same_suite(run_a, run_b)
    rows_a, rows_b = _case_rows(run_a), _case_rows(run_b)
    pairs = [(row, rows_b[key]) for key, row in rows_a.items() if key in rows_b]
    return np.array([a for a, _ in pairs], np.int64), np.array([b for _, b in pairs], np.int64)


def _same_suite(run_a: PmbRun, run_b: PmbRun) -> Benchmark:
    if run_a.identity.benchmark != run_b.identity.benchmark:
        raise ValueError(
            f"cannot pair {run_a.identity.source} ({run_a.identity.benchmark}) "
            f"with {run_b.identity.source} ({run_b.identity.benchmark}): different suites"
        )
    return run_a.identity.benchmark


def paired_frame(run_a: PmbRun, run_b: PmbRun) -> pd.DataFrame:
    """One row per case both runs reported, in A's order.

    Columns: ``case_id, turn_index`` (nullable Int64; NA for single-turn), ``label, category,
    description, a_passed, b_passed, outcome`` (``both passed`` / ``A wins`` / ``B wins`` /
    ``both failed``), ``a_precision, b_precision, a_recall, b_recall`` (NaN when null),
    ``a_latency_ms, b_latency_ms``.
    """
    rows_a, rows_b = paired_rows(run_a, run_b)
    ta, tb = run_a.table, run_b.table
    a_passed = ta.column("passed")[rows_a]
    b_passed = tb.column("passed")[rows_b]
    outcome = np.select(
        [a_passed & b_passed, a_passed, b_passed], ["both passed", "A wins", "B wins"], default="both failed"
    )
    turn = pd.array(ta.values("turn_index", rows_a), dtype="Int64")
    # Straight from the two runs' columns: no case objects.
    return pd.DataFrame(
        {
            "case_id": ta.values("case_id", rows_a),
            "turn_index": turn,
            "label": ta.values("label", rows_a),
            "category": ta.values("category", rows_a),
            "description": ta.values("description", rows_a),
            "a_passed": a_passed,
            "b_passed": b_passed,
            "outcome": outcome.astype(object),
            "a_precision": _values_or_nan(ta, "precision", rows_a),
            "b_precision": _values_or_nan(tb, "precision", rows_b),
            "a_recall": _values_or_nan(ta, "recall", rows_a),
            "b_recall": _values_or_nan(tb, "recall", rows_b),
            "a_latency_ms": ta.column("latency_ms")[rows_a],
            "b_latency_ms": tb.column("latency_ms")[rows_b],
        },
        columns=PAIR_COLUMNS,
    )


def _values_or_nan(table: CaseTable, name: str, rows: NDArray[np.int64]) -> NDArray[np.float64]:
    """An optional number column at ``rows``, NaN where it is absent."""
    return np.where(table.present(name)[rows], table.column(name)[rows], np.nan)


def case_detail(
    run_a: PmbRun, run_b: PmbRun, fixture: PmbFixture, case_id: str, turn_index: int | None = None
) -> CaseView:
    """One case opened for A and B: query, expectation, classified ids per tier, failures."""
    _same_suite(run_a, run_b)
    return case_view((run_a, run_b), fixture, case_id, turn_index)


PMB_TERMS = Terms(
    items="cases",
    everything="all cases",
    verb="passes",
    how="",
    right="passed",
    search=("case_id", "description"),
    both_right="both_passed",
    both_wrong="both_failed",
    outcome="pass_rate",
    outcome_statistic="pass rate difference (A - B)",
    value="precision",
    value_statistic="mean precision difference (A - B), cases where both precisions are non-null",
    category_column=False,
    value_count=True,
)
"""The words of a PMB comparison (statistics columns ``pass_rate_*``, ``n_precision``, ``precision_*``)."""


def outcome_table(run_a: PmbRun, run_b: PmbRun) -> pd.DataFrame:
    """The paired outcome table (:data:`memeval_core.explore.paired.TABLE_COLUMNS`) of the cases both reported.

    ``item`` is the case key (:func:`~memeval_core.explore.case_view.case_key`), ``category`` A's category,
    ``a``/``b`` passed, the values the precisions (NaN when null); rows in A's order.
    """
    rows_a, rows_b = paired_rows(run_a, run_b)
    ta, tb = run_a.table, run_b.table
    turns = ta.values("turn_index", rows_a)
    return pd.DataFrame(
        {
            "item": [case_key(c, t) for c, t in zip(ta.values("case_id", rows_a), turns, strict=True)],
            "category": ta.values("category", rows_a),
            "a": ta.column("passed")[rows_a].astype(bool),
            "b": tb.column("passed")[rows_b].astype(bool),
            "a_value": _values_or_nan(ta, "precision", rows_a),
            "b_value": _values_or_nan(tb, "precision", rows_b),
        },
        columns=list(TABLE_COLUMNS),
    )


def compare_stats(
    run_a: PmbRun,
    run_b: PmbRun,
    *,
    seed: int,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    method: BootstrapMethod = "percentile",
    category_order: Sequence[str] = (),
) -> PairedReport:
    """McNemar, bootstrap intervals and Holm-adjusted category p-values of A against B.

    ``category_order`` orders the per-category results (pass :attr:`PmbFixture.category_order`);
    categories it does not list follow in the order they appear.
    """
    benchmark = _same_suite(run_a, run_b)
    table = outcome_table(run_a, run_b)
    if table.empty:
        raise ValueError(f"{run_a.identity.source} and {run_b.identity.source} have no case in common")
    return paired_stats(
        table,
        a=run_a.identity.display_name,
        b=run_b.identity.display_name,
        benchmark=benchmark,
        terms=PMB_TERMS,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        method=method,
        category_order=category_order,
    )


WTL_CASE_COLUMNS = ("run_id", "case_id", "turn_index", "passed")
"""The case columns :func:`win_tie_loss` reads (of every run of the suite)."""


def _outcomes(cases: pa.Table, runs: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``cases`` as a frame keyed by ``(run_id, case_id, turn)`` (turn -1 for single-turn); a ValueError naming the
    run's file when a run reports a case twice."""
    frame: pd.DataFrame = cases.select(list(WTL_CASE_COLUMNS)).to_pandas()
    frame["turn_index"] = frame["turn_index"].fillna(-1).astype("int64")
    twice = frame.duplicated(["run_id", "case_id", "turn_index"])
    if twice.any():
        run_id = frame["run_id"][twice].iloc[0]
        source = next((r["source"] for r in runs if r["run_id"] == run_id), run_id)
        raise ValueError(f"{source}: a case (case id and turn) appears twice")
    return frame


def win_tie_loss(cases: pa.Table, runs: pa.Table, chosen: str, *, alpha: float = 0.05) -> pd.DataFrame:
    """The chosen run (display name) against every other run of its suite, case by case.

    ``runs``: the suite's rows of the runs table (:mod:`memeval_core.pmb.runs_table`), in the order of the
    result; ``cases``: the :data:`WTL_CASE_COLUMNS` of their cases, in any order. Cases pair on
    ``(case_id, turn_index)``. Per paired case: win = chosen passed and the other failed; loss = the reverse;
    the rest are ties (both passed / both failed). ``mcnemar_p`` is the exact McNemar p of the pair
    (``b = wins``, ``c = losses``); ``holm_p`` adjusts those p-values across the other runs
    (:func:`memeval_core.explore.paired.compare_pairs`). Columns: ``chosen, other, other_run_id, n, wins,
    losses, ties_both_passed, ties_both_failed, mcnemar_p, holm_p``; rows in run order.
    """
    listed = runs.select(["run_id", "display_name", "benchmark", "source"]).to_pylist()
    matches = [r for r in listed if r["display_name"] == chosen]
    if not matches:
        raise ValueError(f"no run is called {chosen!r}")
    if len(matches) > 1:
        suites = sorted({r["benchmark"] for r in matches})
        raise ValueError(f"{chosen!r} names runs of several suites ({suites}); pass the runs of one suite")
    me = matches[0]
    others = [r for r in listed if r is not me and r["benchmark"] == me["benchmark"]]
    frame = _outcomes(cases, listed)
    mine = frame[frame["run_id"] == me["run_id"]].drop(columns="run_id")
    other_ids = pd.Index([r["run_id"] for r in others])
    theirs = frame[frame["run_id"].isin(other_ids)]
    merged = theirs.merge(mine, on=["case_id", "turn_index"], suffixes=("_other", "_me"))
    table = pd.DataFrame(
        {
            "pair": other_ids.get_indexer(merged["run_id"]),
            "a": merged["passed_me"].to_numpy(bool),
            "b": merged["passed_other"].to_numpy(bool),
        }
    )
    tests = compare_pairs(table, PMB_TERMS, alpha=alpha).set_index("pair").reindex(range(len(others)))
    frame = pd.DataFrame(
        {
            "chosen": chosen,
            "other": [o["display_name"] for o in others],
            "other_run_id": [o["run_id"] for o in others],
            "n": tests["n"].to_numpy(),
            "wins": tests["b"].to_numpy(),
            "losses": tests["c"].to_numpy(),
            "ties_both_passed": tests["both_passed"].to_numpy(),
            "ties_both_failed": tests["both_failed"].to_numpy(),
            "mcnemar_p": tests["mcnemar_p"].to_numpy(),
            "holm_p": tests["holm_p"].to_numpy(),
        },
        columns=[
            "chosen", "other", "other_run_id", "n", "wins", "losses", "ties_both_passed", "ties_both_failed",
            "mcnemar_p", "holm_p",
        ],
    )  # fmt: skip
    return frame
