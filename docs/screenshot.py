"""Start the app and capture its pages in headless Chromium at 1440×900 (the README's image comes from here).

    .venv/bin/python docs/screenshot.py --results ../shared/data --out docs/home.png
    .venv/bin/python docs/screenshot.py --results ../shared/data --all tests/artifacts/

Needs Debian's ``chromium`` (``apt-get install chromium``) and the ``playwright`` Python package; playwright's
own browser download is not used.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORT = {"width": 1440, "height": 900}
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
"""The app is idle: its script finished (wait for it after every load and interaction)."""
CHARTS_DRAWN = (
    "() => !document.querySelector('[data-testid=\"stSkeleton\"]')"
    " && [...document.querySelectorAll('.stPlotlyChart')].every(c => c.querySelector('.main-svg'))"
)
"""No element is still a loading placeholder, and every plotly chart has drawn its SVG."""
PAGES = ("home", "leaderboard", "categories", "session_drift", "latency", "case", "qa_leaderboard", "judges",
         "compare", "run", "upload", "publish")  # fmt: skip
"""URL paths of the app's pages (file stems)."""
START_LIMIT_S = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serve_process(
    results: Path, log: Path, env: dict[str, str] | None = None, start_limit_s: float = START_LIMIT_S
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``streamlit run app.py`` over ``results`` on a free port; yields (URL, process) and stops it after.

    The one way the project starts the app for a browser: tests, benchmarks and screenshots.
    """
    port = free_port()
    full_env = {**os.environ, **(env or {}), "MEMEVAL_RESULTS": str(results)}
    full_env.pop("MEMEVAL_FIXTURES", None)
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
           str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]  # fmt: skip
    with log.open("wb") as out:
        # A log file rather than a pipe: an unread pipe would block the server once it fills.
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(proc, url, log, start_limit_s)
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path, limit_s: float) -> None:
    """Poll the health endpoint until the server answers (a startup wait, not a speed assertion)."""
    deadline = time.monotonic() + limit_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if requests.get(f"{url}/_stcore/health", timeout=2).text.strip() == "ok":
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not answer on {url} within {limit_s:.0f} s")
        time.sleep(0.2)


@contextmanager
def serve(results: Path, log: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """:func:`serve_process`, yielding only the URL."""
    with serve_process(results, log, env) as (url, _):
        yield url


def open_page(page: Any, url: str) -> None:
    """Go to ``url`` and wait until the app is idle and its charts are drawn."""
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=180_000)
    page.wait_for_timeout(1500)  # plotly and late widgets draw after the script run ends
    page.wait_for_selector(IDLE, timeout=180_000)
    page.wait_for_function(CHARTS_DRAWN, timeout=60_000)


def capture(results: Path, targets: Sequence[tuple[str, Path]], log: Path, full_page: bool = False) -> None:
    """Screenshot each (URL path with query, file) of the app over ``results`` at 1440×900."""
    from playwright.sync_api import sync_playwright

    with serve(results, log) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport=VIEWPORT)
            for path, out in targets:
                open_page(page, f"{base}/{path}")
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out), full_page=full_page)
        finally:
            browser.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True, help="results directory the app shows")
    parser.add_argument("--out", help="PNG of the home page (the README's image)")
    parser.add_argument("--all", metavar="DIR", help="a PNG of every page into DIR")
    args = parser.parse_args(argv)
    targets: list[tuple[str, Path]] = []
    if args.out:
        targets.append(("", Path(args.out)))
    if args.all:
        targets += [(p, Path(args.all) / f"{p}.png") for p in PAGES]
    if not targets:
        parser.error("nothing to capture: pass --out and/or --all")
    log = Path(tempfile.gettempdir()) / f"memeval-screenshot-{os.getpid()}.log"  # the server's output, if it fails
    capture(Path(args.results).resolve(), targets, log)
    for _, out in targets:
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
