"""Upload: check new result files, see where they would rank, and save them only on confirmation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from memeval_core import labels, leaderboard, settings
from memeval_core.explore.home import verification_badge
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.locomo import find_locomo
from memeval_core.store import add_files
from memeval_core.upload import preview, validate_any
from pages import ui

st.title("Upload runs")
ui.refuse_unless_writer("uploading runs")

everything = ui.load_everything_current()
loaded = everything.pmb
results = ui.results_folder()
max_mb = settings.limits().max_upload_bytes / settings.MB
st.caption(
    "PMB reports, QA results of any supported format (mem0 eval, EverMemOS, MemoryBench, zep, cognitive-memory, "
    "mflow, memeval's own run format) are checked here first. Nothing is saved until you confirm; saving writes "
    f"a temporary file and renames it, so a crash never leaves half a file. Limit: {max_mb:g} MB per file."
)

files = st.file_uploader("Result files", accept_multiple_files=True, key="uploads", max_upload_size=int(max_mb))
if not files:
    st.info("Drop one or more result files to check them.")
    st.stop()

existing_pmb = leaderboard.table_rows(loaded.table)
datasets_dir = ui.datasets_root()
existing_qa = qa_leaderboard.rows(everything.qa.runs)
locomo = find_locomo(datasets_dir or results) if results.is_dir() else None
datasets = locomo.parent if locomo is not None else None

checked = []
for f in files:
    data = f.getvalue()
    if len(data) > max_mb * 1024 * 1024:
        st.error(
            ui.md_escape(f"{f.name}: {len(data):,} bytes is above the {max_mb:g} MB limit (MEMEVAL_MAX_UPLOAD_MB).")
        )
        continue
    checked.append((f.name, data, preview(f.name, data, loaded.fixture, existing_pmb, existing_qa, datasets)))


def preview_row(r: dict[str, Any], kind: str) -> dict[str, Any]:
    """One provisional row of an uploaded run (machine keys)."""
    if kind == "pmb":
        score, badge = {"passed": r["passed"]}, verification_badge(len(r["mismatches"]))
    else:
        reasons = "; ".join(r["not_publishable_because"])
        score, badge = {"accuracy": r["accuracy"]}, "✓ publishable" if r["publishable"] else f"diagnostic: {reasons}"
    return {
        "display_name": r["display_name"],
        "benchmark": labels.benchmark_name(r["benchmark"]),
        "provisional_rank": f"{r['provisional_rank']} of {r['of']}",
        **score,
        "badge": badge,
    }


for name, _, p in checked:
    with st.container(border=True):
        st.markdown(f"**{ui.md_escape(name)}** → would be stored as `{p.safe_name}`")
        if not p.ok:
            for err in p.errors:
                # The message quotes the file: shown as plain text, never as Markdown.
                st.error(ui.md_escape(f"{err.path}: {err.message}" + (f" — {err.hint}" if err.hint else "")))
            continue
        rows = pd.DataFrame([preview_row(r, p.kind) for r in p.rows])
        ui.table(rows, key=f"preview-{p.safe_name}", link_runs=False)
        st.caption("Provisional: where the run would rank among the runs already loaded.")

valid = [(name, data) for name, data, p in checked if p.ok]
if valid and st.button(f"Save {len(valid)} valid file(s) to the results directory", type="primary"):
    outcome = add_files(results, valid, validate_any(loaded.fixture, datasets), int(max_mb * 1024 * 1024))
    for r in outcome:
        if r.status == "stored":
            st.success(ui.md_escape(f"{r.name}: saved as {Path(r.path or '').name}"))
        elif r.status == "duplicate":
            st.info(ui.md_escape(f"{r.name}: already stored (same SHA-256), not saved twice."))
        else:
            st.error(ui.md_escape(f"{r.name}: {r.error}"))
    ui.files_changed()
