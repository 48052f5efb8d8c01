"""Ingest: the real PMB data loads, and every kind of bad file gives one clear error."""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memeval_core import file_pool, settings
from memeval_core.pmb import ingest
from memeval_core.pmb.ingest import PmbLoad, load_pmb, sniff
from tests import _pmb_oracle as oracle
from tests._data import PMB_DIR, json_files, require


@pytest.fixture(scope="module")
def pmb() -> Path:
    return require(PMB_DIR)


def test_all_real_reports_load(pmb: Path) -> None:
    load = load_pmb(pmb)
    assert load.errors == ()
    assert load.skipped == ("providers.config.json",)
    single = [r for r in load.runs if r.identity.benchmark == "pmb-single-turn"]
    session = [r for r in load.runs if r.identity.benchmark == "pmb-session"]
    assert (len(single), len(session)) == (13, 11)
    assert all(r.aggregate.cases == 77 for r in single)
    assert all(r.aggregate.cases == 12 for r in session)


def test_runs_sharing_a_provider_get_distinct_names_and_stable_ids(pmb: Path) -> None:
    runs = {r.identity.source.rsplit("/", 1)[-1]: r.identity for r in load_pmb(pmb).runs}
    assert runs["retrieval-report-vector.json"].display_name == "vector"
    assert runs["nomic-retrieval-report-vector.json"].provider == "vector"
    assert runs["nomic-retrieval-report-vector.json"].display_name == "vector (nomic)"
    assert runs["qwen3-retrieval-report-vector.json"].display_name == "qwen3 (vector)"
    rid = runs["retrieval-report-vector.json"].run_id
    assert rid.startswith("retrieval-report-vector-") and len(rid.rsplit("-", 1)[1]) == 10
    assert load_pmb(pmb).runs[0].identity.run_id == load_pmb(pmb).runs[0].identity.run_id
    names = [(i.benchmark, i.display_name) for i in runs.values()]
    assert len(names) == len(set(names))


def test_unknown_fields_are_kept(pmb: Path) -> None:
    runs = {r.identity.source.rsplit("/", 1)[-1]: r for r in load_pmb(pmb).runs}
    assert "provenance" in runs["retrieval-report-agentmemory.json"].extra_fields


def test_recognised_by_content_not_name(pmb: Path, tmp_path: Path) -> None:
    shutil.copytree(pmb / "fixtures", tmp_path / "fx")
    shutil.copy(pmb / "test-results/baseline/retrieval-report-mem0.json", tmp_path / "my-run.json")
    shutil.copy(pmb / "test-results/baseline/session-retrieval-report-mem0.json", tmp_path / "other.json")
    load = load_pmb(tmp_path)
    assert load.errors == ()
    assert sorted((r.identity.benchmark, r.identity.display_name) for r in load.runs) == [
        ("pmb-session", "mem0 (other)"),
        ("pmb-single-turn", "mem0 (my-run)"),
    ]


def test_sniff() -> None:
    assert sniff({"provider": "x", "cases": [{"caseId": "a", "turnIndex": 0}]}) == "session-report"
    assert sniff({"provider": "x", "cases": [{"caseId": "a"}]}) == "single-turn-report"
    assert sniff([{"caseId": "a", "expect": {}}]) == "cases"
    assert sniff([{"caseId": "a", "turns": []}]) == "session-cases"
    assert sniff([{"_id": "b", "canonical_name": "n"}]) == "beliefs"
    assert sniff({"mem0": {"envVar": "X"}}) is None


