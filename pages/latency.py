"""Latency: p50, p95 and mean per provider, per-case distribution, ingestion cost, and quality against latency.

URL state: ``?benchmark=pmb-session`` selects the suite, ``?quality=mean+precision`` the scatter's y axis
(``active passes`` or ``mean precision``).
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memeval_core.explore.latency_view import (
    ingestion_distribution,
    latency_boxes,
    latency_distribution,
    latency_summary,
)
from memeval_core.explore.pareto import Quality, pareto_frame, quality_latency_points
from memeval_core.pmb.run import Benchmark, PmbRun
from pages import ui

QUALITY_LABELS: dict[str, Quality] = {"active passes": "active_retrieval", "mean precision": "mean_precision"}
MS_FORMAT = "%.2f"


def summary_section(runs: tuple[PmbRun, ...], benchmark: Benchmark) -> None:
    """The per-provider latency and ingestion table."""
    st.subheader("Per provider")
    df = latency_summary(runs)
    st.caption(
        "Retrieval latency per case (session: per turn); p50 and p95 are nearest-rank, as PrecisionMemBench "
        "computes them. Ingestion: total time to store the fixture's beliefs, and per belief, where the report "
        "records it."
    )
    st.dataframe(
        df,
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(c, format=MS_FORMAT)
            for c in ("mean_ms", "p50_ms", "p95_ms", "ingestion_total_ms", "ingestion_per_belief_ms")
        },
        height="content",
        key="latency-summary",
    )
    ui.download_buttons(df, f"memeval-latency-{benchmark}", "summary")


def distribution_figure(dist: pd.DataFrame, order: list[str], title: str) -> go.Figure:
    """Horizontal box per provider (rank order, leader on top) on a log x axis, every case as a point."""
    palette = ui.colours(order)
    groups = {str(name): g["latency_ms"] for name, g in dist.groupby("display_name", sort=False)}
    fig = go.Figure(
        [
            go.Box(
                name=ui.chart_text(name),
                marker_color=palette[name],
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
    return _box_layout(fig, order, title)


def box_figure(boxes: pd.DataFrame, order: list[str], title: str) -> go.Figure:
    """The same boxes drawn from precomputed quartiles and Tukey fences, as one trace (no points: too many cases).

    One trace for every provider: a trace per provider costs plotly about a millisecond each to validate,
    seconds at a thousand providers.
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
            marker_color="#4f8fd6",
            line={"width": 1.5},
            showlegend=False,
        )
    )
    return _box_layout(fig, order, title)


def _box_layout(fig: go.Figure, order: list[str], title: str) -> go.Figure:
    fig.update_layout(
        height=max(260, 36 * len(order) + 90),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"type": "log", "title": {"text": title}},
    )
    return fig


def distribution_section(runs: tuple[PmbRun, ...], benchmark: Benchmark) -> None:
    """Per-case latency boxes and, where recorded, per-belief ingestion boxes."""
    order = [r.identity.display_name for r in runs]
    st.subheader("Per-case latency distribution")
    n_cases = sum(r.table.n for r in runs)
    stem = f"memeval-latency-per-case-{benchmark}"
    if n_cases <= ui.POINTS_LIMIT:
        st.caption("Each dot is one case; boxes show the quartiles and the median. Log scale.")
        dist = latency_distribution(runs)
        ui.chart(distribution_figure(dist, order, "retrieval latency per case (ms, log scale)"), key="latency-box")
        ui.download_buttons(dist, stem, "distribution")
    else:
        st.caption(
            f"{n_cases:,} cases: too many to draw one dot each, so boxes show the quartiles, the median and Tukey "
            "whiskers (1.5 IQR), computed from every case. Log scale. The table lists them; the download has "
            "every case."
        )
        boxes = latency_boxes(runs)
        ui.chart(box_figure(boxes, order, "retrieval latency per case (ms, log scale)"), key="latency-box")
        st.dataframe(boxes, hide_index=True, height=320, key="latency-boxes")
        ui.download_buttons(boxes, f"memeval-latency-boxes-{benchmark}", "boxes")
        ui.download_buttons(partial(latency_distribution, runs), stem, "distribution")
    ingestion = ingestion_distribution(runs)
    if len(ingestion):
        recorded = [n for n in order if (ingestion["display_name"] == n).any()]
        st.caption(f"Ingestion per belief, for the {len(recorded)} provider(s) whose report records it")
        fig = distribution_figure(ingestion, order, "ingestion latency per belief (ms, log scale)")
        ui.chart(fig, key="ingestion-box")
        ui.download_buttons(ingestion, f"memeval-ingestion-per-belief-{benchmark}", "ingestion")
    else:
        st.caption("No report of this suite records per-belief ingestion timings.")


