"""Judge throughput: verdicts served from the cache per second, and wall time of a latency-bound re-judge.

1. **Cache hits**: a cache holding every verdict of N synthetic answers; the time of what a rerun does before
   writing (render every prompt, key it, look every key up, parse every response), as verdicts per second.
   Target: at least 20,000 verdicts/s.
2. **Latency-bound calls**: the local stand-in (``tests/judge_standin.py``, in its own process) answers each
   call after 200 ms;
   1,540 answers (the shared mem0 LoCoMo run when ``../shared/data`` is present, else synthetic) judged through
   the real ``openai`` client at concurrency 16 with an empty cache. Target: at most
   ``1.3 x 1,540 x 0.2 s / 16`` (30 % over the ideal of perfect overlap).

    python -m bench.bench_judge [--quick]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED_DATA, parse_args, report, timed
from memeval_core.judge.cache import Cached, CallKey, VerdictCache
from memeval_core.judge.client import OpenAIJudge, RetryPolicy
from memeval_core.judge.output import judged_items
from memeval_core.judge.progress import Progress
from memeval_core.judge.prompts import BUILTIN, Item
from memeval_core.judge.runner import Budget, plan, run
from memeval_core.results import load_qa_results
from tests.judge_standin import KEY, MODEL, reply

PROMPT = BUILTIN["mem0-locomo"]
CONCURRENCY = 16
DELAY = 0.2


def synthetic(n: int) -> list[Item]:
    """``n`` LoCoMo-like answers, half of them matching their gold answer."""
    return [
        Item(f"conv-{i // 200}-q{i % 200}", f"When did event {i} happen?", f"{i % 28 + 1} May 2023",
             f"It happened on {i % 28 + 1} May 2023." if i % 2 else f"Around event {i}.", "2")
        for i in range(n)
    ]  # fmt: skip


def mem0_items() -> list[Item] | None:
    """The answers of the shared mem0 LoCoMo run, when the shared data is present."""
    if not SHARED_DATA.is_dir():
        return None
    runs = load_qa_results(SHARED_DATA, None).runs
    mem0 = next((r for r in runs if r.meta.system == "mem0" and r.meta.benchmark == "locomo"), None)
    return judged_items(mem0)[1] if mem0 is not None else None


def cache_hits(n: int, folder: Path) -> dict[str, Any]:
    """Fill a cache with ``n`` verdicts, then time planning and parsing all of them from it."""
    items = synthetic(n)
    call = CallKey(PROMPT.hash, MODEL, "http://127.0.0.1:1/v1")
    cache = VerdictCache(folder / "hits.sqlite")
    p = plan(items, PROMPT, call, 1, cache)
    cache.put_many([(t.key, 1, Cached(reply(t.text), 400, 15)) for t in p.missing], call)

    def rerun() -> int:
        again = plan(items, PROMPT, call, 1, cache)
        assert not again.missing
        return sum(PROMPT.parse(again.cached[t.key].raw) is not None for t in again.tasks)

    timing, parsed = timed(rerun, repeat=5)
    cache.close()
    return {"verdicts": n, "parsed": parsed, "timing": timing, "per_second": n / timing.best}


def standin_process(delay: float) -> tuple[subprocess.Popen[str], str]:
    """The stand-in in its own process (as a real endpoint would be: its work does not share our GIL)."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "judge_standin.py"), str(delay)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def latency_bound(items: list[Item], delay: float, folder: Path) -> dict[str, Any]:
    """Judge ``items`` through the stand-in answering after ``delay`` s, at :data:`CONCURRENCY`, from no cache."""
    proc, url = standin_process(delay)
    try:
        client = OpenAIJudge(MODEL, url, KEY, timeout=30, retry=RetryPolicy(attempts=3))
        cache = VerdictCache(folder / "calls.sqlite")
        call = CallKey(PROMPT.hash, MODEL, client.base_url)
        p = plan(items, PROMPT, call, 1, cache)
        start, cpu = time.perf_counter(), time.process_time()
        _, counts = run(
            p, PROMPT, client, cache, call, concurrency=CONCURRENCY, budget=Budget(None, None),
            progress=Progress(None, "bench"),
        )  # fmt: skip
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        cache.close()
        with urllib.request.urlopen(f"{url}/stats", timeout=10) as resp:
            stats = json.loads(resp.read())
    finally:
        proc.kill()
        proc.wait()
    ideal = len(p.missing) * delay / CONCURRENCY
    return {"answers": len(items), "calls": counts.calls, "seconds": seconds, "ideal_s": ideal,
            "target_s": 1.3 * ideal, "ratio_to_ideal": seconds / ideal, "client_cpu_s": cpu,
            "client_cpu_ms_per_call": 1000 * cpu / max(1, counts.calls), "peak_concurrency": stats["peak"],
            "standin_calls": stats["calls"]}  # fmt: skip


def main() -> None:
    args = parse_args(__doc__ or "")
    n_hits = 2_000 if args.quick else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        hits = cache_hits(n_hits, Path(tmp))
        items = synthetic(64) if args.quick else (mem0_items() or synthetic(1540))
        calls = latency_bound(items, 0.02 if args.quick else DELAY, Path(tmp))
    rows = [
        {"measure": f"cache hits: plan + parse {n_hits:,} verdicts", "seconds": hits["timing"].best,
         "per_second": hits["per_second"], "target": ">= 20,000/s", "met": hits["per_second"] >= 20_000},
        {"measure": f"{calls['calls']:,} calls at {CONCURRENCY} ({'0.02' if args.quick else '0.2'} s each)",
         "seconds": calls["seconds"], "per_second": calls["calls"] / calls["seconds"],
         "target": f"<= {calls['target_s']:.2f} s", "met": calls["seconds"] <= calls["target_s"]},
    ]  # fmt: skip
    report("bench_judge", args, rows, {"cache_hits": hits, "latency_bound": calls, "concurrency": CONCURRENCY})


if __name__ == "__main__":
    main()
