"""The columnar core's targets (issue 19): the CLI leaderboard on a synthetic corpus of up to 11,000 runs.

The corpus is made from the shared data's shapes (:func:`bench.bench_ingest.make_pmb_runs` and
:func:`bench.bench_ingest.make_qa_runs`): PMB single-turn and session reports with seeded perturbations, and
LoCoMo runs of 1,540 questions each (the memobase mem0-eval file with seeded verdict flips), in one results
folder with the PMB fixtures and locomo10.json, as `python -m memeval_core sync` lays them out. Sizes: 900 + 100,
4,500 + 500 and 10,000 + 1,000 runs (PMB + LoCoMo).

At each size, each in a fresh interpreter:

- the floor: read and ``orjson``-parse every JSON file once;
- start-up: ``python -m memeval_core leaderboard`` on an empty folder;
- cold: the leaderboard with the cache off; first: with an empty cache (writes it); warm: the same cache again,
  in paired rounds (a start-up, then a warm start), the median of whose differences is the warm figure
  (``warm_beyond_startup_s``; ``warm_s`` and ``startup_s`` are the best starts, so they need not differ by it).

Targets: cold - start-up <= 2x the floor; warm - start-up <= 0.5 s; peak RSS <= 1 GiB cold and <= 300 MiB
warm; warm memory flat in the number of runs. The leaderboard of every start must be the same. Peaks are the
CLI process's; ``cold_workers_peak_mib`` is the largest worker process's (its RSS counts the pages it shares
with the CLI process after the fork, so the two do not simply add).

    python -m bench.bench_core [--quick] [--sizes 900x100,4500x500,10000x1000]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_ingest import FLOOR_CHILD, LOCOMO_DIR, PMB_DIR, QA_BASE, SEED, _age, make_pmb_runs, make_qa_runs
from bench.common import SHARED_DATA, parse_args, ratio, report, run_python

CLI_CHILD = """
import contextlib, hashlib, io, os, runpy, sys, tempfile, time
t0 = time.perf_counter()
fd, path = tempfile.mkstemp(suffix=".json")
out = io.TextIOWrapper(os.fdopen(fd, "wb"), encoding="utf-8")  # a file, as when the output is redirected
sys.argv = ["memeval_core", "leaderboard", "--results", {results!r}, "--format", "json"]
code = 0
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        runpy.run_module("memeval_core", run_name="__main__")
    except SystemExit as exc:
        code = exc.code or 0
out.flush()
seconds = time.perf_counter() - t0
with open(path, "rb") as f:
    digest = hashlib.file_digest(f, "sha256").hexdigest()
