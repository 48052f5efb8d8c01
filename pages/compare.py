"""Compare two runs: the verdict first (who is better, by how much, is it real), then the evidence.

PMB suites (pmb-single-turn, pmb-session) pair cases; QA benchmarks (LoCoMo, LongMemEval, ...) pair
questions by id and test per-question correctness (:mod:`memeval_core.explore.qa_compare`); both go through
one paired comparison (:mod:`memeval_core.explore.paired`).

URL state: ``?benchmark=`` (a PMB suite or a QA benchmark), ``?a=`` and ``?b=`` (display name, run
id or, for PMB, provider; default the leader and the runner-up), ``?seed=``, ``?resamples=``,
``?method=``, ``?filter=``, ``?q=``, ``?case=`` (PMB case id, session turns ``<case id>/<turn
index>``; QA question id). A value the page does not know is dropped with a warning naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from memeval_core import labels
from memeval_core.explore import case_view as cv
from memeval_core.explore.compare import (
    PMB_TERMS,
    WTL_CASE_COLUMNS,
    case_detail,
    compare_stats,
    paired_frame,
    win_tie_loss,
)
from memeval_core.explore.paired import (
    PairedReport,
    PairFilter,
    Verdict,
    filter_pairs,
    interval_text,
    p_text,
    stats_frame,
    verdict,
    verdict_sentence,
    with_intervals,
)
from memeval_core.explore.qa_compare import (
    QA_TERMS,
    QaSide,
    check_pairable,
    default_pair,
    qa_compare_stats,
    qa_paired_frame,
    qa_question_detail,
)
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import BENCHMARKS, Benchmark, PmbRun, RunIdentity
from memeval_core.qa.ingest import LoadedRun, QaRunHeader
from memeval_core.stats.bootstrap import METHOD_NAMES, BootstrapMethod, BootstrapReport
from pages import ui

T = TypeVar("T")
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
METHOD_LABELS = {"percentile": "Percentile", "bca": "BCa (bias-corrected and accelerated)"}
STATS_PARAMS = ("seed", "resamples", "method")


# --- The link: unknown values are named in a warning, never dropped silently ------------------------------


def drop_unknown(param: str, what: str, instead: str) -> None:
    """Warn that the link's ``?param=`` names no ``what`` here, say what is shown instead, drop it from the URL."""
    raw = str(st.query_params.get(param))
    del st.query_params[param]
    st.warning(
        f"The link asks for {param}={ui.shown_text(raw)}, which is not {what}; {instead}.",
        icon=":material/link_off:",
    )


def url_pair(
    resolve: Callable[[str], T | None], name: Callable[[T], str], ranked: Sequence[T], what: str
) -> tuple[T, T]:
    """The runs the link names as A and B. An unknown name is warned about and replaced by the best-ranked run
    that is not the other side (so ``?a=unknown&b=<leader>`` compares the runner-up with the leader)."""
    raws = {p: st.query_params.get(p) for p in ("a", "b")}
    found = {p: resolve(raw) if raw else None for p, raw in raws.items()}
    a = found["a"] or next(r for r in ranked if r is not found["b"])
    b = found["b"] or next(r for r in ranked if r is not a)
    for param, chosen in (("a", a), ("b", b)):
        if raws[param] and found[param] is None:
            drop_unknown(param, what, f"showing {ui.md_escape(name(chosen))} as {param.upper()} instead")
    return a, b


def picker(label: str, names: list[str], param: str, start: str, default: str, key: str, help: str) -> str:
    """A selectbox of run names starting at ``start``, mirrored in the URL (dropped when it names ``default``)."""

    def to_url() -> None:
        ui.set_url_value(param, st.session_state[key], default)

    name = st.selectbox(label, names, index=names.index(start), key=key, on_change=to_url, help=help)
    ui.set_url_value(param, name, default)
    return str(name)


def check_case(keys: Sequence[str], what: str) -> None:
    """Drop a ``?case=`` that names no paired case or question, with a warning."""
    raw = st.query_params.get("case")
    if raw is not None and raw not in set(keys):
        drop_unknown("case", what, "no case is opened")


# --- The verdict, first on the page ------------------------------------------------------------------------


