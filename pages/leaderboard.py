"""Leaderboard: one table per PMB benchmark, every number re-derived from the reports' per-case ids.

URL state: ``?benchmark=pmb-session`` selects the session table, ``?sort=<column>&order=ascending``
sorts both tables (``rank`` is memeval's ranking), ``?mismatches-<benchmark>=true`` opens a
mismatch list.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memeval_core import leaderboard
from memeval_core.pmb.run import BENCHMARKS, Benchmark, PmbRun
from pages import ui

RANK = "rank"
STATUS = "status"
RATIO_COLUMNS = ("mean_precision", "mean_recall", "mean_drift")
MS_COLUMNS = ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "ingestion_total_ms")
COUNT_COLUMNS = ("cases", "passed", "active_retrieval", "structural", "trivially_empty")
SORT_OPTIONS = (RANK, *COUNT_COLUMNS[1:], *RATIO_COLUMNS, *MS_COLUMNS, "display_name")
ORDERS = ("descending", "ascending")
MISMATCH_BLOCKS_LIMIT = 30
"""Up to this many runs with mismatches each get a text block; more are listed in one table."""
TITLES: dict[Benchmark, str] = {"pmb-single-turn": "single-turn", "pmb-session": "session"}


def table(runs: tuple[PmbRun, ...], benchmark: Benchmark, sort: str, descending: bool) -> pd.DataFrame:
    """The leaderboard table of one benchmark, as shown and downloaded.

    Columns follow :data:`memeval_core.leaderboard.COLUMNS` with pass types split in three and a
    ``status`` badge after the name; ``mean_drift`` only for session runs. Rows in memeval's rank
    order, or sorted by ``sort``.
    """
    rows = leaderboard.rows(runs, benchmark)
    df = pd.DataFrame([leaderboard.flat(r) for r in rows])
    df.insert(
        list(df.columns).index("display_name") + 1, STATUS, [ui.verification_badge(r["mismatches"]) for r in rows]
    )
    if benchmark != "pmb-session":
        df = df.drop(columns="mean_drift")
    return ui.sort_frame(df, None if sort == RANK else sort, descending)


def column_config(df: pd.DataFrame) -> dict[str, Any]:
    """Help text on every column (from :data:`memeval_core.leaderboard.COLUMN_HELP`) and number formats."""
    cfg: dict[str, Any] = {}
    for col in df.columns:
        help_text = ui.VERIFICATION_BADGE_HELP if col == STATUS else leaderboard.COLUMN_HELP[col]
        if col in RATIO_COLUMNS:
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%.4f")
        elif col in MS_COLUMNS:
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%.2f")
        elif col in COUNT_COLUMNS:
            cfg[col] = st.column_config.NumberColumn(col, help=help_text, format="%d")
        elif col == "verified":
            cfg[col] = st.column_config.CheckboxColumn(col, help=help_text)
        else:
            # Long ids and repeated values get narrow columns so the metrics fit on screen; hover shows all.
            narrow = col in ("run_id", "provider", "benchmark")
            cfg[col] = st.column_config.TextColumn(col, help=help_text, width="small" if narrow else None)
    return cfg


def mismatch_list(runs: tuple[PmbRun, ...], benchmark: Benchmark) -> None:
    """An expander listing every mismatch of every run of ``benchmark``, as plain text."""
    bad = [r for r in runs if r.identity.benchmark == benchmark and r.mismatches]
    total = sum(r.identity.benchmark == benchmark for r in runs)
    label = f"Verification details: {len(bad)} of {total} runs with mismatches"
    with st.expander(label, **ui.url_bound(f"mismatches-{benchmark}")):
        if not bad:
            st.text("Every stated value of every run matches its re-derived value.")
        elif len(bad) > MISMATCH_BLOCKS_LIMIT:
            # Two elements per run cost a second at a thousand runs; one table scrolls and downloads.
            rows = [(r.identity.display_name, r.identity.source, m) for r in bad for m in r.mismatches]
            df = pd.DataFrame(rows, columns=["display_name", "source", "mismatch"])
            st.dataframe(df, hide_index=True, height=360, key=f"mismatches-table-{benchmark}")
            ui.download_buttons(df, f"memeval-mismatches-{benchmark}", key=f"mismatches-download-{benchmark}")
        else:
            for r in bad:
                n = len(r.mismatches)
                ui.plain(f"{r.identity.display_name} ({r.identity.source}): {n} mismatch{'es' if n != 1 else ''}")
                st.code("\n".join(r.mismatches), language=None, wrap_lines=True)


def explanation(runs: tuple[PmbRun, ...]) -> None:
    """What the numbers mean: pass taxonomy, re-derivation, and the verification summary."""
    n_ok = sum(r.verified for r in runs)
    st.markdown(
        f"""
**{n_ok} of {len(runs)} runs verified.** Every number here is re-derived from the raw per-case ids each
report records, scored against the PrecisionMemBench fixture; nothing is copied from a report's summary.
A run is *verified* when everything its report states matches the re-derived value; otherwise the
mismatches are listed under its table.

A pass is only as good as its type:
- **active_retrieval**: the system returned the gold beliefs and nothing else (positive precision).
  The only pass a system cannot get by returning everything or nothing.
- **structural**: a pass in a structural category (scope, supersession, routing, budget, ranking,
  isolation) without precision.
- **trivially_empty**: a pass that a system returning nothing also gets.

Recall alone misleads: a system that returns the whole corpus has recall 1.0 and a precision near 0.
Hover a column header for its definition.
"""
    )


ui.flash_sync_result()
loaded = ui.load_current()
st.title("Leaderboard")
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()

explanation(loaded.runs)
controls = st.container(horizontal=True, vertical_alignment="bottom")
with controls:
    sort = st.selectbox(
        "Sort by",
        SORT_OPTIONS,
        help="rank: active passes, then passes, then drift, then precision. Clicking a column header "
        "also sorts, but only the view; downloads follow this control.",
        width=260,
        **ui.url_bound("sort"),
    )
    order = st.radio("Order", ORDERS, horizontal=True, disabled=sort == RANK, **ui.url_bound("order"))

tabs = st.tabs(list(BENCHMARKS), **ui.url_bound("benchmark"))
for benchmark, tab in zip(BENCHMARKS, tabs, strict=True):
    with tab:
        runs = tuple(r for r in loaded.runs if r.identity.benchmark == benchmark)
        if not runs:
            st.info(f"No {TITLES[benchmark]} runs in the results directory.")
            continue
        df = table(runs, benchmark, sort, order == "descending")
        if sort not in df.columns and sort != RANK:
            st.caption(f"{sort} does not apply to {TITLES[benchmark]} runs; shown in rank order.")
        st.caption(f"{len(runs)} {TITLES[benchmark]} runs, {sum(r.verified for r in runs)} verified.")
        st.dataframe(
            df,
            height="content",
            hide_index=True,
            column_config=column_config(df),
            key=f"table-{benchmark}",
        )
        ui.download_buttons(df, f"memeval-leaderboard-{benchmark}", key=f"download-{benchmark}")
        mismatch_list(loaded.runs, benchmark)
