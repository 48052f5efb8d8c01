"""Categories: system x category heatmap, and what each system's passes are made of next to two reference systems.

URL state: ``?benchmark=pmb-session`` selects the suite, ``?metric=`` the heatmap's metric
(``pass_rate``, ``mean_precision`` or ``mean_recall``).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from memeval_core import labels
from memeval_core.explore.categories import Metric, category_heatmap, pass_quality
from memeval_core.explore.reference import reference_frame
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.pass_types import PASS_TYPES
from memeval_core.pmb.run import Benchmark
from pages import ui

METRICS: tuple[Metric, ...] = ("pass_rate", "mean_precision", "mean_recall")
PASS_COLOURS = {"active_retrieval": "#1a7f37", "structural": "#4f8fd6", "trivially_empty": "#b8c4d0"}
CHART_LIMIT = 50
"""Providers drawn in the charts by default when a suite has more."""
REFERENCE_STYLE = {"returns nothing": "dash", "returns everything": "dot"}


@st.cache_data(show_spinner="Simulating the reference systems…", max_entries=8)
def references(_fixture: PmbFixture, source: str, benchmark: Benchmark) -> pd.DataFrame:
    """:func:`reference_frame` for one suite, cached per fixture file."""
    del source  # only part of the cache key
    return reference_frame(_fixture, benchmark)


def heatmap_figure(pivot: pd.DataFrame, metric: Metric, title: str) -> go.Figure:
    """Systems (rows, rank order) x categories (columns, benchmark order), the value printed in each cell."""
    z = [[None if pd.isna(v) else float(v) for v in row] for row in pivot.to_numpy()]
    text = [["" if v is None else f"{100 * v:.0f}%" for v in row] for row in z]
    name = labels.label(metric)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[ui.chart_text(str(c)) for c in pivot.columns],
            y=[ui.chart_text(str(n)) for n in pivot.index],
            text=text,
            texttemplate="%{text}",
            zmin=0,
            zmax=1,
            colorscale="Blues",
            colorbar={"title": {"text": f"{name} (%)"}, "tickformat": ".0%"},
            hovertemplate="%{y}<br>%{x}<br>" + name + " %{z:.1%}<extra></extra>",
            xgap=1,
            ygap=1,
        )
    )
    fig.update_layout(
        # The categories above the cells, under the title: a tall map shows its column names on the first screen.
        title=ui.top_title(title),
        height=max(300, 30 * len(pivot.index) + 230),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        xaxis={"side": "top", "tickangle": -45, "automargin": True, "title": {"text": "Category"}},
        yaxis={"autorange": "reversed", "title": {"text": "System"}},
    )
    return fig


def pass_quality_figure(quality: pd.DataFrame, refs: pd.DataFrame, title: str) -> go.Figure:
    """Stacked passes per system by type, with horizontal lines at the reference systems' pass counts."""
    names = [ui.chart_text(n) for n in quality["display_name"]]
    fig = go.Figure(
        [
            go.Bar(
                name=labels.label(t),
                x=names,
                y=[int(v) for v in quality[t]],
                marker_color=PASS_COLOURS[t],
                hovertemplate="%{x}: %{y} " + labels.label(t).lower() + "<extra></extra>",
            )
            for t in PASS_TYPES
        ]
    )
    for ref in refs.to_dict("records"):
        fig.add_hline(
            y=int(ref["passed"]),
            line_dash=REFERENCE_STYLE[str(ref["name"])],
            line_color="#c92a2a",
            annotation_text=f"{ref['name']}: {ref['passed']}",
            annotation_position="top right",
            annotation_font={"color": "#c92a2a", "size": 11},
        )
    cases = int(quality["cases"].iloc[0]) if len(quality) else 0
    fig.update_layout(
        title={"text": title, "x": 0, "font": {"size": 15}},
        barmode="stack",
        height=480,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": "System (rank order)"}, "tickangle": -35, "automargin": True},
        yaxis={"title": {"text": f"Passed cases (of {cases})"}},
        legend={"orientation": "h", "y": -0.35, "x": 0},
    )
    return fig


