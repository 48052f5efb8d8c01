"""Judges: how far the LLM judges of QA runs agree, and whether the ranking of runs depends on the judge.

For runs whose questions carry verdicts of two or more judges: the accuracy each judge assigns per run;
agreement (raw agreement, unanimity, Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha) with
bootstrap intervals; the ranking of the runs under each judge side by side with Kendall's tau and a
warning where the leader changes; the questions where the judges disagree.

URL state: ``?benchmark=``, ``?run=`` (repeatable; display name or run id; default every multi-judge
run of the benchmark), ``?seed=``, ``?resamples=``, ``?drun=`` (disagreements of one run), ``?q=``
(text filter), ``?page=``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from memeval_core.qa import judges
from memeval_core.qa.ingest import LoadedRun
from pages import ui

DEFAULT_SEED = 20260627
DEFAULT_RESAMPLES = 2_000
ALPHA = 0.05
PAGE_SIZE = 25
ALL_RUNS = "all selected runs"

# Help text of every column on this page (judge columns get theirs generated). A comment, not a docstring:
# Streamlit magic would render a bare string in a page script.
HELP: dict[str, str] = {
    "display_name": "Run (system, plus its variant where a system has several runs).",
    "judge": "Verdict source: a judge model, or one repeat of a judge.",
    "n": "Questions in this judge's denominator: those it graded plus every failed question (scored 0).",
    "n_graded": "Scored questions this judge gave a verdict on.",
    "accuracy": "Mean of this judge's rescaled scores (0-5 rubric / 5, binary and unit as is); failures count 0.",
    "pass_rate": "Share of questions this judge passes (rescaled score >= 0.6); failures fail.",
    "scope": "Which items: one run's questions, or the questions of all selected runs of the panel pooled.",
    "statistic": "raw_agreement: mean share of agreeing judge pairs per item; unanimity: share of items where all "
    "agree; cohen_kappa: per judge pair; fleiss_kappa: all judges, items with every verdict; "
    "krippendorff_alpha_nominal: pass/fail; krippendorff_alpha_interval: graded scores.",
    "judges": "The judges the statistic compares.",
    "n_items": "Items (questions) the statistic uses.",
    "estimate": "Value on all items.",
    "ci_low": "Lower bound of the percentile bootstrap interval over items (seed and resamples above the table).",
    "ci_high": "Upper bound of the percentile bootstrap interval over items.",
    "standard_error": "Standard deviation of the bootstrap values.",
    "n_undefined": "Resamples where the statistic was undefined (e.g. one category only), left out of the interval.",
    "detail": "Counts behind the statistic.",
    "judge_a": "First judge of the pair.",
    "judge_b": "Second judge of the pair.",
    "kendall_tau_b": "Kendall's tau-b between the two judges' accuracy rankings of the runs (1 = same order).",
    "tau_ci_low": "Lower bound of tau's bootstrap interval (questions resampled, runs re-ranked); 3+ runs only.",
    "tau_ci_high": "Upper bound of tau's bootstrap interval.",
    "leader_a": "Run(s) ranked first by judge_a.",
    "leader_b": "Run(s) ranked first by judge_b.",
    "leader_changed": "The judges put different runs first.",
    "swapped_pairs": "Pairs of runs the two judges order differently (first named ahead under judge_a).",
    "rank_spread": "Worst minus best rank of the run across judges (0 = same rank under every judge).",
    "question_id": "Question id.",
    "category": "Raw category code (memeval name in brackets).",
    "question": "The question.",
    "gold_answer": "The dataset's reference answer.",
    "answer": "The system's answer.",
    "passed_by": "Judges whose verdict passes (rescaled score >= 0.6).",
    "failed_by": "Judges whose verdict fails.",
    "spread": "Highest minus lowest rescaled score.",
}


def config(df: pd.DataFrame) -> dict[str, Any]:
    """Column help and number formats for a table of this page."""
    cfg: dict[str, Any] = {}
    for col in df.columns:
        help_text = HELP.get(col)
        if help_text is None:
            if col.startswith("rank ("):
                help_text = f"Rank of the run under judge {col[6:-1]} (1 = best; ties share a rank)."
            elif col.startswith("accuracy ("):
                help_text = f"Accuracy of the run under judge {col[10:-1]} alone."
            else:
                help_text = f"Raw score judge {col} gave (its own scale); empty where it gave none."
        if df[col].dtype.kind == "f":
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%.4f")
        elif df[col].dtype.kind in "iu":
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%d")
        elif df[col].dtype.kind == "b":
            cfg[col] = st.column_config.CheckboxColumn(col, help=help_text)
        else:
            cfg[col] = st.column_config.TextColumn(col, help=help_text)
    return cfg


def show(df: pd.DataFrame, key: str, stem: str) -> None:
    """A table with help on every column and its CSV/JSON downloads."""
    st.dataframe(df, hide_index=True, column_config=config(df), key=f"table-{key}")
    ui.download_buttons(df, stem, key=f"download-{key}")


def accuracy_frame(runs: Sequence[LoadedRun]) -> pd.DataFrame:
    """One row per run and judge: questions, accuracy and pass rate under that judge alone."""
    rows = [
        {
            "display_name": a.display_name,
            "judge": a.judge,
            "n": a.n,
            "n_graded": a.n_graded,
            "accuracy": None if a.accuracy is None else round(a.accuracy, 4),
            "pass_rate": None if a.pass_rate is None else round(a.pass_rate, 4),
        }
        for r in runs
        for a in judges.judge_accuracy(r)
    ]
    return pd.DataFrame(rows)


def _r(x: float) -> float | None:
    return None if x != x else round(x, 4)


def agreement_frame(reports: Sequence[judges.AgreementReport]) -> pd.DataFrame:
    """Every statistic of every scope, with its interval; counts in ``detail``."""
    rows = []
    for rep in reports:
        pairs = {f"{p.judge_a} vs {p.judge_b}": p for p in rep.pairs}
        for row in judges.agreement_rows(rep):
            detail = ""
            if row["statistic"] == "unanimity":
                detail = f"{rep.n_unanimous} of {rep.n_items} items unanimous"
            elif row["statistic"] == "cohen_kappa":
                p = pairs[row["judges"]]
                detail = f"equal pass/fail on {p.agreement:.4f} of {p.n_items} items"
            elif row["statistic"] == "fleiss_kappa":
                detail = f"{rep.n_complete} items with every judge's verdict"
            rows.append(
                {
                    **{k: row[k] for k in ("scope", "statistic", "judges", "n_items")},
                    **{k: _r(row[k]) for k in ("estimate", "ci_low", "ci_high", "standard_error")},
                    "n_undefined": row["n_undefined"],
                    "detail": detail,
                }
            )
    return pd.DataFrame(rows)


def ranking_frames(rk: judges.JudgeRanking) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs ranked under each judge side by side, and Kendall's tau / leader change per judge pair."""
    side = []
    for rid in rk.run_ids:
        row: dict[str, Any] = {"display_name": rk.display_names[rid]}
        for j in rk.judges:
            row[f"rank ({j})"] = rk.rank[j][rid]
            row[f"accuracy ({j})"] = round(rk.accuracy[j][rid], 4)
        ranks = [rk.rank[j][rid] for j in rk.judges]
        row["rank_spread"] = max(ranks) - min(ranks)
        side.append(row)
    names = rk.display_names
    taus = []
    for p in rk.pairs:
        ch = p.changes
        taus.append(
            {
                "judge_a": p.judge_a,
                "judge_b": p.judge_b,
                "kendall_tau_b": _r(ch.tau_b),
                "tau_ci_low": None if p.tau_interval is None else _r(p.tau_interval.low),
                "tau_ci_high": None if p.tau_interval is None else _r(p.tau_interval.high),
                "leader_a": ", ".join(names[r] for r in ch.leaders_a),
                "leader_b": ", ".join(names[r] for r in ch.leaders_b),
                "leader_changed": ch.leader_changed,
                "swapped_pairs": "; ".join(f"{names[x]} > {names[y]}" for x, y in ch.swapped_pairs),
            }
        )
    return pd.DataFrame(side), pd.DataFrame(taus)


