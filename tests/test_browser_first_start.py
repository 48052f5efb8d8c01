"""A fresh install's first start, as `make app` does it: `sync --if-empty` from the upstream stand-ins, then the
app in headless Chromium shows the PrecisionMemBench and QA boards on its home page."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from docs.screenshot import VIEWPORT, open_page, serve
from memeval_core.catalogue import default_catalogue
from tests.github_standin import GitHubStandIn

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture
def standin(shared_data: Path) -> Iterator[GitHubStandIn]:
    with GitHubStandIn.serving(default_catalogue(), shared_data) as server:
        yield server


def test_first_start_shows_pmb_and_qa_boards(chromium: dict[str, Any], standin: GitHubStandIn, tmp_path: Path) -> None:
    results = tmp_path / "results"
    env = {"MEMEVAL_GITHUB_RAW": standin.url, "MEMEVAL_GITHUB_API": standin.url, "MEMEVAL_CACHE_DIR": "off"}
    sync = subprocess.run(
        [sys.executable, "-m", "memeval_core", "sync", "--if-empty", "--results", str(results)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert sync.returncode == 0, sync.stderr[-2000:]
    with serve(results, tmp_path / "server.log", env) as url, sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            open_page(page, url)
            headings = [str(h.text_content()) for h in page.locator('[data-testid="stHeading"] h3').all()]
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "first-start.png"))
        finally:
            browser.close()
    assert "PrecisionMemBench · single-turn" in headings
    assert any(h.startswith("LoCoMo") for h in headings) and "LongMemEval-S" in headings
