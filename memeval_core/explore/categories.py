"""Per-category numbers of each run (the heatmap) and pass quality per run (the stacked bars).

Categories follow the benchmark's order (:attr:`PmbFixture.category_order`: by case count, then
first appearance); categories the fixture does not list (the session category) come after, in the
order they first appear in the runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.pass_types import PASS_TYPES
from memeval_core.pmb.run import PmbRun

Metric = Literal["pass_rate", "mean_precision", "mean_recall"]
METRICS: tuple[Metric, ...] = ("pass_rate", "mean_precision", "mean_recall")

CATEGORY_COLUMNS = [
    "display_name",
    "run_id",
    "benchmark",
    "category",
    "cases",
    "passed",
    "pass_rate",
    "mean_precision",
    "mean_recall",
]


def ordered_categories(present: Iterable[str], order: Sequence[str]) -> tuple[str, ...]:
    """The categories of ``present`` (deduplicated): those in ``order`` first, in that order, then the rest as met."""
    seen = tuple(dict.fromkeys(present))
    known = set(seen)
    listed = set(order)
    return tuple(c for c in order if c in known) + tuple(c for c in seen if c not in listed)


def categories_met(run: PmbRun) -> list[str]:
    """The fixture categories of ``run``'s cases, each once, in the order its cases first meet them."""
    codes = run.table.column("category")
    _, first = np.unique(codes, return_index=True)
    strings = run.table.pool.strings
    return [strings[c] for c in codes[np.sort(first)].tolist()]


def category_table(runs: Sequence[PmbRun], fixture: PmbFixture) -> pd.DataFrame:
    """Tidy per-(run, category) numbers.

    One row per run and category the run has cases in, in run order then category order.
    ``pass_rate = passed / cases``; ``mean_precision`` / ``mean_recall`` are means over the cases
    whose value is not null (None when no case has one). ``category`` is an ordered categorical in
    benchmark order. Columns: ``display_name, run_id, benchmark, category, cases, passed, pass_rate,
    mean_precision, mean_recall``.
    """
    listed = set(fixture.category_order)

    def met(run: PmbRun) -> list[str]:
        # Where they are first met only matters for categories the fixture does not list (session runs).
        names = [a.category for a in run.aggregate.categories]
        return names if listed.issuperset(names) else categories_met(run)

    order = ordered_categories((c for r in runs for c in met(r)), fixture.category_order)
    rows = []
    for run in runs:
        # The run's aggregate already holds these numbers per category (computed once, at load).
        by_cat = {a.category: a for a in run.aggregate.categories}
        for cat in order:
            agg = by_cat.get(cat)
            if agg is None or not agg.cases:
                continue
            rows.append(
                {
                    "display_name": run.identity.display_name,
                    "run_id": run.identity.run_id,
                    "benchmark": run.identity.benchmark,
                    "category": cat,
                    "cases": agg.cases,
                    "passed": agg.passed,
                    "pass_rate": agg.passed / agg.cases,
                    "mean_precision": agg.mean_precision,
                    "mean_recall": agg.mean_recall,
                }
            )
    frame = pd.DataFrame(rows, columns=CATEGORY_COLUMNS)
    frame["category"] = pd.Categorical(frame["category"], categories=list(order), ordered=True)
    for col in ("pass_rate", "mean_precision", "mean_recall"):
        frame[col] = frame[col].astype("float64")
    return frame


def category_heatmap(runs: Sequence[PmbRun], fixture: PmbFixture, metric: Metric) -> pd.DataFrame:
    """Run x category pivot of one metric, for the heatmap cells.

    Index: display names in run order; columns: categories in benchmark order; NaN where a run has
    no case in a category or no non-null value. The runs must belong to one suite, because display
    names are unique only within a suite.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    suites = {r.identity.benchmark for r in runs}
    if len(suites) > 1:
        raise ValueError(f"heatmap runs must belong to one suite, got {sorted(suites)}")
    table = category_table(runs, fixture)
    names = [r.identity.display_name for r in runs]
    pivot = table.pivot_table(index="display_name", columns="category", values=metric, aggfunc="first", observed=True)
    columns = [c for c in table["category"].cat.categories if c in pivot.columns]
    return pivot.reindex(index=names, columns=columns)


def pass_quality(runs: Sequence[PmbRun]) -> pd.DataFrame:
    """Passes per run split by what they demonstrate (the stacked bars).

    Columns: ``display_name, run_id, benchmark, cases, passed, active_retrieval, structural,
    trivially_empty, failed`` with ``active_retrieval + structural + trivially_empty = passed`` and
    ``passed + failed = cases``. Pair with :func:`memeval_core.explore.reference.reference_frame`
    for the reference lines.
    """
    rows: list[dict[str, object]] = []
    for run in runs:
        agg = run.aggregate
        rows.append(
            {
                "display_name": run.identity.display_name,
                "run_id": run.identity.run_id,
                "benchmark": run.identity.benchmark,
                "cases": agg.cases,
                "passed": agg.passed,
                **{t: agg.pass_types[t] for t in PASS_TYPES},
                "failed": agg.cases - agg.passed,
            }
        )
    columns = ["display_name", "run_id", "benchmark", "cases", "passed", *PASS_TYPES, "failed"]
    return pd.DataFrame(rows, columns=columns)
