"""Publish: preview the export, compare it with the last one, and push it to a Hugging Face Space."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from memeval_core import settings
from memeval_core.export.hub import PushError, push_space
from memeval_core.export.writer import LEADERBOARD_FILE, ExportError, diff_exports, export, preview_export
from pages import ui

# Where `python -m memeval_core export` writes by default; MEMEVAL_EXPORT_DIR points elsewhere.
EXPORT_DIR = settings.export_dir()

st.title("Publish")
ui.refuse_unless_writer("publishing")

loaded = ui.load_current()
if not loaded.runs:
    ui.empty_state(loaded)
    st.stop()

st.caption(
    "Builds the export exactly as `python -m memeval_core export` would, shows what would be published and "
    "what changed since the last export in `hf_export/`, then pushes it as one commit named by its fingerprint."
)


results = ui.results_root()
try:
    with st.spinner("Building the export…"):
        # One scratch export per state of the results directory; older ones are removed (see preview_export).
        preview = preview_export(results, ui.fingerprint(results))
except ExportError as exc:
    st.error("The export cannot be built:")
    st.code(str(exc), language=None, wrap_lines=True)
    st.stop()
board = json.loads((preview / LEADERBOARD_FILE).read_text(encoding="utf-8"))

st.subheader("What would be published")
left, right = st.columns(2)
with left:
    st.markdown(f"**leaderboard.json** · fingerprint `{board['fingerprint'][:16]}…`")
    st.json(board, expanded=1)
with right:
    st.markdown("**README.md** (the Space card)")
    st.code((preview / "README.md").read_text(encoding="utf-8"), language="markdown")

st.subheader("Changes since the last export")
diff = diff_exports(EXPORT_DIR, preview)
if diff.old_fingerprint == diff.new_fingerprint:
    st.success("Same fingerprint as the last export in hf_export/: publishing would change nothing.")
else:
    st.write(
        f"Last export: `{(diff.old_fingerprint or 'none')[:16]}`; this one: `{diff.new_fingerprint[:16]}`. "
        f"{len(diff.rows_added)} row(s) added, {len(diff.rows_removed)} removed, {len(diff.rows_changed)} changed; "
        f"{len(diff.files_added)} file(s) added, {len(diff.files_removed)} removed, {len(diff.files_changed)} changed."
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
st.dataframe(changes, hide_index=True, width="stretch")
ui.download_buttons(changes, "publish-changes", key="changes")
if diff.readme_diff:
    with st.expander("README.md diff"):
        st.code(diff.readme_diff, language="diff")

st.subheader("Push to a Hugging Face Space")
space = st.text_input("Space (OWNER/NAME)", **ui.url_bound("space"))
dataset = st.text_input("Details dataset (OWNER/NAME, optional)", **ui.url_bound("dataset"))
# The token lives only in this browser session's widget state: never in the URL, logs or files.
# The server's own token (HF_TOKEN or its saved login) serves only a viewer on this machine: a remote
# viewer, admin or not, pushes with a token of their own.
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
