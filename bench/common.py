"""What every benchmark script shares: timing, peak memory, ratios, machine facts, the table and the JSON file.

Timing is wall-clock ``time.perf_counter``; each measurement is repeated and both the best and the median are
kept. The machines these run on are shared and noisy, so comparisons are made as ratios of measurements taken
side by side in one run, and the best of several repeats is the figure used for ratios (the least disturbed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
SHARED_DATA = ROOT.parent / "shared" / "data"
PACKAGES = (
    "numpy",
    "scipy",
    "pyarrow",
    "pandas",
    "pydantic",
    "orjson",
    "msgspec",
    "streamlit",
    "ranx",
    "numba",
    "pytrec_eval-terrier",
    "playwright",
)


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of repeated runs of one measurement."""

    best: float
    """Fastest run (used for ratios: the run least disturbed by other load)."""
    median: float
    """Median run."""
    runs: tuple[float, ...]
    """Every run, in order."""


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[Timing, Any]:
    """Run ``fn`` ``repeat`` times; its timing and the last result."""
    runs = []
    result: Any = None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        result = fn()
        runs.append(time.perf_counter() - start)
    return Timing(min(runs), statistics.median(runs), tuple(runs)), result


def ratio(slow: float, fast: float) -> float:
    """How many times faster ``fast`` is than ``slow`` (``slow / fast``)."""
    return slow / fast if fast > 0 else float("inf")


def median_interval(values: Sequence[float], alpha: float = 0.05) -> tuple[float, float]:
    """Distribution-free ``1 - alpha`` confidence interval of the median: two order statistics of ``values``.

    ``(x_(k), x_(n+1-k))`` of the sorted values, with ``k`` the largest rank such that
    ``P(Binomial(n, 1/2) <= k - 1) <= alpha / 2``: no assumption on the shape of the noise (wall-clock
    times on a shared machine have long right tails). Needs at least 6 values for alpha = 0.05.
    """
    from scipy.stats import binom

    xs = sorted(values)
    n = len(xs)
    k = 0
    while k + 1 <= n and binom.cdf(k, n, 0.5) <= alpha / 2:
        k += 1
    if k == 0:
        raise ValueError(f"{n} values are too few for a {1 - alpha:.0%} interval of the median")
    return xs[k - 1], xs[n - k]


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 3600) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter (cold start); it must print one JSON object as its last line.

    The child's peak resident memory is added as ``peak_rss_mib``: ``VmHWM`` of /proc/self/status, because
    Linux carries ``ru_maxrss`` over from the parent across fork and exec (a large benchmark process would
    make every child look large). ``workers_peak_rss_mib`` is the peak of the largest process the child
    started and waited for (a load's worker processes; pages shared with the child at fork count in both);
    0 when it started none.
    """
    wrapped = (
        code
        + "\nimport json as _j, sys as _s\n"
        + "_out = dict(globals().get('RESULT', {}))\n"
        + "_hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
        + "_out['peak_rss_mib'] = int(_hwm[0].split()[1]) / 1024 if _hwm else None\n"
        + "import resource as _r\n"
        + "_out['workers_peak_rss_mib'] = _r.getrusage(_r.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        + "_s.stdout.write('\\n' + _j.dumps(_out) + '\\n')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", wrapped],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def machine() -> dict[str, Any]:
    """CPU model, cores, RAM, load, Python and package versions, date: what a reader needs to weigh the numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gib = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": ram_gib,
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, MiB (``VmHWM``; ``ru_maxrss`` where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parse_args(
    description: str, argv: Sequence[str] | None = None, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    """``--quick`` (tiny sizes, for the smoke test), ``--out`` (folder for the JSON result), and ``extra``'s options."""
    parser = argparse.ArgumentParser(description=description)
    if extra is not None:
        extra(parser)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the script runs, not the speed")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="folder for <script>.json")
    return parser.parse_args(argv)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "-"
        if abs(value) >= 1e5 or (value != 0 and abs(value) < 1e-3):
            return f"{value:.3g}"
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.1f}"
    return "-" if value is None else str(value)


def table(title: str, rows: Sequence[dict[str, Any]]) -> str:
    """A plain-text table of ``rows`` (columns from the first row)."""
    if not rows:
        return f"{title}\n(no rows)\n"
    cols = list(rows[0])
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))
    out = [title, line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(out) + "\n"


def report(script: str, args: argparse.Namespace, rows: list[dict[str, Any]], details: dict[str, Any]) -> Path:
    """Print the table and write ``<out>/<script>.json`` with the rows, details and machine facts."""
    print(table(f"{script}{' (--quick)' if args.quick else ''}", rows))
    args.out.mkdir(parents=True, exist_ok=True)
    path: Path = args.out / f"{script}.json"
    doc = {"script": script, "quick": bool(args.quick), "machine": machine(), "rows": rows, "details": details}
    path.write_text(json.dumps(doc, indent=1, default=_json_default) + "\n")
    return path


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Timing):
        return asdict(obj)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")
