"""The on-disk cache of results loads: hit when unchanged, miss when a file changes, robust to corruption."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from memeval_core import file_pool, leaderboard, results, settings
from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.snapshot import write_snapshot
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import load_qa
from memeval_core.qa.snapshot import write_qa_snapshot
from memeval_core.results import (
    RACY_WINDOW_NS,
    Format,
    cached_headers,
    cached_load,
    input_fingerprint,
    load_all_results,
    load_headers,
    load_pmb_results,
    load_qa_results,
)
from tests import _pmb_oracle as oracle
from tests._data import PMB_DIR, SHARED_DATA, require

OLD_NS = 1_700_000_000 * 10**9
"""A fixed past mtime, so the inputs are never 'too fresh' to key the cache on."""


def _age(root: Path, mtime_ns: int = OLD_NS) -> None:
    for p in root.rglob("*"):
        os.utime(p, ns=(mtime_ns, mtime_ns))


def _copy_pmb(tmp_path: Path) -> Path:
    dst = tmp_path / "pmb"
    shutil.copytree(require(PMB_DIR), dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    _age(dst)
    return dst


def _write_json(value: object, folder: Path) -> bool:
    (folder / "value.json").write_text(json.dumps(value))
    (folder / "header.json").write_text(json.dumps(["header", value]))
    return True


JSON: Format[Any, Any] = Format(
    _write_json,
    lambda folder: json.loads((folder / "value.json").read_text()),
    lambda folder: json.loads((folder / "header.json").read_text()),
    lambda value: ["header", value],
)
"""A cache entry of any JSON value, its header a separate file (the real formats: the PMB and QA snapshots)."""


def _counting_cold(calls: list[int], value: object) -> object:
    calls.append(1)
    return value


def test_default_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / "c"))
    assert settings.cache_dir() == tmp_path / "c"
    for off in ("", "off", "0"):
        monkeypatch.setenv("MEMEVAL_CACHE_DIR", off)
        assert settings.cache_dir() is None
    monkeypatch.delenv("MEMEVAL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings.cache_dir() == tmp_path / "xdg" / "memeval"


def test_second_load_is_served_from_the_cache(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    _age(data)
    calls: list[int] = []
    first = cached_load("t", data, (), lambda: _counting_cold(calls, {"v": 1}), JSON, tmp_path / "cache")
    second = cached_load("t", data, (), lambda: _counting_cold(calls, {"v": 2}), JSON, tmp_path / "cache")
    assert first == second == {"v": 1}
    assert len(calls) == 1


def test_a_changed_file_invalidates(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    _age(data)
    cache = tmp_path / "cache"
    calls: list[int] = []
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "old"), JSON, cache) == "old"
    # Same size, later mtime: a rewrite the key must notice.
    (data / "a.json").write_text("[2]")
    _age(data, OLD_NS + 1)
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "new"), JSON, cache) == "new"
    # An added file and a removed file invalidate too.
    (data / "b.json").write_text("{}")
    _age(data, OLD_NS + 1)
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "added"), JSON, cache) == "added"
    (data / "c.json").write_text("{}")
    _age(data, OLD_NS + 1)
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "another"), JSON, cache) == "another"
    (data / "c.json").unlink()
    # Back to earlier states of the folder: their entries, still kept, hold their loads.
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "removed"), JSON, cache) == "added"
    (data / "b.json").unlink()
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "removed"), JSON, cache) == "new"
    assert len(calls) == 4
    # Only the newest entries of these inputs are kept: the first state's is gone.
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == results.ENTRIES_KEPT
    _age(data)
    assert cached_load("t", data, (), lambda: _counting_cold(calls, "first again"), JSON, cache) == "first again"


def test_fingerprint_ignores_hidden_files_and_names_fresh_inputs(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[]")
    _age(tmp_path)
    key = input_fingerprint("t", tmp_path)
    assert key is not None and len(key) == 64
    (tmp_path / ".hidden.json").write_text("[]")
    os.utime(tmp_path / ".hidden.json", ns=(OLD_NS, OLD_NS))
    assert input_fingerprint("t", tmp_path) == key
    assert input_fingerprint("other-kind", tmp_path) != key
    # A file written just now cannot be keyed safely: no key, so the cache is bypassed.
    (tmp_path / "b.json").write_text("[]")
    assert input_fingerprint("t", tmp_path) is None
    now = time.time_ns()
    assert input_fingerprint("t", tmp_path, now_ns=now + RACY_WINDOW_NS + 10**9) is not None


def test_fresh_inputs_bypass_the_cache(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    calls: list[int] = []
    for _ in range(2):
        cached_load("t", data, (), lambda: _counting_cold(calls, 1), JSON, tmp_path / "cache")
    assert len(calls) == 2
    assert not (tmp_path / "cache").exists()


def test_a_corrupt_entry_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    _age(data)
    cache = tmp_path / "cache"
    calls: list[int] = []
    cached_load("t", data, (), lambda: _counting_cold(calls, [1, 2, 3]), JSON, cache)
    (entry,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    (entry / "value.json").write_bytes(b"\x80\x05not JSON at all")
    assert cached_load("t", data, (), lambda: _counting_cold(calls, [1, 2, 3]), JSON, cache) == [1, 2, 3]
    assert len(calls) == 2
    # The rebuilt entry is valid again.
    assert cached_load("t", data, (), lambda: _counting_cold(calls, None), JSON, cache) == [1, 2, 3]
    assert len(calls) == 2


def test_an_unwritable_cache_still_loads(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    _age(data)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    calls: list[int] = []
    for _ in range(2):
        assert cached_load("t", data, (), lambda: _counting_cold(calls, 7), JSON, blocker / "cache") == 7
    assert len(calls) == 2
    # Headers come from the process's scratch folder instead (as with no cache at all).
    for cache in (blocker / "cache", None):
        assert cached_headers("t", data, (), lambda: _counting_cold(calls, 7), JSON, cache) == ["header", 7]
    assert len(calls) == 4


def test_pmb_warm_load_equals_cold_load(tmp_path: Path) -> None:
    pmb = _copy_pmb(tmp_path)
    cache = tmp_path / "cache"
    cold = load_pmb(pmb)
    first = load_pmb_results(pmb, cache_dir=cache)
    assert any(cache.iterdir())
    warm = load_pmb_results(pmb, cache_dir=cache)
    assert oracle.rows(warm.runs) == oracle.rows(cold.runs) == oracle.rows(first.runs)
    assert [r.cases for r in warm.runs] == [r.cases for r in cold.runs]
    assert warm.errors == cold.errors and warm.skipped == cold.skipped
    assert warm.fixture is not None and cold.fixture is not None
    assert warm.fixture.cases == cold.fixture.cases
    tenure = next(r for r in warm.runs if r.identity.display_name == "tenure")
    assert (tenure.aggregate.cases, tenure.aggregate.passed) == (77, 77)


def test_pmb_cache_notices_an_edited_report(tmp_path: Path) -> None:
    pmb = _copy_pmb(tmp_path)
    cache = tmp_path / "cache"
    before = load_pmb_results(pmb, cache_dir=cache)
    report = next(pmb.rglob("retrieval-report-mem0.json"))
    report.write_text('{"provider": "mem0", "cases": [{"caseId": "nope"}]}')
    _age(pmb, OLD_NS + 5)
    after = load_pmb_results(pmb, cache_dir=cache)
    assert len(after.runs) == len(before.runs) - 1
    assert len(after.errors) == len(before.errors) + 1


def test_qa_results_are_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "runs" / "r.json"
    run.parent.mkdir()
    run.write_text(
        '{"schema_version": 1, "run": {"benchmark": "locomo", "system": "s"}, "questions": ['
        '{"benchmark": "locomo", "question_id": "q1", "answer": "a", "verdicts": [{"judge": "j", "score": 1}]},'
        '{"benchmark": "locomo", "question_id": "q2", "answer": "b", "verdicts": [{"judge": "j", "score": 0}]}]}'
    )
    _age(tmp_path / "runs")
    cache = tmp_path / "cache"
    cold = load_qa_results(tmp_path / "runs", cache_dir=cache)
    calls: list[int] = []
    real = results.load_qa

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(results, "load_qa", spy)
    warm = load_qa_results(tmp_path / "runs", cache_dir=cache)
    assert calls == []
    assert warm == cold
    assert warm.runs[0].score.accuracy == 0.5
    assert load_qa_results(tmp_path / "runs", cache_dir=None) == cold
    assert calls == [1]


def _pmb_same(a: PmbLoad, b: PmbLoad) -> None:
    assert oracle.rows(a.runs) == oracle.rows(b.runs)
    assert [r.cases for r in a.runs] == [r.cases for r in b.runs]
    assert a.errors == b.errors and a.skipped == b.skipped


def test_load_all_results_equals_both_loads_and_fills_both_cache_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pmb = _copy_pmb(tmp_path)
    qa_root = tmp_path / "qa"
    shutil.copytree(require(SHARED_DATA / "memobase"), qa_root / "memobase")
    shutil.copytree(require(SHARED_DATA / "locomo"), qa_root / "locomo")
    _age(qa_root)
    cache = tmp_path / "cache"
    first_pmb, first_qa = load_all_results(pmb, qa_root, cache_dir=cache)
    # Each entry is the export's snapshot format plus load.json: JSON and Parquet, nothing pickled.
    entries = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert len(entries) == 2
    assert {f.suffix for e in entries for f in e.iterdir()} == {".json", ".jsonl", ".parquet"}
    _pmb_same(first_pmb, load_pmb(pmb))
    assert first_qa == load_qa(qa_root)
    assert len(first_qa.runs) >= 2 and first_qa.locomo is not None

    # Both entries were written: the separate loaders and a second combined load read them.
    monkeypatch.setattr(results, "load_pmb", lambda *a: pytest.fail("PMB computed again"))
    monkeypatch.setattr(results, "load_qa", lambda *a: pytest.fail("QA computed again"))
    _pmb_same(load_pmb_results(pmb, cache_dir=cache), first_pmb)
    assert load_qa_results(qa_root, cache_dir=cache) == first_qa
    warm_pmb, warm_qa = load_all_results(pmb, qa_root, cache_dir=cache)
    _pmb_same(warm_pmb, first_pmb)
    assert warm_qa == first_qa


def test_cached_headers_read_the_header_file_alone_when_warm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    _age(data)
    calls: list[int] = []
    cache = tmp_path / "cache"
    cold = cached_headers("t", data, (), lambda: _counting_cold(calls, {"v": 1}), JSON, cache)
    assert cold == ["header", {"v": 1}] and calls == [1]
    (entry,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    (entry / "value.json").unlink()  # a header read must not need the full value
    warm = cached_headers("t", data, (), lambda: _counting_cold(calls, {"v": 2}), JSON, cache)
    assert warm == ["header", {"v": 1}] and calls == [1]


def test_header_only_load_gives_the_full_loads_leaderboard(tmp_path: Path) -> None:
    """Cold, warm (runs table and run lines alone) and from an export's snapshot: the same rows as the full load."""
    root = require(SHARED_DATA)
    pmb, qa = load_all_results(root, root, cache_dir=None)
    want = (oracle.rows(pmb.runs), qa_leaderboard.rows(qa.runs))
    cache = tmp_path / "cache"
    for _ in ("cold", "warm"):
        pmb_h, qa_h = load_headers(root, root, cache_dir=cache)
        assert (leaderboard.table_rows(pmb_h.table), qa_leaderboard.rows(qa_h.runs)) == want
        assert (pmb_h.errors, pmb_h.skipped, qa_h.errors, qa_h.skipped) == (
            pmb.errors,
            pmb.skipped,
            qa.errors,
            qa.skipped,
        )
    snap = tmp_path / "snapshot"
    write_snapshot(pmb, snap)
    write_qa_snapshot(qa, snap, results=root)
    pmb_s, qa_s = load_headers(snap, snap, cache_dir=None)
    assert (leaderboard.table_rows(pmb_s.table), qa_leaderboard.rows(qa_s.runs)) == want
    (snap / "pmb-runs.parquet").unlink()  # a snapshot from before the runs table: read whole
    assert leaderboard.table_rows(load_headers(snap, snap, cache_dir=None)[0].table) == want[0]


