"""Hostile text in results is displayed inert on every page (headless Chromium).

Provider names, case descriptions, queries, session messages, QA questions/answers and a file name
carry HTML, <script>, <img onerror>, a javascript: Markdown link and LaTeX. Every page is opened
with such a run selected; no injected script may run and no injected element may exist.
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import sync_playwright

from tests.conftest import ROOT, serve_app

pytestmark = pytest.mark.browser

HOSTILE = (
    '<script id="pwn-script">window.__pwned=1</script>'
    '<img id="pwn-img" src=x onerror="window.__pwned=2">'
    '<marquee id="pwn-marquee">m</marquee>'
    " [click me](javascript:window.__pwned=3) $\\frac{1}{0}$ **bold** \\"
)
PROVIDER = "evil" + HOSTILE + " http://evil.test/autolink"
BENCHMARK = "bench![pic](http://127.0.0.1:9/pwn.png) [l](http://evil.test/md) $x^2$ :red[r] # h"
"""A QA benchmark id carrying a Markdown image, a link, LaTeX, a colour directive and a heading marker."""
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
CHECK = """() => ({
  pwned: window.__pwned === undefined ? null : window.__pwned,
  ids: ['pwn-script', 'pwn-img', 'pwn-marquee'].filter(id => document.getElementById(id) !== null),
  jsLinks: document.querySelectorAll('a[href^="javascript:"]').length,
  badImgs: document.querySelectorAll('img[src="x"], img[src*="pwn"]').length,
  evilLinks: document.querySelectorAll('a[href*="evil.test"]').length,
  latex: document.querySelectorAll('.katex').length,
  text: document.body.innerText,
})"""


def hostile_results(pmb: Path, dest: Path) -> dict[str, str]:
    """A results folder whose every free-text field is hostile; returns the query string per page."""
    shutil.copytree(pmb / "fixtures", dest / "fixtures")
    cases = json.loads((dest / "fixtures/retrieval.cases.json").read_text())
    cases[0]["description"] = HOSTILE + cases[0]["description"]
    cases[0]["query"] = HOSTILE
    (dest / "fixtures/retrieval.cases.json").write_text(json.dumps(cases))
    sessions = json.loads((dest / "fixtures/session-retrieval.cases.json").read_text())
    sessions[0]["turns"][0]["userMessage"] = HOSTILE
    (dest / "fixtures/session-retrieval.cases.json").write_text(json.dumps(sessions))
    base = pmb / "test-results/baseline"
    for name in ("retrieval-report-tenure.json", "session-retrieval-report-tenure.json"):
        shutil.copy(base / name, dest / name)
    for name in ("retrieval-report-mem0.json", "session-retrieval-report-mem0.json"):
        doc = json.loads((base / name).read_text())
        doc["provider"] = PROVIDER
        doc["cases"][0]["failures"] = [HOSTILE]
        (dest / f"evil-{name}").write_text(json.dumps(doc))
    (dest / "retrieval-report-<img src=x onerror=alert(1)>.json").write_text("{")
    qa = {
        "schema_version": 1,
        "run": {"benchmark": BENCHMARK, "system": PROVIDER, "answer_model": HOSTILE, "judge_models": [HOSTILE]},
        "questions": [
            {"benchmark": BENCHMARK, "question_id": "q1", "question": HOSTILE, "gold_answer": HOSTILE,
             "answer": HOSTILE, "verdicts": [{"judge": "a" + HOSTILE, "score": 1, "scale": "binary"},
                          {"judge": "b", "score": 0, "scale": "binary"}]},
        ],
    }  # fmt: skip
    (dest / "qa-run.json").write_text(json.dumps(qa))
    first_case = cases[0]["caseId"]
    return {
        "compare": f"?a={quote(PROVIDER)}&b=tenure&case={quote(first_case)}",
        "case": f"?case={quote(first_case)}",
        "qa_leaderboard": f"?benchmark={quote(BENCHMARK)}",
        "judges": f"?benchmark={quote(BENCHMARK)}",
        "run": f"?run={quote(PROVIDER)}",
    }


def page_paths() -> list[str]:
    tree = ast.parse((ROOT / "app.py").read_text())
    pages = next(n.value for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "PAGES")
    return [Path(ast.literal_eval(p)[0]).stem for p in pages.elts]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def server(pmb_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    results = tmp_path_factory.mktemp("hostile")
    params = hostile_results(pmb_results, results)
    with serve_app(results, tmp_path_factory.mktemp("log"), {"MEMEVAL_MAX_UPLOAD_MB": "5"}) as url:
        yield url, params


def test_no_injected_script_runs_on_any_page(chromium: dict[str, Any], server: tuple[str, dict[str, str]]) -> None:
    url, params = server
    seen_literally = []
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        try:
            page = browser.new_context(viewport={"width": 1600, "height": 1200}).new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            for name in page_paths():
                page.goto(f"{url}/{'' if name == 'home' else name}{params.get(name, '')}")
                page.wait_for_selector(IDLE, timeout=60_000)
                page.wait_for_timeout(1500)
                page.wait_for_selector(IDLE, timeout=60_000)
                state = page.evaluate(CHECK)
                assert state["pwned"] is None, f"{name}: injected script ran ({state['pwned']})"
                assert state["ids"] == [], f"{name}: injected elements exist: {state['ids']}"
                assert state["jsLinks"] == 0, f"{name}: a javascript: link was rendered"
                assert state["badImgs"] == 0, f"{name}: an injected <img> was rendered"
                assert state["evilLinks"] == 0, f"{name}: a link from a result file was rendered"
                assert state["latex"] == 0, f"{name}: LaTeX from a result file was rendered"
                if "<marquee" in state["text"] or "onerror" in state["text"]:
                    seen_literally.append(name)
            assert dialogs == []
        finally:
            browser.close()
    # The hostile text is still shown to the reader, as text.
    assert {"compare", "case"} <= set(seen_literally), seen_literally
