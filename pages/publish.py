"""Publish: preview the export, compare it with the last one, and push it to a Hugging Face Space."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from memeval_core import labels, settings
from memeval_core.export.hub import PushError, push_space
from memeval_core.export.writer import (
    LEADERBOARD_FILE,
    ExportError,
    diff_exports,
    export,
    list_files,
    preview_export,
)
from pages import ui

# Where `python -m memeval_core export` writes by default; MEMEVAL_EXPORT_DIR points elsewhere.
EXPORT_DIR = settings.export_dir()

st.title("Publish to a Hugging Face Space")
ui.refuse_unless_writer("publishing")

loaded = ui.load_current()
if not loaded.identities:
    ui.empty_state(loaded)
    st.stop()

results = ui.results_folder()
try:
    with st.spinner("Building the export…"):
        # One scratch export per state of the results directory; older ones are removed (see preview_export).
        preview = preview_export(results, ui.fingerprint(results))
except ExportError as exc:
    st.error("The export cannot be built:")
    st.code(str(exc), language=None, wrap_lines=True)
    st.stop()
board = json.loads((preview / LEADERBOARD_FILE).read_text(encoding="utf-8"))
files = list_files(preview)
readme = (preview / "README.md").read_text(encoding="utf-8")
front, _, body = readme.removeprefix("---\n").partition("\n---\n")
licence = next((line.split(":", 1)[1].strip() for line in front.splitlines() if line.startswith("license:")), "")

st.markdown(
    f"""
1. **Check what will be published** (below): {sum(len(t["rows"]) for t in board["tables"]):,} leaderboard rows in
   {len(board["tables"])} tables, {len(files):,} files ({sum(f.size for f in files) / 1e6:,.1f} MB), input fingerprint
   `{board["fingerprint"][:16]}…`. The Space's card says `license: {licence}`; each input keeps its own licence.
2. **Have a Hugging Face token with write access** ([settings → Access Tokens](https://huggingface.co/settings/tokens),
   role *write*). It is used for this push only: never stored, logged or put in a link.
3. **Name the Space** as `OWNER/NAME`. It is created (a Docker Space) if it does not exist yet; an existing
   Space gets one commit named by the fingerprint, and only changed files are uploaded.
4. **Dry run first** (ticked by default): it lists what would change and commits nothing. Untick it to push.
"""
)

st.subheader("1 · What will be published", anchor=False)
tabs = st.tabs(["The Space's card (README.md)", "Files", "Licences", "leaderboard.json"])
with tabs[0]:
    with st.container(border=True, height=520):
        st.markdown(body)
    with st.expander("Front matter"):
        st.code(front, language="yaml")
with tabs[1]:
    listing = pd.DataFrame([{"source": f.path, "size": f.size} for f in files])
    ui.table(listing, key="files-table", link_runs=False, height=360)
with tabs[2]:
    inputs = pd.DataFrame(board["inputs"])
    per = inputs.groupby("license").size().reset_index(name="count") if len(inputs) else inputs
    st.dataframe(per.rename(columns={"license": "Licence", "count": "Input files"}), hide_index=True, key="licences")
    if board.get("text_withheld"):
        st.caption(
            "Question and answer text is left out of the details of: "
            + ", ".join(ui.md_escape(labels.benchmark_name(b)) for b in board["text_withheld"])
            + " (non-commercial or unknown licence). `python -m memeval_core export --include-text` puts it in."
        )
with tabs[3]:
    st.json(board, expanded=1)

st.subheader("2 · Changes since the last export", anchor=False)
diff = diff_exports(EXPORT_DIR, preview)
if diff.old_fingerprint == diff.new_fingerprint:
    st.success("Same fingerprint as the last published export: publishing would change nothing.")
else:
    st.write(
        f"Last export: `{(diff.old_fingerprint or 'none')[:16]}`; this one: `{diff.new_fingerprint[:16]}`. "
        f"{len(diff.rows_added):,} row(s) added, {len(diff.rows_removed):,} removed, {len(diff.rows_changed):,} "
        f"changed; {len(diff.files_added):,} file(s) added, {len(diff.files_removed):,} removed, "
        f"{len(diff.files_changed):,} changed."
    )
changes = pd.DataFrame(
    [{"change": "added", "benchmark": b, "run_id": r, "display_name": n, "fields": ""} for b, r, n in diff.rows_added]
    + [
        {"change": "removed", "benchmark": b, "run_id": r, "display_name": n, "fields": ""}
        for b, r, n in diff.rows_removed
    ]
    + [
        {
            "change": "changed",
            "benchmark": c.benchmark,
            "run_id": c.run_id,
            "display_name": c.display_name,
            "fields": ", ".join(c.fields),
        }
        for c in diff.rows_changed
    ],
    columns=["change", "benchmark", "run_id", "display_name", "fields"],
)
if len(changes):
    shown = changes.assign(benchmark=[labels.benchmark_name(b) for b in changes["benchmark"]])
    ui.table(shown, key="changes-table", link_runs=False, height=300)
    ui.download_buttons(changes, "publish-changes", key="changes")
if diff.readme_diff:
    with st.expander("README.md diff"):
        st.code(diff.readme_diff, language="diff")

st.subheader("3 · Push to a Hugging Face Space", anchor=False)
space = st.text_input("Space (OWNER/NAME)", **ui.url_bound("space"))
dataset = st.text_input("Details dataset (OWNER/NAME, optional)", **ui.url_bound("dataset"))
# The server's own token (HF_TOKEN or its saved login) serves only a viewer on this machine: a remote
# viewer, admin or not, pushes with a token of their own. The token lives only in this session's widget state.
server_token_allowed = ui.viewer_is_local() and not settings.read_only()
token = st.text_input(
    "Hugging Face token",
    type="password",
    key="hf_token",
    help="Kept for this session only. "
    + ("Empty: HF_TOKEN or your saved login." if server_token_allowed else "Required: a token with write access."),
)
private = st.checkbox("Private Space", key="private")
dry_run = st.checkbox("Dry run: list what would change, commit nothing", value=True, key="dry_run")
if st.button("Push", type="primary", disabled=not space):
    if not token and not server_token_allowed:
        st.error("Type a Hugging Face token with write access: this server's own token is not used for you.")
        st.stop()
    try:
        result = push_space(preview, space, token or None, private, dry_run, dataset or None)
        if not dry_run:
            # Only a successful push becomes "the last export": a failed one leaves hf_export/ as it was.
            export(results, EXPORT_DIR, secrets=[token] if token else [])
    except (PushError, ExportError) as exc:
        st.error(str(exc))
    else:
        st.success(result.lines[0] if result.lines else "Done.")
        st.code("\n".join(result.lines) or "(no changes)")