os.unlink(path)
RESULT = dict(seconds=seconds, exit=code, digest=digest)
"""

TARGETS = {"cold_x_floor": 2.0, "warm_s": 0.5, "cold_peak_mib": 1024.0, "warm_peak_mib": 300.0}


def make_corpus(root: Path, n_pmb: int, n_qa: int) -> None:
    """A results folder of ``n_pmb`` PMB reports and ``n_qa`` LoCoMo runs, with fixtures and locomo10.json."""
    rng = random.Random(SEED)
    make_pmb_runs(root / "precisionmembench", n_pmb, rng)
    make_qa_runs(root / "qa", n_qa, rng)
    (root / "locomo").mkdir(parents=True)
    shutil.copyfile(LOCOMO_DIR / "data" / "locomo10.json", root / "locomo" / "locomo10.json")
    _age(root)


def _cli(results: Path, cache: Path | None) -> dict[str, Any]:
    env = {"MEMEVAL_CACHE_DIR": str(cache) if cache is not None else "off"}
    return run_python(CLI_CHILD.format(results=str(results)), env)


def measure(root: Path, empty: Path, repeat: int, warm_rounds: int) -> dict[str, Any]:
    """Floor, start-up, cold, first and warm starts of one corpus (best of ``repeat`` where repeated).

    Warm is measured in ``warm_rounds`` paired rounds, each a start-up on the empty folder and right after it
    a warm start: the target's measure is the median of the rounds' differences, which the machine's load
    moves less than a difference of two bests."""
    floor = min((run_python(FLOOR_CHILD.format(root=str(root))) for _ in range(repeat)), key=lambda r: r["floor_s"])
    startup = min((_cli(empty, None) for _ in range(repeat)), key=lambda r: r["seconds"])
    cold = min((_cli(root, None) for _ in range(repeat)), key=lambda r: r["seconds"])
    cache = root.parent / f".cache-{root.name}"
    shutil.rmtree(cache, ignore_errors=True)
    first = _cli(root, cache)
    rounds = [(_cli(empty, None), _cli(root, cache)) for _ in range(warm_rounds)]
    shutil.rmtree(cache, ignore_errors=True)
    beyond = [w["seconds"] - s["seconds"] for s, w in rounds]
    warm = min((w for _, w in rounds), key=lambda r: r["seconds"])
    base = min([startup, *(s for s, _ in rounds)], key=lambda r: r["seconds"])["seconds"]
    return {
        "files": floor["files"],
        "mb": floor["bytes"] / 1e6,
        "floor_s": floor["floor_s"],
        "startup_s": base,
        "cold_s": cold["seconds"],
        "first_s": first["seconds"],
        "warm_s": warm["seconds"],
        "cold_x_floor": ratio(cold["seconds"] - base, floor["floor_s"]),
        "warm_beyond_startup_s": statistics.median(beyond),
        "warm_beyond_startup_rounds_s": beyond,
        "cold_peak_mib": cold["peak_rss_mib"],
        "cold_workers_peak_mib": cold["workers_peak_rss_mib"],
        "first_peak_mib": first["peak_rss_mib"],
        "warm_peak_mib": max(w["peak_rss_mib"] for _, w in rounds),
        "same_leaderboard": len({cold["digest"], first["digest"], *(w["digest"] for _, w in rounds)}) == 1,
        "exit_codes": [cold["exit"], first["exit"], *(w["exit"] for _, w in rounds)],
    }


def _met(point: dict[str, Any]) -> dict[str, bool]:
    return {
        "cold_x_floor": point["cold_x_floor"] <= TARGETS["cold_x_floor"],
        "warm_s": point["warm_beyond_startup_s"] <= TARGETS["warm_s"],
        "cold_peak_mib": point["cold_peak_mib"] <= TARGETS["cold_peak_mib"],
        "warm_peak_mib": point["warm_peak_mib"] <= TARGETS["warm_peak_mib"],
    }


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="900x100,4500x500,10000x1000", help="PMBxLoCoMo run counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=2, help="starts of each kind per size; the best counts")
    parser.add_argument(
        "--warm-rounds", type=_positive, default=7, help="paired start-up + warm rounds per size (at least 1)"
    )


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""
    args = parse_args(__doc__ or "", argv, _options)
    if not PMB_DIR.is_dir() or not QA_BASE.is_file():
        raise SystemExit(f"{SHARED_DATA} is absent: this benchmark reads the public data there")
    sizes = [(8, 2)] if args.quick else [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="memeval-bench-core-"))
    rows, points = [], []
    try:
        empty = work / "empty"
        empty.mkdir()
        for n_pmb, n_qa in sizes:
            root = work / f"corpus-{n_pmb}-{n_qa}"
            make_corpus(root, n_pmb, n_qa)
            repeat, rounds = (1, 1) if args.quick else (args.repeat, args.warm_rounds)
            point = {"pmb_runs": n_pmb, "qa_runs": n_qa, **measure(root, empty, repeat, rounds)}
            point["met"] = _met(point)
            points.append(point)
            rows.append({k: v for k, v in point.items() if k not in ("met", "exit_codes")})
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report("bench_core", args, rows, {"points": points, "targets": TARGETS})


if __name__ == "__main__":
    main()
