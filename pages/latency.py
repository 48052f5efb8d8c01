"""Latency: how fast each system retrieves, which systems are both fast and good, and the per-case spread.

URL state: ``?benchmark=pmb-session`` selects the suite, ``?quality=mean+precision`` the scatter's y axis
(``active passes`` or ``mean precision``), ``?top=20`` how many systems the ingestion chart draws when more than
:data:`CHART_LIMIT` ingested.

The page reads the runs table's header columns and a few case columns of the suite; whole runs only for the
ingestion chart's systems (per-belief timings live nowhere else), and for its download when it is clicked.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from memeval_core import labels
from memeval_core.explore.latency_view import (
    CASE_COLUMNS,
    ingestion_distribution,
    latency_boxes,
    latency_distribution,
    latency_summary,
    log_ticks,
)
from memeval_core.explore.pareto import Quality, pareto_frame, quality_latency_points
from memeval_core.pmb.run import Benchmark
from memeval_core.pmb.snapshot import RunsReader
from pages import ui

QUALITY_LABELS: dict[str, Quality] = {"active passes": "active_retrieval", "mean precision": "mean_precision"}
QUALITY_NAMES = {"active passes": "Active passes", "mean precision": "Mean precision"}
P50_COLOUR = "#4263eb"
P95_COLOUR = "#f08c00"
FRONT_COLOUR = "#2f9e44"
OTHER_COLOUR = "#adb5bd"
BOX_COLOUR = "#4263eb"
ROW_PX = 30
CHART_RUNS = 40
"""Systems in the medians chart: a row per system stops being readable long before a thousand systems."""
CONTENT_ROWS = 30
"""Tables up to this many rows are shown whole; longer ones scroll."""
TITLE = {"x": 0, "xanchor": "left", "font": {"size": 15}}
LEGEND_BELOW = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"}
"""Legend in the figure's bottom margin, under the x axis title: clear of the plot and of plotly's toolbar."""
TOP_AXIS_ROWS = 15
"""From this many systems on, the medians chart is taller than a screen: its axis and legend go on top."""
SUMMARY_SHOWN = ["display_name", "run_id", "p50_ms", "p95_ms", "mean_ms", "cases"]
SUMMARY_SHOWN += ["ingestion_total_ms", "ingestion_beliefs", "ingestion_per_belief_ms"]
CHART_LIMIT = 50
"""Systems the ingestion chart draws by default when more ingested (each is read whole)."""
READ_CHUNK = 200
"""Whole runs read at a time for the download of every system's per-belief timings."""

EXPLANATION = """
- **Retrieval latency** is measured per case (per turn in session runs), as the report records it.
  **Median** and **p95** are nearest-rank percentiles, as PrecisionMemBench computes them, so each is a latency
  that was actually observed.
- **Ingestion time** is the total time to store the fixture's beliefs, and **per belief** that total divided by the
  beliefs ingested, where the report records it (the plain vector baselines ingest nothing through a provider).
- **Quality against latency**: a system is on the **Pareto frontier** when no other system is both at least as fast
  (median) and at least as good, and strictly better in one. **Active passes** are passes with a positive precision,
  the only pass a system cannot get by returning everything or nothing. Systems without a median or without the
  quality are left out.
- Latency axes are logarithmic: each step of the grid is ten times (or 2 and 5 times) the one before.
"""


def log_axis(values: Iterable[float], unit: str = "ms") -> dict[str, Any]:
    """A log axis fitted to the positive ``values``, its ticks read as the values they mark (``10 ms``, ``1 s``)."""
    shown = [float(v) for v in values if pd.notna(v) and math.isfinite(float(v)) and float(v) > 0]
    axis: dict[str, Any] = {"type": "log"}
    if shown:
        low, high = min(shown), max(shown)
        vals, text = log_ticks(low, high, "×" if unit == "×" else "ms")
        pad = max(0.08, 0.05 * math.log10(high / low))
        axis |= {"tickvals": vals, "ticktext": text, "range": [math.log10(low) - pad, math.log10(high) + pad]}
    return axis


def summary_frame(runs: pa.Table) -> pd.DataFrame:
    """The per-system latency table, fastest median first (systems without a median last)."""
    df = latency_summary(runs).rename(columns={"count": "cases"})
    return ui.sort_frame(df, "p50_ms", descending=False)


