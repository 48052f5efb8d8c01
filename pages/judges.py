"""Judges: would the QA leaderboard look different under another LLM judge, and how far do the judges agree?

For runs whose questions carry verdicts of two or more judges, per judge panel: the rank of every run under each
judge (Kendall's tau between the rankings, a warning where the leader changes), Cohen's kappa of every pair of
judges, the accuracy each judge assigns, every agreement statistic (raw agreement, unanimity, Cohen's and Fleiss'
kappa, Krippendorff's alpha) with bootstrap intervals, and the questions where the judges disagree.

URL state: ``?benchmark=``, ``?run=`` (repeatable; display name or run id; default every multi-judge
run of the benchmark), ``?seed=``, ``?resamples=``, ``?drun=`` (disagreements of one run), ``?q=``
(text filter), ``?page=``.

Runs re-judged with ``python -m memeval_core judge`` are folded into the runs they re-judge
(:mod:`memeval_core.judge.lineup`): the new judges join every statistic above, and a judge-sensitivity table
lists each run's accuracy as published and under each re-judge, with the spread, ranks and Kendall τ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from memeval_core import labels
from memeval_core.judge import lineup
from memeval_core.qa import judges
from memeval_core.qa.ingest import LoadedRun
from pages import ui

DEFAULT_SEED = 20260627
DEFAULT_RESAMPLES = 2_000
ALPHA = 0.05
PAGE_SIZE = 25
ALL_RUNS = "all selected runs"
ROW_PX = 30
LABEL_PX = 6.0  # width of one character of an end label (11 px font), for the rank chart's margins
TITLE = {"x": 0, "xanchor": "left", "font": {"size": 15}}
SETTINGS = ("run", "seed", "resamples")
PanelTables = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]

EXPLANATION = f"""
Each run here has questions graded by two or more judges (judge models, or repeated judgments of one model).
Runs are compared only within a **panel**: the same benchmark, the same judges and the same rule on LoCoMo's
category 5.

- **Rank** under a judge: 1 + the runs that judge gives a strictly higher accuracy (ties share a rank).
  **Kendall τ** compares two judges' rankings (1 = the same order); its interval resamples questions.
- **Accuracy** under a judge: {labels.help_text("judge_accuracy")}
- Verdicts are compared as **pass/fail** (rescaled score ≥ 0.6):
  - **{labels.label("raw_agreement")}**: {labels.help_text("raw_agreement")}
  - **{labels.label("unanimity")}**: {labels.help_text("unanimity")}
  - **{labels.label("cohen_kappa")}**: {labels.help_text("cohen_kappa")}
  - **{labels.label("fleiss_kappa")}**: {labels.help_text("fleiss_kappa")}
  - **{labels.label("krippendorff_alpha_nominal")}**: {labels.help_text("krippendorff_alpha_nominal")}
  - **{labels.label("krippendorff_alpha_interval")}**: {labels.help_text("krippendorff_alpha_interval")}
- Every interval is a percentile bootstrap over questions, with the seed and resamples set under
  *Runs and bootstrap settings*; resamples where a statistic is undefined are left out and counted.
"""


def accuracy_frame(runs: Sequence[LoadedRun]) -> pd.DataFrame:
    """One row per run and judge: questions, accuracy and pass rate under that judge alone."""
    rows = [
        {
            "display_name": a.display_name,
            "run_id": a.run_id,
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


def kappa_frame(report: judges.AgreementReport) -> pd.DataFrame:
    """Cohen's kappa of every judge pair of one report (the heatmap's cells)."""
    rows = [
        {"scope": report.name, "judge_a": p.judge_a, "judge_b": p.judge_b, "n_items": p.n_items,
         "estimate": _r(p.kappa.estimate), "ci_low": _r(p.kappa.low), "ci_high": _r(p.kappa.high)}
        for p in report.pairs
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["scope", "judge_a", "judge_b", "n_items", "estimate", "ci_low", "ci_high"])


def ranking_frames(rk: judges.JudgeRanking) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs ranked under each judge side by side, and Kendall's tau / leader change per judge pair."""
    side = []
    for rid in rk.run_ids:
        row: dict[str, Any] = {"display_name": rk.display_names[rid], "run_id": rid}
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
) -> PanelTables:
    """Accuracy, agreement, Cohen's kappa per pair (pooled over the panel's runs), side-by-side ranking and tau
    tables of one panel (cached per run ids and settings).

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
    return accuracy_frame(_runs), agreement_frame(reports), kappa_frame(reports[-1]), side, taus


# --- Charts ---------------------------------------------------------------------------------------


def panel_judges(key: tuple[str, bool | None, tuple[str, ...]]) -> list[str]:
    """The judges of a panel, in the panel's (sorted) order."""
    return list(key[2])


