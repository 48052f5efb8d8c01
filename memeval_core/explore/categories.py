"""Per-category numbers of each run (the heatmap) and pass quality per run (the stacked bars).

Categories follow the benchmark's order (:attr:`PmbFixture.category_order`: by case count, then
first appearance); categories the fixture does not list (the session category) come after, in the
order they first appear in the runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.pass_types import PASS_TYPES

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


def category_table(runs: pa.Table, fixture: PmbFixture) -> pd.DataFrame:
    """Tidy per-(run, category) numbers, from the runs table (:mod:`memeval_core.pmb.runs_table`) alone.

    One row per run and category the run has cases in, in the table's run order then category order.
    ``pass_rate = passed / cases``; ``mean_precision`` / ``mean_recall`` are means over the cases
    whose value is not null (None when no case has one). ``category`` is an ordered categorical in
    benchmark order (categories the fixture does not list follow, as the runs first list them). Columns:
    ``display_name, run_id, benchmark, category, cases, passed, pass_rate, mean_precision, mean_recall``.
    """
    categories = runs.column("categories").combine_chunks()
    flat = pc.list_flatten(categories)
    fields = ("category", "cases", "passed", "mean_precision", "mean_recall")
    frame = pd.DataFrame({"run": pc.list_parent_indices(categories).to_numpy()} | {f: flat.field(f) for f in fields})
    order = ordered_categories(frame["category"], fixture.category_order)
    frame["category"] = pd.Categorical(frame["category"], categories=list(order), ordered=True)
    frame = frame[frame["cases"] > 0].sort_values(["run", "category"], kind="stable")
    for name in ("display_name", "run_id", "benchmark"):
        frame[name] = runs.column(name).to_numpy(zero_copy_only=False)[frame["run"]]
    frame["pass_rate"] = frame["passed"] / frame["cases"]
    frame = frame.astype(dict.fromkeys(("pass_rate", "mean_precision", "mean_recall"), "float64"))
    return frame[CATEGORY_COLUMNS].reset_index(drop=True)


def category_heatmap(runs: pa.Table, fixture: PmbFixture, metric: Metric) -> pd.DataFrame:
    """Run x category pivot of one metric, for the heatmap cells (``runs``: rows of the runs table).

    Index: display names in run order; columns: categories in benchmark order; NaN where a run has
    no case in a category or no non-null value. The runs must belong to one suite, because display
    names are unique only within a suite.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    suites = set(runs.column("benchmark").to_pylist())
    if len(suites) > 1:
        raise ValueError(f"heatmap runs must belong to one suite, got {sorted(suites)}")
    table = category_table(runs, fixture)
    names = runs.column("display_name").to_pylist()
    pivot = table.pivot_table(index="display_name", columns="category", values=metric, aggfunc="first", observed=True)
    columns = [c for c in table["category"].cat.categories if c in pivot.columns]
    return pivot.reindex(index=names, columns=columns)


def pass_quality(runs: pa.Table) -> pd.DataFrame:
    """Passes per run split by what they demonstrate (the stacked bars), from rows of the runs table.

    Columns: ``display_name, run_id, benchmark, cases, passed, active_retrieval, structural,
    trivially_empty, failed`` with ``active_retrieval + structural + trivially_empty = passed`` and
    ``passed + failed = cases``. Pair with :func:`memeval_core.explore.reference.reference_frame`
    for the reference lines.
    """
    columns = ["display_name", "run_id", "benchmark", "cases", "passed", *PASS_TYPES]
    frame = pd.DataFrame(runs.select(columns).to_pydict(), columns=columns)
    frame["failed"] = frame["cases"] - frame["passed"]
    return frame
