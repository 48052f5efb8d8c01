"""Categories: provider x category heatmap, and what each provider's passes are made of next to two reference systems.

URL state: ``?benchmark=pmb-session`` selects the suite, ``?metric=`` the heatmap's metric
(``pass rate``, ``mean precision`` or ``mean recall``).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memeval_core.explore.categories import Metric, category_heatmap, pass_quality
from memeval_core.explore.reference import reference_frame
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.pass_types import PASS_TYPES
from memeval_core.pmb.run import Benchmark, PmbRun
from pages import ui

METRIC_LABELS: dict[str, Metric] = {
    "pass rate": "pass_rate",
    "mean precision": "mean_precision",
    "mean recall": "mean_recall",
}
PASS_COLOURS = {"active_retrieval": "#1a7f37", "structural": "#4f8fd6", "trivially_empty": "#b8c4d0"}
CHART_LIMIT = 50
"""Providers drawn in the charts by default when a suite has more."""
REFERENCE_STYLE = {"returns nothing": "dash", "returns everything": "dot"}


@st.cache_data(show_spinner="Simulating the reference systems…", max_entries=8)
def references(_fixture: PmbFixture, source: str, benchmark: Benchmark) -> pd.DataFrame:
    """:func:`reference_frame` for one suite, cached per fixture file."""
    del source  # only part of the cache key
    return reference_frame(_fixture, benchmark)


def heatmap_figure(pivot: pd.DataFrame, metric_label: str) -> go.Figure:
    """Providers (rows, rank order) x categories (columns, benchmark order), the value printed in each cell."""
    z = [[None if pd.isna(v) else float(v) for v in row] for row in pivot.to_numpy()]
    text = [["" if v is None else f"{v:.2f}" for v in row] for row in z]
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
            colorbar={"title": {"text": metric_label}},
            hovertemplate="%{y}<br>%{x}<br>" + metric_label + " %{z:.4f}<extra></extra>",
            xgap=1,
            ygap=1,
        )
    )
    fig.update_layout(
        height=max(280, 34 * len(pivot.index) + 190),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"side": "top", "tickangle": -30},
        yaxis={"autorange": "reversed"},
    )
    return fig


def pass_quality_figure(quality: pd.DataFrame, refs: pd.DataFrame) -> go.Figure:
    """Stacked passes per provider by type, with horizontal lines at the reference systems' pass counts."""
    names = [ui.chart_text(n) for n in quality["display_name"]]
    fig = go.Figure(
        [
            go.Bar(
                name=t.replace("_", " "),
                x=names,
                y=[int(v) for v in quality[t]],
                marker_color=PASS_COLOURS[t],
                hovertemplate="%{x}: %{y} " + t.replace("_", " ") + "<extra></extra>",
            )
            for t in PASS_TYPES
        ]
    )
    for ref in refs.to_dict("records"):
        fig.add_hline(
            y=int(ref["passed"]),
            line_dash=REFERENCE_STYLE[str(ref["name"])],
            line_color="#cf222e",
            annotation_text=f"{ref['name']}: {ref['passed']}",
            annotation_position="right",
        )
    fig.update_layout(
        barmode="stack",
        height=460,
        margin={"l": 10, "r": 170, "t": 30, "b": 10},
        yaxis={"title": {"text": "passed cases"}},
        legend={"orientation": "h", "y": 1.1},
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
        f"Providers in the charts (leaders first; tables and downloads list all {n_runs})",
        "top",
        CHART_LIMIT,
        1,
        n_runs,
        step=10,
        width=420,
    )


def heatmap_section(runs: tuple[PmbRun, ...], fixture: PmbFixture, benchmark: Benchmark, charted: int) -> None:
    """Metric picker, heatmap (the first ``charted`` providers) and its data (all providers)."""
    st.subheader("Provider x category")
    label = st.segmented_control(
        "Metric", list(METRIC_LABELS), default="pass rate", required=True, **ui.url_bound("metric")
    )
    metric_label = label or "pass rate"
    pivot = category_heatmap(runs, fixture, METRIC_LABELS[metric_label])
    st.caption(
        f"{metric_label} per provider (rank order) and category (benchmark order: most cases first). "
        "Empty cells: no case of that category, or no defined value (precision is undefined when nothing "
        "was expected and nothing returned)."
    )
    ui.chart(heatmap_figure(pivot.iloc[:charted], metric_label), key="heatmap")
    data = pivot.reset_index().rename(columns={"index": "display_name"})
    data.columns = [str(c) for c in data.columns]
    ui.download_buttons(data, f"memeval-categories-{benchmark}-{METRIC_LABELS[metric_label]}", "heatmap")


def quality_section(runs: tuple[PmbRun, ...], fixture: PmbFixture, benchmark: Benchmark, charted: int) -> None:
    """Stacked pass types per provider (the first ``charted``) with the reference lines, the explanation, and
    both tables (all providers)."""
    st.subheader("What the passes are made of")
    quality = pass_quality(runs)
    refs = references(fixture, fixture.source, benchmark)
    st.markdown(worth_sentence(refs, int(quality["cases"].iloc[0])))
    ui.chart(pass_quality_figure(quality.iloc[:charted], refs), key="pass-quality")
    st.caption("Passes per provider by type")
    st.dataframe(quality, hide_index=True, height="content", key="quality-table")
    ui.download_buttons(quality, f"memeval-pass-quality-{benchmark}", "quality")
    st.caption("Reference systems, simulated over the fixture with the harness's own checks")
    st.dataframe(
        refs,
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(c, format="%.4f") for c in ("pass_rate", "mean_precision", "mean_recall")
        },
        key="reference-table",
    )
    ui.download_buttons(refs, f"memeval-reference-systems-{benchmark}", "references")


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Categories")
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()
if loaded.fixture is None:
    st.warning("The PrecisionMemBench fixture was not found, so categories and reference systems are unknown.")
    st.stop()

benchmark = ui.benchmark_picker(loaded.runs)
suite = ui.suite_runs(loaded.runs, benchmark)
charted = charted_count(len(suite))
heatmap_section(suite, loaded.fixture, benchmark, charted)
quality_section(suite, loaded.fixture, benchmark, charted)
