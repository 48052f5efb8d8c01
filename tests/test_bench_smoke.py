"""Every benchmark script runs at tiny sizes (``--quick``) and writes its JSON, so the suite never rots.

Timings are never asserted: only that each script finishes, writes ``<script>.json`` with the machine facts,
its table rows and its details, and that the values it checks side by side agree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import SCRIPTS
from bench.common import median_interval, table

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
MACHINE_KEYS = {"cpu", "cores", "ram_gib", "python", "packages", "date", "load_average", "platform"}


def _run(script: str, out: Path, env: dict[str, str] | None = None, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", f"bench.{script}", "--quick", "--out", str(out), *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{script} (--quick)" in proc.stdout
    doc: dict[str, Any] = json.loads((out / f"{script}.json").read_text())
    assert doc["script"] == script and doc["quick"] is True
    assert set(doc["machine"]) >= MACHINE_KEYS
    assert doc["machine"]["packages"]["numpy"]
    assert doc["rows"] and doc["details"]
    return doc


def test_table_formats_rows() -> None:
    text = table("t", [{"a": 1.23456, "b": None, "c": "x"}, {"a": 1234567.0, "b": 2, "c": "yy"}])
    assert text.splitlines()[0] == "t"
    assert "1.235" in text and "1.23e+06" in text and "-" in text.splitlines()[3]


def test_bench_stats_quick(tmp_path: Path) -> None:
    doc = _run("bench_stats", tmp_path)
    d = doc["details"]
    assert {"runs", "items", "n_resamples", "pairs", "speedup_vs_scipy", "max_abs_difference_vs_scipy"} <= set(d)
    assert d["pairs"] == d["runs"] * (d["runs"] - 1) // 2
    # Same seed, same indices: the intervals and p-values agree with scipy's to rounding.
    assert max(d["max_abs_difference_vs_scipy"].values()) < 1e-9
    assert next(r["method"] for r in doc["rows"]).startswith("memeval compare_pairs")


def test_bench_metrics_quick(tmp_path: Path) -> None:
    doc = _run("bench_metrics", tmp_path, {"NUMBA_CACHE_DIR": str(Path("/tmp") / "memeval-numba-cache")})
    d = doc["details"]
    assert {"lists_vs_naive", "max_abs_differences", "targets", "timings"} <= set(d)
    checks = d["max_abs_differences"]
    # Where the definitions agree the values are identical to 1e-12 (see memeval_core/metrics docstrings).
    for m in ("ndcg", "precision", "recall", "mrr", "f1"):
        assert checks[f"lists_vs_naive_{m}"] <= 1e-12
        for lib in ("ranx", "trec"):
            if f"{lib}_{m}" in checks:
                assert checks[f"{lib}_{m}"] <= 1e-12, (lib, m)
    methods = [r["method"] for r in doc["rows"]]
    assert methods[:2] == ["memeval, from Python lists", "naive per-query loop (protocol)"]


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} (the public benchmark data) is absent")
def test_bench_ingest_quick(tmp_path: Path) -> None:
    doc = _run("bench_ingest", tmp_path)
    d = doc["details"]
    assert {"floor", "cold", "warm", "cold_vs_floor", "warm_speedup", "scale", "profile_top_tottime"} <= set(d)
    assert d["cold_vs_floor_paired_median"] > 0 and d["cold_one_process_vs_floor_paired_median"] > 0
    assert d["cold_vs_floor_paired"] == [d["cold_vs_floor_paired_median"]]  # one round in the smoke
    assert d["cold_vs_floor_median_over_median"] == pytest.approx(d["cold_vs_floor_paired_median"])
    assert d["cold_vs_floor_paired_median_ci95"] is None  # too few rounds for an interval
    assert any("median of 1 paired rounds" in r["what"] for r in doc["rows"])
    assert d["warm_equals_cold"] is True
    assert d["cold"]["pmb_runs"] == 24 and d["cold"]["errors"] == 0
    assert [(p["pmb_runs"], p["qa_runs"]) for p in d["scale"]] == [(4, 1), (8, 2)]
    assert all(p["warm_equals_cold"] and p["loaded_runs"] == p["pmb_runs"] + p["qa_runs"] for p in d["scale"])
    assert d["scale"][1]["questions"] == 2 * 1540


@pytest.mark.browser
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} (the public benchmark data) is absent")
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian chromium (/usr/bin/chromium) is absent")
def test_bench_app_quick(tmp_path: Path) -> None:
    doc = _run("bench_app", tmp_path)
    d = doc["details"]
    assert {"public", "synthetic", "synthetic_runs", "synthetic_items", "targets"} <= set(d)
    for side in ("public", "synthetic"):
        pages = d[side]["apptest"]["pages"]
        names = ("home", "leaderboard", "categories", "compare", "latency", "case")
        assert set(pages) == {f"pages/{n}.py" for n in names}
        assert all(p["exceptions"] == [] for p in pages.values())
        assert "first_visit_s" in d[side]["browser"], d[side]["browser"]
    (one_round,) = d["browser_rounds"]  # one paired round in the smoke
    assert set(one_round) == {"public", "synthetic"}
    first = d["browser_paired_ratios"]["first_visit_s"]
    assert first == [one_round["synthetic"]["first_visit_s"] / one_round["public"]["first_visit_s"]]
    assert any("median of 1 paired rounds" in r["measure"] and r["ratio"] == first[0] for r in doc["rows"])


@pytest.mark.browser
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} (the public benchmark data) is absent")
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian chromium (/usr/bin/chromium) is absent")
def test_bench_app_on_the_core_corpus(tmp_path: Path) -> None:
    doc = _run("bench_app", tmp_path, None, "--corpus", "core")
    d = doc["details"]
    assert d["corpus"] == "core"
    for side in ("public", "synthetic"):
        pages = d[side]["apptest"]["pages"]
        assert set(pages) == {f"pages/{n}.py" for n in ("home", "leaderboard", "categories", "compare")}
        assert all(p["exceptions"] == [] for p in pages.values()), pages
        walked = d[side]["browser"]
        assert {"first_visit_s", "leaderboard_s", "categories_s", "compare_s"} <= set(walked), walked
    assert any(r["measure"] == "browser: /compare table visible (best; ratio: median of 1 paired rounds)"
               for r in doc["rows"])  # fmt: skip


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} (the public benchmark data) is absent")
def test_bench_hub_quick(tmp_path: Path) -> None:
    doc = _run("bench_hub", tmp_path)
    (size,) = doc["details"]["sizes"]
    assert size["runs"] == 22 and size["hub_first_bytes"] > 0
    assert size["hub_second_requests"] == 1 and size["hub_second_bytes"] == 0  # the manifest's metadata alone
    # The first page reads the manifest and the stored home page, nothing else, before and after a push.
    assert size["hub_first_bytes"] < size["dataset_bytes"]
    assert size["hub_after_push_bytes"] == size["manifest_bytes"] + size["front_bytes"]
    assert size["parts"] == 2  # one push, then the held-back run
    assert size["hub_after_push_requests"] == size["hub_first_requests"]


def test_every_script_has_a_smoke_test() -> None:
    tested = {name.removeprefix("test_").removesuffix("_quick") for name in globals() if name.endswith("_quick")}
    assert tested == set(SCRIPTS)


def test_median_interval_is_the_binomial_order_statistics() -> None:
    # n = 15: P(Bin(15, 1/2) <= 3) = 0.018 <= 0.025 < P(<= 4) = 0.059, so the 4th and 12th values (96.5 %).
    assert median_interval([float(x) for x in range(15, 0, -1)]) == (4.0, 12.0)
    # n = 40: P(<= 13) = 0.019 <= 0.025 < P(<= 14) = 0.040, so the 14th and 27th values.
    assert median_interval([float(x) for x in range(1, 41)]) == (14.0, 27.0)
    assert median_interval([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) == (1.0, 6.0)
    with pytest.raises(ValueError, match="too few"):
        median_interval([1.0, 2.0, 3.0, 4.0, 5.0])


def test_bench_judge_quick(tmp_path: Path) -> None:
    doc = _run("bench_judge", tmp_path)
    d = doc["details"]
    assert {"cache_hits", "latency_bound", "concurrency"} <= set(d)
    assert d["latency_bound"]["peak_concurrency"] <= d["concurrency"]
    assert d["latency_bound"]["calls"] == d["latency_bound"]["standin_calls"] > 0
    assert d["cache_hits"]["per_second"] > 0


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"{SHARED_DATA} (the public benchmark data) is absent")
def test_bench_runner_quick(tmp_path: Path) -> None:
    doc = _run("bench_runner", tmp_path)
    d = doc["details"]
    assert d["target_ms"] == 2.0 and [r["suite"] for r in d["runs"]] == ["single", "session"]
    assert all(len(r["overhead_ms_per_case"]) == r["repeats"] == 2 for r in d["runs"])
    assert all(r["round_trip_ms_total"][0] > 0 for r in d["runs"])


def test_bench_core_quick(tmp_path: Path) -> None:
    doc = _run("bench_core", tmp_path)
    (point,) = doc["details"]["points"]
    assert point["same_leaderboard"] and point["exit_codes"] == [0, 0, 0]
    assert point["files"] == 8 + 2 + 4  # the reports, the LoCoMo runs, three fixture files and locomo10.json
    assert set(point["met"]) == set(doc["details"]["targets"])
    assert point["cold_workers_peak_mib"] == 0  # the quick corpus is far too small to start worker processes


def test_bench_engine_quick(tmp_path: Path) -> None:
    doc = _run("bench_engine", tmp_path)
    agreement = doc["details"]["agreement"]
    assert agreement and all(v == "equal" for v in agreement.values())  # every engine present agrees
