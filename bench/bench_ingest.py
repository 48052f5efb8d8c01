"""Ingest and re-score from a cold start, against the floor of parsing the same bytes with orjson; warm starts.

1. Everything under ../shared/data (``load_all_results``, as the app loads it: the PMB
   reports beside the QA folders), each start in a fresh interpreter, side by side with a fresh interpreter
   that only reads and ``orjson``-parses every JSON/JSONL file once (the floor). The cold load runs as
   shipped (worker processes where the load is large enough, see ``worker_count``) and confined
   to one process. Import time is reported apart; a cProfile of the one-process cold load names what is
   slowest.
2. Synthetic scale: PMB-shaped runs (real baseline reports, seeded perturbation of returned ids and
   latencies, each its own provider) and LoCoMo-shaped runs (the real memobase mem0-eval file of 1,540
   questions with seeded verdict flips, each its own system, joined to locomo10.json), at three sizes up to
   1,000 + 200 runs: time and peak memory of a cold start, of the first start that also writes the cache,
   and of a warm start that reads it (``memeval_core.results``).

    python -m bench.bench_ingest [--quick]
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import orjson

from bench.common import SHARED_DATA, median_interval, parse_args, ratio, report, run_python
from memeval_core.settings import WORKERS_ENV

PMB_DIR = SHARED_DATA / "precisionmembench"
LOCOMO_DIR = SHARED_DATA / "locomo"
QA_BASE = SHARED_DATA / "memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"
OLD_NS = 1_700_000_000 * 10**9
SHARED_REPEAT = 40
"""Rounds on the shared data, each a fresh floor, cold load and one-process load, back to back (then as many
warm starts). The target's measure is the median of the rounds' paired ratios, with its 95 % interval: on
this noisy machine one round's ratio ranges from about 1.2 to 2.8, and 40 rounds narrow the interval to
about +-0.15."""
SEED = 20260501

LOAD_CHILD = """
import hashlib, json, time
from pathlib import Path
t0 = time.perf_counter()
from memeval_core import leaderboard
from memeval_core.results import load_all_results
t1 = time.perf_counter()
cache = None if {cache!r} is None else Path({cache!r})
# What `python -m memeval_core leaderboard` does: both loads at once, each cached on its own.
pmb, qa = load_all_results(Path({pmb!r}), Path({qa!r}), None, None if {datasets!r} is None else Path({datasets!r}),
                           cache_dir=cache)
t2 = time.perf_counter()
from memeval_core.pmb.runs_table import runs_table
digest = hashlib.sha256(json.dumps([
    leaderboard.table_rows(runs_table(pmb.runs)),
    [(r.run_id, r.score.accuracy, r.score.n_questions, r.publishable) for r in qa.runs],
    [str(e) for e in (*pmb.errors, *qa.errors)],
], sort_keys=True, default=str).encode()).hexdigest()
RESULT = dict(import_s=t1 - t0, load_s=t2 - t1, pmb_runs=len(pmb.runs), qa_runs=len(qa.runs),
              questions=sum(len(r.run.questions) for r in qa.runs), errors=len(pmb.errors) + len(qa.errors),
              digest=digest)
"""

FLOOR_CHILD = """
import os, time
from pathlib import Path
import orjson
t0 = time.perf_counter()
n = 0
size = 0
for dirpath, dirnames, filenames in os.walk({root!r}):
    dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    for name in sorted(filenames):
        if name.startswith(".") or not name.endswith((".json", ".jsonl")):
            continue
        raw = (Path(dirpath) / name).read_bytes()
        size += len(raw)
        n += 1
        if name.endswith(".jsonl"):
            for line in raw.splitlines():
                if line.strip():
                    orjson.loads(line)
        else:
            orjson.loads(raw[3:] if raw.startswith(b"\\xef\\xbb\\xbf") else raw)
