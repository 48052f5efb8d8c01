"""Compare two providers case by case: paired statistics, every provider against A, the paired cases, one case opened.

URL state: ``?benchmark=``, ``?a=`` and ``?b=`` (display name, run id or provider; default the
leader and the runner-up), ``?seed=``, ``?resamples=``, ``?method=``, ``?filter=``, ``?q=``,
``?case=`` (case id; session turns ``<case id>/<turn index>``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from memeval_core.explore import case_view as cv
from memeval_core.explore.compare import (
    ComparisonReport,
    PairedStats,
    PairFilter,
    case_detail,
    compare_stats,
    filter_pairs,
    paired_frame,
    stats_frame,
    win_tie_loss,
)
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import PmbRun
from memeval_core.stats.bootstrap import METHOD_NAMES, BootstrapMethod, BootstrapReport
from pages import ui

DEFAULT_SEED = 20260627
DEFAULT_RESAMPLES = 10_000
ALPHA = 0.05
FILTER_LABELS: dict[str, PairFilter] = {
    "all": "all",
    "only differences": "differences",
    "A wins": "a_wins",
    "B wins": "b_wins",
    "both fail": "both_fail",
}
STATS_FORMATS = {
    "mcnemar_p": "%.3g",
    "holm_p": "%.3g",
    **{
        c: "%.4f"
        for c in (
            "pass_rate_diff",
            "pass_rate_ci_low",
            "pass_rate_ci_high",
            "precision_diff",
            "precision_ci_low",
            "precision_ci_high",
        )
    },
}
STATS_HELP = {
    "scope": "All paired cases, then each category in benchmark order.",
    "b": "Discordant cases A passed and B failed.",
    "c": "Discordant cases B passed and A failed.",
    "mcnemar_p": "Exact two-sided McNemar p-value on the discordant cases.",
    "holm_p": "Categories: McNemar p Holm-adjusted across the categories (controls the family-wise error rate).",
    "pass_rate_tied": "True when the pass-rate interval includes zero: statistically tied.",
    "n_precision": "Cases where both precisions are defined (the precision interval uses only these).",
    "precision_tied": "True when the precision interval includes zero: statistically tied.",
}


@st.cache_data(show_spinner="Resampling…", max_entries=64)
def cached_stats(
    _a: PmbRun,
    _b: PmbRun,
    _fixture: PmbFixture | None,
    run_ids: tuple[str, str],
    seed: int,
    n_resamples: int,
    method: BootstrapMethod,
) -> ComparisonReport:
    """:func:`compare_stats` of A against B; cached on the run ids (which hash the report files) and parameters."""
    del run_ids  # only part of the cache key
    order = _fixture.category_order if _fixture is not None else ()
    return compare_stats(_a, _b, seed=seed, n_resamples=n_resamples, alpha=ALPHA, method=method, category_order=order)


def verdict(rep: BootstrapReport) -> str:
    """``statistically tied`` when the interval includes zero, else ``not tied``, with the reason."""
    if rep.statistically_tied:
        return "**statistically tied** (the interval includes zero)"
    return "**not tied** (the interval excludes zero)"


def interval(rep: BootstrapReport) -> str:
    """Estimate and confidence interval as plain numbers."""
    return f"{rep.estimate:+.4f}, {1 - rep.alpha:.0%} CI [{rep.ci_low:+.4f}, {rep.ci_high:+.4f}]"


def overall_statistics(report: ComparisonReport) -> None:
    """Discordant counts and McNemar p as metrics, then the two interval verdicts and the methods used."""
    s: PairedStats = report.overall
    m = s.mcnemar
    row = st.container(horizontal=True)
    row.metric("A passed, B failed", m.b, border=True)
    row.metric("B passed, A failed", m.c, border=True)
    row.metric("both passed", m.both_passed, border=True)
    row.metric("both failed", m.both_failed, border=True)
    row.metric("McNemar p (exact)", f"{m.p_value:.3g}", border=True)
    lines = [
        f"- **Pass/fail, exact McNemar:** p = {m.p_value:.3g} on {m.b} + {m.c} discordant of {m.n} paired cases: "
        + ("significant" if m.significant else "not significant")
        + f" at α = {m.alpha}.",
        f"- **Pass rate, A − B:** {interval(s.pass_rate)}: {verdict(s.pass_rate)}.",
    ]
    if s.precision is None:
        lines.append("- **Mean precision, A − B:** no case where both have a precision, so no interval.")
    else:
        lines.append(
            f"- **Mean precision, A − B** ({s.n_precision} cases where both have a precision): "
            f"{interval(s.precision)}: {verdict(s.precision)}."
        )
    st.markdown("\n".join(lines))
    st.caption(
        f"Methods: {ui.md_escape(report.pass_test)}. Intervals: {ui.md_escape(report.interval_method)}, "
        f"{1 - report.alpha:.0%} confidence, seed {report.seed}, {report.n_resamples:,} resamples (numpy default_rng). "
        f"Categories: {ui.md_escape(report.multiple_testing)}. Statistically tied = the interval includes zero."
    )


def statistics_section(a: PmbRun, b: PmbRun, fixture: PmbFixture | None) -> None:
    """Parameters (seed, resamples, interval method), overall verdicts, and the per-category table."""
    st.subheader("Statistics")
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        seed = st.number_input("Seed", min_value=0, value=DEFAULT_SEED, step=1, width=180, **ui.url_bound("seed"))
        n_resamples = st.number_input(
            "Resamples",
            min_value=100,
            max_value=100_000,
            value=DEFAULT_RESAMPLES,
            step=1000,
            width=180,
            **ui.url_bound("resamples"),
        )
        method: BootstrapMethod = st.selectbox(
            "Interval method",
            tuple(METHOD_NAMES),
            help="percentile: quantiles of the bootstrap distribution; bca: bias-corrected and accelerated.",
            width=200,
            **ui.url_bound("method"),
        )
    try:
        report = cached_stats(
            a, b, fixture, (a.identity.run_id, b.identity.run_id), int(seed), int(n_resamples), method
        )
    except ValueError as exc:
        st.error("These runs cannot be compared:")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    overall_statistics(report)
    df = stats_frame(report)
    st.caption("Per category (benchmark order). p-values across categories are Holm-adjusted.")
    st.dataframe(df, hide_index=True, height="content", column_config=stats_config(df), key="stats-table")
    ui.download_buttons(df, f"memeval-compare-stats-{a.identity.display_name}-vs-{b.identity.display_name}", "stats")


def stats_config(df: pd.DataFrame) -> dict[str, Any]:
    """Number formats and help text of the statistics table."""
    cfg: dict[str, Any] = {}
    for col in df.columns:
        if col in STATS_FORMATS:
            cfg[col] = st.column_config.NumberColumn(col, format=STATS_FORMATS[col], help=STATS_HELP.get(col))
        elif col in STATS_HELP:
            cfg[col] = st.column_config.Column(col, help=STATS_HELP[col])
    return cfg


def against_a(runs: tuple[PmbRun, ...], a: PmbRun) -> None:
    """Every other provider of the suite against A: wins, losses, ties, McNemar p (Holm-adjusted)."""
    st.subheader("Every provider against A")
    st.caption(
        "Per paired case: a win is A passed and the other failed, a loss the reverse; ties are both passed or "
        "both failed. p: exact McNemar on wins vs losses, Holm-adjusted across the providers."
    )
    df = win_tie_loss(runs, a.identity.display_name, alpha=ALPHA)
    st.dataframe(
        df,
        hide_index=True,
        height="content",
        column_config={
            "mcnemar_p": st.column_config.NumberColumn("mcnemar_p", format="%.3g"),
            "holm_p": st.column_config.NumberColumn("holm_p", format="%.3g"),
        },
        key="wtl-table",
    )
    ui.download_buttons(df, f"memeval-compare-against-{a.identity.display_name}", "wtl")


def open_case_from_table(keys: list[str]) -> None:
    """Table row selected: open that case (the bound ``case`` selectbox then writes it to the URL)."""
    rows = st.session_state["pairs-table"].selection.rows
    if rows:
        st.session_state["case"] = keys[rows[0]]


def cases_section(a: PmbRun, b: PmbRun) -> list[str]:
    """The paired case table with outcome filter and text search; returns every paired case key."""
    st.subheader("Cases both ran")
    pairs = paired_frame(a, b)
    keys = [
        cv.case_key(c, None if pd.isna(t) else int(t))
        for c, t in zip(pairs["case_id"], pairs["turn_index"], strict=True)
    ]
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        label = st.segmented_control(
            "Show", list(FILTER_LABELS), default="all", required=True, **ui.url_bound("filter")
        )
        text = st.text_input("Search case id or description", placeholder="e.g. alias", width=320, **ui.url_bound("q"))
    shown = filter_pairs(pairs, FILTER_LABELS[label or "all"], text or "")
    counts = pairs["outcome"].value_counts()
    st.caption(
        f"{len(shown)} of {len(pairs)} paired cases shown. "
        + ", ".join(f"{o}: {int(counts.get(o, 0))}" for o in ("both passed", "A wins", "B wins", "both failed"))
        + ". Select a row to open the case."
    )
    if shown["turn_index"].isna().all():
        shown = shown.drop(columns=["turn_index", "label"])
    shown_keys = [keys[i] for i in shown.index]
    shown = shown.reset_index(drop=True)
    st.dataframe(
        shown,
        hide_index=True,
        on_select=partial(open_case_from_table, shown_keys),
        selection_mode="single-row",
        column_config={
            "description": st.column_config.TextColumn("description", width="medium"),
            **{
                c: st.column_config.NumberColumn(c, format="%.4f")
                for c in ("a_precision", "b_precision", "a_recall", "b_recall")
            },
            **{c: st.column_config.NumberColumn(c, format="%.2f") for c in ("a_latency_ms", "b_latency_ms")},
        },
        key="pairs-table",
    )
    ui.download_buttons(shown, f"memeval-compare-cases-{a.identity.display_name}-vs-{b.identity.display_name}", "pairs")
    return keys


def side(outcome: cv.CaseOutcome, role: str) -> None:
    """One side of an opened case: verdict, scores, latency and failure messages (plain text)."""
    verdict_text = f"passed ({outcome.pass_type})" if outcome.passed else "failed"
    st.markdown(f"**{role}**")
    ui.plain(
        f"{outcome.display_name}: {verdict_text}; precision {ui.pct(outcome.precision)}, "
        f"recall {ui.pct(outcome.recall)}; {outcome.latency_ms:.2f} ms"
        + ("; returned nothing" if outcome.returned_nothing else "")
    )
    if outcome.failures:
        st.code("\n".join(outcome.failures), language=None, wrap_lines=True)
        if outcome.taken_from_report:
            st.caption(f"{len(outcome.taken_from_report)} of these cannot be re-derived; they are the report's word.")
    else:
        st.caption("No failure.")


def case_section(a: PmbRun, b: PmbRun, fixture: PmbFixture | None, keys: list[str]) -> None:
    """The opened case: query, expectation, classified ids of A and B side by side, failures."""
    st.subheader("One case")
    key = st.selectbox(
        "Open a case", keys, index=None, placeholder="Choose a case, or select a row above", **ui.url_bound("case")
    )
    if key is None:
        return
    if fixture is None:
        st.info("The fixture was not found, so the case's expectation cannot be shown.")
        return
    case_id, turn = cv.parse_case_key(key)
    view = case_detail(a, b, fixture, case_id, turn)
    ui.plain(f"{view.category}: {view.description}")
    st.caption("Query")
    st.code(view.query, language=None, wrap_lines=True)
    st.caption("Expectation")
    exp = cv.expectation_frame(view.expectation)
    st.dataframe(exp, hide_index=True, height="content", key="case-expectation")
    ui.download_buttons(exp, f"memeval-case-{key.replace('/', '-turn-')}-expectation", "case-exp")
    by_name = {o.display_name: o for o in view.outcomes}
    cols = st.columns(2)
    for col, run, role in ((cols[0], a, "A"), (cols[1], b, "B")):
        with col:
            side(by_name[run.identity.display_name], role)
    st.caption(
        "Returned ids, classified: correct = returned and asked for; unexpected = returned, not asked for "
        "(lowers precision in the relevant tier); forbidden = returned though an assertion excludes it; "
        "missing = required, not returned."
    )
    matrix = cv.id_matrix(view)
    st.dataframe(
        matrix.style.map(ui.class_style, subset=list(matrix.columns[2:])),
        hide_index=True,
        height="content",
        key="case-ids",
    )
    ui.download_buttons(matrix, f"memeval-case-{key.replace('/', '-turn-')}-ids", "case-ids")


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Compare two providers")
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()

st.markdown(
    "Two runs of the same suite, case by case: which cases each passed, paired statistics on the "
    "difference, and any case opened with what each returned. Every choice is in the link."
)
benchmark = ui.benchmark_picker(loaded.runs)
runs = ui.suite_runs(loaded.runs, benchmark)
if len(runs) < 2:
    st.info(f"Only {len(runs)} {ui.BENCHMARK_TITLES[benchmark]} run: nothing to compare.")
    st.stop()
pickers = st.columns(2)
with pickers[0]:
    run_a = ui.run_picker("A", runs, "a", runs[0], help="Default: the leaderboard leader.")
with pickers[1]:
    run_b = ui.run_picker("B", runs, "b", runs[1], help="Default: the runner-up.")
if run_a is run_b:
    st.info("A and B are the same run; pick two different runs.")
    st.stop()

statistics_section(run_a, run_b, loaded.fixture)
against_a(runs, run_a)
case_keys = cases_section(run_a, run_b)
case_section(run_a, run_b, loaded.fixture, case_keys)