@pytest.fixture
def results_with(pmb: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A results dir with the fixture, one good report, and a bad file written by the test."""
    shutil.copytree(pmb / "fixtures", tmp_path / "fixtures")
    shutil.copy(pmb / "test-results/baseline/retrieval-report-tenure.json", tmp_path / "retrieval-report-tenure.json")
    good = json.loads((pmb / "test-results/baseline/retrieval-report-mem0.json").read_text())

    def write(content: str | bytes | None = None, mutate=None) -> Path:  # type: ignore[no-untyped-def]
        path = tmp_path / "retrieval-report-bad.json"
        if mutate is not None:
            data = json.loads(json.dumps(good))
            mutate(data)
            content = json.dumps(data)
        assert content is not None
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        return tmp_path

    return write


def _only_error(root: Path):  # type: ignore[no-untyped-def]
    load = load_pmb(root)
    assert [r.identity.provider for r in load.runs] == ["tenure"], "the good run must still load"
    assert len(load.errors) == 1
    err = load.errors[0]
    assert err.file == "retrieval-report-bad.json"
    return err


def test_empty_file(results_with) -> None:  # type: ignore[no-untyped-def]
    err = _only_error(results_with(""))
    assert (err.path, err.message) == ("$", "file is empty")


def test_not_json(results_with) -> None:  # type: ignore[no-untyped-def]
    err = _only_error(results_with('{"provider": "x", '))
    assert err.path == "$" and err.message.startswith("not valid JSON") and "line 1" in err.message


def test_not_utf8(results_with) -> None:  # type: ignore[no-untyped-def]
    err = _only_error(results_with(b'{"provider": "\xff"}'))
    assert "not UTF-8" in err.message


def test_wrong_shape(results_with) -> None:  # type: ignore[no-untyped-def]
    err = _only_error(results_with("[1, 2, 3]"))
    assert "named like a PMB report but is not one" in err.message


def test_wrong_type_names_the_json_path(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][4]["passed"] = "maybe"

    err = _only_error(results_with(mutate=mutate))
    assert err.path == "$.cases[4].passed"
    assert '"maybe"' in err.message


def test_nan_latency_is_rejected_with_its_path(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][2]["retrievalLatencyMs"] = float("nan")

    root = results_with(mutate=mutate)
    text = (root / "retrieval-report-bad.json").read_text()
    assert "NaN" in text
    err = _only_error(root)
    assert (err.path, err.message) == ("$.cases[2].retrievalLatencyMs", "NaN is not a number JSON allows")


def test_negative_latency_is_rejected_with_its_path(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][7]["retrievalLatencyMs"] = -3

    err = _only_error(results_with(mutate=mutate))
    assert err.path == "$.cases[7].retrievalLatencyMs"


def test_a_latency_beyond_any_run_is_rejected_with_its_path(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][5]["retrievalLatencyMs"] = 1e307  # finite, but rounding it to 2 decimals would overflow

    err = _only_error(results_with(mutate=mutate))
    assert err.path == "$.cases[5].retrievalLatencyMs" and "less than or equal to 1000000000000" in err.message


def test_unknown_case_id(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][9]["caseId"] = "no-such-case"

    err = _only_error(results_with(mutate=mutate))
    assert err.path == "$.cases[9].caseId"
    assert "'no-such-case' is not a case of retrieval.cases.json" in err.message


def test_duplicate_case_id(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][1]["caseId"] = d["cases"][0]["caseId"]

    err = _only_error(results_with(mutate=mutate))
    assert err.path == "$.cases[1].caseId" and "appears twice" in err.message


def test_missing_fixture_is_one_error_per_report(tmp_path: Path, pmb: Path) -> None:
    shutil.copy(pmb / "test-results/baseline/retrieval-report-tenure.json", tmp_path / "r.json")
    load = load_pmb(tmp_path)
    assert load.runs == ()
    assert [e.file for e in load.errors] == ["r.json"]
    assert "--fixtures" in load.errors[0].hint


def test_explicit_fixtures_dir(tmp_path: Path, pmb: Path) -> None:
    shutil.copy(pmb / "test-results/baseline/retrieval-report-tenure.json", tmp_path / "r.json")
    load = load_pmb(tmp_path, pmb / "fixtures")
    assert [r.aggregate.passed for r in load.runs] == [77]


def _die(path: Path, rel: str) -> None:
    os._exit(3)


def _every_case(load: PmbLoad) -> list[tuple[str, tuple[object, ...]]]:
    return [(r.identity.run_id, r.cases) for r in load.runs]


def test_parallel_scoring_gives_the_serial_result(pmb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial = load_pmb(pmb)
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    assert file_pool.worker_count(json_files(pmb)) == 2
    parallel = load_pmb(pmb)
    assert oracle.rows(parallel.runs) == oracle.rows(serial.runs)
    assert _every_case(parallel) == _every_case(serial)
    assert [str(e) for e in parallel.errors] == [str(e) for e in serial.errors]
    assert parallel.skipped == serial.skipped
    # The cases come back from the workers as the same Arrow batches (and the runs' other fields as they were).
    assert all(p.table.arrow.equals(s.table.arrow) for p, s in zip(parallel.runs, serial.runs, strict=True))
    fields = [(r.identity, r.aggregate, r.stated, r.mismatches, r.provenance) for r in parallel.runs]
    assert fields == [(r.identity, r.aggregate, r.stated, r.mismatches, r.provenance) for r in serial.runs]


def test_dead_workers_fall_back_to_serial_scoring(pmb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial = load_pmb(pmb)
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    # Each worker dies at its first file, so the pool breaks before any result.
    monkeypatch.setattr(ingest, "_load_file_in_worker", _die)
    assert oracle.rows(load_pmb(pmb).runs) == oracle.rows(serial.runs)


def test_worker_count_stays_serial_for_small_loads_or_when_told(pmb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = json_files(pmb)
    monkeypatch.setenv(settings.WORKERS_ENV, "4")
    assert file_pool.worker_count(paths) == 1  # the public data is far below PARALLEL_MIN_BYTES
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    assert file_pool.worker_count(paths) == 4
    monkeypatch.setenv(settings.WORKERS_ENV, "1")
    assert file_pool.worker_count(paths) == 1
    for value in ("0", "many"):
        monkeypatch.setenv(settings.WORKERS_ENV, value)
        with pytest.raises(settings.SettingsError, match="MEMEVAL_WORKERS"):
            file_pool.worker_count(paths)


def _load_in_a_daemon(pmb: Path) -> list[dict[str, object]]:
    return oracle.rows(load_pmb(pmb).runs)


def test_a_daemonic_process_scores_every_report_itself(pmb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A multiprocessing.Pool worker may not start processes of its own: it loads serially.
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_load_in_a_daemon, (pmb,)) == oracle.rows(load_pmb(pmb).runs)


def test_the_first_bad_entry_in_file_order_is_the_error(results_with) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][3]["caseId"] = d["cases"][2]["caseId"]
        d["cases"][5]["caseId"] = "no-such-case"

    err = _only_error(results_with(mutate=mutate))
    assert err.path == "$.cases[3].caseId" and "appears twice (first at $.cases[2])" in err.message

    def mutate_other_way(d):  # type: ignore[no-untyped-def]
        d["cases"][3]["caseId"] = "no-such-case"
        d["cases"][5]["caseId"] = d["cases"][2]["caseId"]

    err = _only_error(results_with(mutate=mutate_other_way))
    assert err.path == "$.cases[3].caseId" and "'no-such-case' is not a case of retrieval.cases.json" in err.message


def test_unknown_session_turn(pmb: Path, tmp_path: Path) -> None:
    shutil.copytree(pmb / "fixtures", tmp_path / "fixtures")
    data = json.loads((pmb / "test-results/baseline/session-retrieval-report-zep.json").read_text())
    data["cases"][4]["turnIndex"] = 99
    (tmp_path / "session-retrieval-report-zep.json").write_text(json.dumps(data))
    (err,) = load_pmb(tmp_path).errors
    case_id = data["cases"][4]["caseId"]
    assert err.path == "$.cases[4].caseId"
    assert err.message.startswith(f"'{case_id} turn 99' is not a case of session-retrieval.cases.json of ")


def test_fixture_files_read_once_still_sniffed_like_any_file(pmb: Path, tmp_path: Path) -> None:
    # The load reuses the fixture files it read; an empty beliefs list is valid there but no recognisable kind.
    shutil.copytree(pmb / "fixtures", tmp_path / "fixtures")
    (tmp_path / "fixtures" / "beliefs.seed.json").write_text("[]")
    shutil.copy(pmb / "test-results/baseline/retrieval-report-tenure.json", tmp_path / "r.json")
    load = load_pmb(tmp_path)
    assert load.errors == () and [r.identity.provider for r in load.runs] == ["tenure"]
    assert load.skipped == ("fixtures/beliefs.seed.json",)
    assert load.fixture is not None and load.fixture.beliefs == ()


def test_a_load_leaves_the_garbage_collector_as_it_found_it(pmb: Path) -> None:
    assert gc.isenabled()
    load_pmb(pmb)
    assert gc.isenabled()
    gc.disable()
    try:
        load_pmb(pmb)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_oversized_report_is_refused_before_validation(results_with) -> None:  # type: ignore[no-untyped-def]
    def million(doc: dict) -> None:  # type: ignore[type-arg]
        doc["cases"] = [{}] * 1_000_000

    err = _only_error(results_with(mutate=million))
    assert err.path == "$.cases"
    assert err.message.startswith("lists 1,000,000 entries; the fixture has 77 cases")


def test_a_deeply_nested_report_is_refused(results_with) -> None:  # type: ignore[no-untyped-def]
    err = _only_error(results_with('{"provider": "x", "cases": [], "extra": ' + "[" * 500 + "]" * 500 + "}"))
    assert err.message == "JSON nested 501 levels deep, above the limit of 64 (MEMEVAL_MAX_JSON_DEPTH)"


def test_a_lone_surrogate_is_rejected_with_its_path(results_with) -> None:  # type: ignore[no-untyped-def]
    # "\ud83d" is valid JSON (json.dumps writes it so) but no UTF-8 text: the cache and every export would fail on it.
    def mutate(d):  # type: ignore[no-untyped-def]
        d["provider"] = "evil\ud83d"

    err = _only_error(results_with(mutate=mutate))
    assert (err.path, err.message.split(" (")[0]) == ("$.provider", "holds a lone UTF-16 surrogate")


def test_the_leaderboard_names_a_lone_surrogate_instead_of_failing(results_with, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def mutate(d):  # type: ignore[no-untyped-def]
        d["cases"][0]["caseId"] = "\udc00x"

    root = results_with(mutate=mutate)
    env = {**os.environ, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "memeval_core", "leaderboard", "--results", str(root)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert "Traceback" not in done.stderr
    assert "retrieval-report-bad.json: $.cases[0].caseId: holds a lone UTF-16 surrogate" in done.stdout + done.stderr