def test_the_pmb_and_qa_keys_of_one_folder_walk_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _copy_pmb(tmp_path)
    walked: list[Path] = []
    real_walk = results.tree.walk

    def counting_walk(root: Path, *args: Any, **kwargs: Any) -> Any:
        walked.append(root)
        return real_walk(root, *args, **kwargs)

    monkeypatch.setattr(results.tree, "walk", counting_walk)
    load_headers(data, data, cache_dir=tmp_path / "cache")  # cold: the loaders walk it too
    walked.clear()
    load_headers(data, data, cache_dir=tmp_path / "cache")  # warm: only the two keys need it
    assert walked.count(data) == 1


def test_with_the_cache_off_headers_read_whole_runs_from_a_scratch_entry(tmp_path: Path) -> None:
    """No cache: the cold load is written to the process's scratch folder and read from there (never by key: a
    second load scores again, and its entry replaces the first)."""
    root = require(SHARED_DATA)
    pmb, qa = load_all_results(root, root, cache_dir=None)
    pmb_h, qa_h = load_headers(root, root, cache_dir=None)
    ids = [r.identity.run_id for r in pmb.runs]
    assert [r.cases for r in pmb_h.read_runs(ids)] == [r.cases for r in pmb.runs]
    assert qa_h.read_runs([r.run_id for r in qa.runs]) == qa.runs
    scratch = results._scratch_dir()
    assert scratch is not None
    prefixes = (results._entry_prefix("pmb", root), results._entry_prefix("qa", root))
    before = {p.name for p in scratch.iterdir() if p.name.startswith(prefixes)}
    load_headers(root, root, cache_dir=None)
    # A load a page may still be drawing from keeps its files for a while.
    assert [r.cases for r in pmb_h.read_runs(ids[:2])] == [r.cases for r in pmb.runs[:2]]
    for _ in range(results.ENTRIES_KEPT):
        load_headers(root, root, cache_dir=None)
    after = {p.name for p in scratch.iterdir() if p.name.startswith(prefixes)}
    assert len(after) == 2 * results.ENTRIES_KEPT and not before & after