def pareto_figure(points: pd.DataFrame, quality_label: str) -> go.Figure:
    """Every provider at (p50, quality), log x; the Pareto frontier as a step line through its points."""
    front = points[points["on_front"]]
    fig = go.Figure(
        [
            go.Scatter(
                name="provider",
                x=[float(v) for v in points["x"]],
                y=[float(v) for v in points["y"]],
                text=[ui.chart_text(n) for n in points["name"]],
                mode="markers+text",
                textposition=["top center" if i % 2 == 0 else "bottom center" for i in range(len(points))],
                marker={"size": 10, "color": ["#1a7f37" if f else "#8c959f" for f in points["on_front"]]},
                hovertemplate="%{text}<br>p50 %{x:.2f} ms<br>" + quality_label + " %{y:.4g}<extra></extra>",
            ),
            go.Scatter(
                name="Pareto frontier",
                x=[float(v) for v in front["x"]],
                y=[float(v) for v in front["y"]],
                mode="lines",
                line={"shape": "hv", "color": "#1a7f37", "dash": "dash"},
                hoverinfo="skip",
            ),
        ]
    )
    fig.update_layout(
        height=480,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"type": "log", "title": {"text": "p50 retrieval latency (ms, log scale) — lower is better"}},
        yaxis={"title": {"text": f"{quality_label} — higher is better"}},
        legend={"orientation": "h", "y": 1.08},
    )
    return fig


def pareto_section(runs: tuple[PmbRun, ...], benchmark: Benchmark) -> None:
    """Quality picker, the scatter with its frontier, and the frontier listed."""
    st.subheader("Quality against latency")
    label = st.segmented_control(
        "Quality", list(QUALITY_LABELS), default="active passes", required=True, **ui.url_bound("quality")
    )
    quality_label = label or "active passes"
    plotted = pareto_frame(quality_latency_points(runs, QUALITY_LABELS[quality_label]))
    points = plotted.rename(columns={"name": "display_name", "x": "p50_ms", "y": QUALITY_LABELS[quality_label]})
    front = points[points["on_front"]]
    st.caption(
        "A provider is on the Pareto frontier when no other is both at least as fast and at least as good, "
        "and strictly better in one. Providers without a p50 or without the quality are left out."
    )
    ui.chart(pareto_figure(plotted, quality_label), key="pareto")
    st.markdown(f"**Pareto frontier ({len(front)} of {len(points)}), fastest first:**")
    st.dataframe(front.drop(columns="on_front"), hide_index=True, height="content", key="pareto-front")
    st.caption("All providers plotted")
    st.dataframe(points, hide_index=True, height="content", key="pareto-points")
    ui.download_buttons(points, f"memeval-pareto-{benchmark}-{QUALITY_LABELS[quality_label]}", "pareto")


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Latency")
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()

benchmark = ui.benchmark_picker(loaded.runs)
suite = ui.suite_runs(loaded.runs, benchmark)
summary_section(suite, benchmark)
distribution_section(suite, benchmark)
pareto_section(suite, benchmark)