def bold(name: str) -> str:
    """A run's name in bold for Markdown (escaped: names come from result files)."""
    return f"**{ui.md_escape(name)}**"


def verdict_section(v: Verdict) -> None:
    """The answer in one sentence, the same as cards, and how the paired items split."""
    st.markdown(verdict_sentence(v, bold))
    row = st.container(horizontal=True)
    for side, name, count in (("A", v.a, v.a_count), ("B", v.b, v.b_count)):
        row.metric(
            f"{side}: {ui.md_escape(name)}", f"{count:,} of {v.n:,}", border=True,
            help=f"Paired {v.items} {side} {v.verb}{v.how}.",
        )  # fmt: skip
    row.metric(
        "Gap, A − B", labels.points(v.gap.estimate), border=True, delta_color="off", delta_arrow="off",
        delta=f"{1 - v.gap.alpha:.0%} interval {interval_text(v.gap.ci_low, v.gap.ci_high)}",
        help=f"Share of {v.items} right, A minus B, in percentage points; the interval is a paired bootstrap.",
    )  # fmt: skip
    row.metric(
        "A real difference?", v.reality, delta=f"McNemar {p_text(v.mcnemar.p_value)}", border=True,
        delta_color="off", delta_arrow="off",
        help=f"Yes when the exact McNemar test is significant (p < {v.mcnemar.alpha}) and the interval excludes zero.",
    )  # fmt: skip
    m = v.mcnemar
    st.caption(
        f"Where they differ: {m.b:,} {v.items} only {ui.md_escape(v.a)} {v.verb}{v.how}, {m.c:,} only "
        f"{ui.md_escape(v.b)}. Both: {m.both_passed:,}; neither: {m.both_failed:,}."
    )


# --- PMB: statistics ----------------------------------------------------------------------------------------


@st.cache_data(show_spinner="Resampling…", max_entries=64)
def cached_stats(
    _a: PmbRun,
    _b: PmbRun,
    _fixture: PmbFixture | None,
    run_ids: tuple[str, str],
    seed: int,
    n_resamples: int,
    method: BootstrapMethod,
) -> PairedReport:
    """:func:`compare_stats` of A against B; cached on the run ids (which hash the report files) and parameters."""
    del run_ids  # only part of the cache key
    order = _fixture.category_order if _fixture is not None else ()
    return compare_stats(_a, _b, seed=seed, n_resamples=n_resamples, alpha=ALPHA, method=method, category_order=order)


def tied_text(rep: BootstrapReport) -> str:
    """``statistically tied`` when the interval includes zero, else ``not tied``, with the reason."""
    if rep.statistically_tied:
        return "**statistically tied** (the interval includes zero)"
    return "**not tied** (the interval excludes zero)"


def interval(rep: BootstrapReport) -> str:
    """Estimate and interval in percentage points: ``+88.3 pp (95% interval +80.5 to +94.8 pp)``."""
    return f"{labels.points(rep.estimate)} ({1 - rep.alpha:.0%} interval {interval_text(rep.ci_low, rep.ci_high)})"


def statistics_controls() -> tuple[int, int, BootstrapMethod]:
    """Seed, resamples and interval method of the bootstrap, mirrored in the URL."""
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        seed = ui.number_param("Seed", "seed", DEFAULT_SEED, 0, ui.SEED_MAX, step=1, width=180)
        n_resamples = ui.number_param("Resamples", "resamples", DEFAULT_RESAMPLES, 100, 100_000, step=1000, width=180)
        method = ui.choice(
            "Interval method", "method", tuple(METHOD_NAMES), "percentile", METHOD_LABELS, width=300,
            help="Percentile: quantiles of the bootstrap distribution; BCa: bias-corrected and accelerated.",
        )  # fmt: skip
    return seed, n_resamples, "bca" if method == "bca" else "percentile"


def settings_box() -> Any:
    """The expander that holds the statistics' knobs; open when the link sets one of them."""
    changed = any(p in st.query_params for p in STATS_PARAMS)
    return st.expander(
        "Statistics settings: seed, resamples, interval method", expanded=changed, icon=":material/tune:"
    )