def test_a_folder_without_pmb_fixtures_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "x-retrieval-report.json").write_text('{"provider": "p", "cases": []}')
    (data / "other.json").write_text("[1]")
    _age(data)
    cache = tmp_path / "cache"
    cold = results.load_pmb_headers(data, cache_dir=cache)
    assert cold.fixture is None and cold.table.num_rows == 0
    assert [e.file for e in cold.errors] == ["x-retrieval-report.json"] and cold.skipped == ("other.json",)
    monkeypatch.setattr(results, "scan_pmb", lambda *a: pytest.fail("PMB loaded again"))
    warm = results.load_pmb_headers(data, cache_dir=cache)
    assert (warm.errors, warm.skipped, warm.table.num_rows) == (cold.errors, cold.skipped, 0)
    assert results.load_pmb_results(data, cache_dir=cache).errors == cold.errors


def test_with_the_cache_off_the_cli_leaves_no_files(tmp_path: Path) -> None:
    """The scratch folder goes when the process exits; the leaderboard is the one a cache gives."""

    root = require(SHARED_DATA)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = {}
    for cache in ("off", str(tmp_path / "cache")):
        env = {**os.environ, "TMPDIR": str(scratch), "MEMEVAL_CACHE_DIR": cache}
        argv = [sys.executable, "-m", "memeval_core", "leaderboard", "--results", str(root), "--format", "json"]
        done = subprocess.run(argv, env=env, capture_output=True, check=True, timeout=300)
        out[cache] = done.stdout
    assert list(scratch.iterdir()) == []
    assert len(set(out.values())) == 1 and json.loads(out["off"])