def rank_labels(side: pd.DataFrame, judge: str) -> dict[int, str]:
    """The runs at each rank under ``judge`` as one end label per rank (ties share it): ``2. a, b``."""
    return {
        int(str(rank)): f"{rank}. " + ", ".join(ui.chart_text(str(n)) for n in group["display_name"])
        for rank, group in side.groupby(f"rank ({judge})", sort=True)
    }


def rank_figure(side: pd.DataFrame, judge_names: Sequence[str]) -> go.Figure:
    """One line per run across the judges, y = its rank under each (1 on top); runs named, with rank, at both ends."""
    x = [ui.chart_text(j) for j in judge_names]
    palette = ui.colours(list(side["display_name"]))
    fig = go.Figure()
    for _, row in side.iterrows():
        name = str(row["display_name"])
        accuracy = [labels.rate(float(row[f"accuracy ({j})"])) for j in judge_names]
        fig.add_trace(
            go.Scatter(
                name=ui.chart_text(name), x=x, y=[int(row[f"rank ({j})"]) for j in judge_names],
                mode="lines+markers", line={"color": palette[name], "width": 2}, marker={"size": 9},
                customdata=accuracy, showlegend=False,
                hovertemplate="%{fullData.name}<br>rank %{y} under %{x} (accuracy %{customdata})<extra></extra>",
            )
        )  # fmt: skip
    widths = []
    for end, anchor in ((0, "right"), (len(judge_names) - 1, "left")):
        ends = rank_labels(side, judge_names[end])
        widths.append(LABEL_PX * max(len(t) for t in ends.values()))
        for rank, text in ends.items():
            fig.add_annotation(
                x=x[end], y=rank, text=text, showarrow=False, xanchor=anchor, xshift=-12 if anchor == "right" else 12,
                font={"size": 11},
            )  # fmt: skip
    n = len(side)
    fig.update_layout(
        title={"text": "Rank of each run under each judge", **TITLE},
        height=max(260, ROW_PX * n + 130),
        margin={"l": round(50 + widths[0]), "r": round(20 + widths[1]), "t": 50, "b": 50},
        xaxis={"title": {"text": "Judge"}, "range": [-0.04, len(judge_names) - 0.96]},
        yaxis={
            "title": {"text": "Rank (1 = best)", "standoff": round(14 + widths[0])}, "range": [n + 0.6, 0.4],
            "showticklabels": False, "zeroline": False, "dtick": 1,
        },
    )  # fmt: skip
    return fig


def kappa_figure(kappa: pd.DataFrame, judge_names: Sequence[str]) -> go.Figure:
    """Judges × judges, each cell Cohen's kappa of the pair on pass/fail, its value printed."""
    index = {j: i for i, j in enumerate(judge_names)}
    n = len(judge_names)
    z: list[list[float | None]] = [[None] * n for _ in range(n)]
    text = [["—" if a == b else "" for b in range(n)] for a in range(n)]
    for row in kappa.itertuples():
        a, b = index[str(row.judge_a)], index[str(row.judge_b)]
        value = None if pd.isna(row.estimate) else float(row.estimate)
        z[a][b] = z[b][a] = value
        text[a][b] = text[b][a] = labels.MISSING if value is None else f"{value:.2f}"
    names = [ui.chart_text(j) for j in judge_names]
    fig = go.Figure(
        go.Heatmap(
            z=z, x=names, y=names, text=text, texttemplate="%{text}", textfont={"size": 14}, colorscale="RdBu",
            zmin=-1, zmax=1, zmid=0, xgap=3, ygap=3, colorbar={"title": {"text": "κ"}, "thickness": 12},
            hovertemplate="%{y} and %{x}: Cohen's κ %{text}<extra></extra>",
        )
    )  # fmt: skip
    fig.update_layout(
        title={"text": "Cohen's κ between each pair of judges", **TITLE},
        height=max(300, 70 * n + 190),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": "Judge"}, "automargin": True},
        yaxis={"title": {"text": "Judge"}, "autorange": "reversed", "automargin": True},
    )
    return fig


