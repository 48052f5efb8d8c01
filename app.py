"""memeval app: ``streamlit run app.py``. Page config and navigation only; the pages live in ``pages/``.

The results directory comes from ``$MEMEVAL_RESULTS`` (default ``results/``), never from the URL:
:func:`pages.ui.results_root` resolves it on every run and every page reads it through
:func:`pages.ui.load_current`.

To add a page, append ``(path, title, material icon, section)`` to :data:`PAGES`; the first entry is the
default page, section ``hidden`` keeps a page out of the menu (reached by links). Keep PAGES a literal:
the smoke test reads it from this file and runs every page.
"""

from __future__ import annotations

import streamlit as st

from pages import ui

PAGES: tuple[tuple[str, str, str, str], ...] = (
    ("pages/home.py", "Leaderboard", ":material/trophy:", ""),
    ("pages/run.py", "Run", ":material/description:", "hidden"),
    ("pages/leaderboard.py", "PMB details", ":material/table:", "PrecisionMemBench"),
    ("pages/categories.py", "Categories", ":material/grid_on:", "PrecisionMemBench"),
    ("pages/session_drift.py", "Session drift", ":material/timeline:", "PrecisionMemBench"),
    ("pages/latency.py", "Latency", ":material/speed:", "PrecisionMemBench"),
    ("pages/case.py", "Case", ":material/search:", "PrecisionMemBench"),
    ("pages/qa_leaderboard.py", "QA details", ":material/quiz:", "QA benchmarks"),
    ("pages/judges.py", "Judges", ":material/gavel:", "QA benchmarks"),
    ("pages/compare.py", "Compare two runs", ":material/compare_arrows:", "Analyse"),
    ("pages/upload.py", "Upload", ":material/upload_file:", "Manage"),
    ("pages/publish.py", "Publish", ":material/publish:", "Manage"),
)

# Pages that change files or push: hidden in a read-only app unless the viewer typed the admin token.
WRITE_PAGES = frozenset({"pages/upload.py", "pages/publish.py"})

st.set_page_config(page_title="memeval", page_icon=":material/leaderboard:", layout="wide")
st.session_state[ui.NAVIGATED] = True  # see pages.ui.ensure_navigation
ui.admin_unlock()
sections: dict[str, list[st.Page]] = {}
for i, (path, title, icon, section) in enumerate(PAGES):
    if path in WRITE_PAGES and not ui.may_write():
        continue
    hidden = section == "hidden"  # reached by a link (a system's name), not listed
    page = st.Page(path, title=title, icon=icon, default=i == 0, visibility="hidden" if hidden else "visible")
    sections.setdefault("" if hidden else section, []).append(page)
st.navigation(sections).run()
