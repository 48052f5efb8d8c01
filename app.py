"""memeval app: ``streamlit run app.py``. Page config and navigation only; the pages live in ``pages/``.

The results directory comes from ``$MEMEVAL_RESULTS`` (default ``results/``), never from the URL:
:func:`pages.ui.results_root` resolves it on every run and every page reads it through
:func:`pages.ui.load_current`.

To add a page, append ``(path, title, material icon)`` to :data:`PAGES`; the first entry is the
default page. Keep PAGES a literal: the smoke test reads it from this file and runs every page.
"""

from __future__ import annotations

import streamlit as st

from pages import ui

PAGES: tuple[tuple[str, str, str], ...] = (
    ("pages/leaderboard.py", "Leaderboard", ":material/leaderboard:"),
    ("pages/categories.py", "Categories", ":material/grid_on:"),
    ("pages/compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/session_drift.py", "Session drift", ":material/timeline:"),
    ("pages/latency.py", "Latency", ":material/speed:"),
    ("pages/case.py", "Case", ":material/search:"),
    ("pages/qa_leaderboard.py", "QA leaderboard", ":material/quiz:"),
    ("pages/judges.py", "Judges", ":material/gavel:"),
    ("pages/upload.py", "Upload", ":material/upload_file:"),
    ("pages/publish.py", "Publish", ":material/publish:"),
)

# Pages that change files or push: hidden in a read-only app unless the viewer typed the admin token.
WRITE_PAGES = frozenset({"pages/upload.py", "pages/publish.py"})

st.set_page_config(page_title="memeval", page_icon=":material/leaderboard:", layout="wide")
st.session_state[ui.NAVIGATED] = True  # see pages.ui.ensure_navigation
ui.admin_unlock()
shown = [page for page in PAGES if page[0] not in WRITE_PAGES or ui.may_write()]
st.navigation(
    [st.Page(path, title=title, icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(shown)]
).run()
