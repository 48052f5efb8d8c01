"""QA details: LoCoMo, LongMemEval and other QA benchmark runs, every number re-derived from per-question verdicts.

One benchmark at a time (URL ``?benchmark=locomo``). Within a benchmark, runs that differ in whether LoCoMo
category 5 (adversarial) is scored are ranked in separate tables. Each table ranks every run by accuracy and
badges it publishable (the benchmark's declared protocol holds) or diagnostic (with the conditions it fails);
``?publishable-only=true`` keeps the publishable ones. Category accuracies and each judge's accuracy are columns
of their own. Each table has CSV and JSON downloads of exactly what it shows.

Runs re-judged with ``python -m memeval_core judge`` carry the new judges' verdicts (folded into the run they
re-judge, see :mod:`memeval_core.judge.lineup`); ``?judge=`` ranks by one judge alone or by the majority.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from memeval_core import labels
from memeval_core.qa import leaderboard, locomo
from memeval_core.qa.ingest import QaRunHeader
from memeval_core.qa.retrieval_metrics import DEFAULT_K, RetrievalSummary
from pages import ui

# Tabs in this order; other benchmarks follow alphabetically. (Comments, not docstrings: Streamlit magic
# would render a bare string in a page script.)
BENCHMARK_ORDER = ("locomo", "longmemeval-s", "longmemeval-m", "longmemeval-oracle", "evolving-events")

BADGE = "badge"
FAILURE_REASONS = "failure_reasons"
RETRIEVAL_COLUMNS = (f"ndcg@{DEFAULT_K}", f"p@{DEFAULT_K}", f"r@{DEFAULT_K}", f"mrr@{DEFAULT_K}", f"f1@{DEFAULT_K}")
RETRIEVAL_QUERIES = "retrieval_queries"
MS_COLUMNS = ("latency_p50_ms", "latency_p95_ms")
LOCOMO_ONLY = ("includes_adversarial", "accuracy_without_disputed", "n_disputed")
MEAN = "mean"
MAJORITY = "majority"


def ranked_value(row: dict[str, Any], by: str) -> float | None:
    """What a row is ranked by: accuracy (mean over judges), majority accuracy, or one judge's accuracy."""
    if by == MEAN:
        value: float | None = row["accuracy"]
    elif by == MAJORITY:
        value = row["majority_accuracy"]
    else:
        value = row["judges"].get(by)
    return value


def rank_options(runs: Sequence[QaRunHeader]) -> tuple[list[str], dict[str, str]]:
    """``?judge=`` values (mean, majority, every judge of the runs) and how each is shown."""
    judge_names = sorted({j for r in runs for j in r.score.judges})
    names = {MEAN: "Accuracy (all judges)", MAJORITY: "Majority of judges", **{j: f"Judge: {j}" for j in judge_names}}
    return [MEAN, MAJORITY, *judge_names], names


def benchmarks(runs: Sequence[QaRunHeader]) -> list[str]:
    """Benchmarks present, in :data:`BENCHMARK_ORDER` first, the others alphabetically."""
    present = {r.meta.benchmark for r in runs}
    known = [b for b in BENCHMARK_ORDER if b in present]
    return known + sorted(present - set(known))


def _categories(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[str, str | None, list[int]]]:
    out: dict[str, tuple[str, str | None, list[int]]] = {}
    for r in rows:
        for code, c in r["categories"].items():
            col = labels.category_header(code, c["name"])
            out.setdefault(col, (code, c["name"], []))[2].append(c["n"])
    return out


def table(
    rows: Sequence[dict[str, Any]], retrieval: dict[str, RetrievalSummary], benchmark: str, by: str = MEAN
) -> pd.DataFrame:
    """The table of one rank group, as shown and downloaded (machine keys, plus category and judge columns).

    Columns: rank, name, badge, questions, accuracy, one accuracy column per category, majority accuracy, one
    accuracy column per judge, failures (with reasons), LoCoMo-only columns, repeat spread, latency, top-k and
    models, retrieval metrics (only when a run of the table records retrieved ids), why diagnostic, provenance.
    Rows best first by ``by`` (see :func:`ranked_value`; other than the mean it is shown as ``ranked_accuracy``);
    ties share a rank.
    """
    cats = _categories(rows)
    judges = sorted({j for r in rows for j in r["judges"]})
    has_retrieval = any(r["run_id"] in retrieval for r in rows)
    out = []
    ranked = {r["run_id"]: ranked_value(r, by) for r in rows}
    for r in sorted(
        rows, key=lambda r: (ranked[r["run_id"]] is None, -(ranked[r["run_id"]] or 0.0), r["display_name"])
    ):
        v = ranked[r["run_id"]]
        rec: dict[str, Any] = {
            "rank": 1 + sum(o is not None and o > v for o in ranked.values()) if v is not None else None,
            "display_name": r["display_name"],
            BADGE: "✓ publishable" if r["publishable"] else "diagnostic",
            "n_questions": r["n_questions"],
            **({} if by == MEAN else {"ranked_accuracy": v}),
            "accuracy": r["accuracy"],
        }
        for col, (code, _, _) in cats.items():
            c = r["categories"].get(code)
            rec[col] = c["accuracy"] if c is not None else None
        rec["majority_accuracy"] = r["majority_accuracy"]
        for j in judges:
            rec[labels.judge_header(j)] = r["judges"].get(j)
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


