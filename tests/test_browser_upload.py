"""Two browser sessions upload at once; a token typed into the Publish page never reaches the page or the log."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from memeval_core.pmb.ingest import load_pmb
from tests.conftest import serve_app
from tests.hub_standin import HUB_TOKEN, HubStandIn

pytestmark = pytest.mark.browser

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def app(pmb_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path, HubStandIn]]:
    results = tmp_path_factory.mktemp("results")
    shutil.copytree(pmb_results / "fixtures", results / "fixtures")
    shutil.copy(pmb_results / "test-results/baseline/retrieval-report-tenure.json", results / "tenure.json")
    logs = tmp_path_factory.mktemp("log")
    home = tmp_path_factory.mktemp("hf_home")
    with HubStandIn(HUB_TOKEN) as hub:
        env = {
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(home),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1",
            "MEMEVAL_EXPORT_DIR": str(tmp_path_factory.mktemp("export") / "hf_export"),
        }
        with serve_app(results, logs, env) as url:
            yield url, results, logs / "server.log", hub


def settle(page: Page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=WAIT_MS)


def open_upload(page: Page, url: str, files: list[Path]) -> None:
    page.goto(f"{url}/upload")
    settle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files([str(f) for f in files])
    page.get_by_text("would be stored as", exact=False).first.wait_for(timeout=WAIT_MS)
    settle(page)


def test_two_sessions_upload_at_once(chromium: dict[str, Any], app: Any, pmb_results: Path) -> None:
    url, results, _, _ = app
    base = pmb_results / "test-results/baseline"
    mem0, amem, zep = (base / f"retrieval-report-{n}.json" for n in ("mem0", "a-mem", "zep"))
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            first = browser.new_context().new_page()
            second = browser.new_context().new_page()
            # Both sessions upload the same zep report plus one report of their own.
            open_upload(first, url, [mem0, zep])
            open_upload(second, url, [amem, zep])
            save = "Save 2 valid file(s) to the results directory"
            first.get_by_role("button", name=save).click(no_wait_after=True)
            second.get_by_role("button", name=save).click(no_wait_after=True)
            for page in (first, second):
                page.get_by_text("zep.json", exact=False).first.wait_for(timeout=WAIT_MS)
                settle(page)
            texts = [page.locator("[data-testid='stMain']").inner_text() for page in (first, second)]
        finally:
            browser.close()
    stored = sorted(p.name for p in (results / "uploads").iterdir() if not p.name.startswith("."))
    assert stored == sorted(["retrieval-report-mem0.json", "retrieval-report-a-mem.json", "retrieval-report-zep.json"])
    both = "\n".join(texts)
    assert both.count("already stored (same SHA-256)") == 1, both
    for name in stored:
        assert (results / "uploads" / name).read_bytes() == (base / name).read_bytes()
    assert sorted(r.identity.provider for r in load_pmb(results).runs) == ["a-mem", "mem0", "tenure", "zep"]


def test_token_never_reaches_page_or_log(chromium: dict[str, Any], app: Any) -> None:
    url, _, log, hub = app
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            page = browser.new_context().new_page()
            page.goto(f"{url}/publish")
            page.get_by_text("What will be published", exact=False).first.wait_for(timeout=WAIT_MS)
            settle(page)
            page.get_by_role("textbox", name="Space (OWNER/NAME)").fill("standin-user/board")
            page.get_by_role("textbox", name="Space (OWNER/NAME)").press("Enter")
            settle(page)
            page.get_by_role("textbox", name="Hugging Face token").fill(HUB_TOKEN)
            page.get_by_role("textbox", name="Hugging Face token").press("Enter")
            settle(page)
            page.get_by_text("Dry run: list what would change", exact=False).click()
            settle(page)
            page.get_by_role("button", name="Push").click()
            page.get_by_text("fingerprint", exact=False).last.wait_for(timeout=WAIT_MS)
            settle(page)
            # The password box itself holds the token while the user edits it; everything else must not.
            html = page.evaluate(
                "() => { const c = document.documentElement.cloneNode(true);"
                " c.querySelectorAll('input[type=password]').forEach(i => i.remove()); return c.outerHTML; }"
            )
            shown = page.locator("[data-testid='stMain']").inner_text()
            url_now = page.url
        finally:
            browser.close()
    assert len(hub.commits) == 1, "the push went through with the typed token"
    assert HUB_TOKEN not in html and HUB_TOKEN not in shown and HUB_TOKEN not in url_now
    assert HUB_TOKEN not in log.read_text(errors="replace")
    assert json.dumps(HUB_TOKEN)[1:-1] not in log.read_text(errors="replace")