def methods_caption(report: PairedReport, extra: str = "") -> None:
    """The methods and parameters behind every number on the page."""
    st.caption(
        f"Methods: {ui.md_escape(report.test)}. Intervals: {ui.md_escape(report.interval_method)}, "
        f"{1 - report.alpha:.0%} confidence, seed {report.seed}, {report.n_resamples:,} resamples (numpy default_rng). "
        f"Categories: {ui.md_escape(report.multiple_testing)}. Statistically tied = the interval includes zero.{extra}"
    )


def pmb_statistics(a: PmbRun, b: PmbRun, fixture: PmbFixture | None, slot: Any) -> None:
    """The verdict (into ``slot``, above the knobs), the knobs, the two interval verdicts and the category table."""
    box = settings_box()
    with box:
        seed, n_resamples, method = statistics_controls()
    try:
        report = cached_stats(a, b, fixture, (a.identity.run_id, b.identity.run_id), seed, n_resamples, method)
    except ValueError as exc:
        with slot:
            st.error("These runs cannot be compared:")
            st.code(str(exc), language=None, wrap_lines=True)
        return
    with slot:
        verdict_section(verdict(report))
    with box:
        methods_caption(report)
    s = report.overall
    if s.value is None:
        st.markdown("**Mean precision, A − B:** no case where both have a precision, so no interval.")
    else:
        st.markdown(
            f"**Mean precision, A − B** ({s.n_value} cases where both have a precision): "
            f"{interval(s.value)}: {tied_text(s.value)}. Pass rate: {tied_text(s.outcome)}."
        )
    category_table(stats_frame(report), a.identity.display_name, b.identity.display_name)


def category_table(df: pd.DataFrame, a: str, b: str) -> None:
    """The statistics per category (the first row: all cases), intervals as text; the download keeps the numbers."""
    st.subheader("By category")
    st.caption(
        "All paired cases first, then each category in benchmark order. Holm p adjusts for testing every category."
    )
    shown = with_intervals(df, ("pass_rate", "precision")).rename(columns={"scope": "category"})
    hide = [f"{p}_ci_{e}" for p in ("pass_rate", "precision") for e in ("low", "high")]
    ui.table(shown, key="stats-table", hide=hide, height="content", widths={"category": 200})
    ui.download_buttons(df, f"memeval-compare-stats-{a}-vs-{b}", "stats")


# One table per load, suite and A, shared by every session (never changed in place): a click reuses it.
@st.cache_resource(max_entries=16, show_spinner="Pairing every system with A…")
def wins_against(_loaded: ui.Loaded, results_dir: str, key: str, benchmark: Benchmark, chosen: str) -> pd.DataFrame:
    """:func:`win_tie_loss` of ``chosen`` against every other run of the suite."""
    del results_dir, key  # only part of the cache key
    cases = ui.suite_cases(_loaded, benchmark, WTL_CASE_COLUMNS)
    return win_tie_loss(cases, ui.suite_table(_loaded, benchmark), chosen, alpha=ALPHA)


def against_a(loaded: ui.Loaded, benchmark: Benchmark, a: PmbRun) -> None:
    """Every other system of the suite against A: wins, losses, ties, McNemar p (Holm-adjusted)."""
    st.subheader(f"Every system against {ui.md_escape(a.identity.display_name)}", anchor="against-a")
    st.caption(
        "Per paired case: A wins when A passes and the other fails, loses the reverse. "
        "McNemar p on wins against losses; Holm p adjusts for testing every system."
    )
    df = wins_against(loaded, loaded.results_dir, loaded.key, benchmark, a.identity.display_name)
    shown = df.drop(columns="chosen").rename(
        columns={"other": "display_name", "other_run_id": "run_id", "wins": "a_wins", "losses": "a_losses"}
    )
    ui.table(shown, key="wtl-table", height="content")
    ui.download_buttons(df, f"memeval-compare-against-{a.identity.display_name}", "wtl")


# --- Tables whose rows open a case -------------------------------------------------------------------------


def open_case_from_table(keys: list[str], table: str) -> None:
    """Table row selected: open that case (the bound ``case`` selectbox then writes it to the URL)."""
    rows = st.session_state[table].selection.rows
    if rows:
        st.session_state["case"] = keys[rows[0]]


def _cell(key: str, value: object) -> str:
    return labels.MISSING if value is None or value is pd.NA or value != value else labels.formatted(key, value)


