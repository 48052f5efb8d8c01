"""Run: everything about one run (score with its interval, categories, latency, failures, verification, source).

A run whose file memeval's catalogue lists names its upstream repository, commit, file and licence, with links.

URL state: ``?run=<run id or system name>``; a system's name anywhere in the app links here.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memeval_core import labels
from memeval_core.explore.run_view import RunView, find, pmb_view, qa_view, ranked
from memeval_core.pmb.run import RunIdentity
from memeval_core.qa.ingest import QaRunHeader
from pages import ui


def pick(names: list[str], ids: list[str], default: str) -> str:
    """A selectbox of every run (by system and benchmark), mirrored in ``?run=``."""
    shown = dict(zip(ids, names, strict=True))
    return ui.choice("Run", "run", ids, default, shown, width=420)


def headline(view: RunView) -> None:
    """The score with its interval, the rank, the items and the status, as metrics."""
    cols = st.columns([1, 1, 0.7, 1.6])  # the status ("✗ 21 mismatches") needs the room the item count does not
    interval = view.interval
    cols[0].metric(
        view.score_name,
        labels.rate(view.score),
        help=f"95% interval {labels.rate(interval[0])} – {labels.rate(interval[1])}" if interval else None,
    )
    cols[1].metric("Rank", f"{view.rank:,} of {view.of:,}" if view.rank else labels.MISSING)
    cols[2].metric("Cases" if view.score_name == "Pass rate" else "Questions", f"{view.items:,}")
    cols[3].metric("Status", view.status.split(":")[0])
    if interval:
        st.caption(
            f"95% interval of the {view.score_name.lower()}: {labels.rate(interval[0])} – {labels.rate(interval[1])}."
        )


def upstream(view: RunView) -> None:
    """Where the run's file(s) come from, as links, when memeval's catalogue lists them (else nothing)."""
    if not view.upstream:
        return
    entries = [u.entry for u in view.upstream]
    first = entries[0]
    many = len(entries) > 1
    files = ", ".join(f"[{ui.md_escape(e.path.rsplit('/', 1)[-1] if many else e.path)}]({e.file_url})" for e in entries)
    st.markdown(
        f"**Upstream:** [{ui.md_escape(first.repository)}]({first.repository_url}) at commit "
        f"[`{first.commit[:7]}`]({first.commit_url}) · {'files' if many else 'file'} {files} · "
        f"licence **{ui.md_escape(', '.join(dict.fromkeys(e.licence for e in entries)))}**",
        help=f"Pinned in memeval's catalogue; full commit {first.commit}. {first.licence_note}",
    )


def body(view: RunView) -> None:
    """Summary, categories, failures, verification and provenance."""
    ui.table(view.summary, key="run-summary", link_runs=False)
    left, right = st.columns(2, gap="medium")
    with left:
        st.subheader("By category")
        if view.categories.empty:
            st.caption("No categories recorded.")
        else:
            ui.table(view.categories, key="run-categories", link_runs=False, hide=("code",))
    with right:
        st.subheader("Failures")
        if view.failures.empty:
            st.caption("No failures.")
        else:
            ui.table(view.failures, key="run-failures", link_runs=False)
            ui.download_buttons(view.failures, f"memeval-{view.run_id}-failures", key="run-failures-download")
    st.subheader("Verification" if view.score_name == "Pass rate" else "Protocol")
    if view.problems:
        st.warning(f"{view.status}:", icon=":material/rule:")
        st.code("\n".join(view.problems), language=None, wrap_lines=True)
    else:
        st.success(
            "Every value the report states matches its re-derived value."
            if view.score_name == "Pass rate"
            else "The run meets its benchmark's protocol.",
            icon=":material/verified:",
        )
    with st.expander("Source and run metadata"):
        st.dataframe(pd.DataFrame(view.provenance, columns=["What", "Value"]), hide_index=True, key="run-provenance")


everything = ui.load_everything_current()
pmb_ids, qa_runs = everything.pmb.identities, everything.qa.runs
title = st.empty()  # filled once the run is known, so the title stays the first thing on the page
if not pmb_ids and not qa_runs:
    title.title("Run")
    ui.empty_state(everything.pmb)
    st.stop()
ids = ranked(everything.pmb.table, qa_runs)
by_id: dict[str, RunIdentity | QaRunHeader] = {**{r.run_id: r for r in pmb_ids}, **{q.run_id: q for q in qa_runs}}
names = [
    f"{r.display_name} · {labels.benchmark_name(r.benchmark if isinstance(r, RunIdentity) else r.meta.benchmark)}"
    for r in (by_id[i] for i in ids)
]
raw = st.query_params.get("run")
found = find(pmb_ids, qa_runs, raw) if raw else None
if found is not None:
    # A link may name the run by its system's name: the URL is rewritten to the run id.
    st.query_params["run"] = found.run_id
run_id = pick(names, ids, ids[0])
chosen = by_id[run_id]
if isinstance(chosen, RunIdentity):
    (run,) = ui.whole_runs(everything.pmb, [run_id])
    view = pmb_view(run, everything.pmb.table, everything.pmb.fixture)
else:
    view = qa_view(chosen, qa_runs)
title.title(ui.md_escape(view.name), anchor=False)
st.caption(ui.md_escape(f"{labels.benchmark_name(view.benchmark)} · {view.provenance[0][1]}"))
upstream(view)
headline(view)
body(view)
