"""Session drift timeline: per turn, both drift measures per provider, noise that surfaced, and latency under load.

URL state: ``?latency=absolute`` plots per-turn milliseconds instead of the ratio to the
single-turn p50.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memeval_core.explore import drift
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import PmbRun
from pages import ui

DRIFT_MEASURES = {"harness": "harness_drift", "topic": "topic_drift"}
DRIFT_TITLES = {"harness": "harness drift (1 − precision)", "topic": "topic drift (README definition)"}
LATENCY_VIEWS = ("ratio", "absolute")
EMPTY_COLOUR = "#6e7781"
EMPTY_ROW = -0.15  # y of the returned-nothing row: below 0, so an empty answer never reads as drift 0
ID_COLUMNS = ("topics", "noise_ids", "drift_belief_ids", "unattributed_ids")

EXPLANATION = """
Two drift measures, both per turn:

- **Harness drift** (what PrecisionMemBench reports): `1 − precision` of the turn, i.e. the share of
  returned relevant beliefs that are not gold for the turn. It is **0 when nothing was returned**, by
  construction; that is an empty answer, not isolation.
- **Topic drift** (the benchmark README's definition): the fraction of returned non-pinned beliefs that
  belong to topics *introduced in drift turns* and not to the turn's own topic. A belief belongs to the
  topics of every turn whose expectation names it as wanted; beliefs no turn names are counted apart
  (`n_unattributed`). Undefined when nothing non-pinned was returned.

Markers: filled circle = turn passed, ✕ = turn failed, hollow grey circle = **returned nothing**, drawn in its own
row below 0 and off the provider's line, because an empty answer is not perfect isolation. Shaded columns are
drift turns.
"""


def drift_figure(timeline: pd.DataFrame, column: str, title: str, order: list[str], drift_axis: list[str]) -> go.Figure:
    """One line per provider over the turns; returned-nothing turns as hollow markers in their own row below 0."""
    fig = go.Figure()
    palette = ui.colours(list(dict.fromkeys(timeline["display_name"])))
    for name, g in timeline.groupby("display_name", sort=False):
        answered = ~g["returned_nothing"]
        fig.add_trace(
            go.Scatter(
                name=ui.chart_text(str(name)),
                line={"color": palette[str(name)]},
                x=list(g["turn"]),
                y=[float(v) if a and pd.notna(v) else None for v, a in zip(g[column], answered, strict=True)],
                mode="lines+markers",
                marker={"symbol": ["circle" if p else "x" for p in g["passed"]], "size": 9},
                customdata=list(
                    zip(g["status"], g["noise_ids"].map(", ".join), g["topics"].map(", ".join), strict=True)
                ),
                hovertemplate=(
                    "%{fullData.name}<br>turn %{x}<br>" + column + " %{y:.4f}<br>%{customdata[0]}"
                    "<br>topics: %{customdata[2]}<br>noise ids: %{customdata[1]}<extra></extra>"
                ),
            )
        )
    empty = timeline[timeline["returned_nothing"]]
    if len(empty):
        by_turn = empty.groupby("turn", sort=False)["display_name"].agg(lambda s: ", ".join(map(ui.chart_text, s)))
        by_turn = by_turn.reindex([t for t in order if t in by_turn.index])
        fig.add_trace(
            go.Scatter(
                name="returned nothing",
                x=list(by_turn.index),
                y=[EMPTY_ROW] * len(by_turn),
                mode="markers",
                marker={"symbol": "circle-open", "size": 14, "color": EMPTY_COLOUR, "line": {"width": 2}},
                customdata=list(by_turn),
                hovertemplate="turn %{x}<br>returned nothing: %{customdata}<extra></extra>",
            )
        )
    for label in drift_axis:
        i = order.index(label)
        fig.add_vrect(x0=i - 0.5, x1=i + 0.5, fillcolor="#d0d7de", opacity=0.25, line_width=0, layer="below")
    fig.update_layout(
        height=440,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"title": {"text": "turn index · label"}, "categoryorder": "array", "categoryarray": order},
        yaxis={
            "title": {"text": title},
            "range": [EMPTY_ROW - 0.08, 1.05],
            "tickvals": [EMPTY_ROW, 0, 0.2, 0.4, 0.6, 0.8, 1],
            "ticktext": ["returned nothing", "0", "0.2", "0.4", "0.6", "0.8", "1"],
        },
        legend={"orientation": "v"},
    )
    return fig


def latency_figure(frame: pd.DataFrame, column: str, order: list[str]) -> go.Figure:
    """Per-turn latency (ms or ratio to the provider's single-turn p50) per provider, log y axis."""
    palette = ui.colours(list(dict.fromkeys(frame["display_name"])))
    fig = go.Figure(
        [
            go.Scatter(
                name=ui.chart_text(str(name)),
                line={"color": palette[str(name)]},
                x=list(g["turn"]),
                y=[None if pd.isna(v) else float(v) for v in g[column]],
                mode="lines+markers",
                hovertemplate="%{fullData.name}<br>turn %{x}<br>" + column + " %{y:.2f}<extra></extra>",
            )
            for name, g in frame.groupby("display_name", sort=False)
        ]
    )
    if column == "ratio":
        fig.add_hline(y=1, line_dash="dot", annotation_text="single-turn p50", annotation_position="bottom right")
    fig.update_layout(
        height=420,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"title": {"text": "turn index · label"}, "categoryorder": "array", "categoryarray": order},
        yaxis={
            "type": "log",
            "title": {"text": "× single-turn p50" if column == "ratio" else "latency (ms)"},
        },
    )
    return fig


def drift_section(runs: tuple[PmbRun, ...], fixture: PmbFixture) -> None:
    """Drift chart (measure selectable), explanation, returned-nothing flags, noise and drift-turn topics."""
    timeline = drift.label_turns(drift.drift_timeline(runs, fixture), fixture)
    order = list(drift.turn_labels(fixture).values())
    drift_axis = sorted({t for t, d in zip(timeline["turn"], timeline["is_drift_turn"], strict=True) if d})
    st.markdown(EXPLANATION)
    empty = drift.returned_nothing_summary(timeline)
    if len(empty):
        st.warning(
            f"{len(empty)} provider(s) returned nothing on some turns. Their harness drift there is 0 only because "
            "nothing came back; those turns are drawn as hollow grey markers and listed here.",
            icon=":material/block:",
        )
        st.dataframe(empty, hide_index=True, height="content", key="empty-table")
        ui.download_buttons(empty, "memeval-session-returned-nothing", "empty")
    for measure, column in DRIFT_MEASURES.items():
        st.caption(f"Per turn: {DRIFT_TITLES[measure]}")
        fig = drift_figure(timeline, column, DRIFT_TITLES[measure], order, drift_axis)
        ui.chart(fig, key=f"drift-chart-{measure}")
    chart_data = ui.joined(
        timeline[
            [
                "display_name",
                "turn",
                "passed",
                "returned_nothing",
                "status",
                "harness_drift",
                "topic_drift",
                "noise_ids",
            ]
        ],
        ["noise_ids"],
    )
    ui.download_buttons(chart_data, "memeval-session-drift-chart-data", "drift-chart")

    st.subheader("Drift turns and the noise that surfaced")
    topics = ui.joined(drift.drift_turns(fixture), ["topics", "introduced"])
    st.caption("Turns labelled drift, and the topics they introduce")
    st.dataframe(topics, hide_index=True, height="content", key="drift-turns")
    ui.download_buttons(topics, "memeval-session-drift-turns", "drift-turns")
    noise = timeline[timeline["noise_ids"].map(len) > 0][
        ["display_name", "turn", "topics", "passed", "noise_ids", "drift_belief_ids"]
    ]
    noise = ui.joined(noise.reset_index(drop=True), ["topics", "noise_ids", "drift_belief_ids"])
    st.caption(f"{len(noise)} provider-turns surfaced noise (beliefs the turn's noise check says must not surface)")
    st.dataframe(noise, hide_index=True, key="noise-table")
    ui.download_buttons(noise, "memeval-session-noise", "noise")

    st.caption("The whole timeline: one row per provider and turn")
    full = ui.joined(timeline, ID_COLUMNS)
    st.dataframe(
        full,
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(c, format="%.4f") for c in ("precision", "harness_drift", "topic_drift")
        },
        key="timeline-table",
    )
    ui.download_buttons(full, "memeval-session-timeline", "timeline")


