"""QA leaderboard: LoCoMo, LongMemEval and other QA benchmark runs, every number re-derived from per-question verdicts.

One tab per benchmark (URL ``?benchmark=locomo``). Within a benchmark, runs that differ in whether
LoCoMo category 5 (adversarial) is scored are shown in separate tables and never ranked together;
publishable runs (the benchmark's declared protocol holds) are shown apart from diagnostic ones,
whose failed conditions are listed. Each table has CSV and JSON downloads of exactly what it shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from memeval_core.qa import leaderboard, locomo
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.retrieval_metrics import DEFAULT_K, RetrievalSummary, qa_summaries
from pages import ui

# Tabs in this order; other benchmarks follow alphabetically. (Comments, not docstrings: Streamlit magic
# would render a bare string in a page script.)
BENCHMARK_ORDER = ("locomo", "longmemeval-s", "longmemeval-m", "longmemeval-oracle", "evolving-events")

BADGE = "badge"
FAILURE_REASONS = "failure_reasons"
JUDGE_ACCURACY = "judge_accuracy"
RETRIEVAL_COLUMNS = (f"ndcg@{DEFAULT_K}", f"p@{DEFAULT_K}", f"r@{DEFAULT_K}", f"mrr@{DEFAULT_K}", f"f1@{DEFAULT_K}")
RETRIEVAL_QUERIES = "retrieval_queries"
RATIO_COLUMNS = (
    "accuracy",
    "majority_accuracy",
    "accuracy_without_disputed",
    "accuracy_std",
    "accuracy_min",
    "accuracy_max",
    *RETRIEVAL_COLUMNS,
)
MS_COLUMNS = ("latency_p50_ms", "latency_p95_ms")
COUNT_COLUMNS = (
    "rank",
    "group_rank",
    "n_questions",
    "n_judges",
    "failures",
    "n_disputed",
    "n_repeats",
    "top_k",
    RETRIEVAL_QUERIES,
)
LOCOMO_ONLY = ("includes_adversarial", "accuracy_without_disputed", "n_disputed")

# Help for the columns this page adds to memeval_core.qa.leaderboard.COLUMN_HELP.
EXTRA_HELP: dict[str, str] = {
    "rank": "Rank by accuracy among the runs of this table (publishable or diagnostic); ties share a rank.",
    "group_rank": "Rank by accuracy among all runs of the rank group, publishable and diagnostic together.",
    BADGE: "✓ publishable: the run meets its benchmark's declared protocol (computed from the run, never set "
    "by hand). ✗ diagnostic: at least one condition fails; see not_publishable_because.",
    FAILURE_REASONS: "Failed questions by reason (no answer, error, not judged). Each scores 0 and stays in "
    "the denominator.",
    JUDGE_ACCURACY: "Accuracy each judge (verdict source) assigns on its own; the Judges page compares them.",
    f"ndcg@{DEFAULT_K}": f"Mean NDCG@{DEFAULT_K} of the retrieved ids against the gold evidence ids, over questions "
    "with gold evidence; only runs that record retrieved ids.",
    f"p@{DEFAULT_K}": f"Mean precision@{DEFAULT_K}: gold ids among the first {DEFAULT_K} retrieved, divided by "
    f"{DEFAULT_K}.",
    f"r@{DEFAULT_K}": f"Mean recall@{DEFAULT_K}: share of the gold evidence ids among the first {DEFAULT_K} retrieved.",
    f"mrr@{DEFAULT_K}": f"Mean reciprocal rank of the first gold id in the first {DEFAULT_K} retrieved (0 if none).",
    f"f1@{DEFAULT_K}": f"Mean per-question F1 of precision@{DEFAULT_K} and recall@{DEFAULT_K}.",
    RETRIEVAL_QUERIES: "Questions with gold evidence ids that the retrieval metrics average over.",
}


def benchmarks(runs: Sequence[LoadedRun]) -> list[str]:
    """Benchmarks present, in :data:`BENCHMARK_ORDER` first, the others alphabetically."""
    present = {r.run.run.benchmark for r in runs}
    known = [b for b in BENCHMARK_ORDER if b in present]
    return known + sorted(present - set(known))


def category_column(code: str, name: str | None) -> str:
    """Column of one category: ``cat <code> <name>`` (just the code where the name is the code)."""
    return f"cat {code}" if not name or name == code else f"cat {code} {name}"


def _categories(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[str, str | None, list[int]]]:
    out: dict[str, tuple[str, str | None, list[int]]] = {}
    for r in rows:
        for code, c in r["categories"].items():
            col = category_column(code, c["name"])
            out.setdefault(col, (code, c["name"], []))[2].append(c["n"])
    return out


def table(
    rows: Sequence[dict[str, Any]], retrieval: dict[str, RetrievalSummary], benchmark: str, diagnostic: bool
) -> pd.DataFrame:
    """The table of one group of leaderboard rows, as shown and downloaded.

    Columns: name, badge, rank, questions, accuracy, one accuracy column per category, majority accuracy,
    judges, failures (with reasons), LoCoMo-only columns (category 5 scored, accuracy without disputed
    questions), repeat spread, latency, top-k and models, retrieval metrics (only when a run of the table
    records retrieved ids), the failed protocol conditions (diagnostic tables only), provenance.
    """
    cats = _categories(rows)
    has_retrieval = any(r["run_id"] in retrieval for r in rows)
    out = []
    for r in rows:
        rec: dict[str, Any] = {
            "display_name": r["display_name"],
            BADGE: "✓ publishable" if r["publishable"] else "✗ diagnostic",
            "rank": 1 + sum(o["accuracy"] is not None and o["accuracy"] > (r["accuracy"] or 0.0) for o in rows)
            if r["accuracy"] is not None
            else None,
            "group_rank": r["rank"],
            "n_questions": r["n_questions"],
            "accuracy": r["accuracy"],
        }
        for col, (code, _, _) in cats.items():
            c = r["categories"].get(code)
            rec[col] = c["accuracy"] if c is not None else None
        rec["majority_accuracy"] = r["majority_accuracy"]
        rec["n_judges"] = r["n_judges"]
        rec[JUDGE_ACCURACY] = "; ".join(f"{j}: {a}" for j, a in r["judges"].items())
        rec["failures"] = r["failures"]
        rec[FAILURE_REASONS] = r[FAILURE_REASONS]
        for col in LOCOMO_ONLY:
            rec[col] = r[col]
        for col in ("n_repeats", "accuracy_std", "accuracy_min", "accuracy_max", *MS_COLUMNS, "top_k"):
            rec[col] = r[col]
        rec["answer_model"] = r["answer_model"]
        rec["judge_models"] = "; ".join(r["judge_models"])
        if has_retrieval:
            s = retrieval.get(r["run_id"])
            means = s.means if s is not None else None
            values = (means.ndcg, means.precision, means.recall, means.mrr, means.f1) if means else (None,) * 5
            for col, v in zip(RETRIEVAL_COLUMNS, values, strict=True):
                rec[col] = None if v is None else round(v, 4)
            rec[RETRIEVAL_QUERIES] = means.n_scored if means else None
        if diagnostic:
            rec["not_publishable_because"] = "; ".join(r["not_publishable_because"])
        rec["format"] = r["format"]
        rec["source"] = r["source"]
        rec["joined"] = r["joined"]
        rec["run_id"] = r["run_id"]
        out.append(rec)
    df = pd.DataFrame(out)
    if benchmark != locomo.BENCHMARK:
        df = df.drop(columns=[c for c in LOCOMO_ONLY if c in df.columns])
    return df


def column_config(df: pd.DataFrame, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Help text on every column and number formats."""
    cats = _categories(rows)
    cfg: dict[str, Any] = {}
    for col in df.columns:
        if col in cats:
            code, name, ns = cats[col]
            counts = f"{ns[0]} questions" if len(set(ns)) == 1 else f"{min(ns)}-{max(ns)} questions, by run"
            help_text = f"Accuracy on category {code} ({name or code} under memeval's naming): {counts}."
        else:
            help_text = EXTRA_HELP.get(col) or leaderboard.COLUMN_HELP[col]
        if col in RATIO_COLUMNS or col in cats:
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%.4f")
        elif col in MS_COLUMNS:
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%.2f")
        elif col in COUNT_COLUMNS:
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%d")
        elif col == "includes_adversarial":
            cfg[col] = st.column_config.CheckboxColumn(col, help=help_text)
        else:
            cfg[col] = st.column_config.TextColumn(col, help=help_text, width="small" if col == "run_id" else None)
    return cfg


