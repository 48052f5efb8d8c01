"""PMB details: every number of every PrecisionMemBench run, re-derived from the reports' per-case ids.

URL state: ``?benchmark=pmb-session`` selects the suite, ``?sort=<column>&order=ascending`` sorts the table
and its downloads (``rank`` is memeval's ranking), ``?mismatches-<benchmark>=true`` opens the mismatch list.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st

from memeval_core import labels, leaderboard
from memeval_core.explore.home import made_by, verification_badge
from memeval_core.pmb.run import BENCHMARKS, Benchmark
from pages import ui

RANK = "rank"
SORTABLE = (
    *("rank", "passed", "active_retrieval", "structural", "trivially_empty", "mean_precision", "mean_recall"),
    *("mean_drift", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "ingestion_total_ms", "display_name"),
)
ORDERS = ("descending", "ascending")
MISMATCH_BLOCKS_LIMIT = 30  # up to this many runs with mismatches get a text block each; more go in one table


def table(runs: pa.Table, benchmark: Benchmark) -> pd.DataFrame:
    """The table of one suite (``runs``: its rows of the runs table), as shown and downloaded (machine keys):
    rank first, pass types split in three, a ``status`` badge after the name; ``mean_drift`` only for session
    runs. Rank order."""
    rows = leaderboard.table_rows(runs, benchmark)
    df = pd.DataFrame([leaderboard.flat(r) for r in rows])
    df.insert(0, RANK, range(1, len(df) + 1))
    badges = [verification_badge(len(r["mismatches"])) for r in rows]
    df.insert(list(df.columns).index("display_name") + 1, "status", badges)
    if benchmark != "pmb-session":
        df = df.drop(columns="mean_drift")
    # What each report says about how it was made (memeval's runner: package, version, day, wrapper URL).
    provenance = runs.select(["run_id", "provenance"]).to_pylist()
    stated = {r["run_id"]: made_by([(p["key"], p["value"]) for p in r["provenance"]]) for r in provenance}
    df["made_by"] = [stated[r["run_id"]] for r in rows]
    return df


# One table per load and suite, shared by every session (never changed in place): a sort or a click reuses it.
@st.cache_resource(max_entries=8, show_spinner=False)
def suite_frame(_loaded: ui.Loaded, results_dir: str, key: str, benchmark: Benchmark) -> pd.DataFrame:
    """:func:`table` of one suite, in rank order, once per load."""
    del results_dir, key  # only part of the cache key
    return table(ui.suite_table(_loaded, benchmark), benchmark)


def mismatch_list(runs: pa.Table, benchmark: Benchmark) -> None:
    """An expander listing every mismatch of every run of ``benchmark`` (``runs``: its rows of the runs table)."""
    counts = pc.list_value_length(runs["mismatches"])
    n_bad = int(pc.sum(pc.greater(counts, 0)).as_py() or 0)
    label = f"Verification details: {n_bad} of {runs.num_rows} runs with mismatches"
    key = f"mismatches-{benchmark}"
    # Opening the expander reruns the page, so a long list (one table of every mismatch of thousands of runs) is
    # built only while it is open.
    with st.expander(label, on_change="rerun", **ui.url_bound(key)):
        if n_bad > MISMATCH_BLOCKS_LIMIT and not st.session_state.get(key):
            return
        listed = runs.filter(pc.greater(counts, 0)).select(["display_name", "run_id", "source", "mismatches"])
        bad = listed.to_pylist()
        if not bad:
            st.text("Every stated value of every run matches its re-derived value.")
        elif len(bad) > MISMATCH_BLOCKS_LIMIT:
            # Two elements per run cost a second at a thousand runs; one table scrolls and downloads.
            rows = [(r["display_name"], r["run_id"], r["source"], m) for r in bad for m in r["mismatches"]]
            df = pd.DataFrame(rows, columns=["display_name", "run_id", "source", "mismatch"])
            ui.table(df, key=f"mismatches-table-{benchmark}", height=360)
            ui.download_buttons(df, f"memeval-mismatches-{benchmark}", key=f"mismatches-download-{benchmark}")
        else:
            for r in bad:
                n = len(r["mismatches"])
                ui.plain(f"{r['display_name']} ({r['source']}): {n} mismatch{'es' if n != 1 else ''}")
                st.code("\n".join(r["mismatches"]), language=None, wrap_lines=True)


def explanation() -> None:
    """What the numbers mean, folded away below the table."""
    with st.expander("How these numbers are made"):
        st.markdown(
            """
Every number is re-derived from the raw per-case ids each report records, scored against the
PrecisionMemBench fixture; nothing is copied from a report's summary. A run is **verified** when everything
its report states matches the re-derived value; otherwise the mismatches are listed below the table.

A pass is only as good as its type:
- **Active passes**: the system returned the gold beliefs and nothing else (positive precision). The only
  pass a system cannot get by returning everything or nothing.
- **Structural passes**: a pass in a structural category (scope, supersession, routing, budget, ranking,
  isolation) without precision.
- **Empty passes**: a pass that a system returning nothing also gets.

Recall alone misleads: a system that returns the whole corpus has 100% recall and a precision near 0.
**Rank** orders by active passes, then passes, then drift, then precision. Hover a column header for its
definition; click it to sort the view (the *Sort by* control also sorts the downloads).
"""
        )


ui.flash_sync_result()
loaded = ui.load_current()
st.title("PrecisionMemBench details")
if not loaded.identities:
    ui.empty_state(loaded)
    st.stop()

present = ui.present_benchmarks(loaded)
controls = st.container(horizontal=True, vertical_alignment="bottom")
with controls:
    names = {b: labels.benchmark_name(b) for b in present}
    benchmark = ui.choice("Suite", "benchmark", present, present[0], names, radio=True)
    sort = ui.choice("Sort by", "sort", SORTABLE, RANK, {c: labels.label(c) for c in SORTABLE}, width=220)
    order = ui.choice("Order", "order", ORDERS, "descending", radio=True)
suite = next(b for b in BENCHMARKS if b == benchmark)
runs = ui.suite_table(loaded, suite)
df = ui.sort_frame(suite_frame(loaded, loaded.results_dir, loaded.key, suite), None if sort == RANK else sort,
                  order == "descending")  # fmt: skip
n_verified = int(pc.sum(pc.equal(pc.list_value_length(runs["mismatches"]), 0)).as_py() or 0)
note = f"{runs.num_rows:,} runs, {n_verified:,} verified."
if sort not in df.columns:
    note += f" {labels.label(sort)} does not apply to this suite; shown in rank order."
st.caption(note)
ui.table(df, key=f"table-{benchmark}", height="content", hide=("run_id", "benchmark", "mismatches", "verified"))
ui.download_buttons(df, f"memeval-leaderboard-{benchmark}", key=f"download-{benchmark}")
mismatch_list(runs, suite)
explanation()