def latency_section(runs: tuple[PmbRun, ...], all_runs: tuple[PmbRun, ...], fixture: PmbFixture) -> None:
    """Per-turn latency against each provider's single-turn p50, and the p50 ratio table."""
    st.subheader("Latency under session load")
    view = st.segmented_control("Plot", LATENCY_VIEWS, default="ratio", required=True, **ui.url_bound("latency"))
    per_turn = drift.turn_latency((*runs, *all_runs), fixture)
    column = "latency_ms" if view == "absolute" else "ratio"
    st.caption(
        "ratio = the turn's latency / the provider's single-turn p50 (same display name): how much slower a "
        "retrieval is inside a session than on its own."
        if column == "ratio"
        else "Per-turn retrieval latency, milliseconds."
    )
    order = list(drift.turn_labels(fixture).values())
    ui.chart(latency_figure(per_turn, column, order), key="latency-chart")
    ui.download_buttons(per_turn, "memeval-session-latency-per-turn", "latency-turns")
    ratios = drift.session_latency((*runs, *all_runs))
    st.caption("Session p50 against single-turn p50 (nearest-rank medians)")
    st.dataframe(
        ratios,
        hide_index=True,
        height="content",
        column_config={"ratio": st.column_config.NumberColumn("ratio", format="%.2f×")},
        key="latency-ratio-table",
    )
    ui.download_buttons(ratios, "memeval-session-latency-ratio", "latency-ratio")


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Session drift")
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()
if loaded.fixture is None:
    st.warning("The PrecisionMemBench fixture was not found, so session turns cannot be labelled.")
    st.stop()
session_runs = ui.suite_runs(loaded.runs, "pmb-session")
if not session_runs:
    st.info("No session runs in the results directory.")
    st.stop()
single_runs = ui.suite_runs(loaded.runs, "pmb-single-turn")
drift_section(session_runs, loaded.fixture)
latency_section(session_runs, single_runs, loaded.fixture)