def selectable_table(df: pd.DataFrame, key: str, keys: list[str], widths: dict[str, Any] | None = None) -> None:
    """A table shown like :func:`ui.table` (registry headers, help, formats) whose selected row opens its case."""
    widths = widths or {}
    config = {
        c: st.column_config.Column(labels.label(c), help=labels.help_text(c), width=widths.get(c)) for c in df.columns
    }
    data: Any
    if df.size <= ui.STYLED_TABLE_CELLS:
        data = df.style.format({c: partial(_cell, c) for c in df.columns}, na_rep=labels.MISSING)
    else:
        data = pd.DataFrame({c: [_cell(c, v) for v in df[c]] for c in df.columns})
    st.dataframe(
        data, hide_index=True, column_config=config, key=key, on_select=partial(open_case_from_table, keys, key),
        selection_mode="single-row", placeholder=labels.MISSING,
    )  # fmt: skip


def outcome_filter(placeholder: str, search: str) -> tuple[PairFilter, str]:
    """The outcome filter and the text search above a paired table, mirrored in the URL."""
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        label = st.segmented_control(
            "Show", list(FILTER_LABELS), default="all", required=True, **ui.url_bound("filter")
        )
        text = st.text_input(search, placeholder=placeholder, width=320, **ui.url_bound("q"))
    return FILTER_LABELS[label or "all"], text or ""


# --- PMB: cases ---------------------------------------------------------------------------------------------


def pair_keys(pairs: pd.DataFrame) -> list[str]:
    """The case key of every paired row (``<case id>`` or ``<case id>/<turn>``)."""
    return [
        cv.case_key(c, None if pd.isna(t) else int(t))
        for c, t in zip(pairs["case_id"], pairs["turn_index"], strict=True)
    ]


def cases_section(a: PmbRun, b: PmbRun, pairs: pd.DataFrame, keys: list[str]) -> None:
    """The paired case table with outcome filter and text search; a selected row opens its case."""
    st.subheader("Cases both ran")
    which, text = outcome_filter("e.g. alias", "Search case id or description")
    shown = filter_pairs(pairs, PMB_TERMS, which, text)
    counts = pairs["outcome"].value_counts()
    st.caption(
        f"{len(shown):,} of {len(pairs):,} paired cases shown. "
        + ", ".join(f"{o}: {int(counts.get(o, 0))}" for o in ("both passed", "A wins", "B wins", "both failed"))
        + ". Select a row to open the case."
    )
    if shown["turn_index"].isna().all():
        shown = shown.drop(columns=["turn_index", "label"])
    shown_keys = [keys[i] for i in shown.index]
    shown = shown.reset_index(drop=True)
    # Turn labels read as words on screen (``implicit continuation``); the download keeps them as the fixture has them.
    table = shown.assign(label=shown["label"].str.replace("_", " ")) if "label" in shown.columns else shown
    selectable_table(table, "pairs-table", shown_keys, widths={"case_id": 220, "description": "medium"})
    ui.download_buttons(shown, f"memeval-compare-cases-{a.identity.display_name}-vs-{b.identity.display_name}", "pairs")


def side(outcome: cv.CaseOutcome, role: str) -> None:
    """One side of an opened case: verdict, scores, latency, what it returned per tier, failure messages."""
    verdict_text = f"passed ({cv.PASS_TYPE_NAMES.get(str(outcome.pass_type), outcome.pass_type)} pass)"
    st.markdown(f"**{role}: {ui.md_escape(outcome.display_name)}**")
    ui.plain(
        f"{verdict_text if outcome.passed else 'failed'} · precision {labels.rate(outcome.precision)} · "
        f"recall {labels.rate(outcome.recall)} · {labels.milliseconds(outcome.latency_ms)}"
    )
    ui.plain("Returned: " + cv.tier_summary(outcome))
    if not outcome.failures:
        st.caption("No failure.")
        return
    n = len(outcome.failures)
    with st.expander(f"{n} failure message{'s' if n != 1 else ''}"):
        st.code("\n".join(outcome.failures), language=None, wrap_lines=True)
        if outcome.taken_from_report:
            st.caption(f"{len(outcome.taken_from_report)} of these cannot be re-derived; they are the report's word.")


