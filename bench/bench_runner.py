"""The PMB runner's own overhead per case, the wrapper's time excluded, against ``replay`` on 127.0.0.1.

The replay wrapper (``python -m memeval_core wrapper replay REPORT``, in its own process so that its work does
not share our GIL) answers every search with the ids the committed tenure report recorded. One run of the
single-turn suite (no seeding) is timed end to end (context building, scoring, checkpoint, the report written)
and the round trips of its ``/search`` calls, as the client measures them, are subtracted:

    overhead per case = (wall time of the run - sum of search round trips) / cases

Target: at most 2 ms per case. The session suite (12 turns, one ``/add`` each time a turn creates a belief)
is measured the same way.

    python -m bench.bench_runner [--quick]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED_DATA, parse_args, report
from memeval_core.pmb.ingest import load_fixture
from memeval_core.runner import client as client_module
from memeval_core.runner.config import ProviderConfig
from memeval_core.runner.run import RunOptions, Suite, run_pmb
from memeval_core.wrappers.replay import REPLAY_CONFIG

PMB = SHARED_DATA / "precisionmembench"
TARGET_MS = 2.0
ROUND_TRIPS: list[float] = []


def _recording(original: Any) -> Any:
    def call(self: Any, method: str, path: str, body: Any = None, *, what: str) -> Any:
        reply = original(self, method, path, body, what=what)
        ROUND_TRIPS.append(reply.elapsed_ms)
        return reply

    return call


def replay_process(report_path: Path) -> tuple[subprocess.Popen[str], str]:
    """``wrapper replay`` on a free port; its URL."""
    cmd = [sys.executable, "-m", "memeval_core", "wrapper", "replay", str(report_path), "--port", "0"]
    cmd += ["--fixtures", str(PMB / "fixtures")]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.split(" wrapper on ", 1)[1].split(" ", 1)[0]


def measure(suite: Suite, repeats: int, folder: Path) -> dict[str, Any]:
    """Overhead per case of ``repeats`` runs of ``suite`` against the replay of the tenure report."""
    name = "session-retrieval-report-tenure.json" if suite == "session" else "retrieval-report-tenure.json"
    proc, url = replay_process(PMB / "test-results" / "baseline" / name)
    fixture = load_fixture(PMB / "fixtures")
    per_case, walls, trips = [], [], []
    try:
        for i in range(repeats):
            ROUND_TRIPS.clear()
            opts = RunOptions(url=url, provider="bench", out=folder / f"{suite}-{i}", fixture=fixture,
                              fixture_dir=PMB / "fixtures", cfg=ProviderConfig.model_validate(REPLAY_CONFIG),
                              suites=(suite,), reseed=False)  # fmt: skip
            start = time.perf_counter()
            run_pmb(opts)
            wall = (time.perf_counter() - start) * 1000
            n = len(fixture.cases) if suite == "single" else sum(len(s.turns) for s in fixture.session_cases)
            walls.append(wall)
            trips.append(sum(ROUND_TRIPS))
            per_case.append((wall - sum(ROUND_TRIPS)) / n)
    finally:
        proc.kill()
        proc.wait()
    rtt = statistics.median(ROUND_TRIPS or [0])
    return {"suite": suite, "cases": n, "repeats": repeats, "overhead_ms_per_case": per_case,
            "best_ms": min(per_case), "median_ms": statistics.median(per_case), "wall_ms": walls,
            "round_trip_ms_total": trips, "round_trip_ms_per_call_median": rtt}  # fmt: skip


def main() -> None:
    args = parse_args(__doc__ or "")
    if not PMB.is_dir():
        raise SystemExit(f"{PMB} (the public PMB data) is absent")
    client_module.WrapperClient.call = _recording(client_module.WrapperClient.call)  # type: ignore[method-assign]
    repeats = 2 if args.quick else 15
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(s, repeats, Path(tmp)) for s in ("single", "session")]
    rows = [
        {"measure": f"{r['suite']}: {r['cases']} cases, runner time less search round trips (median of {r['repeats']})",
         "ms_per_case": r["median_ms"], "best_ms": r["best_ms"],
         "round_trip_ms": r["round_trip_ms_per_call_median"], "target": f"<= {TARGET_MS} ms",
         "met": r["median_ms"] <= TARGET_MS}
        for r in results
    ]  # fmt: skip
    report("bench_runner", args, rows, {"runs": results, "target_ms": TARGET_MS})


if __name__ == "__main__":
    main()