def worth_sentence(refs: pd.DataFrame, cases: int) -> str:
    """What a pass count is worth, in one paragraph (Markdown; only fixture-derived numbers)."""
    by = {str(r["name"]): r for r in refs.to_dict("records")}
    nothing, everything = by["returns nothing"], by["returns everything"]
    assumed = int(nothing["persona_assumed"]) + int(everything["persona_assumed"])
    persona = (
        f" Persona-prelude checks cannot be simulated (reports do not store the prelude), so they are assumed "
        f"satisfied for the references; {assumed} of their passes rest on that, so read the lines as upper bounds."
        if assumed
        else " Persona-prelude checks cannot be simulated and are assumed satisfied for the references "
        "(none of their passes here rests on that)."
    )
    return (
        f"**What a pass count is worth.** A system that returns nothing passes {nothing['passed']} of {cases} "
        f"({nothing['active_retrieval']} active, {nothing['structural']} structural, "
        f"{nothing['trivially_empty']} trivially empty); one that returns everything passes "
        f"{everything['passed']} of {cases}. A provider below the returns-nothing line does worse than an empty "
        "answer; only the green active-retrieval passes show that it found the gold beliefs and nothing else." + persona
    )


def charted_count(n_runs: int) -> int:
    """How many providers (leaders first) the charts draw: all, up to :data:`CHART_LIMIT`; above, the reader picks.

    A heatmap row or a bar per provider stops being readable, and costs seconds to build, long before a
    thousand providers; the tables and downloads always hold every provider.
    """
    if n_runs <= CHART_LIMIT:
        return n_runs
    return ui.number_param(
        f"Providers in the charts (leaders first; tables and downloads list all {n_runs:,})",
        "top",
        CHART_LIMIT,
        1,
        n_runs,
        step=10,
        width=420,
    )


def heatmap_section(runs: pa.Table, fixture: PmbFixture, benchmark: Benchmark, charted: int) -> None:
    """Metric picker, heatmap (the first ``charted`` systems) and its data (all systems)."""
    metric = ui.choice("Metric", "metric", METRICS, "pass_rate", {m: labels.label(m) for m in METRICS}, radio=True)
    pivot = category_heatmap(runs, fixture, metric)
    title = f"{labels.label(metric)} by system and category, {ui.chart_text(labels.benchmark_name(benchmark))}"
    ui.chart(heatmap_figure(pivot.iloc[:charted], metric, title), key="heatmap")
    st.caption(
        "Systems in rank order, categories with the most cases first. Empty cells: no case of that category, or "
        "no defined value (precision is undefined when nothing was expected and nothing returned)."
    )
    data = pivot.reset_index().rename(columns={"index": "display_name"})
    data.columns = [str(c) for c in data.columns]
    ui.download_buttons(data, f"memeval-categories-{benchmark}-{metric}", "heatmap")


def quality_section(runs: pa.Table, fixture: PmbFixture, benchmark: Benchmark, charted: int) -> None:
    """Stacked pass types per system (the first ``charted``) with the reference lines, the explanation, and
    both tables (all systems)."""
    st.subheader("What the passes are made of", anchor=False)
    quality = pass_quality(runs)
    refs = references(fixture, fixture.source, benchmark)
    title = f"Passes by type, {ui.chart_text(labels.benchmark_name(benchmark))}"
    ui.chart(pass_quality_figure(quality.iloc[:charted], refs, title), key="pass-quality")
    st.markdown(worth_sentence(refs, int(quality["cases"].iloc[0])))
    ui.table(quality, key="quality-table", hide=("run_id", "benchmark"), height="content")
    ui.download_buttons(quality, f"memeval-pass-quality-{benchmark}", "quality")
    with st.expander("Reference systems, simulated over the fixture with the harness's own checks"):
        shown = refs.rename(columns={"name": "display_name"})
        shown["display_name"] = [f"Reference: {n}" for n in shown["display_name"]]
        ui.table(shown, key="reference-table", hide=("benchmark",), link_runs=False)
        ui.download_buttons(refs, f"memeval-reference-systems-{benchmark}", "references")


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Categories")
if not loaded.identities:
    ui.empty_state(loaded)
    st.stop()
if loaded.fixture is None:
    st.warning("The PrecisionMemBench fixture was not found, so categories and reference systems are unknown.")
    st.stop()

benchmark = ui.benchmark_picker(loaded)
suite = ui.suite_table(loaded, benchmark)
charted = charted_count(suite.num_rows)
heatmap_section(suite, loaded.fixture, benchmark, charted)
quality_section(suite, loaded.fixture, benchmark, charted)