def slug(text: str) -> str:
    """A file-name-safe form of a group label."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def show_table(
    rows: Sequence[dict[str, Any]], retrieval: dict[str, RetrievalSummary], benchmark: str, diagnostic: bool, key: str
) -> None:
    """One table with its downloads."""
    df = table(rows, retrieval, benchmark, diagnostic)
    st.dataframe(df, height="content", hide_index=True, column_config=column_config(df, rows), key=f"table-{key}")
    ui.download_buttons(df, f"memeval-qa-{key}", key=f"download-{key}")


def with_failure_reasons(rows: list[dict[str, Any]], runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    """Rows with a ``failure_reasons`` text (``3 no answer, 1 error``; empty when none)."""
    by_id = {r.run_id: r for r in runs}
    out = []
    for row in rows:
        reasons = by_id[row["run_id"]].score.failure_reasons
        out.append({**row, FAILURE_REASONS: ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))})
    return out


def explanation(loaded: ui.QaLoaded) -> None:
    """What the numbers mean."""
    st.markdown(
        """
Every number is re-derived from the runs' per-question verdicts. A question's score is the mean of its
judges' verdicts (0-5 rubrics rescaled to [0, 1]); **accuracy** is the mean over the questions in the
denominator. A question without an answer or with an error scores 0 and is **never dropped**: the
*failures* column counts them. Runs that differ in whether LoCoMo category 5 (adversarial) is scored are
in separate tables and never ranked together. **Publishable** is computed from the run against the
benchmark's declared protocol (complete corpus, no sampling, reference judge, zero failures, stated
models and k); diagnostic runs list every condition they fail. Hover a column header for its definition.
"""
    )
    if loaded.n_disputed:
        st.caption(
            f"accuracy_without_disputed leaves out the {loaded.n_disputed} LoCoMo questions whose gold answer "
            "locomo-audit disputes (errors.json)."
        )


def mapping_table() -> None:
    """LoCoMo's category codes under memeval's naming and under each source's naming, with downloads."""
    st.markdown("##### LoCoMo category codes")
    st.caption(
        "Sources name LoCoMo's numeric categories differently. memeval stores each run's raw code and names "
        "categories by one declared convention (the memeval column); the others show each source's label."
    )
    df = pd.DataFrame(locomo.category_mapping_table())
    fixed = {
        "code": "Raw category code as locomo10.json spells it; every run keeps it.",
        "memeval": "The name memeval shows for the code (its declared convention).",
        "count": "Questions with this code in locomo10.json.",
    }
    cfg = {
        col: st.column_config.TextColumn(col, help=fixed.get(col, f"The label {col} uses for this code."))
        for col in df.columns
    }
    st.dataframe(df, hide_index=True, column_config=cfg, key="table-locomo-categories")
    ui.download_buttons(df, "memeval-qa-locomo-category-codes", key="download-locomo-categories")