# --- Tables as shown ------------------------------------------------------------------------------


def shown_agreement(agree: pd.DataFrame) -> pd.DataFrame:
    """The agreement table in human words: statistics by name, scope and judges under their own keys."""
    out = agree.rename(columns={"scope": "agreement_scope", "judges": "judges_compared"})
    out["statistic"] = [labels.label(s) for s in out["statistic"]]
    return out


def shown_accuracy(acc: pd.DataFrame) -> pd.DataFrame:
    """The accuracy-per-judge table under registry keys that say what its numbers are."""
    renamed = {"n": "n_questions", "accuracy": "judge_accuracy", "pass_rate": "judge_pass_rate"}
    return acc.rename(columns=renamed)


def shown_ranking(side: pd.DataFrame, judge_names: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """The side-by-side ranking: one column per judge (headed by the judge) holding the run's rank under it."""
    out = side[["display_name", "run_id", "rank_spread"]].copy()
    columns = [labels.judge_header(j) for j in judge_names]
    for j, column in zip(judge_names, columns, strict=True):
        out[column] = side[f"rank ({j})"]
    return out, columns


def tau_sentence(taus: pd.DataFrame) -> str:
    """Kendall's tau of every judge pair, for a caption (judge names escaped)."""
    parts = []
    for row in taus.itertuples():
        interval = ""
        if pd.notna(row.tau_ci_low) and pd.notna(row.tau_ci_high):
            interval = f" (95% interval {float(row.tau_ci_low):.2f} to {float(row.tau_ci_high):.2f})"
        tau = labels.MISSING if pd.isna(row.kendall_tau_b) else f"{float(row.kendall_tau_b):.2f}"
        parts.append(f"{ui.md_escape(str(row.judge_a))} and {ui.md_escape(str(row.judge_b))}: {tau}{interval}")
    return "Kendall τ between the judges' rankings (1 = same order): " + "; ".join(parts) + "."


# --- Sections -------------------------------------------------------------------------------------


def panel_title(key: tuple[str, bool | None, tuple[str, ...]]) -> str:
    """``Benchmark (with/without category 5): judge, judge`` in human words, Markdown-escaped."""
    benchmark, adversarial, panel = key
    adv = "" if adversarial is None else f" ({'with' if adversarial else 'without'} category 5)"
    return ui.md_escape(f"{labels.benchmark_name(benchmark)}{adv}: judged by {', '.join(panel)}")


def leader_warnings(taus: pd.DataFrame) -> None:
    """A warning for every judge pair whose leaders differ."""
    for row in taus.itertuples():
        if row.leader_changed:
            st.warning(
                f"The leader changes with the judge: {ui.md_escape(str(row.judge_a))} ranks "
                f"{ui.md_escape(str(row.leader_a))} first, {ui.md_escape(str(row.judge_b))} ranks "
                f"{ui.md_escape(str(row.leader_b))} first.",
                icon=":material/warning:",
            )


def glance_frame(agree: pd.DataFrame, scope: str) -> pd.DataFrame:
    """The statistics over all judges of one scope (no per-pair Cohen's kappa: the heatmap has those)."""
    rows = agree[(agree["scope"] == scope) & (agree["statistic"] != "cohen_kappa")]
    return shown_agreement(rows[["scope", "statistic", "estimate", "ci_low", "ci_high", "n_items"]]).drop(
        columns="agreement_scope"
    )


def charts(side: pd.DataFrame | None, taus: pd.DataFrame | None, kappa: pd.DataFrame, agree: pd.DataFrame,
           judge_names: list[str], i: int) -> None:  # fmt: skip
    """The rank chart with Kendall's tau, then the kappa heatmap beside the statistics over all judges."""
    if side is None or taus is None:
        st.caption("One run in this panel: select two or more runs to compare rankings.")
    else:
        ui.chart(rank_figure(side, judge_names), key=f"ranks-{i}")
        st.caption(tau_sentence(taus))
    left, right = st.columns([2, 3], gap="medium")
    scope = str(kappa["scope"].iloc[0]) if len(kappa) else ""
    with left:
        ui.chart(kappa_figure(kappa, judge_names), key=f"kappa-{i}")
    with right:
        st.markdown("**All judges together**")
        ui.table(glance_frame(agree, scope), key=f"table-glance-{i}", height="content")
        pooled = f"all {len(side)} runs of this panel pooled" if side is not None else "this panel's one run"
        st.caption(
            f"Over the questions of {pooled}, as is the heatmap. κ and α: 1 = the judges always agree, "
            "0 = no better than chance. Intervals: 95% bootstrap."
        )


def panel_section(key: tuple[str, bool | None, tuple[str, ...]], members: tuple[LoadedRun, ...], i: int) -> None:
    """One judge panel: the rank chart and the agreement heatmap, then its tables in tabs."""
    st.subheader(panel_title(key), anchor=False)
    # A re-judged run keeps its run id: the judged files folded into it are part of what is bootstrapped.
    content = tuple(f"{r.run_id}+{'+'.join(folded.folded_from.get(r.run_id, ()))}" for r in members)
    acc, agree, kappa, side, taus = panel_tables(content, members, seed, n_resamples, ALPHA)
    if taus is not None:
        leader_warnings(taus)
    charts(side, taus, kappa, agree, panel_judges(key), i)
    ranking_tab, agreement_tab, accuracy_tab = st.tabs(["Rankings", "Agreement", "Accuracy per judge"])
    with ranking_tab:
        if side is None or taus is None:
            st.caption("Rankings need two or more runs in the panel.")
        else:
            shown, judge_columns = shown_ranking(side, panel_judges(key))
            st.caption("Under each judge: the run's rank (1 = best). The accuracies are under *Accuracy per judge*.")
            ui.table(shown, key=f"table-ranking-{i}", data_columns=judge_columns, height="content")
            ui.download_buttons(side, f"memeval-judges-ranking-{i}", key=f"download-ranking-{i}")
            ui.table(taus, key=f"table-tau-{i}", height="content")
            ui.download_buttons(taus, f"memeval-judges-kendall-tau-{i}", key=f"download-tau-{i}")
    with agreement_tab:
        st.caption(
            f"Percentile bootstrap over items: seed {seed}, {n_resamples:,} resamples, {1 - ALPHA:.0%} intervals. "
            "Verdicts compared as pass/fail (rescaled score ≥ 0.6); graded judges also get Krippendorff's α on "
            "their scores."
        )
        ui.table(shown_agreement(agree), key=f"table-agreement-{i}")
        ui.download_buttons(agree, f"memeval-judges-agreement-{i}", key=f"download-agreement-{i}")
    with accuracy_tab:
        ui.table(shown_accuracy(acc), key=f"table-accuracy-{i}")
        ui.download_buttons(acc, f"memeval-judges-accuracy-{i}", key=f"download-accuracy-{i}")


def sensitivity_frame(table: lineup.Sensitivity) -> tuple[pd.DataFrame, list[str]]:
    """Each run's accuracy under each judge (one column per judge, headed by it) and the spread, as shown."""
    rows = pd.DataFrame(table.rows())
    columns = [labels.judge_header(j) for j in table.judges]
    shown = rows[["display_name", "run_id"]].copy()
    for j, column in zip(table.judges, columns, strict=True):
        shown[column] = rows[f"accuracy ({j})"]
    shown["spread"] = rows["spread"]
    return shown, columns


def sensitivity_tau(table: lineup.Sensitivity) -> str:
    """Kendall's tau between every two judges' rankings of the table's runs, for a caption."""
    parts = []
    for t in table.tau_rows():
        tau = labels.MISSING if t["kendall_tau_b"] is None else f"{t['kendall_tau_b']:.2f}"
        parts.append(f"{ui.md_escape(t['judge_a'])} and {ui.md_escape(t['judge_b'])}: {tau}")
    lead = f"Kendall τ between the rankings of these {len(table.run_ids)} runs (1 = same order): "
    return lead + "; ".join(parts) + "."


def sensitivity_section(tables: Sequence[lineup.Sensitivity]) -> None:
    """Re-judged runs: accuracy as published and under each re-judge, the spread, ranks per judge and Kendall τ."""
    if not tables:
        return
    st.subheader("Judge sensitivity", anchor=False)
    st.caption(
        "Each run's accuracy as published (its own judges) and under every judge it was re-judged with "
        "(`python -m memeval_core judge`), and the spread between the highest and the lowest."
    )
    for i, table in enumerate(tables):
        if len(tables) > 1:
            st.markdown(f"**{ui.md_escape(table.group)}**")
        complete = table.only(table.complete_runs())
        if len(complete.run_ids) >= 2:
            ui.chart(rank_figure(pd.DataFrame(complete.rows()), list(table.judges)), key=f"sensitivity-ranks-{i}")
            st.caption(sensitivity_tau(complete))
        shown, columns = sensitivity_frame(table)
        ui.table(shown, key=f"table-sensitivity-{i}", data_columns=dict.fromkeys(columns, "judge_accuracy"),
                 height="content")  # fmt: skip
        ui.download_buttons(
            pd.DataFrame(table.rows()), f"memeval-judges-sensitivity-{i}", key=f"download-sensitivity-{i}"
        )


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


def shown_disagreements(df: pd.DataFrame, judge_columns: Sequence[str]) -> pd.DataFrame:
    """The disagreement rows as shown: each judge's raw score as text under the judge's header."""
    out = df.rename(columns={"spread": "score_spread", **{j: labels.judge_header(j) for j in judge_columns}})
    for j in judge_columns:
        column = labels.judge_header(j)
        out[column] = [labels.number(None if pd.isna(v) else float(v)) for v in out[column]]
    return out


def disagreement_section(runs: Sequence[LoadedRun]) -> None:
    """The filterable, paged list of questions where judges disagree."""
    st.subheader("Questions where the judges disagree", anchor=False)
    df = disagreement_frame(runs)
    judge_columns = list(df.columns[6:-3])
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
        f"(page {page} of {pages}). Downloads hold every filtered question, all pages. "
        "Each judge's column holds its raw score, on its own scale."
    )
    shown_columns = [labels.judge_header(j) for j in judge_columns]
    ui.table(shown_disagreements(shown, judge_columns), key="table-disagreements", data_columns=shown_columns)
    ui.download_buttons(df, "memeval-judges-disagreements", key="download-disagreements")


