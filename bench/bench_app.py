"""The app at scale: page run times (AppTest) and time to a visible leaderboard in headless Chromium.

Two results directories, side by side in one run: the public PMB data (13 single-turn + 11 session runs) and a
synthetic one (``RUNS`` single-turn runs x ``ITEMS`` cases: the real fixture's 77 cases cloned under new ids,
the real baseline reports' entries copied onto every clone with seeded latencies). For each directory:

- the first start of the app in a fresh process (load from the on-disk cache, or cold the very first time);
- AppTest run time of the leaderboard, categories and compare pages with the data already in memory (what a
  click costs), each page in a fresh AppTest;
- ``streamlit run app.py`` in headless Chromium: time from navigation until the leaderboard table is visible
  and the script has finished, and the server's peak resident memory (``VmHWM``). These run in paired
  rounds (a fresh server on each directory per round, the order alternating); the ratio is the median of
  the rounds' ratios, the times shown the best.

Ratios are synthetic / public for the same page. The default size is the issue's (1,000 runs x 2,000 cases,
2 GB of JSON); ``--runs`` and ``--items`` choose another. ``--corpus core`` measures issue 19's corpus instead:
``--runs`` PMB single-turn runs (default 10,000) plus a tenth as many LoCoMo runs of 1,540 questions
(:func:`bench.bench_core.make_corpus`), against the whole of ``../shared/data`` (PMB and QA); the pages are
the issue's (home, PMB details, categories, compare), and the browser also opens each of them after the
home page, so the server's peak covers all four. The first start on the synthetic folder is a cold
load (nothing cached yet) and is reported with its peak memory; the browser part then starts a fresh server,
which reads the on-disk cache.

    python -m bench.bench_app [--quick] [--runs N] [--items M] [--corpus wide|core]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.bench_core import make_corpus
from bench.common import SHARED_DATA, parse_args, ratio, report, run_python
from docs.screenshot import CHROMIUM, CHROMIUM_ARGS, IDLE, serve_process

PMB_DIR = SHARED_DATA / "precisionmembench"
PAGES = (
    "pages/home.py",
    "pages/leaderboard.py",
    "pages/categories.py",
    "pages/compare.py",
    "pages/latency.py",
    "pages/case.py",
)
TARGET_PAGES = PAGES[:4]
"""The pages the issue's <= 2x target names; the others are measured for information."""
WALK = ("leaderboard", "categories", "compare")
"""URL paths the browser opens after the home page in ``--corpus core`` (each shows a table)."""
TABLE = '[data-testid="stDataFrame"]'
OLD_NS = 1_700_000_000 * 10**9
BROWSER_ROUNDS = 5
"""Paired browser rounds (a fresh server on each directory per round); the ratio is their median."""
SEED = 20260601

APPTEST_CHILD = """
import time
from streamlit.testing.v1 import AppTest
t0 = time.perf_counter()
at = AppTest.from_file("app.py", default_timeout=3600)
at.run()
t1 = time.perf_counter()
pages = {{}}
for page in {pages!r}:
    best = None
    for _ in range({repeat}):
        fresh = AppTest.from_file("app.py", default_timeout=3600)
        fresh.switch_page(page)
        s = time.perf_counter()
        fresh.run()
        took = time.perf_counter() - s
        best = took if best is None else min(best, took)
        errors = [str(e.message)[:300] for e in fresh.exception]
    pages[page] = dict(seconds=best, exceptions=errors)
RESULT = dict(first_start_s=t1 - t0, pages=pages)
"""


def make_results(out: Path, runs: int, items: int) -> None:
    """Fixture with ``items`` cases (clones of the real 77) and ``runs`` single-turn reports covering them all."""
    rng = random.Random(SEED)
    fixtures = out / "fixtures"
    fixtures.mkdir(parents=True)
    cases = orjson.loads((PMB_DIR / "fixtures" / "retrieval.cases.json").read_bytes())
    clones = []
    for j in range(items):
        c = dict(cases[j % len(cases)])
        c["caseId"] = f"{c['caseId']}~{j // len(cases)}"
        clones.append(c)
    (fixtures / "retrieval.cases.json").write_bytes(orjson.dumps(clones))
    for name in ("session-retrieval.cases.json", "beliefs.seed.json"):
        shutil.copyfile(PMB_DIR / "fixtures" / name, fixtures / name)
    bases = []
    for p in sorted((PMB_DIR / "test-results").rglob("*.json")):
        doc = orjson.loads(p.read_bytes())
        if doc.get("cases") and "turnIndex" not in doc["cases"][0]:
            bases.append(doc)
    for i in range(runs):
        base = bases[i % len(bases)]
        by_id = {e["caseId"]: e for e in base["cases"]}
        entries = []
        for c in clones:
            e = dict(by_id[c["caseId"].split("~")[0]])
            e["caseId"] = c["caseId"]
            e["retrievalLatencyMs"] = round(rng.uniform(5, 900), 2)
            entries.append(e)
        doc = {k: v for k, v in base.items() if k not in ("cases", "ingestion")}
        doc["provider"] = f"sys{i:04d}"
        doc["cases"] = entries
        folder = out / "runs" / f"run{i:04d}"
        folder.mkdir(parents=True)
        (folder / f"retrieval-report-sys{i:04d}.json").write_bytes(orjson.dumps(doc))
    for p in out.rglob("*"):
        os.utime(p, ns=(OLD_NS, OLD_NS))


