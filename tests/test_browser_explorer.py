"""The explorer pages in a real browser: headless Chromium against ``streamlit run app.py`` over the public PMB data.

Opens the compare page from a shared link, switches a filter, opens a case, checks that each step lands in
the URL, downloads the shown table, and saves a screenshot of every explorer page in tests/artifacts/.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, sync_playwright

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
WAIT_MS = 60_000
VIEWPORT = {"width": 1600, "height": 1200}
SCREENSHOT_MAX_HEIGHT = 12_000


@pytest.fixture
def page(chromium: dict[str, Any], streamlit_server: str) -> Iterator[Page]:
    """A fresh browser page (Debian chromium, headless)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
            yield context.new_page()
        finally:
            browser.close()


def settle(page: Page) -> None:
    """Wait until the app's script has finished running."""
    page.wait_for_selector(IDLE, timeout=WAIT_MS)


def query(page: Page) -> dict[str, list[str]]:
    """The current URL's query parameters."""
    return parse_qs(urlparse(page.url).query)


def open_page(page: Page, url: str, ready: str) -> None:
    """Go to ``url`` and wait until the text ``ready`` is shown and the script is idle."""
    page.goto(url)
    page.get_by_text(ready, exact=False).first.wait_for(timeout=WAIT_MS)
    settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0


def stable_height(page: Page) -> int:
    """Height of the page's content once tables and charts have stopped growing (two equal readings)."""
    script = "document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
    readings = [int(page.evaluate(script))]
    for _ in range(40):
        page.wait_for_timeout(500)
        readings.append(int(page.evaluate(script)))
        if len(set(readings[-4:])) == 1 and len(readings) >= 4:
            break
    return readings[-1]


def screenshot(page: Page, name: str, last: str) -> Path:
    """Save the whole page: Streamlit scrolls inside its main block, so the viewport is grown to fit it first.

    ``last`` is a selector of the page's last element (perhaps inside a folded expander); the height is read once
    it is there.
    """
    page.locator(last).first.wait_for(state="attached", timeout=WAIT_MS)
    height = stable_height(page)
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(height + 40, SCREENSHOT_MAX_HEIGHT)})
    # Charts re-lay out on resize; wait for every plot to have drawn its axes before shooting.
    page.wait_for_function(
        "[...document.querySelectorAll('.js-plotly-plot')].every(p => p.querySelector('.main-svg'))",
        timeout=WAIT_MS,
    )
    page.wait_for_timeout(800)  # let the resize transition finish; the assertion above is the real check
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def download_csv(page: Page, key: str) -> list[dict[str, str]]:
    """Click the CSV download button of the table keyed ``key`` and parse what the browser saved."""
    with page.expect_download(timeout=WAIT_MS) as info:
        page.locator(f".st-key-{key}-csv button").click()
    path = info.value.path()
    settle(page)
    return list(csv.DictReader(io.StringIO(Path(path).read_text(encoding="utf-8"))))


def test_compare_from_a_link_filter_case_and_download(page: Page, streamlit_server: str) -> None:
    # A shared link straight to the compare page (possibly the server's first visitor).
    open_page(page, f"{streamlit_server}/compare?a=mem0&b=tenure", "Cases both ran")
    nav = page.locator('[data-testid="stSidebarNav"]')
    assert nav.get_by_text("Session drift").is_visible()  # the app's navigation, not the raw pages/ folder
    assert nav.get_by_text("ui", exact=True).count() == 0
    assert page.get_by_text("statistically tied (the interval includes zero)").count() == 0
    assert page.get_by_text("not tied").first.is_visible()
    metric = page.locator('[data-testid="stMetric"]', has_text="B: tenure")
    assert metric.locator('[data-testid="stMetricValue"]').inner_text() == "77 of 77"
    assert "McNemar p < 0.001" in page.locator('[data-testid="stMetric"]', has_text="A real difference?").inner_text()

    # Filter: only the cases B (tenure) wins. The choice lands in the URL.
    page.get_by_role("radio", name="B wins", exact=True).click()
    page.wait_for_url(lambda url: parse_qs(urlparse(url).query).get("filter") == ["B wins"], timeout=WAIT_MS)
    # The URL changes as the click is sent; the table follows on the rerun.
    page.get_by_text("68 of 77 paired cases shown.").wait_for(timeout=WAIT_MS)
    settle(page)
    rows = download_csv(page, "pairs")
    assert len(rows) == 68
    assert {r["outcome"] for r in rows} == {"B wins"}
    assert "alias-kube-resolves" in {r["case_id"] for r in rows}

    # Open one case; it lands in the URL too, next to the earlier state.
    page.locator('[data-testid="stSelectbox"]', has_text="Open a case").locator("input").click()
    page.keyboard.type("alias-kube-resolves")
    page.get_by_role("option", name="alias-kube-resolves", exact=True).click()
    page.wait_for_url(lambda url: parse_qs(urlparse(url).query).get("case") == ["alias-kube-resolves"])
    settle(page)
    q = query(page)
    assert (q["a"], q["b"], q["filter"]) == (["mem0"], ["tenure"], ["B wins"])
    page.get_by_text("how does kube schedule pods across our CI pipeline nodes?").wait_for(timeout=WAIT_MS)
    assert page.get_by_text("passed (active pass)", exact=False).is_visible()
    ids = download_csv(page, "case-ids")
    assert list(ids[0]) == ["tier", "id", "belief", "gold", "mem0", "tenure"]
    gha = next(r for r in ids if r["id"] == "b-ci-gha-entity" and r["tier"] == "relevant")
    assert (gha["mem0"], gha["tenure"]) == ("correct", "correct")
    assert gha["belief"].startswith("CI/CD runs on GitHub Actions.")
    screenshot(page, "compare", ".st-key-case-ids-csv")

    # The same link in a new visit reproduces the view.
    open_page(page, page.url, "how does kube schedule pods")
    assert page.get_by_text("68 of 77 paired cases shown.").is_visible()


