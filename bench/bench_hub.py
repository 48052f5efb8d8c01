"""Issue 22's figures: the app's first page from a results dataset on the Hub (the local stand-in) against the
same runs in a folder, at growing sizes.

At each size (bench_core's corpus: PMB single-turn runs plus a tenth as many LoCoMo runs of 1,540 questions),
the folder is loaded once (which writes memeval's cache) and its runs are pushed to a dataset on a local Hub
stand-in (``tests/hub_standin.py``, served from this process). Then, each in a fresh interpreter running the
app's home page in AppTest:

- folder: ``MEMEVAL_RESULTS=<folder>``, warm cache;
- dataset, first start: ``MEMEVAL_RESULTS=hf://datasets/...`` with an empty Hugging Face cache;
- dataset, second start: the same revision again, with that cache.

- dataset after a push: one more push (the last 1 % of the PMB runs, held back until now) makes a new
  revision; the app starts again with the cache of the first two starts.

``--parts N`` pushes the runs (less the held-back ones) in N pushes of equal share, so the dataset has N parts,
as one grown by many contributors would.

After the last push, the home page's tables and the CLI's ``leaderboard --format json`` from the dataset must
equal the folder's, byte for byte (the script stops otherwise).

Reported per size: seconds to the rendered page, the child's peak RSS, and the requests and response bytes
the stand-in saw (first start, second start, after a push); the size of the manifest and the stored home page
(all the first page reads), and the time of the last push (which computes the home page over every run).
Targets: the dataset's first page takes at most 2x the folder's; bytes and memory flat in the number of runs,
or close to it; after a push, only the new part's files are fetched.

    python -m bench.bench_hub [--quick] [--sizes 900x100,4500x500,10000x1000] [--parts 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from huggingface_hub import constants

from bench.bench_core import make_corpus
from bench.common import parse_args, ratio, report, run_python
from memeval_core.explore.front import FRONT_FILE
from memeval_core.hub_results import MANIFEST, push_runs
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.qa.ingest import QaLoad
from memeval_core.results import load_all_results
from tests.hub_standin import HUB_TOKEN, HubStandIn

HOME_CHILD = """
import hashlib, time
from streamlit.testing.v1 import AppTest
t0 = time.perf_counter()
at = AppTest.from_file("app.py", default_timeout=3600)
at.run()
seconds = time.perf_counter() - t0
RESULT = dict(seconds=seconds, exceptions=[str(e.message)[:300] for e in at.exception],
              errors=[str(e.value)[:300] for e in at.error],
              tables=[hashlib.sha256(d.value.to_csv().encode()).hexdigest() for d in at.dataframe])