def data_columns(df: pd.DataFrame, rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The table's columns named by the data (categories, judges), each formatted like an accuracy."""
    judges = {labels.judge_header(j) for r in rows for j in r["judges"]}
    return {c: "accuracy" for c in df.columns if c in _categories(rows) or c in judges}


def slug(text: str) -> str:
    """A file-name-safe form of a group label."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def show_table(
    rows: Sequence[dict[str, Any]], retrieval: dict[str, RetrievalSummary], benchmark: str, key: str, by: str = MEAN
) -> None:
    """One ranked table with its downloads."""
    df = table(rows, retrieval, benchmark, by)
    hide = ("run_id", "format", "source", "joined") + (
        () if any(not r["publishable"] for r in rows) else ("not_publishable_because",)
    )
    ui.table(df, key=f"table-{key}", data_columns=data_columns(df, rows), hide=hide, height="content",
             widths={"rank": 48, "display_name": 200, BADGE: 110})  # fmt: skip
    ui.download_buttons(df, f"memeval-qa-{key}", key=f"download-{key}")


def with_failure_reasons(rows: list[dict[str, Any]], runs: Sequence[QaRunHeader]) -> list[dict[str, Any]]:
    """Rows with a ``failure_reasons`` text (``3 no answer, 1 error``; empty when none)."""
    by_id = {r.run_id: r for r in runs}
    out = []
    for row in rows:
        reasons = by_id[row["run_id"]].score.failure_reasons
        out.append({**row, FAILURE_REASONS: ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))})
    return out


def explanation(loaded: ui.QaLoaded) -> None:
    """What the numbers mean, folded away below the tables."""
    with st.expander("How these numbers are made"):
        st.markdown(
            """
Every number is re-derived from the runs' per-question verdicts. A question's score is the mean of its
judges' verdicts (0–5 rubrics rescaled to 0–100%); **accuracy** is the mean over the questions in the
denominator. A question without an answer or with an error scores 0 and is **never dropped**: the
*failures* column counts them. Runs that differ in whether LoCoMo category 5 (adversarial) is scored are
in separate tables and never ranked together. **Publishable** is computed from the run against the
benchmark's declared protocol (complete corpus, no sampling, reference judge, zero failures, stated
models and k); **diagnostic** runs list every condition they fail. Hover a column header for its definition.
"""
        )
        if loaded.n_disputed:
            st.caption(
                f"Accuracy, undisputed leaves out the {loaded.n_disputed} LoCoMo questions whose gold answer "
                "locomo-audit disputes (errors.json)."
            )


def mapping_table() -> None:
    """LoCoMo's category codes under memeval's naming and under each source's naming, with downloads."""
    with st.expander("LoCoMo category codes"):
        st.caption(
            "Sources name LoCoMo's numeric categories differently. memeval stores each run's raw code and names "
            "categories by one declared convention (the memeval column); the others show each source's label."
        )
        df = pd.DataFrame(locomo.category_mapping_table())
        sources = [c for c in df.columns if c not in ("code", "memeval", "count")]
        ui.table(df, key="table-locomo-categories", data_columns=sources, link_runs=False)
        ui.download_buttons(df, "memeval-qa-locomo-category-codes", key="download-locomo-categories")


def benchmark_section(
    loaded: ui.QaLoaded, benchmark: str, runs: Sequence[QaRunHeader], publishable_only: bool, by: str = MEAN
) -> None:
    """Every rank group of one benchmark: one ranked table each."""
    rows = with_failure_reasons(leaderboard.rows(list(runs), benchmark), runs)
    if publishable_only:
        rows = [r for r in rows if r["publishable"]]
    # Folding adds verdicts, never retrieved ids: each run's retrieval is scored from its own questions.
    retrieval = ui.retrieval_summaries(loaded, [r.run_id for r in runs])
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["rank_group"], []).append(r)
    if not groups:
        st.info("No run of this benchmark meets its protocol; switch off *Publishable only* to see the others.")
    for gi, (group, members) in enumerate(groups.items()):
        if len(groups) > 1:
            st.subheader(ui.md_escape(labels.benchmark_name(benchmark) + group.removeprefix(benchmark)), anchor=False)
        n_pub = sum(r["publishable"] for r in members)
        st.caption(
            f"{len(members):,} run{'s' if len(members) != 1 else ''}: {n_pub:,} publishable, {len(members) - n_pub:,} "
            "diagnostic." + ("" if retrieval else " No run records retrieved ids: no retrieval metrics.")
        )
        show_table(members, retrieval, benchmark, f"{slug(benchmark)}-{gi}", by)
    if benchmark == locomo.BENCHMARK:
        mapping_table()


loaded = ui.load_qa_current()
st.title("QA details")
if not loaded.runs:
    ui.qa_empty_state(loaded)
    st.stop()

runs = ui.folded_qa_runs(loaded).runs  # re-judged runs carry every judge's verdicts; the others are headers
names = benchmarks(runs)
controls = st.container(horizontal=True, vertical_alignment="bottom")
with controls:
    chosen = ui.choice(
        "Benchmark", "benchmark", names, names[0], {b: labels.benchmark_name(b) for b in names}, radio=True
    )
    only = st.toggle("Publishable only", help="Keep only runs that meet their benchmark's protocol.",
                     **ui.url_bound("publishable-only"))  # fmt: skip
shown_runs = [r for r in runs if r.meta.benchmark == chosen]
with controls:
    rank_by, rank_names = rank_options(shown_runs)
    by = ui.choice("Rank by", "judge", rank_by, MEAN, rank_names, width=300,
                   help="The mean over every judge (accuracy), the majority of judges, or one judge.")  # fmt: skip
benchmark_section(loaded, chosen, shown_runs, only, by)
explanation(loaded)
