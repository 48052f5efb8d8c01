"""Session drift: per turn of a session, how much of what each system returns is off-topic; noise; latency under load.

URL state: ``?measure=topic`` plots topic drift instead of harness drift; ``?latency=absolute`` plots per-turn
milliseconds instead of the ratio to the single-turn median, ``?top=N`` the number of systems shown when the suite
has more than :data:`pages.ui.SESSION_SYSTEMS`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from memeval_core.explore import drift
from memeval_core.explore.latency_view import log_ticks
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import PmbRun
from pages import ui

MEASURES = {"harness": "harness_drift", "topic": "topic_drift"}
MEASURE_NAMES = {"harness": "Harness drift (1 − precision)", "topic": "Topic drift"}
LATENCY_VIEWS = {"ratio": "Times the single-turn median", "absolute": "Milliseconds"}
LINE = "#4263eb"
PASSED = "#2f9e44"
FAILED = "#e03131"
EMPTY_COLOUR = "#868e96"
SHADE = "#d0d7de"
EMPTY_ROW = -0.2  # y of the returned-nothing row: below 0, so an empty answer never reads as drift 0
ID_COLUMNS = ("topics", "noise_ids", "drift_belief_ids", "unattributed_ids")
COLUMNS = 3
PANEL_PX = 150
TITLE = {"x": 0, "xanchor": "left", "font": {"size": 15}}
LEGEND_BELOW = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"}
"""Legend in the figure's bottom margin, under the x axis titles: clear of the plot and of plotly's toolbar."""
CHART_DATA = ["display_name", "turn", "passed", "returned_nothing", "status", "harness_drift", "topic_drift"]

EXPLANATION = """
Two drift measures, both per turn:

- **Harness drift** (what PrecisionMemBench reports): `1 − precision` of the turn, i.e. the share of
  returned relevant beliefs that are not gold for the turn. It is **0 when nothing was returned**, by
  construction; that is an empty answer, not isolation.