def summary_figure(df: pd.DataFrame, benchmark: Benchmark) -> go.Figure:
    """Median and p95 per system on one log axis, joined by a bar: the fastest on top (the first
    :data:`CHART_RUNS`; the table lists every system)."""
    timed = df.dropna(subset=["p50_ms", "p95_ms"])
    rows = timed.head(CHART_RUNS)
    who = "system" if len(rows) == len(timed) else f"system, the {len(rows):,} fastest of {len(timed):,}"
    names = [ui.chart_text(str(n)) for n in rows["display_name"]]
    p50, p95 = [float(v) for v in rows["p50_ms"]], [float(v) for v in rows["p95_ms"]]
    xs: list[float | None] = []
    ys: list[str | None] = []
    for name, low, high in zip(names, p50, p95, strict=True):
        xs += [low, high, None]
        ys += [name, name, None]
    fig = go.Figure(
        [
            go.Scatter(x=xs, y=ys, mode="lines", line={"color": "#ced4da", "width": 4}, hoverinfo="skip",
                       showlegend=False),
            go.Scatter(name="Median (p50)", x=p50, y=names, mode="markers",
                       marker={"size": 12, "color": P50_COLOUR}, customdata=[labels.milliseconds(v) for v in p50],
                       hovertemplate="%{y}: median %{customdata}<extra></extra>"),
            go.Scatter(name="95th percentile (p95)", x=p95, y=names, mode="markers",
                       marker={"size": 11, "color": P95_COLOUR, "symbol": "diamond"},
                       customdata=[labels.milliseconds(v) for v in p95],
                       hovertemplate="%{y}: p95 %{customdata}<extra></extra>"),
        ]
    )  # fmt: skip
    title = f"Retrieval latency per case by {who}, {labels.benchmark_name(benchmark)}"
    height = max(280, ROW_PX * len(rows) + 170)
    axis = {**log_axis([*p50, *p95]), "title": {"text": "Retrieval latency per case (log scale), lower is better"}}
    # Taller than a screen: the scale and the legend go where the first screen shows them, between the title and
    # the first row (the legend a fixed 40 pixels from the top, whatever the height).
    tall = len(rows) >= TOP_AXIS_ROWS
    fig.update_layout(
        title=ui.top_title(title) if tall else {"text": title, **TITLE},
        height=height,
        margin={"l": 10, "r": 20, "t": 120, "b": 30} if tall else {"l": 10, "r": 20, "t": 50, "b": 100},
        xaxis={**axis, "side": "top"} if tall else axis,
        yaxis={"autorange": "reversed", "automargin": True, "title": {"text": "System, fastest median first"}},
        legend={**LEGEND_BELOW, "y": 1 - 40 / height, "yanchor": "top"} if tall else LEGEND_BELOW,
    )
    return fig


def summary_section(runs: pa.Table, benchmark: Benchmark) -> pd.DataFrame:
    """The answer: median and p95 per system, then the table with ingestion cost; returns that table."""
    df = summary_frame(runs)
    ui.chart(summary_figure(df, benchmark), key="latency-summary-chart")
    ui.table(df[SUMMARY_SHOWN], key="latency-summary", height="content" if len(df) <= CONTENT_ROWS else "auto")
    ui.download_buttons(df, f"memeval-latency-{benchmark}", "summary")
    return df


def distribution_figure(dist: pd.DataFrame, order: list[str], title: str) -> go.Figure:
    """Horizontal box per system (``order`` top to bottom) on a log x axis, every case as a point."""
    groups = {str(name): g["latency_ms"] for name, g in dist.groupby("display_name", sort=False)}
    fig = go.Figure(
        [
            go.Box(
                name=ui.chart_text(name),
                marker_color=BOX_COLOUR,
                x=[float(v) for v in groups[name]],
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker={"size": 3, "opacity": 0.5},
                line={"width": 1.5},
                showlegend=False,
                hovertemplate="%{x:.2f} ms<extra>%{fullData.name}</extra>",
            )
            for name in reversed(order)
            if name in groups
        ]
    )
    return _box_layout(fig, order, title, dist["latency_ms"])


def box_figure(boxes: pd.DataFrame, order: list[str], title: str) -> go.Figure:
    """The same boxes drawn from precomputed quartiles and Tukey fences, as one trace (no points: too many cases).

    One trace for every system: a trace per system costs plotly about a millisecond each to validate,
    seconds at a thousand systems.
    """
    rank = {name: i for i, name in enumerate(order)}
    shown = boxes.assign(_rank=[rank.get(n, len(rank)) for n in boxes["display_name"]]).sort_values(
        "_rank", ascending=False, kind="stable"
    )
    fig = go.Figure(
        go.Box(
            y=[ui.chart_text(str(n)) for n in shown["display_name"]],
            q1=shown["q1_ms"].to_list(),
            median=shown["median_ms"].to_list(),
            q3=shown["q3_ms"].to_list(),
            lowerfence=shown["lower_fence_ms"].to_list(),
            upperfence=shown["upper_fence_ms"].to_list(),
            orientation="h",
            marker_color=BOX_COLOUR,
            line={"width": 1.5},
            showlegend=False,
        )
    )
    return _box_layout(fig, order, title, [*shown["lower_fence_ms"], *shown["upper_fence_ms"]])