def benchmark_tab(benchmark: str, runs: Sequence[LoadedRun]) -> None:
    """Every rank group of one benchmark: publishable table, diagnostic table, failed conditions."""
    rows = with_failure_reasons(leaderboard.rows(list(runs), benchmark), runs)
    retrieval = qa_summaries(runs)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["rank_group"], []).append(r)
    if len(groups) > 1:
        st.caption(
            f"{len(groups)} separate rankings: runs that differ in whether category 5 is scored are not compared."
        )
    if not retrieval:
        st.caption("No run of this benchmark records retrieved ids, so there are no retrieval metrics to show.")
    for gi, (group, members) in enumerate(groups.items()):
        st.subheader(ui.md_escape(group), anchor=False)
        publishable = [r for r in members if r["publishable"]]
        diagnostic = [r for r in members if not r["publishable"]]
        st.caption(
            f"{len(members)} run{'s' if len(members) != 1 else ''}: {len(publishable)} publishable, "
            f"{len(diagnostic)} diagnostic."
        )
        key = f"{slug(benchmark)}-{gi}"
        if publishable:
            st.markdown("**Publishable**")
            show_table(publishable, retrieval, benchmark, False, f"{key}-publishable")
        if diagnostic:
            st.markdown("**Diagnostic** (not publishable)")
            show_table(diagnostic, retrieval, benchmark, True, f"{key}-diagnostic")
            with st.expander(f"Failed protocol conditions of {len(diagnostic)} diagnostic runs"):
                for r in diagnostic:
                    ui.plain(f"{r['display_name']}:\n  - " + "\n  - ".join(r["not_publishable_because"]))
    if benchmark == locomo.BENCHMARK:
        mapping_table()


loaded = ui.load_qa_current()
st.title("QA leaderboard")
if not loaded.runs:
    ui.qa_empty_state(loaded)
    st.stop()

explanation(loaded)
names = benchmarks(loaded.runs)
tabs = st.tabs(names, **ui.url_bound("benchmark"))
for name, tab in zip(names, tabs, strict=True):
    with tab:
        benchmark_tab(name, [r for r in loaded.runs if r.run.run.benchmark == name])
