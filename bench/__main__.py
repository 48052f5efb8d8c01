"""Run every benchmark script, one fresh interpreter each: ``python -m bench [--quick] [--only NAME ...]``.

Each script prints its table and writes ``bench/results/<script>.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

SCRIPTS = (
    "bench_metrics",
    "bench_ingest",
    "bench_core",
    "bench_engine",
    "bench_stats",
    "bench_app",
    "bench_hub",
    "bench_judge",
    "bench_runner",
)


def main(argv: list[str] | None = None) -> int:
    """Run the scripts in order; the exit code is the number of scripts that failed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the scripts run, not the speed")
    parser.add_argument("--only", nargs="*", choices=SCRIPTS, help="run only these scripts")
    parser.add_argument("--out", type=Path, help="folder for the JSON results (default bench/results)")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.only or SCRIPTS:
        cmd = [sys.executable, "-m", f"bench.{name}"]
        if args.quick:
            cmd.append("--quick")
        if args.out:
            cmd += ["--out", str(args.out)]
        start = time.perf_counter()
        print(f"== {name}", flush=True)
        code = subprocess.call(cmd, cwd=Path(__file__).resolve().parent.parent)
        print(f"== {name}: {'ok' if code == 0 else f'FAILED ({code})'} in {time.perf_counter() - start:.1f} s\n")
        failed += code != 0
    return failed


if __name__ == "__main__":
    sys.exit(main())