def test_mem0_vs_a_mem_is_tied(page: Page, streamlit_server: str) -> None:
    open_page(page, f"{streamlit_server}/compare?a=mem0&b=a-mem", "Cases both ran")
    assert page.get_by_text("neither is better").first.is_visible()
    assert page.get_by_text("statistically tied (the interval includes zero)").first.is_visible()
    metric = page.locator('[data-testid="stMetric"]', has_text="A real difference?")
    assert metric.locator('[data-testid="stMetricValue"]').inner_text() == "No"
    assert "McNemar p = 1" in metric.inner_text()


def test_the_verdict_is_above_the_fold_at_1440_by_900(page: Page, streamlit_server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, f"{streamlit_server}/compare?a=tenure&b=mem0", "Cases both ran")
    main = page.locator('[data-testid="stMain"]')
    first = main.locator('[data-testid="stHeading"], [data-testid="stMarkdown"], [data-testid="stCaptionContainer"]')
    assert first.first.inner_text().startswith("Compare two runs")  # nothing before the title
    verdict = page.get_by_text("is better by 88.3 pp", exact=False).first
    cards = page.locator('[data-testid="stMetric"]')
    settings = page.get_by_text("Statistics settings", exact=False).first
    for shown in (verdict, cards.nth(3), settings):
        shown.wait_for(timeout=WAIT_MS)
    box, last_card, knobs = verdict.bounding_box(), cards.nth(3).bounding_box(), settings.bounding_box()
    assert box is not None and last_card is not None and knobs is not None
    assert box["y"] < last_card["y"] < knobs["y"]
    assert last_card["y"] + last_card["height"] <= 900  # the whole answer shows without scrolling
    assert page.get_by_label("Seed").count() == 0 or not page.get_by_label("Seed").first.is_visible()


def test_an_unknown_run_in_the_link_is_named_on_screen(page: Page, streamlit_server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, f"{streamlit_server}/compare?a=doesnotexist&b=tenure", "Cases both ran")
    warning = page.locator('[data-testid="stAlert"]', has_text="doesnotexist").first
    warning.wait_for(timeout=WAIT_MS)
    box = warning.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900  # seen without scrolling
    assert "showing gbrain as A instead" in warning.inner_text()
    page.get_by_text("gbrain passes 34 of 77 cases", exact=False).first.wait_for(timeout=WAIT_MS)
    page.locator('[data-testid="stMetric"]', has_text="A: gbrain").wait_for(timeout=WAIT_MS)


def test_case_page_shows_belief_text(page: Page, streamlit_server: str) -> None:
    open_page(page, f"{streamlit_server}/case?case=happy-stack-repository-layer", "What each returned")
    assert page.get_by_text("3 of 13 systems pass this case", exact=False).is_visible()
    rows = download_csv(page, "expected")
    assert {r["id"]: r["belief"] for r in rows}["b-db-decision"] == (
        "Decided on MongoDB after evaluating Postgres. Raw driver only."
    )
    providers = download_csv(page, "outcomes")
    tenure = next(r for r in providers if r["display_name"] == "tenure")
    assert (tenure["returned_nothing"], tenure["n_pinned"], tenure["n_open_questions"]) == ("False", "2", "1")


@pytest.mark.parametrize(
    ("name", "path", "ready", "last"),
    [
        ("categories", "/categories", "What a pass count is worth.", ".st-key-references-csv"),
        ("session_drift", "/session_drift", "Session drift", ".st-key-latency-ratio-csv"),
        ("latency", "/latency", "Latency", ".st-key-pareto-csv"),
        ("case", "/case?case=alias-kube-resolves", "What each returned", ".st-key-ids-csv"),
    ],
)
def test_page_screenshots(page: Page, streamlit_server: str, name: str, path: str, ready: str, last: str) -> None:
    open_page(page, f"{streamlit_server}{path}", ready)
    charts = page.locator(".js-plotly-plot")
    if name != "case":
        charts.first.wait_for(timeout=WAIT_MS)
        # Plotly draws each chart on its own schedule: wait for the second one rather than count at once.
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=WAIT_MS)
        assert charts.count() >= 2
    shot = screenshot(page, name, last)
    assert shot.stat().st_size > 50_000
