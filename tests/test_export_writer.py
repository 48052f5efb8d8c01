"""Export of the public PMB data: schema-valid, byte-identical on rerun, no local paths or secrets, atomic,
and the bundled Space app shows the same leaderboard as the main app."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pyarrow.parquet as pq
import pytest

from memeval_core.cli import main as publish_main
from memeval_core.export import models
from memeval_core.export.writer import ExportError, ExportResult, diff_exports, export, list_files, pmb_details
from memeval_core.pmb.ingest import load_pmb
from memeval_core.qa.snapshot import read_qa_snapshot
from memeval_core.results import load_pmb_results
from tests import _pmb_oracle as oracle

ROOT = Path(__file__).resolve().parents[1]
EPOCH = "1767312000"  # 2026-01-02T00:00:00Z
FAKE_TOKEN = "hf_" + "Zq7" * 12


def tree_digest(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory`` by relative path (empty when it does not exist)."""
    if not directory.exists():
        return {}
    return {
        p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def exported(pmb_results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[ExportResult, ExportResult]:
    """Two exports of the public PMB data into two folders, with a fixed SOURCE_DATE_EPOCH and a token in HF_TOKEN."""
    base = tmp_path_factory.mktemp("export")
    saved = {k: os.environ.get(k) for k in ("SOURCE_DATE_EPOCH", "HF_TOKEN")}
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    os.environ["HF_TOKEN"] = FAKE_TOKEN
    try:
        first = export(pmb_results, base / "a" / "hf_export")
        second = export(pmb_results, base / "b" / "hf_export")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return first, second


def rows_by_name(result: ExportResult, benchmark: str) -> dict[str, models.PmbRow]:
    (table,) = [t for t in result.board.tables if t.benchmark == benchmark]
    assert isinstance(table, models.PmbTable)
    return {r.display_name: r for r in table.rows}


def test_leaderboard_json_is_valid_against_model_and_schema(exported: tuple[ExportResult, ExportResult]) -> None:
    out = exported[0].out
    text = (out / "leaderboard.json").read_text(encoding="utf-8")
    board = models.loads(text)
    assert board == exported[0].board
    assert models.dumps(board) == text
    schema = json.loads((ROOT / "docs" / "leaderboard.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(text), schema, cls=jsonschema.Draft202012Validator)


def test_rows_carry_the_re_derived_numbers(exported: tuple[ExportResult, ExportResult]) -> None:
    single = rows_by_name(exported[0], "pmb-single-turn")
    session = rows_by_name(exported[0], "pmb-session")
    assert len(single) == 13
    assert len(session) == 11
    tenure = single["tenure"]
    assert (tenure.rank, tenure.passed, tenure.cases, tenure.pass_types.active_retrieval) == (1, 77, 77, 43)
    assert tenure.verified
    mem0 = single["mem0"]
    assert (mem0.passed, mem0.mean_precision, mem0.mean_recall, mem0.latency_p50_ms) == (9, 0.0558, 0.9884, 64.94)
    assert mem0.mismatches and not mem0.verified
    assert {n for n, r in single.items() if not r.verified} == {"mem0", "vector (nomic)", "qwen3 (vector)"}
    assert session["tenure"].passed == 12
    assert session["tenure"].mean_drift == 0.0
    assert all(r.mean_drift is None for r in single.values())
    assert [r.rank for r in rows_by_name(exported[0], "pmb-session").values()] == list(range(1, 12))


def test_rows_equal_the_leaderboard_rows(exported: tuple[ExportResult, ExportResult], pmb_results: Path) -> None:
    load = load_pmb(pmb_results)
    expected = oracle.rows(load.runs)
    got = [r.model_dump(exclude={"rank", "source"}) for r in exported[0].board.pmb_rows()]
    assert got == expected


def test_inputs_and_fingerprint_match_the_files_on_disk(
    exported: tuple[ExportResult, ExportResult], pmb_results: Path
) -> None:
    board = exported[0].board
    assert [f.role for f in board.inputs].count("pmb-fixture") == 3
    assert [f.role for f in board.inputs].count("pmb-report") == 24
    for f in board.inputs:
        assert hashlib.sha256((pmb_results / f.path).read_bytes()).hexdigest() == f.sha256, f.path
    assert {f.path for f in board.inputs if f.role == "pmb-fixture"} == {
        "fixtures/retrieval.cases.json",
        "fixtures/session-retrieval.cases.json",
        "fixtures/beliefs.seed.json",
    }
    digests = sorted(hashlib.sha256((pmb_results / f.path).read_bytes()).hexdigest() for f in board.inputs)
    expected = hashlib.sha256(("\n".join(digests) + "\n" + board.scoring_version).encode()).hexdigest()
    assert board.fingerprint == expected == exported[0].fingerprint


def test_rerun_is_byte_identical(exported: tuple[ExportResult, ExportResult]) -> None:
    a, b = exported
    assert tree_digest(a.out) == tree_digest(b.out)
    assert a.files == b.files
    assert len(a.files) > 20


def test_export_layout(exported: tuple[ExportResult, ExportResult]) -> None:
    paths = {f.path for f in exported[0].files}
    assert {
        "leaderboard.json",
        "README.md",
        "Dockerfile",
        "requirements.txt",
        "app.py",
        "pages/leaderboard.py",
        "pages/ui.py",
        ".streamlit/config.toml",
        "memeval_core/__init__.py",
        "data/details/pmb-single-turn.parquet",
        "data/details/pmb-session.parquet",
        "data/snapshot/pmb-fixture.json",
        "data/snapshot/pmb-runs.json",
        "data/snapshot/pmb-cases.parquet",
    } <= paths
    assert not any(p.startswith("tests/") or "__pycache__" in p or p.endswith(".pyc") for p in paths)
    readme = (exported[0].out / "README.md").read_text(encoding="utf-8")
    assert "- Exported: 2026-01-02" in readme
    assert exported[0].fingerprint in readme
    assert "| 1 | `tenure` | 77/77 | 43 | 1.0000 | 1.0000 | 9.77 | ✓ |" in readme


def test_details_have_one_row_per_case_with_run_id_and_name(exported: tuple[ExportResult, ExportResult]) -> None:
    single = pq.read_table(exported[0].out / "data/details/pmb-single-turn.parquet")
    session = pq.read_table(exported[0].out / "data/details/pmb-session.parquet")
    assert single.column_names[:3] == ["run_id", "display_name", "case_id"]
    assert single.num_rows == 13 * 77
    assert session.num_rows == 11 * 12
    rows = [r for r in single.to_pylist() if r["display_name"] == "tenure"]
    assert len(rows) == 77
    assert sum(r["passed"] for r in rows) == 77
    assert sum(r["pass_type"] == "active_retrieval" for r in rows) == 43


def test_snapshot_reproduces_the_leaderboard(exported: tuple[ExportResult, ExportResult], pmb_results: Path) -> None:
    from_snapshot = load_pmb_results(exported[0].out / "data" / "snapshot")
    assert oracle.rows(from_snapshot.runs) == oracle.rows(load_pmb(pmb_results).runs)


def test_no_local_path_or_secret_in_any_file(exported: tuple[ExportResult, ExportResult], pmb_results: Path) -> None:
    needles = {str(pmb_results.resolve()).encode(), str(ROOT).encode(), FAKE_TOKEN.encode()}
    home = os.environ.get("HOME", "")
    if len(home) > 1:
        needles.add(home.encode())
    for p in exported[0].out.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            for needle in needles:
                assert needle not in data, f"{p.name} contains {needle!r}"
            assert not re.search(rb"hf_[A-Za-z0-9]{30,}", data), p


def fake_project(tmp_path: Path, app_text: str) -> Path:
    """A minimal project tree whose app.py holds ``app_text``."""
    proj = tmp_path / "proj"
    (proj / "pages").mkdir(parents=True)
    (proj / "memeval_core").mkdir()
    (proj / "app.py").write_text(app_text)
    (proj / "pages" / "leaderboard.py").write_text("x = 1\n")
    (proj / "memeval_core" / "__init__.py").write_text('__version__ = "0"\n')
    shutil.copy(ROOT / "requirements.txt", proj / "requirements.txt")
    return proj


def test_a_leak_aborts_the_export_and_leaves_out_unchanged(
    exported: tuple[ExportResult, ExportResult], pmb_results: Path, tmp_path: Path
) -> None:
    out = tmp_path / "hf_export"
    shutil.copytree(exported[0].out, out)
    before = tree_digest(out)
    leaky = fake_project(tmp_path, f"RESULTS = {str(pmb_results.resolve())!r}\n")
    with pytest.raises(ExportError, match=r"^app\.py: contains the absolute path of the results directory"):
        export(pmb_results, out, project_root=leaky)
    assert tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf_export", "proj"]


def test_a_token_in_a_file_aborts_without_revealing_it(
    pmb_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    leaky = fake_project(tmp_path, f"TOKEN = {FAKE_TOKEN!r}\n")
    with pytest.raises(ExportError) as info:
        export(pmb_results, tmp_path / "out", project_root=leaky)
    assert "app.py: contains a secret (token)" in str(info.value)
    assert FAKE_TOKEN not in str(info.value)
    assert not (tmp_path / "out").exists()
    other = "hf_" + "Q" * 34
    leaky2 = fake_project(tmp_path / "2", f"T = {other!r}\n")
    with pytest.raises(ExportError, match="looks like a Hugging Face token") as info2:
        export(pmb_results, tmp_path / "out", project_root=leaky2)
    assert other not in str(info2.value)


def test_out_folder_is_checked(pmb_results: Path, tmp_path: Path) -> None:
    mine = tmp_path / "documents"
    mine.mkdir()
    (mine / "thesis.txt").write_text("mine")
    with pytest.raises(ExportError, match="holds no previous export"):
        export(pmb_results, mine)
    assert (mine / "thesis.txt").read_text() == "mine"
    with pytest.raises(ExportError, match="outside the results directory"):
        export(pmb_results, pmb_results / "hf_export")
    with pytest.raises(ExportError, match="results directory does not exist"):
        export(tmp_path / "nothing", tmp_path / "out")
    placeholder = tmp_path / "hf_export"
    placeholder.mkdir()
    (placeholder / "README.md").write_text("placeholder\n")
    result = export(pmb_results, placeholder)
    assert (placeholder / "leaderboard.json").is_file()
    assert result.out == placeholder


def test_bad_input_is_named_and_refused_unless_allowed(pmb_results: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(pmb_results / "test-results/baseline/retrieval-report-tenure.json", results)
    (results / "retrieval-report-broken.json").write_text('{"provider": "x", "cases": [')
    fixtures = pmb_results / "fixtures"
    with pytest.raises(ExportError, match=r"retrieval-report-broken\.json: \$: not valid JSON"):
        export(results, tmp_path / "out", fixtures)
    assert not (tmp_path / "out").exists()
    result = export(results, tmp_path / "out", fixtures, allow_errors=True)
    assert len(result.skipped_errors) == 1
    assert [r.display_name for r in result.board.pmb_rows()] == ["tenure"]
    assert [f.path for f in result.board.inputs] == [
        "beliefs.seed.json",
        "retrieval.cases.json",
        "session-retrieval.cases.json",
        "retrieval-report-tenure.json",
    ]


def test_diff_against_the_last_export(
    exported: tuple[ExportResult, ExportResult], pmb_results: Path, tmp_path: Path
) -> None:
    same = diff_exports(exported[0].out, exported[1].out)
    assert not (same.files_added or same.files_removed or same.files_changed)
    assert not same.rows_added and not same.rows_changed and same.readme_diff == ""
    results = tmp_path / "results"
    results.mkdir()
    for name in ("retrieval-report-tenure.json", "retrieval-report-mem0.json"):
        shutil.copy(pmb_results / "test-results/baseline" / name, results)
    smaller = export(results, tmp_path / "small", pmb_results / "fixtures")
    d = diff_exports(exported[0].out, smaller.out)
    assert d.old_fingerprint == exported[0].fingerprint
    assert d.new_fingerprint == smaller.fingerprint
    assert not d.rows_added
    assert len(d.rows_removed) == 24 - 2
    assert ("pmb-session", next(iter(rows_by_name(exported[0], "pmb-session").values())).run_id) in {
        (b, r) for b, r, _ in d.rows_removed
    }
    (changed,) = [c for c in d.rows_changed if c.display_name == "mem0"]
    old_rank = rows_by_name(exported[0], "pmb-single-turn")["mem0"].rank
    assert changed.fields == (
        ("rank", old_rank, 2),
        ("source", "test-results/baseline/retrieval-report-mem0.json", "retrieval-report-mem0.json"),
    )
    assert "leaderboard.json" in d.files_changed and "README.md" in d.files_changed
    assert "data/details/pmb-session.parquet" in d.files_removed
    assert "-| 1 | `tenure` | 77/77" not in d.readme_diff
    assert "+Top 2 of 2 runs." in d.readme_diff
    first = diff_exports(tmp_path / "never", smaller.out)
    assert first.old_fingerprint is None and len(first.rows_added) == 2


def test_cli_export(pmb_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hf_export"
    assert publish_main(["export", "--results", str(pmb_results), "--out", str(out), "-v"]) == 0
    printed = capsys.readouterr().out
    board = models.loads((out / "leaderboard.json").read_bytes())
    assert f"fingerprint {board.fingerprint}" in printed
    assert re.search(r"^\s+\d+  leaderboard\.json$", printed, re.M)
    assert publish_main(["export", "--results", str(tmp_path / "none"), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: export failed, {out} is unchanged: ") and "does not exist" in err


APPTEST_SCRIPT = """
import json, sys
from streamlit.testing.v1 import AppTest
import memeval_core
tables, exceptions = {}, []
for benchmark in ("pmb-single-turn", "pmb-session"):
    at = AppTest.from_file(sys.argv[1], default_timeout=120)
    at.query_params["benchmark"] = benchmark
    at.switch_page("pages/leaderboard.py").run()
    exceptions += [e.message for e in at.exception]
    rows = json.loads(at.dataframe[0].value.to_json(orient="records")) if at.dataframe else []
    for r in rows:
        r["display_name"] = r["display_name"].split("#", 1)[1]  # the run-page link's text
    tables[benchmark] = rows
print(json.dumps({"exceptions": exceptions, "tables": tables, "core": memeval_core.__file__}))
"""


def run_app(app_dir: Path, results: Path) -> dict[str, Any]:
    """The leaderboard tables of the app in ``app_dir`` on ``results``, run in a fresh interpreter rooted there."""
    env = {k: v for k, v in os.environ.items() if k not in ("MEMEVAL_FIXTURES", "PYTHONPATH")}
    env.update({"MEMEVAL_RESULTS": str(results), "PYTHONPATH": str(app_dir)})
    proc = subprocess.run(
        [sys.executable, "-c", APPTEST_SCRIPT, str(app_dir / "app.py")],
        cwd=app_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_bundled_space_app_shows_the_same_leaderboard(
    exported: tuple[ExportResult, ExportResult], pmb_results: Path
) -> None:
    out = exported[0].out
    space = run_app(out, out / "data" / "snapshot")
    assert not space["exceptions"]
    assert Path(space["core"]).resolve().is_relative_to(out.resolve()), "the Space must run its own copy of the code"
    single = {r["display_name"]: r for r in space["tables"]["pmb-single-turn"]}
    assert single["tenure"]["passed"] == 77
    assert single["tenure"]["active_retrieval"] == 43
    assert single["mem0"]["mean_precision"] == 0.0558
    main = run_app(ROOT, pmb_results)
    assert space["tables"] == main["tables"]


def test_exported_files_list_matches_disk(exported: tuple[ExportResult, ExportResult]) -> None:
    assert list_files(exported[0].out) == exported[0].files


@pytest.fixture(scope="module")
def qa_results(shared_data: Path) -> Path:
    """Published QA runs (LoCoMo and LongMemEval-S) of cognitive-memory-benchmarks."""
    path = shared_data / "cognitive-memory-benchmarks"
    if not path.is_dir():
        pytest.skip(f"{path} is absent; it holds published QA runs")
    return path


def test_qa_runs_export_with_publishable_flags(
    qa_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memeval_core.qa import leaderboard as qa_leaderboard
    from memeval_core.qa.ingest import load_qa

    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    a = export(qa_results, tmp_path / "a")
    b = export(qa_results, tmp_path / "b")
    assert tree_digest(a.out) == tree_digest(b.out)
    text = (a.out / "leaderboard.json").read_text(encoding="utf-8")
    schema = json.loads((ROOT / "docs" / "leaderboard.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(text), schema, cls=jsonschema.Draft202012Validator)
    qa_tables = [t for t in a.board.tables if isinstance(t, models.QaTable)]
    assert qa_tables and not [t for t in a.board.tables if isinstance(t, models.PmbTable)]
    expected = qa_leaderboard.rows(load_qa(qa_results).runs)
    got = [r for t in qa_tables for r in t.rows]
    assert sorted(r.run_id for r in got) == sorted(r["run_id"] for r in expected)
    by_id = {r["run_id"]: r for r in expected}
    for row in got:
        want = by_id[row.run_id]
        assert (row.accuracy, row.n_questions, row.publishable) == (
            want["accuracy"],
            want["n_questions"],
            want["publishable"],
        )
        assert row.not_publishable_because == want["not_publishable_because"]
        assert row.publishable == (not row.not_publishable_because)
    for f in a.board.inputs:
        assert f.role == "qa-run"
        assert hashlib.sha256((qa_results / f.path).read_bytes()).hexdigest() == f.sha256
    n_questions = sum(r.table.num_rows for r in load_qa(qa_results).runs)
    details = [pq.read_table(p) for p in sorted((a.out / "data" / "details").glob("*.parquet"))]
    assert sum(t.num_rows for t in details) == n_questions
    assert all(t.column_names[:2] == ["run_id", "display_name"] for t in details)
    snapshot = a.out / "data" / "snapshot"
    assert sorted(p.name for p in snapshot.iterdir()) == ["qa-load.json", "qa-questions.parquet", "qa-runs.jsonl"]
    assert qa_leaderboard.rows(read_qa_snapshot(snapshot).runs) == expected
    readme = (a.out / "README.md").read_text(encoding="utf-8")
    assert "| rank | system | group | accuracy | questions | judges | publishable |" in readme


PAGE_SCRIPT = """
import json, sys
from streamlit.testing.v1 import AppTest
def link_text(v):
    return v.split("#", 1)[1] if isinstance(v, str) and "#" in v else v
def frames_of(at):
    out = []
    for d in at.dataframe:
        rows = json.loads(d.value.to_json(orient="records"))
        out.append([{k: link_text(v) if k == "display_name" else v for k, v in r.items()} for r in rows])
    return out
tabs, exceptions, captions = {}, [], []
for benchmark in sys.argv[3].split(","):
    at = AppTest.from_file(sys.argv[1], default_timeout=180)
    at.query_params["benchmark"] = benchmark
    at.switch_page(sys.argv[2]).run()
    exceptions += [e.message for e in at.exception]
    tabs[benchmark] = [f for f in frames_of(at) if f and "display_name" in f[0]]
    captions = [c.value for c in at.sidebar.caption]
print(json.dumps({"exceptions": exceptions, "tabs": tabs, "frames": frames_of(at), "captions": captions}))
"""


def run_page(app_dir: Path, results: Path, page: str, benchmarks: str = "locomo,longmemeval-s") -> dict[str, Any]:
    """Tables of one page of the app in ``app_dir`` on ``results``, in a fresh interpreter rooted there."""
    env = {k: v for k, v in os.environ.items() if k not in ("MEMEVAL_FIXTURES", "MEMEVAL_DATASETS", "PYTHONPATH")}
    env.update({"MEMEVAL_RESULTS": str(results), "PYTHONPATH": str(app_dir), "MEMEVAL_CACHE_DIR": "off"})
    proc = subprocess.run(
        [sys.executable, "-c", PAGE_SCRIPT, str(app_dir / "app.py"), page, benchmarks],
        cwd=app_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not result["exceptions"], result["exceptions"]
    return result


@pytest.fixture(scope="module")
def mixed_results(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary results folder with copies of PMB, the cognitive-memory QA runs and locomo10.json
    (copies: links out of the results folder are not followed)."""
    root = tmp_path_factory.mktemp("mixed") / "results"
    for sub in ("precisionmembench", "cognitive-memory-benchmarks", "locomo/data/locomo10.json"):
        src = shared_data / sub
        if not src.exists():
            pytest.skip(f"{src} is absent; it holds public benchmark data this test exports")
        for f in [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file()):
            dest = root / f.relative_to(shared_data)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
    return root


def test_space_shows_the_qa_runs_of_a_pmb_and_qa_export(
    mixed_results: Path, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memeval_core.qa import leaderboard as qa_leaderboard
    from memeval_core.qa.ingest import load_qa

    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    a = export(mixed_results, tmp_path / "a" / "hf_export")
    b = export(mixed_results, tmp_path / "b" / "hf_export")
    assert tree_digest(a.out) == tree_digest(b.out)
    assert {t.benchmark for t in a.board.tables} == {"pmb-single-turn", "pmb-session", "locomo", "longmemeval-s"}
    snapshot = a.out / "data" / "snapshot"
    assert sorted(p.name for p in snapshot.iterdir()) == [
        "pmb-cases.parquet",
        "pmb-fixture.json",
        "pmb-runs.json",
        "pmb-runs.parquet",
        "qa-load.json",
        "qa-questions.parquet",
        "qa-runs.jsonl",
    ]
    original = load_qa(mixed_results)
    read = read_qa_snapshot(snapshot)
    assert read.runs == original.runs
    assert qa_leaderboard.rows(read.runs) == qa_leaderboard.rows(original.runs)
    # locomo10.json (CC BY-NC) is named and hashed, never shipped: no copy, not even its dialogue.
    assert "locomo/data/locomo10.json" in {f.path for f in a.board.inputs}
    first_turn = b"Hey Mel! Good to see you! How have you been?"
    for f in sorted(p for p in a.out.rglob("*") if p.is_file()):
        assert f.name != "locomo10.json"
        data = f.read_bytes()
        assert first_turn not in data, f
        assert str(shared_data.resolve()).encode() not in data, f
        assert str(mixed_results).encode() not in data, f

    space = run_page(a.out, snapshot, "pages/qa_leaderboard.py")
    main = run_page(ROOT, mixed_results, "pages/qa_leaderboard.py")
    (counts,) = [c for c in space["captions"] if "LoCoMo" in c]
    assert "LoCoMo: 2 runs" in counts and "LongMemEval\\-S: 2 runs" in counts
    assert list(space["tabs"]) == ["locomo", "longmemeval-s"]
    # LongMemEval-S holds one ranked table.
    (publishable,) = space["tabs"]["longmemeval-s"]
    assert {r["display_name"]: r["accuracy"] for r in publishable}["cognitive_memory"] == 0.726
    assert space["tabs"] == main["tabs"]

    space_judges = run_page(a.out, snapshot, "pages/judges.py")
    main_judges = run_page(ROOT, mixed_results, "pages/judges.py")
    assert space_judges["frames"] and space_judges["frames"] == main_judges["frames"]


def test_preview_export_keeps_one_scratch_export(mixed_results: Path, tmp_path: Path) -> None:
    from memeval_core.export.writer import preview_export

    scratch = tmp_path / "scratch"
    first = preview_export(mixed_results, "a" * 64, scratch)
    assert (first / "leaderboard.json").is_file()
    assert preview_export(mixed_results, "a" * 64, scratch) == first, "the same state reuses its export"
    second = preview_export(mixed_results, "b" * 64, scratch)
    assert [p.name for p in scratch.iterdir()] == [second.name], "older previews are removed"
    with pytest.raises(ValueError, match="hexadecimal"):
        preview_export(mixed_results, "../../etc", scratch)


def test_the_pmb_details_table_is_one_chunk_per_column(pmb_results: Path) -> None:
    """A run's cases are a batch of their own: the details table joins them into one chunk per column, since the
    Parquet writer's page breaks follow the chunks (the same rows must give the same file)."""
    for table in pmb_details(load_pmb_results(pmb_results, cache_dir=None)).values():
        assert table.num_rows > 100 and {column.num_chunks for column in table.columns} == {1}