def _vm_hwm_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def browser(results: Path, env: dict[str, str], timeout_s: float, walk: tuple[str, ...] = ()) -> dict[str, Any]:
    """Start ``streamlit run app.py`` on ``results``; time navigation -> visible leaderboard table, twice; then
    each page of ``walk`` (URL paths) until its script has finished."""
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, serve_process(results, Path(tmp) / "server.log", env, 120) as server:
        url, proc = server
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
            try:
                for label in ("first_visit_s", "second_visit_s"):
                    page = b.new_context(viewport={"width": 1600, "height": 1200}).new_page()
                    start = time.perf_counter()
                    page.goto(url)
                    page.wait_for_selector(f"{TABLE}:visible", timeout=timeout_s * 1000)
                    page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
                    out[label] = time.perf_counter() - start
                    page.close()
                for path in walk:
                    page = b.new_context(viewport={"width": 1600, "height": 1200}).new_page()
                    start = time.perf_counter()
                    page.goto(f"{url}/{path}")
                    page.wait_for_selector(f"{TABLE}:visible", timeout=timeout_s * 1000)
                    page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
                    out[f"{path}_s"] = time.perf_counter() - start
                    page.close()
            finally:
                b.close()
        out["server_peak_rss_mib"] = _vm_hwm_mib(proc.pid)
    return out


def measure(
    results: Path, env: dict[str, str], repeat: int, timeout_s: float, pages: tuple[str, ...] = PAGES
) -> dict[str, Any]:
    """AppTest page times (fresh process) of one results directory."""
    code = APPTEST_CHILD.format(pages=pages, repeat=repeat)
    return {"apptest": run_python(code, env={**env, "MEMEVAL_RESULTS": str(results)}, timeout=timeout_s * 10)}


def _browser_or_error(results: Path, env: dict[str, str], timeout_s: float, walk: tuple[str, ...]) -> dict[str, Any]:
    try:
        return browser(results, env, timeout_s, walk)
    except Exception as exc:  # the page timings stand on their own; say why the browser part is missing
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}


