from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _data import SHARED_DATA, require

from memeval_core.qa.columns import ColumnRun, columns_of
from memeval_core.qa.ingest import QaLoad, load_qa


@pytest.fixture(scope="module")
def everything() -> QaLoad:
    return load_qa(require(SHARED_DATA))


def test_all_shared_samples(everything: QaLoad) -> None:
    load = everything
    assert not load.errors
    assert load.locomo is not None and len(load.disputed) == 156
    by_bench: dict[str, int] = {}
    for r in load.runs:
        by_bench[r.meta.benchmark] = by_bench.get(r.meta.benchmark, 0) + 1
    assert by_bench == {"evolving-events": 12, "locomo": 9, "longmemeval-oracle": 5, "longmemeval-s": 2}
    names = {r.display_name for r in load.runs if r.meta.benchmark == "locomo"}
    assert {"supermemory", "mem0", "zep", "memobase (memobase_eval_0503_3000)", "ap-baseline (ap-baseline/v1)"} <= names
    assert len({r.run_id for r in load.runs}) == len(load.runs)
    skipped = {s.file: s.reason for s in load.skipped}
    assert skipped["locomo/data/locomo10.json"] == "LoCoMo dataset (join target)"
    assert "without judge verdicts" in skipped["locomo-audit/ap-baseline/v1/ap_eval_results.json"]


def test_every_locomo_run_joins_completely(everything: QaLoad) -> None:
    for r in everything.runs:
        if r.meta.benchmark == "locomo":
            assert r.join is not None and r.join.joined == r.join.total, r.display_name
            assert r.join.category_conflicts == 0


def test_headline_numbers(everything: QaLoad) -> None:
    got = {r.display_name: (r.score.n_questions, r.score.correct, r.publishable) for r in everything.runs
           if r.meta.benchmark == "locomo"}  # fmt: skip
    assert got["supermemory"] == (1986, 1291, True)
    assert got["mem0"] == (1540, 776, True)
    assert got["zep"] == (1540, 1208, False)
    assert got["memobase (memobase_eval_0710_3000)"] == (1540, 1167, False)


def test_run_id_is_stable_and_tracks_content(tmp_path: Path) -> None:
    src = require(SHARED_DATA / "memobase" / "docs" / "experiments" / "locomo-benchmark" / "fixture" / "memobase")
    shutil.copy(src / "memobase_eval_0503_3000.json", tmp_path / "memobase_eval_0503_3000.json")
    (a,) = load_qa(tmp_path).runs
    (b,) = load_qa(tmp_path).runs
    assert a.run_id == b.run_id == "memobase_eval_0503_3000-3e56232559"
    data = json.loads((tmp_path / "memobase_eval_0503_3000.json").read_text())
    data["0"][0]["llm_score"] = 1 - data["0"][0]["llm_score"]
    (tmp_path / "memobase_eval_0503_3000.json").write_text(json.dumps(data))
    (c,) = load_qa(tmp_path).runs
    assert c.run_id != a.run_id
    assert a.join is None and "not checked against the dataset (locomo10.json not found)" in a.not_publishable_because


def test_bad_files_do_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    good = [{"question_id": "a", "question": "q", "gold_answer": "g", "generated_answer": "x", "llm_score": 1}]
    (tmp_path / "good.json").write_text(json.dumps(good))
    load = load_qa(tmp_path)
    assert [e.file for e in load.errors] == ["empty.json"]
    assert [s.file for s in load.skipped] == ["notes.json"]
    assert len(load.runs) == 1 and load.runs[0].score.accuracy == 1.0


def test_side_cars_come_from_the_loads_walk_and_are_parsed_once(tmp_path: Path) -> None:
    from memeval_core import tree
    from memeval_core.qa import ingest

    items = [{"question": f"q{i}?", "answer": "a", "response": "a", "category": 1, "llm_score": 1} for i in range(5)]
    for name in ("conv0_eval.json", "conv1_eval.json"):
        (tmp_path / "sys" / "results").mkdir(parents=True, exist_ok=True)
        (tmp_path / "sys" / "results" / name).write_text(json.dumps(items))
    (tmp_path / "sys" / "config").mkdir()
    (tmp_path / "sys" / "config" / "settings.json").write_text(json.dumps({"judge_model": "gpt-j", "top_k": 9}))
    (tmp_path / "sys" / "config" / "broken.json").write_text("{")
    load = load_qa(tmp_path)
    assert {(r.meta.judge_models[0], r.meta.top_k) for r in load.runs} == {("gpt-j", 9)}
    assert all(r.meta.metadata_sources == ["sys/config/settings.json"] for r in load.runs)

    (tmp_path / "sys" / "config" / ".hidden.json").write_text(json.dumps({"top_k": 1}))  # the walk skips it
    cache = ingest.SidecarCache.of(tree.walk(tmp_path))
    results = {"sys/results/conv0_eval.json", "sys/results/conv1_eval.json"}
    for r in load.runs:
        meta = r.meta.model_copy(update={"judge_models": [], "top_k": None, "metadata_sources": []})
        bare = ColumnRun(meta, columns_of(r.run.questions))
        filled = ingest.fill_from_sidecars(bare, "sys/results/conv0_eval.json", tmp_path, results, cache)
        assert filled.run.judge_models == ["gpt-j"] and filled.run.top_k == 9
    # Both runs read the one file once; the broken file is remembered as such.
    config = f"{tmp_path}/sys/config"
    assert list(cache.parsed) == [f"{config}/broken.json", f"{config}/settings.json"]
    assert cache.parsed[f"{config}/broken.json"] is ingest._BROKEN
    settings = len('{"judge_model": "gpt-j", "top_k": 9}')
    assert cache.listings["sys/config"] == [("broken.json", 1), ("settings.json", settings)]
    assert "sys/results/config" not in cache.listings


