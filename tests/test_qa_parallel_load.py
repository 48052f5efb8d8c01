"""A QA load spread over worker processes gives exactly the serial load, in the same order."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
from _data import SHARED_DATA, require

from memeval_core import tree
from memeval_core import workers as worker_processes
from memeval_core.qa import ingest, locomo
from memeval_core.qa.ingest import QaLoad, load_qa
from memeval_core.qa.models import questions_packed
from memeval_core.workers import WORKERS_ENV

LME = SHARED_DATA / "mflow-benchmarks" / "benchmarks"
MEMOBASE = SHARED_DATA / "memobase" / "docs" / "experiments" / "locomo-benchmark" / "fixture" / "memobase"


def _load(root: Path, workers: int, monkeypatch: pytest.MonkeyPatch, datasets: Path | None = None) -> QaLoad:
    with monkeypatch.context() as mp:
        mp.setenv(WORKERS_ENV, str(workers))
        mp.setattr(ingest, "PARALLEL_MIN_BYTES", {"fork": 0, "spawn": 0})
        # Forked workers, even when an earlier test left a thread behind (which would mean spawned ones): a
        # spawned worker imports memeval for about a second, by which time this process has loaded these small
        # folders alone, and nothing here would be compared. test_workers covers spawned workers.
        mp.setattr(worker_processes, "start_method", lambda: "fork")
        return load_qa(root, datasets)


def _same(a: QaLoad, b: QaLoad) -> None:
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]
    assert a.runs == b.runs  # every field, questions and per-question scores included
    assert a.errors == b.errors and a.skipped == b.skipped
    assert a.disputed == b.disputed and a.locomo == b.locomo


def _items(n: int, wrong: int = 0) -> list[dict[str, object]]:
    return [
        {"question": f"q{i}?", "answer": f"a{i}", "response": f"a{i}", "category": 1, "llm_score": int(i >= wrong)}
        for i in range(n)
    ]


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("n", [2, 3])
def test_shared_data_in_workers_equals_the_serial_load(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    root = require(SHARED_DATA)
    serial = _load(root, 1, monkeypatch)
    spread = _load(root, n, monkeypatch)
    # Runs scored in a worker arrive with their questions packed until first read.
    assert any(questions_packed(r.run) for r in spread.runs)
    _same(serial, spread)
    assert len(serial.runs) >= 20 and serial.locomo is not None and len(serial.disputed) == 156


def test_tasks_are_folders_largest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder, n in (("mid", 200), ("big", 400), ("tiny", 10), ("small", 50)):
        _write(tmp_path / folder / "run.json", _items(n))
    _write(tmp_path / "big" / "more.json", _items(5))
    files = [(i, e.rel) for i, e in enumerate(tree.walk(tmp_path, ingest.SUFFIXES).files)]
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert ingest._plan_tasks(tmp_path, files)[:2] == ([files], 0)  # far below the size from which workers pay
    monkeypatch.setattr(ingest, "PARALLEL_MIN_BYTES", {"fork": 0, "spawn": 0})
    tasks, n_workers, _ = ingest._plan_tasks(tmp_path, files)
    assert [[rel for _, rel in t] for t in tasks] == [
        ["big/more.json", "big/run.json"],
        ["mid/run.json"],
        ["small/run.json"],
        ["tiny/run.json"],
    ]
    assert n_workers == 2  # three processes in all
    # Files named like the LoCoMo dataset weigh nothing (every process parses it anyway): their folder goes last.
    (tmp_path / "big" / "run.json").rename(tmp_path / "big" / "locomo10.json")
    files = [(i, e.rel) for i, e in enumerate(tree.walk(tmp_path, ingest.SUFFIXES).files)]
    tasks, _, _ = ingest._plan_tasks(tmp_path, files)
    assert [t[0][1] for t in tasks] == ["mid/run.json", "small/run.json", "tiny/run.json", "big/locomo10.json"]
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert ingest._plan_tasks(tmp_path, files)[:2] == ([files], 0)


def test_errors_skips_and_duplicates_keep_the_serial_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two systems, each with two versions (``v1``/``v2`` name no system) that are exact duplicates: the serial
    # load keeps the first of each pair, and so must a load whose folders went to different workers.
    for folder in ("a/v1", "a/v2", "b/v1", "b/v2"):
        _write(tmp_path / folder / "run.json", _items(30, wrong=3 if folder.startswith("a") else 5))
        (tmp_path / folder / "broken.json").write_text('{"run": ')
        _write(tmp_path / folder / "other.json", {"hello": "world"})
        (tmp_path / folder / "rows.csv").write_text("question,answer\nq,a\n")
    serial = _load(tmp_path, 1, monkeypatch)
    assert len(serial.errors) == 4 and len(serial.skipped) == 8
    assert [(r.run.run.source_file, r.duplicates) for r in serial.runs] == [
        ("a/v1/run.json", ("a/v2/run.json",)),
        ("b/v1/run.json", ("b/v2/run.json",)),
    ]
    for n in (2, 4):
        _same(serial, _load(tmp_path, n, monkeypatch))


def test_a_mapping_into_another_share_falls_back_to_one_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The data file is a mem0-eval file in its own right; a mapping that names it takes it over, so the
    # serial load imports it once, through the mapping, and a worker holding the file must not import it too.
    _write(tmp_path / "data" / "rows.json", _items(40, wrong=10))
    _write(
        tmp_path / "map.json",
        {
            "memeval_mapping": 1,
            "file": "data/rows.json",
            "benchmark": "custom",
            "system": "mapped",
            "fields": {"question_id": "question", "question": "question", "answer": "response"},
            "judges": [{"name": "llm", "field": "llm_score", "scale": "binary"}],
        },
    )
    _write(tmp_path / "other" / "run.json", _items(20))
    serial = _load(tmp_path, 1, monkeypatch)
    assert sorted(r.run.run.system for r in serial.runs) == ["mapped", "other"], serial.errors
    _same(serial, _load(tmp_path, 3, monkeypatch))


def test_side_car_that_is_another_shares_result_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A result file one folder up carries a judge model: the serial load never reads a result as metadata.
    native = {
        "schema_version": 1,
        "run": {"benchmark": "custom", "system": "native"},
        "questions": [{"benchmark": "custom", "question_id": "n1", "answer": "x",
                       "verdicts": [{"judge": "j", "score": 1}]}],
        "config": {"judge_model": "from-a-result-file"},
    }  # fmt: skip
    _write(tmp_path / "sys" / "native.json", native)
    _write(tmp_path / "sys" / "inner" / "run.json", _items(20))
    _write(tmp_path / "sys" / "inner" / "config" / "settings.json", {"top_k": 7})
    serial = _load(tmp_path, 1, monkeypatch)
    inner = next(r for r in serial.runs if r.run.run.source_file == "sys/inner/run.json")
    assert inner.run.run.judge_models == [] and inner.run.run.top_k == 7
    _same(serial, _load(tmp_path, 2, monkeypatch))


def _count_dataset_parses(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Append the process id to ``log`` at every parse of the LoCoMo dataset (forked workers inherit this)."""
    real = locomo.parse_locomo

    def counting(*args: Any) -> locomo.LocomoDataset:
        with log.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return real(*args)

    monkeypatch.setattr(locomo, "parse_locomo", counting)