def expectation_section(view: cv.CaseView, stem: str, key: str) -> None:
    """What the case asks for: each belief with its text, then the other assertions, then the fixture's own form."""
    expected = cv.expected_beliefs(view)
    if len(expected):
        ui.table(expected, key=key, height="content", widths={"id": 190, "belief": 560, "expected": 220})
        ui.download_buttons(expected, f"{stem}-expected", "case-expected")
    for note in cv.expectation_notes(view.expectation):
        ui.plain(note)
    with st.expander("The assertions as the fixture states them"):
        exp = cv.expectation_frame(view.expectation)
        ui.table(exp, key=f"{key}-fixture", height="content")
        ui.download_buttons(exp, f"{stem}-expectation", "case-exp")


def id_table(view: cv.CaseView, stem: str, key: str) -> None:
    """Every id either run returned or missed, with its text and gold mark, classified per run."""
    matrix = cv.id_matrix(view)
    names = [o.display_name for o in view.outcomes]
    widths: dict[str, Any] = {"id": 190, "belief": "large", "gold": 50, **{n: 120 for n in names}}
    ui.table(cv.marked(matrix, names), key=key, data_columns=names, height="content", widths=widths)
    ui.download_buttons(matrix, f"{stem}-ids", key)


def case_section(a: PmbRun, b: PmbRun, fixture: PmbFixture | None, keys: list[str]) -> None:
    """The opened case: query, what it asks for, each side's result, and every returned id classified."""
    st.subheader("One case", anchor="one-case")
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
    stem = f"memeval-case-{key.replace('/', '-turn-')}"
    ui.plain(f"{view.category}: {view.description}")
    st.caption("Query")
    st.code(view.query, language=None, wrap_lines=True)
    by_name = {o.display_name: o for o in view.outcomes}
    cols = st.columns(2)
    for col, run, role in ((cols[0], a, "A"), (cols[1], b, "B")):
        with col:
            side(by_name[run.identity.display_name], role)
    st.markdown("**What the case asks for**")
    expectation_section(view, stem, "case-expectation")
    st.markdown("**What each returned**")
    st.caption(cv.CLASS_LEGEND)
    id_table(view, stem, "case-ids")


def compare_pmb(loaded: ui.Loaded, benchmark: Benchmark, runs: tuple[RunIdentity, ...]) -> None:
    """The PMB comparison: pick A and B, the verdict, the evidence, the cases, one case opened."""
    start_a, start_b = url_pair(partial(ui.resolve_run, runs), lambda r: r.display_name, runs, "a run of this suite")
    names = [r.display_name for r in runs]
    cols = st.columns(2)
    with cols[0]:
        name_a = picker("A", names, "a", start_a.display_name, names[0], "run-a", "Default: the leader.")
    with cols[1]:
        name_b = picker("B", names, "b", start_b.display_name, names[1], "run-b", "Default: the runner-up.")
    if name_a == name_b:
        st.info("A and B are the same run; pick two different runs.")
        return
    run_a, run_b = ui.whole_runs(loaded, [runs[names.index(name_a)].run_id, runs[names.index(name_b)].run_id])
    pairs = paired_frame(run_a, run_b)
    keys = pair_keys(pairs)
    check_case(keys, "a case both runs have")
    pmb_statistics(run_a, run_b, loaded.fixture, st.container())
    against_a(loaded, benchmark, run_a)
    cases_section(run_a, run_b, pairs, keys)
    case_section(run_a, run_b, loaded.fixture, keys)


# --- QA benchmarks (LoCoMo, LongMemEval, ...): questions paired by id, correctness tested --------------

QA_ORDER = ("locomo", "longmemeval-s", "longmemeval-m", "longmemeval-oracle", "evolving-events")
VERDICT_COLUMNS = {
    "score": "verdict_score",
    "scale": "verdict_scale",
    "rescaled": "verdict_rescaled",
    "passes": "verdict_passes",
    "model": "verdict_model",
    "label": "verdict_label",
}
"""A judge verdict's fields and the registry keys they are shown under."""


