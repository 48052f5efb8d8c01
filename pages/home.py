"""Home: for every benchmark present, the top of its ranked board and a chart of the main score, first thing on
screen (every run is on the details pages).

From a results dataset on the Hub the page reads the dataset's stored home page and nothing else
(:mod:`memeval_core.explore.front`), so it costs the same however many runs the dataset holds.

URL state: ``?publishable-only=true`` keeps only publishable QA runs.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memeval_core import labels
from memeval_core.explore.front import TOP_ROWS, boards_of
from memeval_core.explore.home import INTERVAL_METHOD, UPSTREAM, Board, all_boards, below_nothing
from pages import ui

BAR = "#4263eb"
DIAGNOSTIC = "#adb5bd"
REFERENCE = "#c92a2a"
REFERENCE_DASH = {"Reference: returns nothing": "dash", "Reference: returns everything": "dot"}
ROW_PX = 28
LABEL_PX = 18
"""Height of one reference line's label row above the plot."""
CHART_RUNS = 40
"""Bars per chart: a bar per run stops being readable long before a thousand runs (the table lists them all)."""


def figure(board: Board) -> go.Figure:
    """Horizontal bars of the score with their 95% intervals, best on top (the first :data:`CHART_RUNS`; the
    table beside lists the board's top :data:`memeval_core.explore.front.TOP_ROWS`); references as vertical
    lines."""
    runs = board.runs.head(CHART_RUNS)
    shown = f"top {len(runs):,} of {board.n_runs:,} systems" if len(runs) < board.n_runs else "system"
    names = [ui.chart_text(n) for n in runs["display_name"]]
    diagnostic = runs["badge"].str.startswith("diagnostic")
    fig = go.Figure(
        go.Bar(
            x=100 * runs["score"],
            y=names,
            orientation="h",
            marker_color=[DIAGNOSTIC if d else BAR for d in diagnostic],
            error_x={
                "type": "data",
                "symmetric": False,
                "array": 100 * (runs["score_high"] - runs["score"]),
                "arrayminus": 100 * (runs["score"] - runs["score_low"]),
                "color": "#495057",
                "thickness": 1.2,
            },
            customdata=list(zip(runs["score_low"] * 100, runs["score_high"] * 100, runs["items"], strict=True)),
            hovertemplate="%{y}: %{x:.1f}% (95% interval %{customdata[0]:.1f}–%{customdata[1]:.1f}%, "
            "%{customdata[2]} " + board.item_name + ")<extra></extra>",
            showlegend=False,
        )
    )
    refs = board.frame[board.frame["reference"]].sort_values("score")
    for level, (_, ref) in enumerate(refs.iterrows()):
        name = str(ref["display_name"]).removeprefix("Reference: ")
        x = 100 * float(ref["score"])
        fig.add_vline(x=x, line_dash=REFERENCE_DASH.get(str(ref["display_name"]), "dash"), line_color=REFERENCE)
        # One label per line, each on its own row just above the plot (a fixed number of pixels per row, however
        # tall the plot), so close lines never overlap their labels.
        fig.add_annotation(
            x=x, y=1, yref="paper", yshift=4 + LABEL_PX * level, yanchor="bottom",
            xanchor="left" if x < 60 else "right", showarrow=False, font={"size": 11, "color": REFERENCE},
            text=f"{ui.chart_text(name)}: {x:.1f}%",
        )  # fmt: skip
    fig.update_layout(
        # Two lines: a long benchmark name on the first would run past the chart's edge (titles do not wrap).
        title=ui.top_title(f"{board.score_name} by {shown}<br>{ui.chart_text(board.title)}", pad_px=24),
        height=max(260, ROW_PX * len(runs) + 130 + LABEL_PX * len(refs)),
        margin={"l": 10, "r": 20, "t": 90 + LABEL_PX * len(refs), "b": 50},
        xaxis={
            "title": {"text": f"{board.score_name} (% of {board.item_name}), 95% interval"},
            "range": [0, 100],
            "ticksuffix": "%",
            "dtick": 20,
        },
        yaxis={"autorange": "reversed", "automargin": True},
    )
    return fig


def shown_frame(board: Board) -> pd.DataFrame:
    """The board as the table shows it: the interval as one text column."""
    df = board.frame.copy()
    df.insert(
        df.columns.get_loc("score_high") + 1,
        "interval",
        [
            labels.MISSING if pd.isna(lo) else f"{labels.rate(lo)} – {labels.rate(hi)}"
            for lo, hi in zip(df["score_low"], df["score_high"], strict=True)
        ],
    )
    return df.rename(columns={"items": "cases" if board.item_name == "cases" else "n_questions"})