def _parses(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_dataset_among_the_results_is_parsed_once_per_process_that_joins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(MEMOBASE)
    root = tmp_path / "results"
    shutil.copytree(require(SHARED_DATA / "locomo" / "data"), root / "locomo")
    (root / "runs").mkdir()
    shutil.copy(MEMOBASE / "memobase_eval_0503_3000.json", root / "runs" / "a.json")
    shutil.copy(MEMOBASE / "memobase_eval_0710_3000.json", root / "b.json")
    log = tmp_path / "parses"
    _count_dataset_parses(monkeypatch, log)
    serial = _load(root, 1, monkeypatch)
    assert serial.locomo is not None and all(r.join is not None for r in serial.runs)
    assert ("locomo/locomo10.json", "LoCoMo dataset (join target)") in [(s.file, s.reason) for s in serial.skipped]
    assert len(_parses(log)) == 1
    log.unlink()
    _same(serial, _load(root, 2, monkeypatch))
    # Both processes joined LoCoMo runs: each parsed the dataset once, this one (for the load's result) included.
    pids = _parses(log)
    assert len(pids) == len(set(pids)) == 2 and str(os.getpid()) in pids


def test_only_processes_that_join_parse_the_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for system in ("mem0", "cognee"):
        shutil.copytree(require(LME / f"longmemeval-{system}" / "results"), tmp_path / "results" / system)
    log = tmp_path / "parses"
    _count_dataset_parses(monkeypatch, log)
    load = _load(tmp_path / "results", 3, monkeypatch, datasets=require(SHARED_DATA / "locomo"))
    assert {r.run.run.system for r in load.runs} == {"mem0", "cognee"}
    assert all(r.run.run.benchmark != locomo.BENCHMARK for r in load.runs)
    # No share had a LoCoMo run to join: only this process parsed the dataset, which the load reports.
    assert _parses(log) == [str(os.getpid())] and load.locomo is not None


def test_a_broken_dataset_is_one_error_whatever_the_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require(MEMOBASE)
    _write(tmp_path / "locomo" / "locomo10.json", [{"sample_id": 7, "conversation": {}, "qa": []}])
    for folder in ("a", "b"):
        shutil.copy(MEMOBASE / "memobase_eval_0503_3000.json", (tmp_path / folder).mkdir() or tmp_path / folder)
    serial = _load(tmp_path, 1, monkeypatch)
    assert [(e.file, e.path) for e in serial.errors] == [(str(tmp_path / "locomo" / "locomo10.json"), "$[0]")]
    assert serial.locomo is None and all(r.join is None for r in serial.runs) and len(serial.runs) == 2
    _same(serial, _load(tmp_path, 3, monkeypatch))


def test_a_spawned_worker_gets_the_dataset_unparsed(tmp_path: Path) -> None:
    dataset = ingest._Dataset(None, tmp_path, (), "r")
    assert dataset.get() == (None, None, ())
    copy = pickle.loads(pickle.dumps(dataset))
    assert copy._resolved is None and dataset._resolved is not None
    assert (copy.datasets, copy.results, copy.rels, copy.root_name) == (None, tmp_path, (), "r")


def test_skips_follow_the_steps_of_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Zep responses without grades are settled before single-file runs are imported, whatever the paths.
    item = {"question_id": "q1", "question": "q?", "llm_judgments": {}}
    unjudged = {"detailed_results": {"locomo_exp_user_0": [item]}}
    responses = {"locomo_experiment_user_0": [{"question": "q", "answer": "a", "golden_answer": "g", "duration_ms": 5}]}
    _write(tmp_path / "a_ever" / "unjudged.json", unjudged)
    _write(tmp_path / "z_zep" / "responses.json", responses)
    serial = _load(tmp_path, 1, monkeypatch)
    assert [s.file for s in serial.skipped] == ["z_zep/responses.json", "a_ever/unjudged.json"]
    assert "without a matching grades file" in serial.skipped[0].reason
    assert "without judge verdicts" in serial.skipped[1].reason
    _same(serial, _load(tmp_path, 2, monkeypatch))


def test_duplicates_need_equal_answers_and_verdicts_not_only_an_equal_duplicate_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # v2: a copy of v1 (a duplicate). v3: two answers of equal length
    # and two verdicts traded between questions, so answer lengths and the verdict sum (the duplicate key)
    # stay equal while the answers and verdicts per question differ: not a duplicate.
    items = _items(20, wrong=4)
    _write(tmp_path / "a" / "v1" / "run.json", items)
    _write(tmp_path / "a" / "v2" / "run.json", items)
    swapped = [dict(x) for x in items]
    swapped[0]["response"], swapped[1]["response"] = items[1]["response"], items[0]["response"]
    swapped[3]["llm_score"], swapped[4]["llm_score"] = items[4]["llm_score"], items[3]["llm_score"]
    _write(tmp_path / "a" / "v3" / "run.json", swapped)
    for n in (1, 2):
        load = _load(tmp_path, n, monkeypatch)
        assert [(r.run.run.source_file, r.duplicates) for r in load.runs] == [
            ("a/v1/run.json", ("a/v2/run.json",)),
            ("a/v3/run.json", ()),
        ]
        keys = [ingest._duplicate_key(r.run) for r in load.runs]
        assert keys[0] == keys[1]
