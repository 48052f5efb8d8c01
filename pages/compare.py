"""Compare two runs case by case: paired statistics, every provider against A, the paired cases, one case opened.

PMB suites (pmb-single-turn, pmb-session) pair cases; QA benchmarks (LoCoMo, LongMemEval, ...) pair
questions by id and test per-question correctness (:mod:`memeval_core.explore.qa_compare`).

URL state: ``?benchmark=`` (a PMB suite or a QA benchmark), ``?a=`` and ``?b=`` (display name, run
id or, for PMB, provider; default the leader and the runner-up), ``?seed=``, ``?resamples=``,
``?method=``, ``?filter=``, ``?q=``, ``?case=`` (PMB case id, session turns ``<case id>/<turn
index>``; QA question id).
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
from memeval_core.explore.qa_compare import (
    QaComparisonReport,
    QaSide,
    check_pairable,
    default_pair,
    filter_questions,
    qa_compare_stats,
    qa_paired_frame,
    qa_question_detail,
    qa_stats_frame,
)
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import BENCHMARKS, PmbRun
from memeval_core.qa.ingest import LoadedRun
from memeval_core.stats.bootstrap import METHOD_NAMES, BootstrapMethod, BootstrapReport
from memeval_core.stats.mcnemar import McNemarReport
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


def mcnemar_metrics(m: McNemarReport, good: str, bad: str) -> None:
    """The 2x2 table of paired outcomes (``good`` = passed / correct) and the exact McNemar p, as metrics."""
    row = st.container(horizontal=True)
    row.metric(f"A {good}, B {bad}", m.b, border=True)
    row.metric(f"B {good}, A {bad}", m.c, border=True)
    row.metric(f"both {good}", m.both_passed, border=True)
    row.metric(f"both {bad}", m.both_failed, border=True)
    row.metric("McNemar p (exact)", f"{m.p_value:.3g}", border=True)


def mcnemar_sentence(m: McNemarReport, items: str) -> str:
    """``p = … on b + c discordant of n paired <items>: (not) significant at α = …``."""
    verdict_text = "significant" if m.significant else "not significant"
    return f"p = {m.p_value:.3g} on {m.b} + {m.c} discordant of {m.n} paired {items}: {verdict_text} at α = {m.alpha}."


def overall_statistics(report: ComparisonReport) -> None:
    """Discordant counts and McNemar p as metrics, then the two interval verdicts and the methods used."""
    s: PairedStats = report.overall
    m = s.mcnemar
    mcnemar_metrics(m, "passed", "failed")
    lines = [
        f"- **Pass/fail, exact McNemar:** {mcnemar_sentence(m, 'cases')}",
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


def statistics_controls() -> tuple[int, int, BootstrapMethod]:
    """Seed, resamples and interval method of the bootstrap, mirrored in the URL."""
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        seed = ui.number_param("Seed", "seed", DEFAULT_SEED, 0, ui.SEED_MAX, step=1, width=180)
        n_resamples = ui.number_param("Resamples", "resamples", DEFAULT_RESAMPLES, 100, 100_000, step=1000, width=180)
        method: BootstrapMethod = st.selectbox(
            "Interval method",
            tuple(METHOD_NAMES),
            help="percentile: quantiles of the bootstrap distribution; bca: bias-corrected and accelerated.",
            width=200,
            **ui.url_bound("method"),
        )
    return seed, n_resamples, method


def statistics_section(a: PmbRun, b: PmbRun, fixture: PmbFixture | None) -> None:
    """Parameters (seed, resamples, interval method), overall verdicts, and the per-category table."""
    st.subheader("Statistics")
    seed, n_resamples, method = statistics_controls()
    try:
        report = cached_stats(a, b, fixture, (a.identity.run_id, b.identity.run_id), seed, n_resamples, method)
    except ValueError as exc:
        st.error("These runs cannot be compared:")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    overall_statistics(report)
    df = stats_frame(report)
    st.caption("Per category (benchmark order). p-values across categories are Holm-adjusted.")
    st.dataframe(df, hide_index=True, height="content", column_config=stats_config(df), key="stats-table")
    ui.download_buttons(df, f"memeval-compare-stats-{a.identity.display_name}-vs-{b.identity.display_name}", "stats")


def stats_config(
    df: pd.DataFrame, formats: dict[str, str] = STATS_FORMATS, helps: dict[str, str] = STATS_HELP
) -> dict[str, Any]:
    """Number formats and help text of a statistics table."""
    cfg: dict[str, Any] = {}
    for col in df.columns:
        if col in formats:
            cfg[col] = st.column_config.NumberColumn(col, format=formats[col], help=helps.get(col))
        elif col in helps:
            cfg[col] = st.column_config.Column(col, help=helps[col])
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


def open_case_from_table(keys: list[str], table: str = "pairs-table") -> None:
    """Table row selected: open that case (the bound ``case`` selectbox then writes it to the URL)."""
    rows = st.session_state[table].selection.rows
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
        ui.class_styled(matrix),
        hide_index=True,
        height="content",
        key="case-ids",
    )
    ui.download_buttons(matrix, f"memeval-case-{key.replace('/', '-turn-')}-ids", "case-ids")


# --- QA benchmarks (LoCoMo, LongMemEval, ...): questions paired by id, correctness tested --------------

QA_ORDER = ("locomo", "longmemeval-s", "longmemeval-m", "longmemeval-oracle", "evolving-events")
QA_STATS_FORMATS = {
    "mcnemar_p": "%.3g",
    "holm_p": "%.3g",
    **{f"{m}_{f}": "%.4f" for m in ("accuracy", "score") for f in ("diff", "ci_low", "ci_high")},
}
QA_STATS_HELP = {
    "scope": "All paired questions, then each category (raw code and memeval's name).",
    "both_correct": "Questions both answered correctly (mean rescaled verdict score >= 0.6).",
    "b": "Discordant questions A answered correctly and B did not.",
    "c": "Discordant questions B answered correctly and A did not.",
    "both_wrong": "Questions neither answered correctly (failures included: they score 0).",
    "mcnemar_p": "Exact two-sided McNemar p-value on the discordant questions.",
    "holm_p": "Categories: McNemar p Holm-adjusted across the categories (controls the family-wise error rate).",
    "accuracy_diff": "Share correct of A minus that of B.",
    "accuracy_tied": "True when the share-correct interval includes zero: statistically tied.",
    "score_diff": "Mean score of A minus that of B (the leaderboard's accuracy, verdicts averaged over judges).",
    "score_tied": "True when the mean-score interval includes zero: statistically tied.",
}


def qa_benchmarks(runs: tuple[LoadedRun, ...]) -> list[str]:
    """QA benchmarks present: LoCoMo and LongMemEval first, the others alphabetically."""
    present = {r.run.run.benchmark for r in runs}
    known = [b for b in QA_ORDER if b in present]
    return known + sorted(present - set(known))


def suite_picker(pmb_runs: tuple[PmbRun, ...], qa_runs: tuple[LoadedRun, ...]) -> str:
    """A horizontal radio of the PMB suites and the QA benchmarks present (URL ``?benchmark=``)."""
    present = [b for b in BENCHMARKS if any(r.identity.benchmark == b for r in pmb_runs)]
    choice: str = st.radio("Benchmark", present + qa_benchmarks(qa_runs), horizontal=True, **ui.url_bound("benchmark"))
    return choice


def qa_run_picker(label: str, runs: list[LoadedRun], param: str, default: LoadedRun, help: str) -> LoadedRun:
    """A selectbox of QA runs by display name, mirrored in the URL as ``?param=`` (display name or run id)."""
    names = [r.display_name for r in runs]
    key = f"qa-run-{param}"
    raw = st.query_params.get(param)
    start = next((r for r in runs if raw in (r.display_name, r.run_id)), default)
    name = st.selectbox(
        label,
        names,
        index=names.index(start.display_name),
        key=key,
        on_change=lambda: ui.set_url_value(param, st.session_state[key], default.display_name),
        help=help,
    )
    ui.set_url_value(param, name, default.display_name)
    return runs[names.index(name)]


@st.cache_data(show_spinner="Resampling…", max_entries=64)
def cached_qa_stats(
    _a: LoadedRun, _b: LoadedRun, run_ids: tuple[str, str], seed: int, n_resamples: int, method: BootstrapMethod
) -> QaComparisonReport:
    """:func:`qa_compare_stats` of A against B; cached on the run ids (which hash the source files) and parameters."""
    del run_ids  # only part of the cache key
    return qa_compare_stats(_a, _b, seed=seed, n_resamples=n_resamples, alpha=ALPHA, method=method)


def qa_statistics_section(a: LoadedRun, b: LoadedRun) -> None:
    """Parameters, discordant counts and McNemar p, the two interval verdicts, and the per-category table."""
    st.subheader("Statistics")
    seed, n_resamples, method = statistics_controls()
    report = cached_qa_stats(a, b, (a.run_id, b.run_id), seed, n_resamples, method)
    s = report.overall
    m = s.mcnemar
    mcnemar_metrics(m, "correct", "wrong")
    st.markdown(
        "\n".join(
            [
                f"- **Correctness, exact McNemar:** {mcnemar_sentence(m, 'questions')}",
                f"- **Share correct, A − B:** {interval(s.accuracy)}: {verdict(s.accuracy)}.",
                f"- **Mean score, A − B** (the leaderboard's accuracy): {interval(s.score)}: {verdict(s.score)}.",
            ]
        )
    )
    unpaired = (
        f" Left out: {report.only_a} scored question(s) only A has, {report.only_b} only B has."
        if report.only_a or report.only_b
        else ""
    )
    st.caption(
        f"Methods: {ui.md_escape(report.correct_test)}. Intervals: {ui.md_escape(report.interval_method)}, "
        f"{1 - report.alpha:.0%} confidence, seed {report.seed}, {report.n_resamples:,} resamples (numpy default_rng). "
        f"Categories: {ui.md_escape(report.multiple_testing)}. Correct = mean rescaled verdict score ≥ 0.6 "
        "(0-5 rubric / 5); a question without an answer, with an error or not judged scores 0 and counts as wrong. "
        f"Statistically tied = the interval includes zero.{unpaired}"
    )
    df = qa_stats_frame(report)
    st.caption("Per category. p-values across categories are Holm-adjusted.")
    st.dataframe(
        df,
        hide_index=True,
        height="content",
        column_config=stats_config(df, QA_STATS_FORMATS, QA_STATS_HELP),
        key="qa-stats-table",
    )
    ui.download_buttons(df, f"memeval-compare-stats-{a.display_name}-vs-{b.display_name}", "qa-stats")


def qa_questions_section(a: LoadedRun, b: LoadedRun) -> list[str]:
    """The paired question table with outcome filter and text search; returns every paired question id."""
    st.subheader("Questions both scored")
    pairs = qa_paired_frame(a, b)
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        label = st.segmented_control(
            "Show", list(FILTER_LABELS), default="all", required=True, **ui.url_bound("filter")
        )
        text = st.text_input(
            "Search question id or question", placeholder="e.g. conv-26", width=320, **ui.url_bound("q")
        )
    shown = filter_questions(pairs, FILTER_LABELS[label or "all"], text or "").reset_index(drop=True)
    counts = pairs["outcome"].value_counts()
    st.caption(
        f"{len(shown)} of {len(pairs)} paired questions shown. "
        + ", ".join(f"{o}: {int(counts.get(o, 0))}" for o in ("both correct", "A wins", "B wins", "both wrong"))
        + ". Select a row to open the question."
    )
    st.dataframe(
        shown,
        hide_index=True,
        on_select=partial(open_case_from_table, list(shown["question_id"]), "qa-pairs-table"),
        selection_mode="single-row",
        column_config={
            **{
                c: st.column_config.TextColumn(c, width="medium")
                for c in ("question", "gold_answer", "a_answer", "b_answer")
            },
            "a_score": st.column_config.NumberColumn("a_score", format="%.4f"),
            "b_score": st.column_config.NumberColumn("b_score", format="%.4f"),
        },
        key="qa-pairs-table",
    )
    ui.download_buttons(shown, f"memeval-compare-questions-{a.display_name}-vs-{b.display_name}", "qa-pairs")
    return list(pairs["question_id"])


def qa_side(side: QaSide, role: str, key: str) -> None:
    """One run's answer to the opened question: verdict, score, failure, the answer and every judge verdict."""
    st.markdown(f"**{role}**")
    ui.plain(
        f"{side.display_name}: {'correct' if side.correct else 'wrong'}; score {side.score:.4f}"
        + (f"; failure: {side.failure}" if side.failure else "")
    )
    st.caption("Answer")
    st.code(side.answer if side.answer is not None else "(no answer)", language=None, wrap_lines=True)
    if side.error_message:
        st.caption("Error")
        st.code(side.error_message, language=None, wrap_lines=True)
    st.caption(f"{len(side.verdicts)} judge verdict(s)")
    st.dataframe(
        side.verdicts,
        hide_index=True,
        height="content",
        column_config={"rescaled": st.column_config.NumberColumn("rescaled", format="%.4f")},
        key=key,
    )