def _one_file(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("[1]")
    _age(data)
    return data


def test_a_failing_cold_load_runs_once_and_leaves_nothing(tmp_path: Path) -> None:
    calls: list[int] = []

    def failing() -> object:
        calls.append(1)
        raise RuntimeError("scoring broke")

    with pytest.raises(RuntimeError, match="scoring broke"):
        cached_headers("t", _one_file(tmp_path), (), failing, JSON, tmp_path / "cache")
    assert calls == [1] and list((tmp_path / "cache").iterdir()) == []


def test_a_disk_failing_midway_gives_the_headers_from_memory(tmp_path: Path) -> None:
    calls: list[int] = []

    def disk_full(folder: Path) -> None:
        _counting_cold(calls, 7)
        raise OSError(28, "No space left on device")

    value = cached_headers("t", _one_file(tmp_path), (), lambda: _counting_cold(calls, 7), JSON, None, None, disk_full)
    assert value == ["header", 7] and len(calls) == 2


def test_scratch_folders_of_processes_gone_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = tmp_path / "memeval-scratch-999999999-abc"  # above any pid_max: no such process
    mine = tmp_path / f"memeval-scratch-{os.getpid()}-xyz"
    for folder in (gone, mine):
        folder.mkdir()
        (folder / "entry").mkdir()
    results._sweep_orphaned_scratch()
    assert not gone.exists() and mine.exists()


def test_an_entry_missing_its_pmb_snapshot_is_rebuilt(tmp_path: Path) -> None:
    data = _copy_pmb(tmp_path)
    cache = tmp_path / "cache"
    cold = results.load_pmb_headers(data, cache_dir=cache)
    (entry,) = [p for p in cache.iterdir() if p.name.startswith("pmb-")]
    (entry / "pmb-cases.parquet").unlink()
    again = results.load_pmb_headers(data, cache_dir=cache)
    assert again.table.equals(cold.table) and again.table.num_rows > 0


@pytest.mark.usefixtures("script_main_with_a_thread")
@pytest.mark.parametrize("cache", ["cache", None])
def test_a_process_that_can_start_no_workers_loads_a_large_folder_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str | None
) -> None:
    """The app server can start no workers (file_pool.start_method): a large cold load runs in a process of its
    own, which writes the entry (the cache's, or this process's scratch one) that the headers are read from."""
    root = require(SHARED_DATA)
    pmb, qa = load_all_results(root, root, cache_dir=None)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    apart: list[BaseException | None] = []
    real_run_apart = file_pool.run_apart

    def spy(call: Any) -> None:
        try:
            real_run_apart(call)
        except BaseException as exc:  # this process would load instead, which is not what is tested
            apart.append(exc)
            raise
        apart.append(None)

    monkeypatch.setattr(file_pool, "run_apart", spy)
    pmb_h, qa_h = load_headers(root, root, cache_dir=None if cache is None else tmp_path / cache)
    assert apart == [None, None]  # the PMB load, then the QA load, each in a process of its own that succeeded
    assert leaderboard.table_rows(pmb_h.table) == oracle.rows(pmb.runs)
    assert qa_leaderboard.rows(qa_h.runs) == qa_leaderboard.rows(qa.runs)
    assert (pmb_h.errors, pmb_h.skipped, qa_h.errors, qa_h.skipped) == (pmb.errors, pmb.skipped, qa.errors, qa.skipped)
    assert qa_h.read_runs([r.run_id for r in qa.runs[:3]]) == qa.runs[:3]