RESULT = dict(floor_s=time.perf_counter() - t0, files=n, bytes=size)
"""

PROFILE_CHILD = """
import cProfile, io, pstats
from pathlib import Path
import memeval_core
from memeval_core.pmb.ingest import load_pmb
from memeval_core.qa.ingest import load_qa
ROOT = str(Path(memeval_core.__file__).parent.parent) + "/"
prof = cProfile.Profile()
prof.enable()
load_pmb(Path({pmb!r}))
load_qa(Path({qa!r}))
prof.disable()
stats = pstats.Stats(prof)
top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:40]
RESULT = dict(top_tottime=[
    dict(function=f"{{k[0].split('/site-packages/')[-1].removeprefix(ROOT)}}:{{k[1]}}({{k[2]}})",
         calls=v[1], tottime=round(v[2], 4), cumtime=round(v[3], 4))
    for k, v in top
])
"""


def _age(root: Path) -> None:
    """Set every mtime to a fixed past instant, so the cache does not treat the inputs as too fresh to key."""
    for p in root.rglob("*"):
        os.utime(p, ns=(OLD_NS, OLD_NS))


def make_pmb_runs(out: Path, n: int, rng: random.Random) -> None:
    """``n`` PMB-shaped reports from the real baselines: perturbed ids and latencies, one provider each."""
    fixtures = out / "fixtures"
    fixtures.mkdir(parents=True)
    for name in ("retrieval.cases.json", "session-retrieval.cases.json", "beliefs.seed.json"):
        shutil.copyfile(PMB_DIR / "fixtures" / name, fixtures / name)
    bases = sorted((PMB_DIR / "test-results").rglob("*.json"))
    docs = [(p.name, orjson.loads(p.read_bytes())) for p in bases]
    for i in range(n):
        name, doc = docs[i % len(docs)]
        doc = json.loads(json.dumps(doc))
        doc["provider"] = f"sys{i:04d}"
        for case in doc["cases"]:
            case["retrievalLatencyMs"] = round(rng.uniform(5, 900), 2)
            key = "retrievedBeliefIds" if "retrievedBeliefIds" in case else "relevantBeliefs"
            ids = case.get(key) or []
            if ids and rng.random() < 0.2:
                case[key] = ids[:-1]
        folder = out / "runs" / f"run{i:04d}"
        folder.mkdir(parents=True)
        (folder / name).write_bytes(orjson.dumps(doc))


def make_qa_runs(out: Path, n: int, rng: random.Random) -> None:
    """``n`` LoCoMo-shaped runs (1,540 questions each) from the real memobase file: ~10% verdicts flipped."""
    base = orjson.loads(QA_BASE.read_bytes())
    for i in range(n):
        doc = {
            conv: [{**q, "llm_score": 1 - q["llm_score"] if rng.random() < 0.1 else q["llm_score"]} for q in items]
            for conv, items in base.items()
        }
        folder = out / f"sys{i:04d}"
        folder.mkdir(parents=True)
        (folder / "memobase_eval.json").write_bytes(orjson.dumps(doc))


SERIAL = {WORKERS_ENV: "1"}
"""Environment of a load confined to one process (no worker processes)."""


def _load(
    pmb: Path, qa: Path, datasets: Path | None, cache: Path | None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    code = LOAD_CHILD.format(
        pmb=str(pmb),
        qa=str(qa),
        datasets=None if datasets is None else str(datasets),
        cache=None if cache is None else str(cache),
    )
    return run_python(code, env)


def _row(what: str, runs: int | None, seconds: float, x_floor: float | None, result: dict[str, Any]) -> dict[str, Any]:
    """One table row; peak memory of the measured process and of its largest worker from ``result``."""
    return {
        "what": what,
        "runs": runs,
        "seconds": seconds,
        "x floor": x_floor,
        "peak MiB": result["peak_rss_mib"],
        "worker peak MiB": result["workers_peak_rss_mib"],
    }


def shared_data_rows(repeat: int, work: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Cold load of ../shared/data vs the orjson floor, and the warm start from the cache, best of ``repeat``.

    Each repeat starts the floor, the cold load and the one-process load back to back, so that the paired
    ratios (reported beside best over best) share the machine's state; the cold load, the target's
    measure, comes right after its floor.
    """
    cache = work / "cache-shared"
    colds, serials, floors, warms = [], [], [], []
    for _ in range(repeat):
        floors.append(run_python(FLOOR_CHILD.format(root=str(SHARED_DATA))))
        colds.append(_load(PMB_DIR, SHARED_DATA, None, None))
        serials.append(_load(PMB_DIR, SHARED_DATA, None, None, SERIAL))
    _load(PMB_DIR, SHARED_DATA, None, cache)  # first start: writes the cache
    for _ in range(repeat):
        warms.append(_load(PMB_DIR, SHARED_DATA, None, cache))
    cold = min(colds, key=lambda r: r["load_s"])
    serial = min(serials, key=lambda r: r["load_s"])
    floor = min(floors, key=lambda r: r["floor_s"])
    warm = min(warms, key=lambda r: r["load_s"])
    paired = [c["load_s"] / f["floor_s"] for c, f in zip(colds, floors, strict=True)]
    # In one process, so that the profile sees all the work (a worker's share is invisible to cProfile).
    profile = run_python(PROFILE_CHILD.format(pmb=str(PMB_DIR), qa=str(SHARED_DATA)), SERIAL)
    rows = [
        _row("shared data: orjson parse floor", None, floor["floor_s"], 1.0, floor),
        *(
            _row(what, r["pmb_runs"] + r["qa_runs"], r["load_s"], ratio(r["load_s"], floor["floor_s"]), r)
            for what, r in (
                ("shared data: cold load + re-score (best; x floor: best over best)", cold),
                ("shared data: cold, one process", serial),
                ("shared data: warm start (cache)", warm),
            )
        ),
        {
            "what": f"shared data: cold load vs its floor, median of {len(paired)} paired rounds (the target)",
            "runs": cold["pmb_runs"] + cold["qa_runs"],
            "seconds": statistics.median(c["load_s"] for c in colds),
            "x floor": statistics.median(paired),
            "peak MiB": None,
            "worker peak MiB": None,
        },
    ]
    details = {
        "floor": floor,
        "cold": cold,
        "warm": warm,
        "cold_all": [c["load_s"] for c in colds],
        "cold_one_process": serial,
        "cold_one_process_all": [c["load_s"] for c in serials],
        "cold_one_process_vs_floor": ratio(serial["load_s"], floor["floor_s"]),
        "floor_all": [f["floor_s"] for f in floors],
        "warm_all": [w["load_s"] for w in warms],
        "cold_vs_floor": ratio(cold["load_s"], floor["floor_s"]),
        # Each round runs floor, cold and one-process back to back: the median of the paired ratios is the
        # target's measure, less at the mercy of one lucky floor than best over best.
        "cold_vs_floor_paired": paired,
        "cold_vs_floor_paired_median": statistics.median(paired),
        "cold_vs_floor_paired_median_ci95": median_interval(paired) if len(paired) >= 6 else None,
        "cold_vs_floor_median_over_median": ratio(
            statistics.median(c["load_s"] for c in colds), statistics.median(f["floor_s"] for f in floors)
        ),
        "cold_one_process_vs_floor_paired_median": statistics.median(
            c["load_s"] / f["floor_s"] for c, f in zip(serials, floors, strict=True)
        ),
        "warm_speedup": ratio(cold["load_s"], warm["load_s"]),
        "warm_equals_cold": warm["digest"] == cold["digest"],
        "import_seconds": cold["import_s"],
        "profile_top_tottime": profile["top_tottime"],
    }
    return rows, details