def qa_question_section(a: LoadedRun, b: LoadedRun, keys: list[str]) -> None:
    """The opened question: question, gold answer, both answers and every judge verdict (plain text)."""
    st.subheader("One question")
    key = st.selectbox(
        "Open a question",
        keys,
        index=None,
        placeholder="Choose a question, or select a row above",
        **ui.url_bound("case"),
    )
    if key is None:
        return
    view = qa_question_detail(a, b, key)
    cat = view.category if view.category is not None else "none"
    ui.plain(f"{view.question_id} · category {cat}" + (f" ({view.category_name})" if view.category_name else ""))
    st.caption("Question")
    st.code(view.question, language=None, wrap_lines=True)
    st.caption("Gold answer")
    st.code(view.gold_answer if view.gold_answer is not None else "(none)", language=None, wrap_lines=True)
    cols = st.columns(2)
    for col, side, role in ((cols[0], view.a, "A"), (cols[1], view.b, "B")):
        with col:
            qa_side(side, role, f"qa-verdicts-{role.lower()}")
    verdicts = pd.concat([side.verdicts.assign(run=side.display_name) for side in (view.a, view.b)], ignore_index=True)
    verdicts = verdicts[["run", *view.a.verdicts.columns]]
    ui.download_buttons(verdicts, f"memeval-question-{view.question_id}-verdicts", "qa-verdicts")