"""
LEADERBOARD_CHILD = """
import contextlib, hashlib, io
from memeval_core import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["leaderboard", "--results", {root!r}, "--format", "json"])
RESULT = dict(code=code, digest=hashlib.sha256(out.getvalue().encode()).hexdigest())
"""
LOAD_CHILD = """
from pathlib import Path
from memeval_core.results import load_headers
load_headers(Path({root!r}), Path({root!r}))
"""
TARGET_RATIO = 2.0


def _home(env: dict[str, str]) -> dict[str, Any]:
    result = run_python(HOME_CHILD, env=env)
    if result["exceptions"] or result["errors"] or not result["tables"]:
        raise RuntimeError(f"the home page failed: {result}")
    return result


def _pushes(pmb: PmbLoad, qa: QaLoad, parts: int) -> list[tuple[PmbLoad, QaLoad]]:
    """The runs in ``parts`` shares, less the last 1 % of the PMB runs (held back for the push after the starts)."""
    kept = pmb.runs[: len(pmb.runs) - max(1, len(pmb.runs) // 100)]
    return [
        (dataclasses.replace(pmb, runs=kept[n::parts]), dataclasses.replace(qa, runs=qa.runs[n::parts]))
        for n in range(parts)
    ]


def _start(hub: HubStandIn, env: dict[str, str]) -> dict[str, Any]:
    """The home page from the dataset in a fresh interpreter, with the requests and bytes the stand-in saw."""
    start = len(hub.requests)
    page = _home(env)
    return {**page, "requests": len(hub.requests) - start, "bytes": hub.bytes_sent(start)}


def measure(size: tuple[int, int], work: Path, hub: HubStandIn, parts: int) -> dict[str, Any]:
    """Folder and dataset first pages at one size."""
    n_pmb, n_qa = size
    folder = work / f"corpus-{n_pmb}"
    make_corpus(folder, n_pmb, n_qa)
    env = {"MEMEVAL_CACHE_DIR": str(work / "cache"), "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_TELEMETRY": "1"}
    run_python(LOAD_CHILD.format(root=str(folder)), env=env)  # the cold load, which writes memeval's cache
    pmb, qa = load_all_results(folder, folder, cache_dir=work / "cache")
    repo = f"standin-user/results-{n_pmb}-{parts}"
    for share in _pushes(pmb, qa, parts):
        push_runs(*share, repo, token=HUB_TOKEN, results=folder)
    local = _home({**env, "MEMEVAL_RESULTS": str(folder)})
    hub_env = {**env, "MEMEVAL_RESULTS": f"hf://datasets/{repo}", "HF_HOME": str(work / f"hf-{n_pmb}-{parts}")}
    first = _start(hub, hub_env)
    second = _start(hub, hub_env)
    t0 = time.perf_counter()
    push_runs(pmb, qa, repo, token=HUB_TOKEN, results=folder)  # the held-back runs: a new revision
    push_s = time.perf_counter() - t0
    del pmb, qa
    files = hub.repo("dataset", repo).files
    after = _start(hub, hub_env)
    stored = sum(len(f.data) for f in files.values())
    if after["tables"] != local["tables"]:  # the dataset now holds every run of the folder
        raise RuntimeError("the home page from the dataset differs from the folder's")
    roots = (str(folder), hub_env["MEMEVAL_RESULTS"])
    boards = [run_python(LEADERBOARD_CHILD.format(root=r), env=hub_env) for r in roots]
    if boards[0]["digest"] != boards[1]["digest"] or boards[0]["code"] != 0:
        raise RuntimeError(f"the CLI's leaderboard from the dataset differs from the folder's: {boards}")
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "runs": n_pmb + n_qa,
        "parts": parts + 1,
        "folder_s": local["seconds"],
        "folder_peak_mib": local["peak_rss_mib"],
        "hub_first_s": first["seconds"],
        "hub_first_peak_mib": first["peak_rss_mib"],
        "hub_first_bytes": first["bytes"],
        "hub_first_requests": first["requests"],
        "hub_second_s": second["seconds"],
        "hub_second_bytes": second["bytes"],
        "hub_second_requests": second["requests"],
        "hub_after_push_s": after["seconds"],
        "hub_after_push_bytes": after["bytes"],
        "hub_after_push_requests": after["requests"],
        "dataset_bytes": stored,
        "manifest_bytes": len(files[MANIFEST].data),
        "front_bytes": len(files[FRONT_FILE].data),
        "last_push_s": push_s,
        "leaderboard_sha256": boards[0]["digest"],
    }


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""

    def sizes(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sizes", default="900x100,4500x500,10000x1000", help="PMBxLoCoMo runs per size")
        parser.add_argument("--parts", type=int, default=1, help="pushes before the starts (parts of the dataset)")

    args = parse_args(__doc__ or "", argv, sizes)
    chosen = [(20, 2)] if args.quick else [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    constants.HF_HUB_DISABLE_XET = True  # the stand-in speaks git LFS, not Xet
    work = Path(tempfile.mkdtemp(prefix="memeval-bench-hub-"))
    constants.HF_HUB_CACHE = str(work / "hf-pushes")  # what the pushes read of the dataset, not the user's cache
    results = []
    try:
        with HubStandIn(HUB_TOKEN) as hub:
            os.environ["HF_ENDPOINT"] = hub.url  # this process pushes; the children read
            for size in chosen:
                results.append(measure((size[0], size[1]), work, hub, args.parts))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [
        {
            "runs": r["runs"],
            "parts": r["parts"],
            "folder first page (s)": r["folder_s"],
            "hub first page (s)": r["hub_first_s"],
            "ratio": ratio(r["hub_first_s"], r["folder_s"]),
            "hub second start (s)": r["hub_second_s"],
            "first page bytes": r["hub_first_bytes"],
            "first page requests": r["hub_first_requests"],
            "second start bytes": r["hub_second_bytes"],
            "second start requests": r["hub_second_requests"],
            "after a push (s)": r["hub_after_push_s"],
            "after a push bytes": r["hub_after_push_bytes"],
            "after a push requests": r["hub_after_push_requests"],
            "dataset bytes": r["dataset_bytes"],
            "manifest + home page bytes": r["manifest_bytes"] + r["front_bytes"],
            "last push (s)": r["last_push_s"],
            "hub peak RSS (MiB)": r["hub_first_peak_mib"],
            "folder peak RSS (MiB)": r["folder_peak_mib"],
        }
        for r in results
    ]
    report("bench_hub", args, rows, {"sizes": results, "targets": {"first_page_ratio_at_most": TARGET_RATIO}})


if __name__ == "__main__":
    main()
