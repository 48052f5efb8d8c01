"""Issue 22's figures: the app's first page from a results dataset on the Hub (the local stand-in) against the
same runs in a folder, at growing sizes.

At each size (bench_core's corpus: PMB single-turn runs plus a tenth as many LoCoMo runs of 1,540 questions),
the folder is loaded once (which writes memeval's cache) and its runs are pushed to a dataset on a local Hub
stand-in (``tests/hub_standin.py``, served from this process). Then, each in a fresh interpreter running the
app's home page in AppTest:

- folder: ``MEMEVAL_RESULTS=<folder>``, warm cache;
- dataset, first start: ``MEMEVAL_RESULTS=hf://datasets/...`` with an empty Hugging Face cache;
- dataset, second start: the same revision again, with that cache.

Reported per size: seconds to the rendered page, the child's peak RSS, and the response bytes the stand-in
sent (first and second start). Targets: the dataset's first page takes at most 2x the folder's; bytes and
memory flat in the number of runs, or close to it.

    python -m bench.bench_hub [--quick] [--sizes 900x100,4500x500,10000x1000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from huggingface_hub import constants

from bench.bench_core import make_corpus
from bench.common import parse_args, ratio, report, run_python
from memeval_core.hub_results import push_runs
from memeval_core.results import load_all_results
from tests.hub_standin import HUB_TOKEN, HubStandIn

HOME_CHILD = """
import time
from streamlit.testing.v1 import AppTest
t0 = time.perf_counter()
at = AppTest.from_file("app.py", default_timeout=3600)
at.run()
RESULT = dict(seconds=time.perf_counter() - t0, exceptions=[str(e.message)[:300] for e in at.exception],
              errors=[str(e.value)[:300] for e in at.error], tables=len(at.dataframe))
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


def measure(size: tuple[int, int], work: Path, hub: HubStandIn) -> dict[str, Any]:
    """Folder and dataset first pages at one size."""
    n_pmb, n_qa = size
    folder = work / f"corpus-{n_pmb}"
    make_corpus(folder, n_pmb, n_qa)
    env = {"MEMEVAL_CACHE_DIR": str(work / "cache"), "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_TELEMETRY": "1"}
    run_python(LOAD_CHILD.format(root=str(folder)), env=env)  # the cold load, which writes memeval's cache
    pmb, qa = load_all_results(folder, folder, cache_dir=work / "cache")
    repo = f"standin-user/results-{n_pmb}"
    push_runs(pmb, qa, repo, token=HUB_TOKEN, results=folder)
    del pmb, qa
    local = _home({**env, "MEMEVAL_RESULTS": str(folder)})
    hub_env = {**env, "MEMEVAL_RESULTS": f"hf://datasets/{repo}", "HF_HOME": str(work / f"hf-{n_pmb}")}
    start = len(hub.requests)
    first = _home(hub_env)
    first_bytes, first_requests = hub.bytes_sent(start), len(hub.requests) - start
    start = len(hub.requests)
    second = _home(hub_env)
    stored = sum(len(f.data) for f in hub.repo("dataset", repo).files.values())
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "runs": n_pmb + n_qa,
        "folder_s": local["seconds"],
        "folder_peak_mib": local["peak_rss_mib"],
        "hub_first_s": first["seconds"],
        "hub_first_peak_mib": first["peak_rss_mib"],
        "hub_first_bytes": first_bytes,
        "hub_first_requests": first_requests,
        "hub_second_s": second["seconds"],
        "hub_second_bytes": hub.bytes_sent(start),
        "hub_second_requests": len(hub.requests) - start,
        "dataset_bytes": stored,
    }


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""

    def sizes(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sizes", default="900x100,4500x500,10000x1000", help="PMBxLoCoMo runs per size")

    args = parse_args(__doc__ or "", argv, sizes)
    chosen = [(20, 2)] if args.quick else [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    constants.HF_HUB_DISABLE_XET = True  # the stand-in speaks git LFS, not Xet
    work = Path(tempfile.mkdtemp(prefix="memeval-bench-hub-"))
    results = []
    try:
        with HubStandIn(HUB_TOKEN) as hub:
            os.environ["HF_ENDPOINT"] = hub.url  # this process pushes; the children read
            for size in chosen:
                results.append(measure((size[0], size[1]), work, hub))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [
        {
            "runs": r["runs"],
            "folder first page (s)": r["folder_s"],
            "hub first page (s)": r["hub_first_s"],
            "ratio": ratio(r["hub_first_s"], r["folder_s"]),
            "hub second start (s)": r["hub_second_s"],
            "first page bytes": r["hub_first_bytes"],
            "second start bytes": r["hub_second_bytes"],
            "dataset bytes": r["dataset_bytes"],
            "hub peak RSS (MiB)": r["hub_first_peak_mib"],
            "folder peak RSS (MiB)": r["folder_peak_mib"],
        }
        for r in results
    ]
    report("bench_hub", args, rows, {"sizes": results, "targets": {"first_page_ratio_at_most": TARGET_RATIO}})


if __name__ == "__main__":
    main()
