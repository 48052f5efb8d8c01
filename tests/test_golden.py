"""Golden digests of everything memeval derives from ../shared/data, taken before the columnar core (issue 19).

Each part is canonical JSON hashed with SHA-256: the CLI's leaderboard and verify output, the paired
comparison statistics of every pairable PMB and QA pair (fixed seed), and the export (leaderboard.json as
written, every Parquet table's schema and rows). A refactor that changes any derived number, message or
exported cell fails here, naming the part. After an intended change, rewrite the digests with

    .venv/bin/python tests/test_golden.py --write

and say in the commit why the results changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._data import PROJECT, SHARED_DATA, require

GOLDEN = Path(__file__).with_name("golden_shared.json")
SEED = 7
RESAMPLES = 2_000


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _cli(*args: str) -> str:
    env = {**os.environ, "MEMEVAL_CACHE_DIR": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "memeval_core", *args], cwd=PROJECT, env=env, capture_output=True, text=True
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def leaderboard_part() -> Any:
    return json.loads(_cli("leaderboard", "--results", str(SHARED_DATA), "--format", "json"))


def verify_part() -> Any:
    return _cli("verify", "--results", str(SHARED_DATA)).splitlines()


def _frame_rows(frame: Any) -> Any:
    return json.loads(frame.to_json(orient="split", double_precision=15))


def compare_part() -> Any:
    from memeval_core.explore.compare import compare_stats
    from memeval_core.explore.paired import stats_frame
    from memeval_core.explore.qa_compare import check_pairable, qa_compare_stats
    from memeval_core.results import load_all_results

    pmb, qa = load_all_results(SHARED_DATA, SHARED_DATA, cache_dir=None)
    out: dict[str, Any] = {}
    for a in pmb.runs:
        for b in pmb.runs:
            if a.identity.benchmark == b.identity.benchmark and a.identity.source < b.identity.source:
                report = compare_stats(a, b, seed=SEED, n_resamples=RESAMPLES)
                out[f"pmb {a.identity.source} | {b.identity.source}"] = _frame_rows(stats_frame(report))
    for a in qa.runs:
        for b in qa.runs:
            if a.run_id >= b.run_id:
                continue
            try:
                check_pairable(a, b)
                report_qa = qa_compare_stats(a, b, seed=SEED, n_resamples=RESAMPLES)
            except ValueError:
                continue
            out[f"qa {a.run_id} | {b.run_id}"] = _frame_rows(stats_frame(report_qa))
    return out


def export_part(tmp: Path) -> Any:
    out = tmp / "export"
    _cli("export", "--results", str(SHARED_DATA), "--out", str(out), "--allow-errors")
    parts: dict[str, Any] = {"leaderboard.json": json.loads((out / "leaderboard.json").read_text())}
    for path in sorted(out.rglob("*.parquet")):
        table = pq.read_table(path)
        parts[str(path.relative_to(out))] = {"schema": str(table.schema), "rows": table.to_pylist()}
    return parts


def _parts(tmp: Path) -> dict[str, Callable[[], Any]]:
    return {
        "leaderboard": leaderboard_part,
        "verify": verify_part,
        "compare": compare_part,
        "export": lambda: export_part(tmp),
    }


@pytest.mark.parametrize("part", ["leaderboard", "verify", "compare", "export"])
def test_results_match_the_golden_digest(part: str, tmp_path: Path) -> None:
    require(SHARED_DATA / "precisionmembench")
    golden = json.loads(GOLDEN.read_text())
    value = _parts(tmp_path)[part]()
    assert value, f"the {part} part is empty"
    assert _digest(value) == golden[part], f"{part}: results on ../shared/data changed (see this file's docstring)"


def _write() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        digests = {name: _digest(make()) for name, make in _parts(Path(tmp)).items()}
    GOLDEN.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n")
    print(json.dumps(digests, indent=2))


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    _write()