def qa_benchmarks(runs: tuple[QaRunHeader, ...]) -> list[str]:
    """QA benchmarks present: LoCoMo and LongMemEval first, the others alphabetically."""
    present = {r.meta.benchmark for r in runs}
    known = [b for b in QA_ORDER if b in present]
    return known + sorted(present - set(known))


@st.cache_data(show_spinner="Resampling…", max_entries=64)
def cached_qa_stats(
    _a: LoadedRun, _b: LoadedRun, run_ids: tuple[str, str], seed: int, n_resamples: int, method: BootstrapMethod
) -> PairedReport:
    """:func:`qa_compare_stats` of A against B; cached on the run ids (which hash the source files) and parameters."""
    del run_ids  # only part of the cache key
    return qa_compare_stats(_a, _b, seed=seed, n_resamples=n_resamples, alpha=ALPHA, method=method)


def qa_statistics(a: LoadedRun, b: LoadedRun, slot: Any) -> None:
    """The verdict (into ``slot``), the knobs, the two interval verdicts and the per-category table."""
    box = settings_box()
    with box:
        seed, n_resamples, method = statistics_controls()
    report = cached_qa_stats(a, b, (a.run_id, b.run_id), seed, n_resamples, method)
    unpaired = (
        f" Left out: {report.only_a} scored question(s) only A has, {report.only_b} only B has."
        if report.only_a or report.only_b
        else ""
    )
    with slot:
        verdict_section(verdict(report))
        if unpaired:
            st.caption(unpaired.strip())
    with box:
        methods_caption(
            report, " Correct = mean rescaled verdict score ≥ 0.6 (0-5 rubric / 5); a question "
            "without an answer, with an error or not judged scores 0 and counts as wrong." + unpaired,
        )  # fmt: skip
    s = report.overall
    if s.value is not None:  # every scored question has a score
        st.markdown(
            f"**Mean score, A − B** (the leaderboard's accuracy): {interval(s.value)}: {tied_text(s.value)}. "
            f"Share correct: {tied_text(s.outcome)}."
        )
    df = stats_frame(report)
    st.subheader("By category")
    st.caption("All paired questions first, then each category. Holm p adjusts for testing every category.")
    shown = with_intervals(df, ("accuracy", "score")).drop(columns="category")
    shown = shown.rename(columns={"scope": "category", "b": "qa_b", "c": "qa_c"})
    hide = [f"{p}_ci_{e}" for p in ("accuracy", "score") for e in ("low", "high")]
    ui.table(shown, key="qa-stats-table", hide=hide, height="content", widths={"category": 180})
    ui.download_buttons(df, f"memeval-compare-stats-{a.display_name}-vs-{b.display_name}", "qa-stats")


def qa_questions_section(a: LoadedRun, b: LoadedRun, pairs: pd.DataFrame) -> None:
    """The paired question table with outcome filter and text search; a selected row opens its question."""
    st.subheader("Questions both scored")
    which, text = outcome_filter("e.g. conv-26", "Search question id or question")
    shown = filter_pairs(pairs, QA_TERMS, which, text).reset_index(drop=True)
    counts = pairs["outcome"].value_counts()
    st.caption(
        f"{len(shown):,} of {len(pairs):,} paired questions shown. "
        + ", ".join(f"{o}: {int(counts.get(o, 0))}" for o in ("both correct", "A wins", "B wins", "both wrong"))
        + ". Select a row to open the question."
    )
    wide: dict[str, Any] = {c: "medium" for c in ("question", "gold_answer", "a_answer", "b_answer")}
    # The raw category code stays in the download; the table shows the category's name.
    selectable_table(shown.drop(columns="category"), "qa-pairs-table", list(shown["question_id"]), widths=wide)
    ui.download_buttons(shown, f"memeval-compare-questions-{a.display_name}-vs-{b.display_name}", "qa-pairs")


def qa_side(side: QaSide, role: str, key: str) -> None:
    """One run's answer to the opened question: verdict, score, failure, the answer and every judge verdict."""
    st.markdown(f"**{role}: {ui.md_escape(side.display_name)}**")
    ui.plain(
        f"{'correct' if side.correct else 'wrong'} · score {labels.rate(side.score)}"
        + (f" · failure: {side.failure}" if side.failure else "")
    )
    st.caption("Answer")
    st.code(side.answer if side.answer is not None else "(no answer)", language=None, wrap_lines=True)
    if side.error_message:
        st.caption("Error")
        st.code(side.error_message, language=None, wrap_lines=True)
    st.caption(f"{len(side.verdicts)} judge verdict(s)")
    ui.table(side.verdicts.rename(columns=VERDICT_COLUMNS), key=key, height="content")