def disagreement_frame(runs: Sequence[LoadedRun]) -> pd.DataFrame:
    """Every question where the judges of a run disagree on pass/fail, with each raw verdict as a column."""
    all_judges: list[str] = []
    for r in runs:
        all_judges.extend(j for j in r.score.judges if j not in all_judges)
    rows = []
    for r in runs:
        for d in judges.disagreements(r):
            cat = d.category or ""
            if d.category_name and d.category_name != d.category:
                cat = f"{cat} ({d.category_name})"
            row: dict[str, Any] = {
                "display_name": d.display_name,
                "question_id": d.question_id,
                "category": cat,
                "question": d.question,
                "gold_answer": d.gold_answer or "",
                "answer": d.answer or "",
            }
            for j in all_judges:
                row[j] = d.verdicts.get(j)
            row["passed_by"] = ", ".join(d.passed_by)
            row["failed_by"] = ", ".join(d.failed_by)
            row["spread"] = round(d.spread, 4)
            rows.append(row)
    columns = ["display_name", "question_id", "category", "question", "gold_answer", "answer", *all_judges]
    return pd.DataFrame(rows, columns=[*columns, "passed_by", "failed_by", "spread"])


@st.cache_data(show_spinner="Bootstrapping agreement and rankings…", max_entries=32)
def panel_tables(
    run_ids: tuple[str, ...], _runs: tuple[LoadedRun, ...], seed: int, n_resamples: int, alpha: float
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """Accuracy, agreement, side-by-side ranking and tau tables of one panel (cached per run ids and settings).

    Run ids contain the source's SHA-256 prefix, so they identify the content being bootstrapped.
    """
    del run_ids  # only part of the cache key
    reports = [
        judges.agreement(judges.verdict_matrix([r]), seed=seed, n_resamples=n_resamples, alpha=alpha) for r in _runs
    ]
    if len(_runs) > 1:
        pooled = judges.verdict_matrix(_runs, name=f"{len(_runs)} runs pooled")
        reports.append(judges.agreement(pooled, seed=seed, n_resamples=n_resamples, alpha=alpha))
    side = taus = None
    if len(_runs) > 1:
        rk = judges.ranking(_runs, seed=seed, n_resamples=n_resamples, alpha=alpha)
        side, taus = ranking_frames(rk)
    return accuracy_frame(_runs), agreement_frame(reports), side, taus


def pick_runs(candidates: Sequence[LoadedRun]) -> list[LoadedRun]:
    """Multiselect of runs (URL ``?run=``, repeatable, by display name or run id; default: all)."""
    names = [r.display_name for r in candidates]
    wanted = st.query_params.get_all("run")
    start = [r.display_name for r in candidates if r.display_name in wanted or r.run_id in wanted] or names

    def to_url() -> None:
        chosen = st.session_state["runs"]
        if not chosen or chosen == names:
            if "run" in st.query_params:
                del st.query_params["run"]
        else:
            st.query_params["run"] = list(chosen)

    if st.session_state.get("runs-benchmark") != tuple(names):
        # A new benchmark: start from the URL (or all), not from the previous benchmark's selection.
        st.session_state["runs"] = start
        st.session_state["runs-benchmark"] = tuple(names)
    chosen = st.multiselect(
        "Runs",
        names,
        key="runs",
        on_change=to_url,
        help="Runs with two or more judges per question. Rankings compare runs that share a judge panel.",
    )
    return [r for r in candidates if r.display_name in chosen]


def panel_section(key: tuple[str, bool | None, tuple[str, ...]], members: tuple[LoadedRun, ...], i: int) -> None:
    """Accuracy per judge, agreement, rankings of one judge panel."""
    st.subheader(ui.md_escape(judges.panel_label(key)), anchor=False)
    acc, agree, side, taus = panel_tables(tuple(r.run_id for r in members), members, seed, n_resamples, ALPHA)
    st.markdown("**Accuracy per judge**")
    show(acc, f"accuracy-{i}", f"memeval-judges-accuracy-{i}")
    st.markdown("**Agreement**")
    st.caption(
        f"Percentile bootstrap over items: seed {seed}, {n_resamples:,} resamples, {1 - ALPHA:.0%} intervals. "
        "Verdicts compared as pass/fail (rescaled score >= 0.6); graded judges also get Krippendorff's interval "
        "alpha on the scores."
    )
    show(agree, f"agreement-{i}", f"memeval-judges-agreement-{i}")
    st.markdown("**Rankings under each judge**")
    if side is None or taus is None:
        st.caption("One run in this panel: select two or more runs to compare rankings.")
        return
    for row in taus.itertuples():
        if row.leader_changed:
            st.warning(
                f"The leader changes with the judge: {ui.md_escape(str(row.judge_a))} ranks "
                f"{ui.md_escape(str(row.leader_a))} first, {ui.md_escape(str(row.judge_b))} ranks "
                f"{ui.md_escape(str(row.leader_b))} first.",
                icon=":material/warning:",
            )
    show(side, f"ranking-{i}", f"memeval-judges-ranking-{i}")
    show(taus, f"tau-{i}", f"memeval-judges-kendall-tau-{i}")


def disagreement_section(runs: Sequence[LoadedRun]) -> None:
    """The filterable, paged list of questions where judges disagree."""
    st.subheader("Questions where the judges disagree", anchor=False)
    df = disagreement_frame(runs)
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    options = [ALL_RUNS, *[r.display_name for r in runs]]
    with controls:
        which = st.selectbox("Run", options, width=320, **ui.url_bound("drun"))
        text = st.text_input(
            "Contains", width=320, help="Case-insensitive; question, gold or answer.", **ui.url_bound("q")
        )
    if which != ALL_RUNS:
        df = df[df["display_name"] == which]
    if text:
        needle = text.casefold()
        hay = df["question"] + "\n" + df["gold_answer"] + "\n" + df["answer"]
        df = df[hay.str.casefold().str.contains(needle, regex=False)]
    df = df.reset_index(drop=True)
    pages = max(1, -(-len(df) // PAGE_SIZE))
    page = int(ui.url_value("page", list(range(1, pages + 1)), 1))
    # Keyed by the filter: a new filter starts from the URL's page (clamped), never from a page it no longer has.
    page = int(
        st.number_input(
            f"Page (of {pages})",
            min_value=1,
            max_value=pages,
            value=page,
            step=1,
            width=180,
            key=f"page-{which}-{text}-{pages}",
        )
    )
    ui.set_url_value("page", page, 1)
    shown = df.iloc[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    st.caption(
        f"{len(df)} questions where the judges' pass/fail differs; showing {len(shown)} "
        f"(page {page} of {pages}). Downloads hold every filtered question, all pages."
    )
    st.dataframe(shown, hide_index=True, column_config=config(df), key="table-disagreements")
    ui.download_buttons(df, "memeval-judges-disagreements", key="download-disagreements")


loaded = ui.load_qa_current()
st.title("Judges")
if not loaded.runs:
    ui.qa_empty_state(loaded)
    st.stop()

multi = [r for r in loaded.runs if judges.is_multi_judge(r)]
if not multi:
    st.info("No run in this results directory has questions graded by two or more judges.")
    st.stop()

st.markdown(
    """
How far do the judges agree, and would the leaderboard look different under another judge? Each run here
has questions graded by two or more judges (judge models, or repeated judgments). Agreement is computed
over the questions several judges graded; rankings compare only runs that share a benchmark, a judge
panel and whether LoCoMo category 5 is scored.
"""
)
present = list(dict.fromkeys(r.run.run.benchmark for r in multi))
top = st.container(horizontal=True, vertical_alignment="bottom")
with top:
    benchmark = st.selectbox("Benchmark", present, width=260, **ui.url_bound("benchmark"))
    seed = ui.number_param("Seed", "seed", DEFAULT_SEED, 0, ui.SEED_MAX, step=1, width=180)
    n_resamples = ui.number_param("Resamples", "resamples", DEFAULT_RESAMPLES, 100, 100_000, step=1000, width=180)
selected = pick_runs([r for r in multi if r.run.run.benchmark == benchmark])
if not selected:
    st.info("Select at least one run.")
    st.stop()
for i, (key, members) in enumerate(judges.panels(selected).items()):
    panel_section(key, members, i)
disagreement_section(selected)