def _box_layout(fig: go.Figure, order: list[str], title: str, values: Iterable[float]) -> go.Figure:
    fig.update_layout(
        title={"text": title, **TITLE},
        height=max(280, 32 * len(order) + 120),
        margin={"l": 10, "r": 20, "t": 50, "b": 60},
        xaxis={**log_axis(values), "title": {"text": "Latency (log scale)"}},
        yaxis={"automargin": True, "title": {"text": "System"}},
    )
    return fig


def distribution_section(loaded: ui.Loaded, runs: pa.Table, benchmark: Benchmark, order: list[str]) -> None:
    """Per-case latency boxes of every system of the suite (``runs``, the runs table's rows), ``order`` top down."""
    st.subheader("How latency spreads from case to case", anchor=False)
    cases = ui.suite_cases(loaded, benchmark, CASE_COLUMNS)
    stem = f"memeval-latency-per-case-{benchmark}"
    title = "Retrieval latency of every case, fastest median on top"
    if cases.num_rows <= ui.POINTS_LIMIT:
        st.caption("Each dot is one case; boxes show the quartiles and the median.")
        dist = latency_distribution(cases, runs)
        ui.chart(distribution_figure(dist, order, title), key="latency-box")
        ui.download_buttons(dist, stem, "distribution")
    else:
        st.caption(
            f"{cases.num_rows:,} cases: too many to draw one dot each, so boxes show the quartiles, the median and "
            "Tukey whiskers (1.5 IQR), computed from every case. The table lists them; the download has every case."
        )
        boxes = latency_boxes(cases, runs).rename(columns={"count": "cases"})
        ui.chart(box_figure(boxes, order, title), key="latency-box")
        ui.table(boxes, key="latency-boxes", hide=("run_id", "benchmark"), height=320)
        ui.download_buttons(boxes, f"memeval-latency-boxes-{benchmark}", "boxes")
        ui.download_buttons(partial(latency_distribution, cases, runs), stem, "distribution")


def charted_count(n_runs: int) -> int:
    """How many systems (fastest median first) the ingestion chart draws: all, up to :data:`CHART_LIMIT`; above,
    the reader picks (each is read whole; the download holds every system)."""
    if n_runs <= CHART_LIMIT:
        return n_runs
    return ui.number_param(
        f"Systems in the ingestion chart (fastest median first; the download has all {n_runs:,})",
        "top", CHART_LIMIT, 1, n_runs, step=10, width=420,
    )  # fmt: skip


def all_ingestion(read_runs: RunsReader, run_ids: Sequence[str]) -> pd.DataFrame:
    """:func:`ingestion_distribution` of every run in ``run_ids``, read :data:`READ_CHUNK` whole runs at a time
    (for a download: none is kept)."""
    parts = [ingestion_distribution(read_runs(run_ids[i : i + READ_CHUNK])) for i in range(0, len(run_ids), READ_CHUNK)]
    return pd.concat(parts, ignore_index=True) if parts else ingestion_distribution(())


def ingestion_chart(ingestion: pd.DataFrame, order: list[str], of: int | None) -> None:
    """Per-belief ingestion boxes, systems in ``order`` top down (``of``: the systems read, when not all were)."""
    present = set(ingestion["display_name"])
    recorded = [n for n in order if n in present]
    title = f"Ingestion time per belief, for the {len(recorded)} systems whose report records it"
    title += "" if of is None else f", of the {of:,} fastest that ingested"
    ui.chart(distribution_figure(ingestion, recorded, title), key="ingestion-box")


def ingestion_section(loaded: ui.Loaded, summary: pd.DataFrame, ranked: list[str], benchmark: Benchmark) -> None:
    """Per-belief ingestion boxes of the first systems of ``summary`` (fastest first) that ingested beliefs, read
    whole; the download lists every system's timings in rank order (``ranked``: the suite's run ids)."""
    ingested = summary[summary["ingestion_beliefs"].fillna(0) > 0]
    ingested_ids = set(ingested["run_id"])
    everyone = [i for i in ranked if i in ingested_ids]
    chosen = set(ingested["run_id"].iloc[: charted_count(len(everyone))])
    ingestion = ingestion_distribution(ui.whole_runs(loaded, [i for i in everyone if i in chosen]))
    limited = len(chosen) < len(everyone)
    if len(ingestion):
        ingestion_chart(ingestion, [str(n) for n in summary["display_name"]], len(chosen) if limited else None)
    elif limited:
        st.caption(f"None of the {len(chosen):,} fastest systems that ingested records per-belief timings.")
    else:
        st.caption("No report of this suite records per-belief ingestion timings.")
        return
    data = partial(all_ingestion, loaded.read_runs, everyone) if limited else ingestion
    ui.download_buttons(data, f"memeval-ingestion-per-belief-{benchmark}", "ingestion")


