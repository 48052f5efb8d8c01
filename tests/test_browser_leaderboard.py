"""The leaderboard in a real browser: headless Chromium against ``streamlit run app.py`` over the public PMB data."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

pytestmark = pytest.mark.browser


ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
WAIT_MS = 60_000
TABLE = '[data-testid="stDataFrame"]:visible'


@pytest.fixture
def page(chromium: dict[str, Any], streamlit_server: str) -> Iterator[Page]:
    """A fresh browser page (Debian chromium, headless)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            context = browser.new_context(viewport={"width": 1600, "height": 1200}, accept_downloads=True)
            yield context.new_page()
        finally:
            browser.close()


def settle(page: Page) -> None:
    """Wait until the app's script has finished running.

    The pause first, as in test_browser_upload: right after a widget change the page can still report the
    previous run as finished for a moment (a CI run once downloaded the table of the previous sort order).
    """
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=WAIT_MS)


def download_csv(page: Page) -> list[dict[str, str]]:
    """Click the visible "Download CSV" button and parse what the browser saved."""
    button = page.locator('[data-testid="stDownloadButton"]:visible', has_text="Download CSV")
    with page.expect_download(timeout=WAIT_MS) as info:
        button.click()
    path = info.value.path()
    settle(page)
    return list(csv.DictReader(io.StringIO(Path(path).read_text(encoding="utf-8"))))


def test_leaderboard_sort_and_download(page: Page, streamlit_server: str) -> None:
    page.goto(f"{streamlit_server}/leaderboard")
    page.wait_for_selector(TABLE, timeout=WAIT_MS)
    settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("13 runs, 10 verified.").is_visible()

    rows = download_csv(page)
    assert len(rows) == 13
    assert [r["display_name"] for r in rows][:2] == ["tenure", "gbrain"]
    assert {r["benchmark"] for r in rows} == {"pmb-single-turn"}
    tenure = rows[0]
    assert (tenure["passed"], tenure["active_retrieval"], tenure["status"]) == ("77", "43", "✓ verified")
    mem0 = next(r for r in rows if r["display_name"] == "mem0")
    assert (mem0["mean_precision"], mem0["mean_recall"], mem0["latency_p50_ms"]) == ("0.0558", "0.9884", "64.94")

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)

    # Sort with the page's control: by name, ascending. The choice lands in the URL, so the view is a link.
    page.locator('[data-testid="stSelectbox"]', has_text="Sort by").locator("input").click()
    page.get_by_role("option", name="System", exact=True).click()
    page.wait_for_url("**sort=display_name**", timeout=WAIT_MS)
    settle(page)
    page.locator('[data-testid="stRadio"]', has_text="Order").get_by_text("ascending").click()
    page.wait_for_url("**order=ascending**", timeout=WAIT_MS)
    settle(page)
    sorted_rows = download_csv(page)
    assert [r["display_name"] for r in sorted_rows][:3] == ["a-mem", "agentmemory", "atomicmemory"]
    assert sorted(r["run_id"] for r in sorted_rows) == sorted(r["run_id"] for r in rows)

    # The shared link reproduces the view; ?benchmark= opens the session table.
    page.goto(f"{streamlit_server}/leaderboard?sort=display_name&order=ascending&benchmark=pmb-session")
    page.wait_for_selector(TABLE, timeout=WAIT_MS)
    settle(page)
    session_rows = download_csv(page)
    assert len(session_rows) == 11
    assert session_rows[0]["display_name"] == "a-mem"
    assert {r["benchmark"] for r in session_rows} == {"pmb-session"}
    page.screenshot(path=str(ARTIFACTS / "leaderboard-session-sorted.png"), full_page=True)
