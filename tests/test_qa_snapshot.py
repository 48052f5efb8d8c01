"""The QA snapshot rebuilds the loaded runs of the real shared data exactly, byte-identically, without local paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memeval_core import SCORING_VERSION, parquet
from memeval_core.qa import judges, leaderboard
from memeval_core.qa.ingest import QaLoad, load_qa
from memeval_core.qa.snapshot import (
    LOAD_FILE,
    QUESTIONS_FILE,
    RUNS_FILE,
    has_qa_snapshot,
    open_qa_snapshot,
    read_qa_snapshot,
    write_qa_snapshot,
)
from memeval_core.results import load_qa_results


@pytest.fixture(scope="module")
def original(shared_data: Path) -> QaLoad:
    """Every QA run of the shared data, LoCoMo runs joined to locomo10.json, with locomo-audit's disputed list."""
    return load_qa(shared_data)


@pytest.fixture(scope="module")
def written(original: QaLoad, shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("qa-snapshot")
    paths = write_qa_snapshot(original, out, results=shared_data)
    assert paths == [out / LOAD_FILE, out / RUNS_FILE, out / QUESTIONS_FILE]
    return out


def test_round_trip_gives_the_same_runs_and_rows(original: QaLoad, written: Path) -> None:
    read = read_qa_snapshot(written)
    assert len(original.runs) == 28
    assert read.runs == original.runs
    assert leaderboard.rows(read.runs) == leaderboard.rows(original.runs)
    # What the pages take from a load besides the runs.
    assert read.disputed == original.disputed and len(read.disputed) == 156
    assert original.locomo is not None and read.locomo is not None
    assert read.locomo.source == "locomo/data/locomo10.json"
    assert read.locomo.sha256 == original.locomo.sha256
    assert read.locomo.questions == ()  # the CC BY-NC dataset is never part of a snapshot
    assert read.errors == () and read.skipped == ()


def test_round_trip_keeps_the_judge_page_inputs(original: QaLoad, written: Path) -> None:
    read = read_qa_snapshot(written)
    multi_orig = [r for r in original.runs if judges.is_multi_judge(r)]
    multi_read = [r for r in read.runs if judges.is_multi_judge(r)]
    assert multi_read == multi_orig and multi_read
    assert [r.score for r in read.runs] == [r.score for r in original.runs]


def test_known_rows_survive(written: Path) -> None:
    rows = {(r["benchmark"], r["display_name"]): r for r in leaderboard.rows(read_qa_snapshot(written).runs)}
    row = rows[("longmemeval-s", "cognitive_memory")]
    assert (row["accuracy"], row["publishable"]) == (0.726, True)


def test_rewrite_is_byte_identical(original: QaLoad, written: Path, shared_data: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    write_qa_snapshot(original, again, results=shared_data)
    from_read = tmp_path / "from-read"
    write_qa_snapshot(read_qa_snapshot(written), from_read)
    for name in (LOAD_FILE, RUNS_FILE, QUESTIONS_FILE):
        assert (again / name).read_bytes() == (written / name).read_bytes()
        assert (from_read / name).read_bytes() == (written / name).read_bytes()


def test_files_hold_no_absolute_path(written: Path, shared_data: Path) -> None:
    needles = {str(shared_data.resolve()), str(Path.cwd().resolve()), str(Path(__file__).resolve().parents[1])}
    home = os.environ.get("HOME", "")
    if len(home) > 1:
        needles.add(home)
    for name in (LOAD_FILE, RUNS_FILE, QUESTIONS_FILE):
        text = (written / name).read_bytes().decode("utf-8", errors="replace")
        for needle in needles:
            assert needle not in text, f"{name} contains {needle}"
    doc = json.loads((written / LOAD_FILE).read_text(encoding="utf-8"))
    assert doc["snapshot_version"] == 2 and doc["scoring_version"] == SCORING_VERSION and doc["runs"] == 28
    first = json.loads((written / RUNS_FILE).read_text(encoding="utf-8").splitlines()[0])
    assert {"meta", "score"} <= set(first) and "run" not in first and "questions" not in first
    for line in (written / RUNS_FILE).read_text(encoding="utf-8").splitlines():
        meta = json.loads(line)["meta"]
        for rel in [*meta["source_file"].split(" + "), *meta["metadata_sources"]]:
            assert not rel.startswith(("/", "..")), rel


def test_results_loader_prefers_the_snapshot(original: QaLoad, written: Path) -> None:
    assert has_qa_snapshot(written)
    assert load_qa_results(written, cache_dir=None).runs == original.runs


def test_other_versions_and_bad_lines_are_named(written: Path, tmp_path: Path) -> None:
    load_doc = json.loads((written / LOAD_FILE).read_text(encoding="utf-8"))
    lines = (written / RUNS_FILE).read_text(encoding="utf-8").splitlines()
    cases = {
        "version": ({**load_doc, "snapshot_version": 99}, lines[:28], "snapshot_version 99 is not supported"),
        "scoring": ({**load_doc, "scoring_version": "old"}, lines[:28], "scoring_version 'old' differs"),
        "count": (load_doc, lines[:27], "field 'runs' says 28 runs"),
        "json": (load_doc, [*lines[:27], "{"], "line 28: not valid JSON"),
        "field": (
            load_doc,
            [*lines[:27], json.dumps({"meta": json.loads(lines[27])["meta"]})],
            "field 'join' is missing",
        ),
    }
    for name, (doc, body, message) in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / LOAD_FILE).write_text(json.dumps(doc), encoding="utf-8")
        (d / RUNS_FILE).write_text("\n".join(body) + "\n", encoding="utf-8")
        (d / QUESTIONS_FILE).write_bytes((written / QUESTIONS_FILE).read_bytes())
        with pytest.raises(ValueError, match=message):
            read_qa_snapshot(d)
    assert not has_qa_snapshot(tmp_path)


def test_runs_read_one_at_a_time_equal_the_whole_read(
    original: QaLoad, written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = open_qa_snapshot(written)
    assert [(h.run_id, h.score, h.meta) for h in opened.runs] == [(r.run_id, r.score, r.meta) for r in original.runs]
    assert opened.disputed == original.disputed and opened.locomo_source == "locomo/data/locomo10.json"
    ids = [r.run_id for r in original.runs]
    assert opened.read_runs(ids[::-1]) == tuple(original.runs[::-1])
    # Small row groups: runs straddle them.
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 333)
    write_qa_snapshot(original, tmp_path / "small")
    assert open_qa_snapshot(tmp_path / "small").read_runs(ids) == tuple(original.runs)
    with pytest.raises(KeyError):
        opened.read_runs(["no-such-run"])