def pareto_figure(points: pd.DataFrame, quality_label: str) -> go.Figure:
    """Every system at (median, quality), log x; only the frontier is named (the others on hover)."""
    front, rest = points[points["on_front"]], points[~points["on_front"]]
    counted = QUALITY_LABELS[quality_label] == "active_retrieval"
    y_hover = "%{y:.0f} active passes" if counted else "mean precision %{y:.1%}"

    def hover(df: pd.DataFrame) -> dict[str, Any]:
        return {
            "text": [ui.chart_text(str(n)) for n in df["name"]],
            "customdata": [labels.milliseconds(float(v)) for v in df["x"]],
            "hovertemplate": "%{text}<br>median %{customdata}<br>" + y_hover + "<extra></extra>",
        }

    fig = go.Figure(
        [
            go.Scatter(name="Other systems (hover for names)", x=[float(v) for v in rest["x"]],
                       y=[float(v) for v in rest["y"]], mode="markers",
                       marker={"size": 10, "color": OTHER_COLOUR}, **hover(rest)),
            go.Scatter(name="Pareto frontier", x=[float(v) for v in front["x"]], y=[float(v) for v in front["y"]],
                       mode="lines+markers+text", textposition="top center", textfont={"color": FRONT_COLOUR},
                       line={"shape": "hv", "color": FRONT_COLOUR, "dash": "dash"},
                       marker={"size": 12, "color": FRONT_COLOUR}, **hover(front)),
        ]
    )  # fmt: skip
    top = float(points["y"].max()) if len(points) else 1.0
    fig.update_layout(
        title={"text": f"{QUALITY_NAMES[quality_label]} against median latency", **TITLE},
        height=460,
        margin={"l": 10, "r": 20, "t": 50, "b": 100},
        xaxis={**log_axis(points["x"]), "title": {"text": "Median retrieval latency (log scale), lower is better"}},
        yaxis={
            "title": {"text": ("Active passes (cases)" if counted else "Mean precision") + ", higher is better"},
            "range": [-0.04 * max(top, 1e-9), max(top, 1e-9) * 1.15],
            **({} if counted else {"tickformat": ".0%"}),
        },
        legend=LEGEND_BELOW,
    )
    return fig


def pareto_section(runs: pa.Table, benchmark: Benchmark) -> None:
    """Quality picker, the scatter with its frontier and, beside it, the frontier listed."""
    st.subheader("Fast and good: the Pareto frontier", anchor=False)
    label = ui.choice("Quality", "quality", list(QUALITY_LABELS), "active passes", QUALITY_NAMES, radio=True)
    quality = QUALITY_LABELS[label]
    plotted = pareto_frame(quality_latency_points(runs, quality))
    points = plotted.rename(columns={"name": "display_name", "x": "p50_ms", "y": quality})
    front = points[points["on_front"]].drop(columns="on_front")
    left, right = st.columns([3, 2], gap="medium")
    with left:
        ui.chart(pareto_figure(plotted, label), key="pareto")
    with right:
        st.markdown(f"**Pareto frontier ({len(front)} of {len(points)}), fastest first:**")
        ui.table(front, key="pareto-front", height="content")
        st.caption("No other system is both at least as fast and at least as good, and strictly better in one.")
    with st.expander(f"All {len(points)} systems plotted"):
        ui.table(points, key="pareto-points", height="content")
        ui.download_buttons(points, f"memeval-pareto-{benchmark}-{quality}", "pareto")


st.title("Latency")
ui.flash_sync_result()
loaded = ui.load_current()
if not loaded.identities:
    ui.empty_state(loaded)
    st.stop()

present = ui.present_benchmarks(loaded)
chosen = ui.choice(
    "Benchmark", "benchmark", present, present[0], {b: labels.benchmark_name(b) for b in present}, radio=True
)
benchmark: Benchmark = next(b for b in present if b == chosen)
suite = ui.suite_table(loaded, benchmark)
summary = summary_section(suite, benchmark)
pareto_section(suite, benchmark)
distribution_section(loaded, suite, benchmark, [str(n) for n in summary["display_name"]])
ingestion_section(loaded, summary, suite.column("run_id").to_pylist(), benchmark)
with st.expander("How latency is measured"):
    st.markdown(EXPLANATION)