def _summary(load: QaLoad) -> list[tuple[object, ...]]:
    return [(r.run_id, r.display_name, r.meta, r.score, r.publishable, r.join, r.table) for r in load.runs]


def test_worker_processes_give_the_serial_load(everything: QaLoad, monkeypatch: pytest.MonkeyPatch) -> None:
    from memeval_core import file_pool, settings

    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    parallel = load_qa(require(SHARED_DATA))
    assert _summary(parallel) == _summary(everything)
    assert [str(e) for e in parallel.errors] == [str(e) for e in everything.errors]
    assert parallel.skipped == everything.skipped


def _die(*args: object) -> None:
    import os

    os._exit(3)


def test_dead_workers_leave_the_files_to_this_process(everything: QaLoad, monkeypatch: pytest.MonkeyPatch) -> None:
    from memeval_core import file_pool, settings
    from memeval_core.qa import ingest

    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    monkeypatch.setattr(ingest, "_read_file_in_worker", _die)
    assert _summary(load_qa(require(SHARED_DATA))) == _summary(everything)


def test_a_shard_that_changes_while_the_load_reads_it_is_that_files_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memeval_core.qa import ingest

    def write(conversation: str, answer: str) -> None:
        items = [{"question": f"q{i}?", "answer": "a", "response": answer, "category": 1, "llm_score": 1}
                 for i in range(3)]  # fmt: skip
        (tmp_path / "sys" / f"{conversation}_eval.json").write_text(json.dumps({conversation: items}))

    (tmp_path / "sys").mkdir()
    write("conv-26", "a")
    write("conv-30", "a")
    (merged,) = load_qa(tmp_path).runs  # two files of one folder and system: shards, read again to be merged
    assert merged.merged_from == ("sys/conv-26_eval.json", "sys/conv-30_eval.json")

    reads: list[str] = []
    real = ingest.read_source

    def read_then_change(path: Path, rel: str, root_name: str = "") -> ingest.Source:
        reads.append(rel)
        if reads.count(rel) == 2 and rel.endswith("conv-30_eval.json"):
            write("conv-30", "b")  # someone rewrites the file between the load's two reads
        return real(path, rel, root_name)

    monkeypatch.setattr(ingest, "read_source", read_then_change)
    load = load_qa(tmp_path)
    assert [(e.file, e.message) for e in load.errors] == [
        ("sys/conv-30_eval.json", "changed while it was being loaded")
    ]
    assert [r.meta.source_file for r in load.runs] == ["sys/conv-26_eval.json"]


def test_runs_of_one_folder_that_are_not_shards_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memeval_core.qa import ingest

    (tmp_path / "sys").mkdir()
    for name, said in (("first_eval.json", "a"), ("second_eval.json", "b")):  # one conversation twice: no shards
        items = [{"question": f"q{i}?", "answer": "a", "response": said, "category": 1, "llm_score": int(said == "a")}
                 for i in range(3)]  # fmt: skip
        (tmp_path / "sys" / name).write_text(json.dumps({"conv-26": items}))
    reads: list[str] = []
    real = ingest.read_source

    def counted(path: Path, rel: str, root_name: str = "") -> ingest.Source:
        reads.append(rel)
        return real(path, rel, root_name)

    monkeypatch.setattr(ingest, "read_source", counted)
    load = load_qa(tmp_path)
    assert sorted(r.meta.source_file or "" for r in load.runs) == ["sys/first_eval.json", "sys/second_eval.json"]
    assert sorted(reads) == ["sys/first_eval.json", "sys/second_eval.json"]


def test_pmb_reports_are_skipped_without_a_closest_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PMB report no QA importer claims is left to the PMB loader: skipped with that reason, and the loader does
    not work out which QA format it resembles (a reason it would throw away, for every one of thousands of reports)."""
    baseline = require(SHARED_DATA / "precisionmembench" / "test-results" / "baseline")
    for name in ("retrieval-report-mem0.json", "session-retrieval-report-tenure.json"):
        shutil.copy(baseline / name, tmp_path / name)

    def closest_format(data: object) -> None:
        raise AssertionError("worked out the closest QA format of a PMB report")

    monkeypatch.setattr("memeval_core.qa.shapes.closest_format", closest_format)
    load = load_qa(tmp_path)
    assert not load.runs and not load.errors
    reason = "a PrecisionMemBench report (the PMB loader reads it)"
    assert [(s.file, s.reason) for s in load.skipped] == [
        ("retrieval-report-mem0.json", reason),
        ("session-retrieval-report-tenure.json", reason),
    ]