def scale_rows(
    sizes: list[tuple[int, int]], work: Path, repeat: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Cold (best of ``repeat``), first (writes the cache) and warm (best of ``repeat``) starts at each size."""
    rows, points = [], []
    for n_pmb, n_qa in sizes:
        rng = random.Random(SEED)
        root = work / f"scale-{n_pmb}-{n_qa}"
        make_pmb_runs(root / "pmb", n_pmb, rng)
        make_qa_runs(root / "qa", n_qa, rng)
        _age(root)
        cache = root / ".cache"
        colds = [_load(root / "pmb", root / "qa", LOCOMO_DIR, None) for _ in range(repeat)]
        first = _load(root / "pmb", root / "qa", LOCOMO_DIR, cache)
        warms = [_load(root / "pmb", root / "qa", LOCOMO_DIR, cache) for _ in range(repeat)]
        cold = min(colds, key=lambda r: r["load_s"])
        warm = min(warms, key=lambda r: r["load_s"])
        point = {
            "pmb_runs": n_pmb,
            "qa_runs": n_qa,
            "questions": cold["questions"],
            "cold_s": cold["load_s"],
            "cold_all": [c["load_s"] for c in colds],
            "warm_all": [w["load_s"] for w in warms],
            "first_start_s (load + write cache)": first["load_s"],
            "warm_s": warm["load_s"],
            "cold_peak_mib": cold["peak_rss_mib"],
            "cold_worker_peak_mib": cold["workers_peak_rss_mib"],
            "warm_peak_mib": warm["peak_rss_mib"],
            "warm_equals_cold": warm["digest"] == cold["digest"],
            "loaded_runs": cold["pmb_runs"] + cold["qa_runs"],
            "errors": cold["errors"],
        }
        points.append(point)
        label = f"{n_pmb} PMB + {n_qa} LoCoMo runs"
        rows.append(_row(f"{label}: cold", n_pmb + n_qa, cold["load_s"], None, cold))
        rows.append(_row(f"{label}: warm (cache)", n_pmb + n_qa, warm["load_s"], None, warm))
        shutil.rmtree(root, ignore_errors=True)
    return rows, points


def _per_run(points: list[dict[str, Any]]) -> dict[str, Any]:
    """Marginal cost per run between the smallest and largest size (linear growth: the ratios stay near 1)."""
    if len(points) < 2:
        return {}
    a, b = points[0], points[-1]
    runs_a, runs_b = a["pmb_runs"] + a["qa_runs"], b["pmb_runs"] + b["qa_runs"]
    out = {
        "cold_ms_per_run": (b["cold_s"] - a["cold_s"]) / (runs_b - runs_a) * 1e3,
        "warm_ms_per_run": (b["warm_s"] - a["warm_s"]) / (runs_b - runs_a) * 1e3,
        "cold_mib_per_run": (b["cold_peak_mib"] - a["cold_peak_mib"]) / (runs_b - runs_a),
    }
    out["time_per_run_ratio_largest_vs_smallest"] = (b["cold_s"] / runs_b) / (a["cold_s"] / runs_a)
    out["memory_per_run_ratio_largest_vs_smallest"] = (b["cold_peak_mib"] / runs_b) / (a["cold_peak_mib"] / runs_a)
    return out


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""
    args = parse_args(__doc__ or "", argv)
    if not PMB_DIR.is_dir() or not QA_BASE.is_file():
        raise SystemExit(f"{SHARED_DATA} is absent: this benchmark reads the public data there")
    sizes = [(4, 1), (8, 2)] if args.quick else [(250, 50), (500, 100), (1000, 200)]
    repeat = 1 if args.quick else 3
    work = Path(tempfile.mkdtemp(prefix="memeval-bench-ingest-"))
    try:
        # The shared data loads in well under a second: more repeats there cost little and steady the minima.
        rows, details = shared_data_rows(1 if args.quick else SHARED_REPEAT, work)
        more, points = scale_rows(sizes, work, repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows += more
    details["scale"] = points
    details["scale_per_run"] = _per_run(points)
    details["warm_speedups"] = [p["cold_s"] / p["warm_s"] for p in points]
    details["targets"] = {
        "cold_vs_floor_at_most": 2,
        "cold_vs_floor_measure": "cold_vs_floor_paired_median (95 % interval: cold_vs_floor_paired_median_ci95)",
        "warm_speedup_at_least": 10,
    }
    report("bench_ingest", args, rows, details)


if __name__ == "__main__":
    main()