def browser_rounds(
    dirs: dict[str, Path], env: dict[str, str], rounds: int, timeout_s: float, walk: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """``rounds`` paired browser measurements: in each, a fresh server on every directory, one after the other.

    The order alternates from round to round, so that neither side always runs first after the other's load.
    """
    out = []
    for k in range(rounds):
        names = list(dirs) if k % 2 == 0 else list(reversed(dirs))
        out.append({name: _browser_or_error(dirs[name], env, timeout_s, walk) for name in names})
    return out


def _browser_summary(rounds: list[dict[str, Any]], side: str) -> dict[str, Any]:
    """One side's best visit times and highest server peak over the rounds (or the first error)."""
    ok = [r[side] for r in rounds if "error" not in r[side]]
    if not ok:
        return {"error": rounds[0][side]["error"]} if rounds else {"error": "no rounds"}
    walked = {
        k: min(r[k] for r in ok) for k in ok[0] if k.endswith("_s") and k not in ("first_visit_s", "second_visit_s")
    }
    return {
        **walked,
        "first_visit_s": min(r["first_visit_s"] for r in ok),
        "second_visit_s": min(r["second_visit_s"] for r in ok),
        "server_peak_rss_mib": max((r["server_peak_rss_mib"] or 0.0) for r in ok),
        "rounds": len(ok),
    }


def _paired(rounds: list[dict[str, Any]], key: str) -> list[float]:
    """Per round with both sides measured: synthetic / public for ``key``."""
    both = [r for r in rounds if "error" not in r["public"] and "error" not in r["synthetic"]]
    return [r["synthetic"][key] / r["public"][key] for r in both]


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""

    def sizes(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--runs", type=int, help="synthetic single-turn runs (default 1,000; core: 10,000)")
        parser.add_argument("--items", type=int, default=2_000, help="cases per synthetic run (default 2,000)")
        parser.add_argument("--corpus", choices=("wide", "core"), default="wide", help="see the module docstring")

    args = parse_args(__doc__ or "", argv, sizes)
    if not PMB_DIR.is_dir():
        raise SystemExit(f"{PMB_DIR} is absent: this benchmark reads the public PMB data")
    core = args.corpus == "core"
    runs = args.runs or (10_000 if core else 1_000)
    runs, items = (5, 100) if args.quick else (runs, args.items)
    pages, walk = (TARGET_PAGES, WALK) if core else (PAGES, ())
    public_dir = SHARED_DATA if core else PMB_DIR
    size = f"{runs} PMB + {max(1, runs // 10)} LoCoMo" if core else f"{runs} x {items}"
    # Pages take a few tenths of a second: nine fresh AppTests each, so that the best is an undisturbed one.
    repeat = 1 if args.quick else 9
    rounds = 1 if args.quick else BROWSER_ROUNDS
    work = Path(tempfile.mkdtemp(prefix="memeval-bench-app-"))
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(work / "cache")}
    env.pop("MEMEVAL_FIXTURES", None)
    try:
        t = time.perf_counter()
        if core:
            make_corpus(work / "synthetic", runs, max(1, runs // 10))
        else:
            make_results(work / "synthetic", runs, items)
        generate_s = time.perf_counter() - t
        base = measure(public_dir, env, repeat, 600, pages)
        synth = measure(work / "synthetic", env, repeat, 1800, pages)
        dirs = {"public": public_dir, "synthetic": work / "synthetic"}
        web = browser_rounds(dirs, env, rounds, 1800, walk)
        base["browser"], synth["browser"] = _browser_summary(web, "public"), _browser_summary(web, "synthetic")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    public = "public (s)" if core else "public 13+11 runs (s)"
    rows = []
    for page in pages:
        b = base["apptest"]["pages"][page]["seconds"]
        s = synth["apptest"]["pages"][page]["seconds"]
        label = f"AppTest {page}" + ("" if page in TARGET_PAGES else " (info)")
        rows.append({"measure": label, public: b, f"{size} (s)": s, "ratio": ratio(s, b)})
    rows.append(
        {
            "measure": "AppTest process peak RSS, cold first start (MiB)",
            public: base["apptest"].get("peak_rss_mib"),
            f"{size} (s)": synth["apptest"].get("peak_rss_mib"),
            "ratio": None,
        }
    )
    rows.append(
        {
            "measure": "largest process below the AppTest process, cold first start (the load's own or a worker; MiB)",
            public: base["apptest"].get("workers_peak_rss_mib"),
            f"{size} (s)": synth["apptest"].get("workers_peak_rss_mib"),
            "ratio": None,
        }
    )
    rows.append(
        {
            "measure": "app first start (cold load)",
            public: base["apptest"]["first_start_s"],
            f"{size} (s)": synth["apptest"]["first_start_s"],
            "ratio": ratio(synth["apptest"]["first_start_s"], base["apptest"]["first_start_s"]),
        }
    )
    paired: dict[str, list[float]] = {}
    for key, label in (
        ("first_visit_s", "browser: table visible, 1st visit"),
        ("second_visit_s", "browser: table visible, 2nd visit"),
        *((f"{path}_s", f"browser: /{path} table visible") for path in walk),
    ):
        paired[key] = _paired(web, key)
        rows.append(
            {
                "measure": f"{label} (best; ratio: median of {len(paired[key])} paired rounds)",
                public: base["browser"].get(key),
                f"{size} (s)": synth["browser"].get(key),
                "ratio": statistics.median(paired[key]) if paired[key] else None,
            }
        )
    rows.append(
        {
            "measure": "server peak RSS (MiB)",
            public: base["browser"].get("server_peak_rss_mib"),
            f"{size} (s)": synth["browser"].get("server_peak_rss_mib"),
            "ratio": None,
        }
    )
    details = {
        "corpus": args.corpus,
        "synthetic_runs": runs,
        "synthetic_items": items,
        "generate_seconds": generate_s,
        "public": base,
        "synthetic": synth,
        "browser_rounds": web,
        "browser_paired_ratios": paired,
        "targets": {"page_ratio_at_most": 2, "server_peak_rss_mib_below": 1024},
    }
    report("bench_app", args, rows, details)
    print(json.dumps({"page_exceptions": {p: synth["apptest"]["pages"][p]["exceptions"] for p in pages}}))


if __name__ == "__main__":
    main()
