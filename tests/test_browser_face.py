"""The app as a newcomer sees it, in headless Chromium at 1440×900 over ../shared/data (issue "The face").

- On every page the title is the first text.
- Home: the first benchmark's chart and its first five ranked rows are visible without scrolling.
- Every visible table header and chart title is a registry label or a name taken from the data, never
  snake_case or a raw id; every chart has a title and axis titles.
- Every bad URL parameter is named in a visible warning.
- A screenshot of every page lands in tests/artifacts/; the README's image is regenerated and renders.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from memeval_core import labels
from memeval_core.results import load_all_results

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import screenshot  # noqa: E402  (docs/screenshot.py: the one way the app is captured)

ARTIFACTS = ROOT / "tests" / "artifacts"
SNAKE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
RAW_ID = re.compile(r"-[0-9a-f]{10}$")
FIRST_TEXT = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walk.nextNode())) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || el.closest('[data-testid="stToolbar"]')) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    return [node.textContent.trim().slice(0, 80), el.closest('h1') !== null];
  }
  return null;
}"""


@pytest.fixture(scope="module")
def server(shared_data: Path, tmp_path_factory: pytest.TempPathFactory, chromium: dict[str, Any]) -> Iterator[str]:
    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data the pages show")
    with screenshot.serve(shared_data, tmp_path_factory.mktemp("face") / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser_page(server: str, chromium: dict[str, Any]) -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            yield browser.new_page(viewport=screenshot.VIEWPORT)
        finally:
            browser.close()


@pytest.fixture(scope="module")
def data_names(shared_data: Path) -> set[str]:
    """Headers a page may take from the data: systems, categories, judges, benchmarks."""
    pmb, qa = load_all_results(shared_data, shared_data, cache_dir=None)
    names = {r.identity.display_name for r in pmb.runs} | {q.display_name for q in qa.runs}
    if pmb.fixture is not None:
        names |= set(pmb.fixture.category_order)
    for q in qa.runs:
        names |= {labels.judge_header(j) for j in q.score.per_judge_accuracy}
        names |= {labels.category_header(code, c.name) for code, c in q.score.categories.items()}
    names |= set(labels.BENCHMARKS.values())
    return names


def headers(page: Page) -> list[str]:
    """Column headers of every visible table."""
    out: list[str] = []
    for frame in page.locator('[data-testid="stDataFrame"]').all():
        if frame.is_visible():
            out += [str(h.text_content() or "").strip() for h in frame.locator('th[role="columnheader"]').all()]
    return [h for h in out if h]


def chart_titles(page: Page) -> list[tuple[str, str, list[str]]]:
    """(title, x title, y titles) of every visible chart."""
    out = []
    for chart in page.locator(".stPlotlyChart").all():
        if not chart.is_visible():
            continue

        def texts(selector: str, chart: Any = chart) -> list[str]:
            return [str(t.text_content() or "") for t in chart.locator(selector).all()]

        title = " ".join(texts(".gtitle"))
        out.append((title, " ".join(texts(".xtitle")), texts(".ytitle")))
    return out


@pytest.mark.parametrize("path", screenshot.PAGES)
def test_every_page_reads_like_a_leaderboard(browser_page: Page, server: str, data_names: set[str], path: str) -> None:
    page = browser_page
    screenshot.open_page(page, f"{server}/{'' if path == 'home' else path}")
    assert page.locator('[data-testid="stException"]').count() == 0
    first = page.evaluate(FIRST_TEXT)
    assert first is not None and first[1], f"{path}: text before the title: {first}"
    allowed = {lab.text for lab in labels.LABELS.values()} | data_names
    for header in headers(page):
        assert header in allowed, f"{path}: header {header!r} is neither a registry label nor a name from the data"
        assert header in data_names or not SNAKE.match(header), f"{path}: snake_case header {header!r}"
        assert not RAW_ID.search(header), f"{path}: raw id {header!r}"
    for title, x_title, y_titles in chart_titles(page):
        assert title, f"{path}: a chart without a title"
        assert x_title or y_titles, f"{path}: chart {title!r} without axis titles"
        for text in (title, x_title, *y_titles):
            assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), f"{path}: snake_case in chart text {text!r}"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{path}.png"))


def test_home_shows_the_first_board_above_the_fold(browser_page: Page, server: str) -> None:
    page = browser_page
    screenshot.open_page(page, server)
    table = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    chart = page.locator(".stPlotlyChart").first.bounding_box()
    assert table is not None and chart is not None
    header_px, row_px = 36, 35
    assert table["y"] + header_px + 5 * row_px <= screenshot.VIEWPORT["height"], table
    assert chart["y"] + 0.6 * chart["height"] <= screenshot.VIEWPORT["height"], chart
    first = page.locator('[data-testid="stDataFrame"]').first
    first.locator('th[role="columnheader"]').first.wait_for(state="attached", timeout=60_000)
    rows = first.locator("tr").count()
    assert rows >= 6, "a header and at least five ranked rows"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("compare?a=doesnotexist&b=tenure", "doesnotexist"),
        ("compare?b=nobody", "nobody"),
        ("case?case=no-such-case", "no-such-case"),
        ("leaderboard?benchmark=nope", "nope"),
        ("categories?benchmark=nope", "nope"),
        ("qa_leaderboard?benchmark=nope", "nope"),
        ("run?run=nope", "nope"),
        ("compare?seed=1e309", "1e309"),
    ],
)
def test_a_bad_url_value_is_named_in_a_warning(browser_page: Page, server: str, path: str, value: str) -> None:
    page = browser_page
    screenshot.open_page(page, f"{server}/{path}")
    warnings = [str(w.text_content()) for w in page.locator('[data-testid="stAlertContentWarning"]').all()]
    assert any(value in w for w in warnings), (path, warnings)


BELIEF_TEXTS = """() => {
  const out = [];
  for (const table of document.querySelectorAll('[data-testid="stDataFrame"] table')) {
    const heads = [...table.querySelectorAll('th[role="columnheader"]')].map(h => h.textContent.trim());
    const id = heads.indexOf('Belief'), text = heads.indexOf('Belief text');
    if (id < 0 || text < 0) continue;
    for (const row of table.querySelectorAll('tbody tr, tr[aria-rowindex]')) {
      if (row.querySelector('th[role="columnheader"]')) continue;
      const cells = [...row.querySelectorAll('td, th')].map(c => c.textContent.trim());
      if (cells.length === heads.length) out.push([cells[id], cells[text]]);
    }
  }
  return out;
}"""


def test_the_case_view_shows_text_for_every_belief_id(browser_page: Page, server: str) -> None:
    page = browser_page
    screenshot.open_page(page, f"{server}/case?case=alias-kube-resolves")
    pairs = page.evaluate(BELIEF_TEXTS)
    assert pairs, "a table of beliefs with their text is on the page"
    assert all(belief and text and text != labels.MISSING for belief, text in pairs), pairs


def test_the_readme_image_is_regenerated_and_renders(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "home.png"
    # In its own process, as a user runs it (and apart from this module's browser).
    made = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "screenshot.py"), "--results", str(shared_data), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    head = out.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert (width, height) == (screenshot.VIEWPORT["width"], screenshot.VIEWPORT["height"])
    assert out.stat().st_size > 50_000, "a blank page compresses to a few kilobytes"
    assert (ROOT / "docs" / "home.png").is_file(), "the README's image is committed"