@st.cache_resource(max_entries=4, show_spinner=False)
def cached_boards(_everything: ui.Everything, publishable_only: bool, rows: int, key: str) -> list[Board]:
    """The first ``rows`` runs of each board of one load (simulating the reference systems costs more than a
    rerun should)."""
    del key  # only part of the cache key
    pmb, qa = _everything.pmb, _everything.qa
    return [b.top(rows) for b in all_boards(pmb.table, pmb.fixture, qa.runs, publishable_only=publishable_only)]


DETAILS_PAGE = {
    "Pass rate": ("pages/leaderboard.py", "PMB details"),
    "Accuracy": ("pages/qa_leaderboard.py", "QA details"),
}
"""Where every run of a board is listed, by its score."""


def board_section(board: Board, index: int) -> None:
    """One benchmark: the finding in one line, then the ranked table beside its chart."""
    st.subheader(ui.md_escape(board.title), anchor=f"board-{index}")
    finding = below_nothing(board)
    if finding is not None and finding[0]:
        below, n = finding
        nothing = board.frame[board.frame["display_name"] == "Reference: returns nothing"].iloc[0]
        st.markdown(
            f":red-background[**{below:,} of {n:,} runs pass fewer cases than a system that returns nothing**] "
            f"({labels.rate(nothing['score'])}, {round(float(nothing['score']) * float(nothing['items']))} of "
            f"{int(nothing['items'])} cases)."
        )
    left, right = st.columns([3, 2], gap="medium")
    df = shown_frame(board)
    with left:
        score_key = "pass_rate" if board.score_name == "Pass rate" else "accuracy"
        ui.table(
            df.rename(columns={"score": score_key}),
            key=f"home-table-{index}",
            hide=("run_id", "score_low", "score_high", "reference", "made_by", *UPSTREAM),
            height="auto" if len(df) > 12 else "content",
            widths={
                "rank": 48,
                "display_name": 150,
                "pass_rate": 80,
                "accuracy": 80,
                "interval": 125,
                "cases": 60,
                "n_questions": 80,
                "badge": 150,
            },
        )
        if len(board.runs) < board.n_runs:
            page, title = DETAILS_PAGE[board.score_name]
            st.caption(f"The top {len(board.runs):,} of {board.n_runs:,} runs; every run is on {title}.")
            st.page_link(page, label=f"Every run: {title}", icon=":material/table:",
                         query_params={"benchmark": board.benchmark})  # fmt: skip
        ui.download_buttons(board.frame, f"memeval-{board.benchmark}-board", key=f"home-download-{index}")
    with right:
        ui.chart(figure(board), key=f"home-chart-{index}")


ui.flash_sync_result()
stored = ui.load_front_current()  # a results dataset's stored home page: nothing else is read
everything = ui.load_everything_current() if stored is None else None
st.title("Memory-system leaderboard")
if everything is not None and not everything.pmb.identities and not everything.qa.runs:
    ui.empty_state(everything.pmb)
    st.stop()
top = st.container(horizontal=True, vertical_alignment="center")
with top:
    st.caption(
        "Every score re-derived from each run's raw per-case results. "
        f"Bars and the interval column: {INTERVAL_METHOD}.",
    )
    only = st.toggle(
        "Publishable QA runs only", help="Hide QA runs that do not meet their benchmark's protocol.",
        **ui.url_bound("publishable-only"),
    )  # fmt: skip
boards = (
    boards_of(stored.front, only) if everything is None else cached_boards(everything, only, TOP_ROWS, everything.key)
)
for i, board in enumerate(boards):
    board_section(board, i)
with st.expander("What the columns and badges mean"):
    st.markdown(
        "- **Pass rate** (PrecisionMemBench): cases where every *must* and *must-not* assertion held. Rank: active "
        "passes first (the system returned the gold beliefs and nothing else), then passes, drift and precision.\n"
        "- **Reference: returns nothing / returns everything**: what a system scores that returns no belief, or "
        "every belief; simulated over the fixture, unranked.\n"
        "- **Accuracy** (QA benchmarks): mean question score from the LLM judges; a failed query scores zero.\n"
        "- **✓ verified**: every value the report states matches the re-derived one. **✓ publishable**: the run "
        "meets its benchmark's protocol; **diagnostic** runs do not (the reason follows).\n"
        f"- **95% interval**: {INTERVAL_METHOD} over the cases or questions behind the score."
    )