def qa_question_section(a: LoadedRun, b: LoadedRun, keys: list[str]) -> None:
    """The opened question: question, gold answer, both answers and every judge verdict (plain text)."""
    st.subheader("One question", anchor="one-question")
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


def qa_resolve(runs: list[QaRunHeader], raw: str) -> QaRunHeader | None:
    """The QA run ``raw`` names by display name or run id."""
    return next((r for r in runs if raw in (r.display_name, r.run_id)), None)


def compare_qa(qa: ui.QaLoaded, benchmark: str) -> None:
    """The QA comparison: pick A and B among the benchmark's runs, the verdict, the evidence, one question."""
    runs = sorted(
        (r for r in qa.runs if r.meta.benchmark == benchmark),
        key=lambda r: (not r.publishable, -(r.score.accuracy or 0.0), r.display_name),
    )
    pair = default_pair(runs)
    if pair is None:
        st.info(
            f"{len(runs)} {ui.md_escape(labels.benchmark_name(benchmark))} run(s), no two of which can be paired: "
            "nothing to compare."
        )
        return
    ranked = [pair[0], pair[1], *(r for r in runs if r is not pair[0] and r is not pair[1])]
    start_a, start_b = url_pair(partial(qa_resolve, runs), lambda r: r.display_name, ranked, "a run of this benchmark")
    names = [r.display_name for r in runs]
    cols = st.columns(2)
    with cols[0]:
        help_a = "Default: the leaderboard leader that has a comparable run."
        name_a = picker("A", names, "a", start_a.display_name, pair[0].display_name, "qa-run-a", help_a)
    with cols[1]:
        help_b = "Default: the best run comparable with the leader."
        name_b = picker("B", names, "b", start_b.display_name, pair[1].display_name, "qa-run-b", help_b)
    if name_a == name_b:
        st.info("A and B are the same run; pick two different runs.")
        return
    run_a, run_b = ui.whole_qa_runs(qa, [runs[names.index(name_a)].run_id, runs[names.index(name_b)].run_id])
    try:
        check_pairable(run_a, run_b)
    except ValueError as exc:
        st.error("These runs cannot be compared:")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    pairs = qa_paired_frame(run_a, run_b)
    keys = list(pairs["question_id"])
    check_case(keys, "a question both runs scored")
    qa_statistics(run_a, run_b, st.container())
    qa_questions_section(run_a, run_b, pairs)
    qa_question_section(run_a, run_b, keys)


# --- The page ------------------------------------------------------------------------------------------------


def suite_choice(loaded: ui.Loaded, qa_runs: tuple[QaRunHeader, ...]) -> str:
    """The PMB suites and QA benchmarks present, by name (URL ``?benchmark=``, unknown values warned about)."""
    present = [*ui.present_benchmarks(loaded), *qa_benchmarks(qa_runs)]
    names = {b: labels.benchmark_name(b) for b in present}
    return ui.choice("Benchmark", "benchmark", present, present[0], names, radio=True)


everything = ui.load_everything_current()
loaded, qa = everything.pmb, everything.qa
st.title("Compare two runs")
ui.flash_sync_result()
if not loaded.identities and not qa.runs:
    ui.empty_state(loaded)
    st.stop()
st.caption(
    "Two runs of one benchmark, case by case (PMB) or question by question (QA): who is better, by how much, and "
    "whether the difference is real. Every choice is in the link."
)
choice = suite_choice(loaded, qa.runs)
if choice not in BENCHMARKS:
    compare_qa(qa, choice)
    st.stop()
benchmark = next(b for b in BENCHMARKS if b == choice)
suite = ui.suite_identities(loaded, benchmark)
if len(suite) < 2:
    st.info(f"Only {len(suite)} {ui.BENCHMARK_TITLES[benchmark]} run: nothing to compare.")
    st.stop()
compare_pmb(loaded, benchmark, suite)