- **Topic drift** (the benchmark README's definition): the fraction of returned non-pinned beliefs that
  belong to topics *introduced in drift turns* and not to the turn's own topic. A belief belongs to the
  topics of every turn whose expectation names it as wanted; beliefs no turn names are counted apart
  (the *Unattributed* column). Undefined when nothing non-pinned was returned.

The session: turn 0 establishes a topic, the shaded turns drift to other topics, then the session continues the
first topic implicitly and re-enters it; `s2·0` is the first turn of a second session that relies on the first.
Markers: green circle = turn passed, red ✕ = turn failed, hollow grey circle = **returned nothing**, drawn in its own
row below 0% and off the system's line, because an empty answer is not perfect isolation.
"""


def grid(names: list[str], axis: pd.DataFrame) -> go.Figure:
    """Empty small multiples, one panel per system (rank order), sharing a numeric turn axis in session order."""
    cols = min(COLUMNS, len(names))
    rows = math.ceil(len(names) / cols)
    height = rows * PANEL_PX + 170
    fig = make_subplots(
        rows=rows, cols=cols, shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.025,
        vertical_spacing=min(0.2, 48 / (height - 170)), subplot_titles=[ui.chart_text(n) for n in names],
    )  # fmt: skip
    fig.update_xaxes(
        range=[-0.5, len(axis) - 0.5], tickvals=list(axis["position"]), ticktext=list(axis["tick"]),
        tickfont={"size": 10}, showgrid=False,
    )  # fmt: skip
    for c in range(1, cols + 1):  # the lowest panel of each column carries the ticks and the title
        r = max(r for r in range(1, rows + 1) if (r - 1) * cols + c <= len(names))
        fig.update_xaxes(showticklabels=True, title={"text": "Turn", "standoff": 4}, row=r, col=c)
    fig.update_layout(height=height, margin={"l": 10, "r": 20, "t": 60, "b": 110}, legend=LEGEND_BELOW)
    return fig


def shade_drift_turns(fig: go.Figure, axis: pd.DataFrame) -> None:
    """Shade the drift turns in every panel that has a system (call after adding the traces)."""
    for first, last in drift.drift_spans(axis):
        fig.add_vrect(x0=first - 0.5, x1=last + 0.5, fillcolor=SHADE, opacity=0.35, line_width=0, layer="below",
                      row="all", col="all")  # fmt: skip


def cell(i: int) -> dict[str, int]:
    """Row and column of the ``i``-th panel."""
    return {"row": i // COLUMNS + 1, "col": i % COLUMNS + 1}


def legend_key(fig: go.Figure) -> None:
    """Legend-only entries that explain the markers and the shading."""
    keys = [
        ("Turn passed", {"symbol": "circle", "color": PASSED, "size": 9}),
        ("Turn failed", {"symbol": "x", "color": FAILED, "size": 9}),
        ("Returned nothing", {"symbol": "circle-open", "color": EMPTY_COLOUR, "size": 11, "line": {"width": 2}}),
        ("Drift turns (shaded)", {"symbol": "square", "color": SHADE, "size": 14}),
    ]
    for name, marker in keys:
        fig.add_trace(go.Scatter(name=name, x=[None], y=[None], mode="markers", marker=marker, hoverinfo="skip"))


def drift_figure(timeline: pd.DataFrame, measure: str, axis: pd.DataFrame, names: list[str]) -> go.Figure:
    """One panel per system: its drift per turn; returned-nothing turns as hollow markers in a row below 0%."""
    column = MEASURES[measure]
    fig = grid(names, axis)
    position = dict(zip(axis["turn"], axis["position"], strict=True))
    for i, name in enumerate(names):
        g = timeline[timeline["display_name"] == name]
        x = [int(position[t]) for t in g["turn"]]
        answered = ~g["returned_nothing"]
        custom = [
            [ui.chart_text(str(v)) for v in (turn, status, ", ".join(topics), ", ".join(noise))]
            for turn, status, topics, noise in zip(g["turn"], g["status"], g["topics"], g["noise_ids"], strict=True)
        ]
        fig.add_trace(
            go.Scatter(
                name=ui.chart_text(name), x=x, showlegend=False, mode="lines+markers",
                line={"color": LINE, "width": 1.5},
                y=[float(v) if a and pd.notna(v) else None for v, a in zip(g[column], answered, strict=True)],
                marker={"symbol": ["circle" if p else "x" for p in g["passed"]], "size": 8,
                        "color": [PASSED if p else FAILED for p in g["passed"]]},
                customdata=custom,
                hovertemplate="%{fullData.name}, turn %{customdata[0]}<br>drift %{y:.0%} · %{customdata[1]}"
                "<br>topics: %{customdata[2]}<br>noise ids: %{customdata[3]}<extra></extra>",
            ),
            **cell(i),
        )  # fmt: skip
        empty = [xi for xi, a in zip(x, answered, strict=True) if not a]
        if empty:
            fig.add_trace(
                go.Scatter(
                    name=f"{ui.chart_text(name)}: returned nothing", x=empty, y=[EMPTY_ROW] * len(empty),
                    mode="markers", showlegend=False, hovertemplate="turn %{x}: returned nothing<extra></extra>",
                    marker={"symbol": "circle-open", "size": 10, "color": EMPTY_COLOUR, "line": {"width": 2}},
                ),
                **cell(i),
            )  # fmt: skip
    legend_key(fig)
    shade_drift_turns(fig, axis)
    fig.update_yaxes(
        range=[EMPTY_ROW - 0.12, 1.12], tickvals=[EMPTY_ROW, 0, 0.5, 1],
        ticktext=["returned nothing", "0%", "50%", "100%"], zeroline=False,
    )  # fmt: skip
    fig.update_yaxes(title={"text": "Drift"}, col=1)
    fig.update_layout(title={"text": f"{MEASURE_NAMES[measure]} per turn, one panel per system", **TITLE})
    return fig


def log_axis(values: Iterable[float], unit: str) -> dict[str, Any]:
    """A short log axis fitted to the positive ``values``, its ticks (1 and 3 per decade) read as values (``5×``)."""
    shown = [float(v) for v in values if pd.notna(v) and math.isfinite(float(v)) and float(v) > 0]
    if not shown:
        return {"type": "log"}
    low, high = min(shown), max(shown)
    vals, text = log_ticks(low, high, "×" if unit == "×" else "ms", steps=(1, 3))
    pad = max(0.08, 0.06 * math.log10(high / low))
    return {"type": "log", "tickvals": vals, "ticktext": text,
            "range": [math.log10(low) - pad, math.log10(high) + pad]}  # fmt: skip


def latency_figure(frame: pd.DataFrame, column: str, axis: pd.DataFrame, names: list[str]) -> go.Figure:
    """One panel per system: per-turn latency (ms, or times its single-turn median), log y axis."""
    fig = grid(names, axis)
    position = dict(zip(axis["turn"], axis["position"], strict=True))
    ratio = column == "ratio"
    for i, name in enumerate(names):
        g = frame[frame["display_name"] == name]
        fig.add_trace(
            go.Scatter(
                name=ui.chart_text(name), x=[int(position[t]) for t in g["turn"]], showlegend=False,
                y=[None if pd.isna(v) else float(v) for v in g[column]], mode="lines+markers",
                line={"color": LINE, "width": 1.5}, marker={"size": 5, "color": LINE},
                customdata=[ui.chart_text(str(t)) for t in g["turn"]],
                hovertemplate="%{fullData.name}, turn %{customdata}<br>"
                + ("%{y:.1f}× the single-turn median" if ratio else "%{y:,.1f} ms") + "<extra></extra>",
            ),
            **cell(i),
        )  # fmt: skip
    shade_drift_turns(fig, axis)
    if ratio:
        fig.add_hline(y=1, line_dash="dot", line_color=EMPTY_COLOUR, row="all", col="all")
    fig.update_yaxes(**log_axis(frame[column], "×" if ratio else "ms"), tickfont={"size": 10})
    fig.update_yaxes(title={"text": "× single-turn" if ratio else "Latency"}, col=1)
    what = "times its single-turn median (dotted: 1×)" if ratio else "milliseconds"
    fig.update_layout(title={"text": f"Retrieval latency per turn, in {what}", **TITLE}, showlegend=False)
    return fig


def returned_nothing_section(timeline: pd.DataFrame) -> None:
    """The systems that came back empty on some turns, named in a warning and a table."""
    empty = drift.returned_nothing_summary(timeline)
    if not len(empty):
        return
    st.warning(
        f"{len(empty)} systems returned nothing on some turns. Their harness drift there is 0 only because "
        "nothing came back; those turns are hollow grey markers below 0%, not points on the line.",
        icon=":material/block:",
    )
    shown = empty.rename(
        columns={"returned_nothing": "turns_returned_nothing", "required_missing": "turns_required_missing"}
    )
    ui.table(shown, key="empty-table", height="content")
    ui.download_buttons(empty, "memeval-session-returned-nothing", "empty")


def drift_section(runs: tuple[PmbRun, ...], fixture: PmbFixture, measure: str) -> None:
    """The answer (drift per turn, one panel per system), the empty answers, noise and drift-turn topics."""
    timeline = drift.label_turns(drift.drift_timeline(runs, fixture), fixture)
    axis = drift.turn_axis(fixture)
    names = [r.identity.display_name for r in runs]
    ui.chart(drift_figure(timeline, measure, axis, names), key=f"drift-chart-{measure}")
    chart_data = ui.joined(timeline[[*CHART_DATA, "noise_ids"]], ["noise_ids"])
    ui.download_buttons(chart_data, "memeval-session-drift-chart-data", "drift-chart")
    returned_nothing_section(timeline)

    st.subheader("Drift turns and the noise that surfaced", anchor=False)
    topics = ui.joined(drift.drift_turns(fixture), ["topics", "introduced"])
    st.caption("Turns labelled drift, and the topics they introduce")
    ui.table(topics, key="drift-turns", height="content")
    ui.download_buttons(topics, "memeval-session-drift-turns", "drift-turns")
    noise = timeline[timeline["noise_ids"].map(len) > 0][
        ["display_name", "turn", "topics", "passed", "noise_ids", "drift_belief_ids"]
    ]
    noise = ui.joined(noise.reset_index(drop=True), ["topics", "noise_ids", "drift_belief_ids"])
    st.caption(f"{len(noise)} system-turns surfaced noise (beliefs the turn's noise check says must not surface)")
    ui.table(noise, key="noise-table")
    ui.download_buttons(noise, "memeval-session-noise", "noise")

    full = ui.joined(timeline, ID_COLUMNS)
    with st.expander(f"Every turn of every system ({len(full)} rows)"):
        ui.table(full.rename(columns={"status": "turn_status"}), key="timeline-table")
        ui.download_buttons(full, "memeval-session-timeline", "timeline")


def latency_section(runs: tuple[PmbRun, ...], all_runs: tuple[PmbRun, ...], fixture: PmbFixture) -> None:
    """Per-turn latency against each system's single-turn median, and the median ratio table."""
    st.subheader("Latency under session load", anchor=False)
    view = ui.choice("Latency shown as", "latency", list(LATENCY_VIEWS), "ratio", LATENCY_VIEWS, radio=True)
    per_turn = drift.turn_latency((*runs, *all_runs), fixture)
    column = "latency_ms" if view == "absolute" else "ratio"
    names = [r.identity.display_name for r in runs]
    ui.chart(latency_figure(per_turn, column, drift.turn_axis(fixture), names), key="latency-chart")
    ui.download_buttons(per_turn, "memeval-session-latency-per-turn", "latency-turns")
    ratios = drift.session_latency((*runs, *all_runs))
    st.caption("Session median against single-turn median, per system (nearest-rank medians)")
    ui.table(ratios, key="latency-ratio-table", hide=("session_run_id", "single_turn_run_id"), height="content")
    ui.download_buttons(ratios, "memeval-session-latency-ratio", "latency-ratio")


def shown_count(n_runs: int) -> int:
    """How many session systems (leaders first) the page shows: all, up to :data:`pages.ui.SESSION_SYSTEMS`;
    above, the reader picks (``?top=N``). A panel per system stops being readable long before a thousand
    systems, and every shown system's turns are read whole."""
    if n_runs <= ui.SESSION_SYSTEMS:
        return n_runs
    return ui.number_param(
        f"Systems shown (leaders first, of {n_runs:,})", "top", ui.SESSION_SYSTEMS, 1, n_runs, step=10, width=300
    )


st.title("Session drift")
ui.flash_sync_result()
loaded = ui.load_current()
if not loaded.identities:
    ui.empty_state(loaded)
    st.stop()
if loaded.fixture is None:
    st.warning("The PrecisionMemBench fixture was not found, so session turns cannot be labelled.")
    st.stop()
session_ids = ui.suite_identities(loaded, "pmb-session")
if not session_ids:
    st.info("No session runs in the results directory.")
    st.stop()
session_runs = ui.whole_runs(loaded, [i.run_id for i in session_ids[: shown_count(len(session_ids))]])
# The latency section sets each session run beside the single-turn run of the same name: only those are read.
session_names = {r.identity.display_name for r in session_runs}
single_runs = ui.whole_runs(
    loaded, [i.run_id for i in ui.suite_identities(loaded, "pmb-single-turn") if i.display_name in session_names]
)
top = st.container(horizontal=True, vertical_alignment="center")
with top:
    st.caption(
        f"How much of what each system returns over a {len(drift.turn_axis(loaded.fixture))}-turn session belongs "
        "to other topics. Lower is better; systems in leaderboard order."
    )
    chosen = ui.choice("Drift measure", "measure", list(MEASURES), "harness", MEASURE_NAMES, radio=True)
drift_section(session_runs, loaded.fixture, chosen)
latency_section(session_runs, single_runs, loaded.fixture)
with st.expander("What the drift measures and markers mean"):
    st.markdown(EXPLANATION)
