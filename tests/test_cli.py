"""The CLI as a user runs it: python -m memeval_core ..."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from memeval_core.cli import main
from tests._data import PMB_DIR, PROJECT, require


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memeval_core", *args], cwd=PROJECT, capture_output=True, text=True, env=env, check=False
    )


def test_leaderboard_json_keys_and_values() -> None:
    p = run_cli("leaderboard", "--results", str(require(PMB_DIR)), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert len(rows) == 24
    assert set(rows[0]) == {
        "run_id", "display_name", "provider", "benchmark", "cases", "passed", "pass_types", "mean_precision",
        "mean_recall", "mean_drift", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "ingestion_total_ms",
        "verified", "mismatches",
    }  # fmt: skip
    gbrain = next(r for r in rows if r["display_name"] == "gbrain" and r["benchmark"] == "pmb-single-turn")
    assert gbrain["passed"] == 34
    assert gbrain["pass_types"] == {"active_retrieval": 5, "structural": 20, "trivially_empty": 9}


def test_leaderboard_csv_and_table(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["leaderboard", "--results", str(require(PMB_DIR)), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(table) == 24 and table[0]["display_name"] == "tenure"
    assert main(["leaderboard", "--results", str(PMB_DIR)]) == 0
    assert "tenure" in capsys.readouterr().out.splitlines()[1]


def test_results_from_environment(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMEVAL_RESULTS", str(require(PMB_DIR)))
    assert main(["leaderboard", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 24


def test_fixtures_override(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    report = require(PMB_DIR) / "test-results/baseline/retrieval-report-mem0.json"
    (tmp_path / "run.json").write_bytes(report.read_bytes())
    assert (
        main(["leaderboard", "--results", str(tmp_path), "--fixtures", str(PMB_DIR / "fixtures"), "--format", "json"])
        == 0
    )
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["display_name"], row["passed"]) == ("mem0 (run)", 9)


def test_verify_exits_1_and_lists_mismatches() -> None:
    p = run_cli("verify", "--results", str(require(PMB_DIR)))
    assert p.returncode == 1
    assert (
        "vector (nomic) [pmb-single-turn] test-results/baseline/nomic-retrieval-report-vector.json: 4 mismatch(es)"
        in p.stdout
    )
    assert "  - $.retrieval.passTypes.structural: stated 7, re-derived 8" in p.stdout
    assert p.stdout.strip().splitlines()[-1] == "24 run(s) checked, 3 with mismatches, 1 file(s) not loaded"
    assert "providers.config.json: holds no per-question records" in p.stderr


def test_verify_exits_0_on_a_clean_run(tmp_path: Path) -> None:
    report = require(PMB_DIR) / "test-results/baseline/retrieval-report-tenure.json"
    (tmp_path / "r.json").write_bytes(report.read_bytes())
    p = run_cli("verify", "--results", str(tmp_path), "--fixtures", str(PMB_DIR / "fixtures"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 run(s) checked, 0 with mismatches" in p.stdout


def test_bad_file_is_reported_on_stderr_and_others_still_print(tmp_path: Path) -> None:
    report = require(PMB_DIR) / "test-results/baseline/retrieval-report-tenure.json"
    (tmp_path / "good.json").write_bytes(report.read_bytes())
    (tmp_path / "retrieval-report-broken.json").write_text("")
    p = run_cli("leaderboard", "--results", str(tmp_path), "--fixtures", str(PMB_DIR / "fixtures"), "--format", "json")
    assert p.returncode == 0
    assert "1 file(s) not loaded:\n  retrieval-report-broken.json: file is empty" in p.stderr
    assert [r["provider"] for r in json.loads(p.stdout)] == ["tenure"]


def test_a_folder_with_nothing_memeval_reads_says_so_and_fails(tmp_path: Path) -> None:
    (tmp_path / "scores.json").write_text('[{"qid": "q1", "pred": "a", "ref": "a", "correct": 1}]')
    (tmp_path / "summary.json").write_text('{"accuracy": 0.5}')
    p = run_cli("leaderboard", "--results", str(tmp_path))
    assert p.returncode == 2
    assert "2 file(s) not loaded:" in p.stderr
    assert "scores.json: not a result file of a known format (closest known format:" in p.stderr
    assert "python -m memeval_core mapping scores.json" in p.stderr
    assert "summary.json: holds no per-question records" in p.stderr
    assert "error: nothing was loaded from" in p.stderr


def test_mapping_writes_a_skeleton_that_loads_once_edited(tmp_path: Path) -> None:
    rows = [{"qid": f"q{i}", "question": "?", "prediction": "a", "gold": "a", "correct": i % 2} for i in range(4)]
    (tmp_path / "scores.json").write_text(json.dumps(rows))
    p = run_cli("mapping", str(tmp_path / "scores.json"))
    assert p.returncode == 0, p.stderr
    skeleton = json.loads((tmp_path / "scores.mapping.json").read_text())
    assert skeleton["file"] == "scores.json"
    assert skeleton["fields"] == {
        "question_id": "qid",
        "question": "question",
        "answer": "prediction",
        "gold_answer": "gold",
    }
    assert skeleton["judges"] == [{"name": "correct", "field": "correct", "scale": "binary"}]
    assert run_cli("mapping", str(tmp_path / "scores.json")).returncode == 2, "never overwrites"
    skeleton.update(benchmark="longmemeval-s", system="mine")
    (tmp_path / "scores.mapping.json").write_text(json.dumps(skeleton))
    p = run_cli("leaderboard", "--results", str(tmp_path), "--kind", "qa", "--format", "json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["system"] == "mine" and row["accuracy"] == 0.5


def test_missing_results_dir(tmp_path: Path) -> None:
    p = run_cli("leaderboard", "--results", str(tmp_path / "nope"))
    assert p.returncode == 1 and "does not exist" in p.stderr


def test_sync_from_and_if_empty(tmp_path: Path) -> None:
    p = run_cli("sync", "--results", str(tmp_path), "--from", str(require(PMB_DIR)))
    assert p.returncode == 0 and "synced 27 files" in p.stdout
    p = run_cli("sync", "--results", str(tmp_path), "--if-empty")
    assert p.returncode == 0 and "already holds results" in p.stdout
    p = run_cli("sync", "--results", str(tmp_path / "other"), "--from", str(tmp_path / "missing"))
    assert p.returncode == 1 and p.stderr.startswith("error: sync failed:")


def test_leaderboard_covers_qa_runs() -> None:
    from tests._data import SHARED_DATA

    p = run_cli("leaderboard", "--results", str(require(SHARED_DATA)), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    pmb = [r for r in rows if r["benchmark"].startswith("pmb-")]
    qa = [r for r in rows if not r["benchmark"].startswith("pmb-")]
    assert len(pmb) == 24
    memobase = next(r for r in qa if r["run_id"].startswith("memobase_eval_0503"))
    assert (memobase["n_questions"], memobase["accuracy"], memobase["failures"]) == (1540, 0.7091, 0)
    assert {"system", "majority_accuracy", "n_judges", "categories", "publishable", "not_publishable_because"} <= set(
        memobase
    )
    p = run_cli("leaderboard", "--results", str(SHARED_DATA), "--format", "csv")
    assert p.returncode == 2 and "--kind" in p.stderr
    p = run_cli("leaderboard", "--results", str(SHARED_DATA), "--format", "csv", "--kind", "qa")
    assert p.returncode == 0 and p.stdout.splitlines()[0].startswith("run_id,display_name,system")


def test_kind_pmb_counts_the_other_files_and_lists_only_broken_reports(tmp_path: Path) -> None:

    shutil.copytree(require(PMB_DIR), tmp_path / "pmb")
    p = run_cli("leaderboard", "--results", str(tmp_path), "--kind", "pmb", "--format", "json")
    before = int(p.stderr.split()[0]) if p.stderr else 0  # the shared folder's own other files
    (tmp_path / "qa").mkdir()
    good = [{"question_id": "a", "question": "q", "gold_answer": "g", "generated_answer": "x", "llm_score": 1}]
    (tmp_path / "qa" / "run.json").write_text(json.dumps(good))
    (tmp_path / "qa" / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "pmb" / "broken-retrieval-report.json").write_text('{"provider": "x"}')
    p = run_cli("leaderboard", "--results", str(tmp_path), "--kind", "pmb", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)) == 24
    lines = p.stderr.splitlines()
    assert lines[0] == "1 file(s) not loaded:" and lines[1].startswith("  pmb/broken-retrieval-report.json: ")
    others = before + 2
    assert lines[2:] == [f"{others} other file(s) are not PMB reports or fixtures (--kind all reads QA results too)"]


def test_the_cli_starts_without_the_hub_client() -> None:
    # huggingface_hub costs 0.2 s and 11 MiB to import: only commands that reach the Hub pay it.
    code = "import sys, memeval_core.cli; print(sorted(m for m in sys.modules if m.startswith('huggingface_hub')))"
    p = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"


def test_a_path_that_is_not_utf8_is_named_by_mapping_and_add(tmp_path: Path) -> None:

    rows = [{"qid": "q1", "question": "?", "prediction": "a", "gold": "a", "correct": 1}]
    odd = tmp_path / os.fsdecode(b"\xff-scores.json")
    odd.write_text(json.dumps(rows))
    p = run_cli("mapping", str(odd))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "\\xff-scores.json: its path is not UTF-8 text; rename it" in p.stderr
    assert [f.name for f in tmp_path.iterdir()] == [odd.name], "nothing written"
    report = next(require(PMB_DIR).rglob("retrieval-report-mem0.json"))
    odd_report = tmp_path / os.fsdecode(b"\xfe-retrieval-report.json")
    odd_report.write_bytes(report.read_bytes())
    shutil.copytree(require(PMB_DIR) / "fixtures", tmp_path / "results" / "fixtures")
    strict = {**os.environ, "PYTHONIOENCODING": "utf-8"}  # no surrogateescape on stdout
    p = run_cli("add", "--results", str(tmp_path / "results"), str(odd_report), env=strict)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.startswith("stored \\xfe-retrieval-report.json as ")