st.title("Judges")
loaded = ui.load_qa_current()
if not loaded.runs:
    ui.qa_empty_state(loaded)
    st.stop()

# Judged files join the runs they re-judge; a run's header says whether a question has two or more verdicts
# (the majority exists only then), so only those runs are read whole.
folded = ui.folded_qa_runs(loaded, whole=lambda h: h.score.majority_accuracy is not None)
multi = [r for r in folded.runs if isinstance(r, LoadedRun) and judges.is_multi_judge(r)]
if not multi:
    st.info("No run in this results directory has questions graded by two or more judges.")
    st.stop()

present = list(dict.fromkeys(r.meta.benchmark for r in multi))
top = st.container(horizontal=True, vertical_alignment="bottom")
with top:
    st.caption(
        "Would the leaderboard look different under another judge? Each run here has questions graded by two or "
        "more judges; runs are compared only with runs graded by the same judges."
    )
    benchmark = ui.choice(
        "Benchmark", "benchmark", present, present[0], {b: labels.benchmark_name(b) for b in present}, width=260
    )
with st.expander("Runs and bootstrap settings", expanded=any(p in st.query_params for p in SETTINGS)):
    selected = pick_runs([r for r in multi if r.meta.benchmark == benchmark])
    row = st.container(horizontal=True)
    with row:
        seed = ui.number_param("Seed", "seed", DEFAULT_SEED, 0, ui.SEED_MAX, step=1, width=180)
        n_resamples = ui.number_param("Resamples", "resamples", DEFAULT_RESAMPLES, 100, 100_000, step=1000, width=180)
if not selected:
    st.info("Select at least one run.")
    st.stop()
for i, (key, members) in enumerate(judges.panels(selected).items()):
    panel_section(key, members, i)
sensitivity_section(lineup.sensitivity(folded, [r for r in folded.runs if r.meta.benchmark == benchmark]))
disagreement_section(selected)
with st.expander("How the rankings and agreement statistics are computed"):
    st.markdown(EXPLANATION)