@pytest.mark.usefixtures("script_main_with_a_thread")
def test_when_the_load_s_own_process_fails_this_one_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = require(SHARED_DATA)
    pmb = load_pmb_results(root, cache_dir=None)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)

    calls: list[object] = []

    def killed_midway(call: Any) -> None:
        calls.append(call)
        call.args[0].joinpath("half-written.parquet").write_bytes(b"PAR1")
        raise ChildProcessError("the load's own process ended with code -9: ")

    monkeypatch.setattr(file_pool, "run_apart", killed_midway)
    headers = results.load_pmb_headers(root, cache_dir=tmp_path / "cache")
    assert len(calls) == 1
    assert leaderboard.table_rows(headers.table) == oracle.rows(pmb.runs)
    (entry,) = [p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]
    assert not (entry / "half-written.parquet").exists()


@pytest.mark.parametrize("cache", ["cache", "off"])
def test_a_file_name_that_is_not_utf8_is_named_not_fatal(tmp_path: Path, cache: str) -> None:

    data = _copy_pmb(tmp_path)
    report = next(data.rglob("retrieval-report-mem0.json")).read_bytes()
    (data / os.fsdecode(b"\xff-retrieval-report.json")).write_bytes(report)
    _age(data)
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(tmp_path / cache) if cache == "cache" else "off"}
    for command in ("leaderboard", "verify"):
        argv = [sys.executable, "-m", "memeval_core", command, "--results", str(data)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=300)
        assert "Traceback" not in done.stderr, done.stderr
        assert "\\xff-retrieval-report.json: not read: its name is not UTF-8 text" in done.stdout + done.stderr