def compare_qa(qa: ui.QaLoaded, benchmark: str) -> None:
    """The QA comparison: pick A and B among the benchmark's runs, then statistics, questions, one question."""
    runs = sorted(
        (r for r in qa.runs if r.run.run.benchmark == benchmark),
        key=lambda r: (not r.publishable, -(r.score.accuracy or 0.0), r.display_name),
    )
    pair = default_pair(runs)
    if pair is None:
        st.info(f"{len(runs)} {benchmark} run(s), no two of which can be paired: nothing to compare.")
        return
    pickers = st.columns(2)
    with pickers[0]:
        run_a = qa_run_picker("A", runs, "a", pair[0], "Default: the leaderboard leader that has a comparable run.")
    with pickers[1]:
        run_b = qa_run_picker("B", runs, "b", pair[1], "Default: the best run comparable with the leader.")
    if run_a is run_b:
        st.info("A and B are the same run; pick two different runs.")
        return
    try:
        check_pairable(run_a, run_b)
    except ValueError as exc:
        st.error("These runs cannot be compared:")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    qa_statistics_section(run_a, run_b)
    keys = qa_questions_section(run_a, run_b)
    qa_question_section(run_a, run_b, keys)


ui.flash_sync_result()
everything = ui.load_everything_current()
loaded, qa = everything.pmb, everything.qa
st.title("Compare two runs")
if not loaded.runs and not qa.runs:
    ui.empty_state(loaded)
    st.stop()

st.markdown(
    "Two runs of the same benchmark, case by case (PMB) or question by question (QA): which each got right, "
    "paired statistics on the difference, and any case opened with what each returned. Every choice is in the link."
)
choice = suite_picker(loaded.runs, qa.runs)
if choice not in BENCHMARKS:
    compare_qa(qa, choice)
    st.stop()
benchmark = next(b for b in BENCHMARKS if b == choice)
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
