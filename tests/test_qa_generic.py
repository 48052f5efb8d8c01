from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval_core import tree
from memeval_core.errors import IngestError
from memeval_core.qa.importers import generic
from memeval_core.qa.importers._common import Source
from memeval_core.qa.ingest import load_qa

CSV = """id,q,pred,gold,cat,j1,j2,ms
conv-26-q0,When did Caroline go to the LGBTQ support group?,7 May 2023,7 May 2023,2,1,5,100
conv-26-q1,When did Melanie paint a sunrise?,,2022,2,1,4,
conv-26-q2,What fields would Caroline be likely to pursue in her educaton?,psychology,x,3,0,2,50
"""

MAPPING = {
    "memeval_mapping": 1,
    "file": "rows.csv",
    "benchmark": "locomo",
    "system": "mine",
    "fields": {"question_id": "id", "question": "q", "answer": "pred", "gold_answer": "gold", "category": "cat",
               "latency_ms": "ms"},
    "judges": [
        {"name": "binary", "field": "j1", "scale": "binary", "model": "gpt-4o-mini"},
        {"name": "rubric", "field": "j2", "scale": "rubric-0-5"},
    ],
    "run": {"answer_model": "m", "top_k": 5},
}  # fmt: skip


def _setup(tmp_path: Path, mapping: dict[str, object], rows: str = CSV) -> Path:
    (tmp_path / "rows.csv").write_text(rows, encoding="utf-8")
    (tmp_path / "map.json").write_text(json.dumps(mapping), encoding="utf-8")
    return tmp_path


def test_csv_with_mapping(tmp_path: Path) -> None:
    load = load_qa(_setup(tmp_path, MAPPING))
    assert not load.errors
    (r,) = load.runs
    s = r.score
    # q0: (1 + 5/5)/2 = 1; q1: no answer -> 0 (counted); q2: (0 + 2/5)/2 = 0.2
    assert s.n_questions == 3 and s.failures == 1
    assert s.accuracy == pytest.approx((1.0 + 0.0 + 0.2) / 3)
    assert s.majority_accuracy == pytest.approx(1 / 3)
    assert r.meta.top_k == 5 and r.meta.judge_models == ["gpt-4o-mini"]
    assert r.run.questions[0].latency_ms == 100.0
    assert r.meta.source_file == "rows.csv + map.json"


def test_json_rows_path(tmp_path: Path) -> None:
    rows = {"data": {"items": [{"qid": "a", "ans": "x", "ok": True}, {"qid": "b", "ans": "y", "ok": False}]}}
    (tmp_path / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
    mapping = {
        "memeval_mapping": 1,
        "file": "rows.json",
        "rows": "data.items",
        "benchmark": "custom",
        "system": "s",
        "fields": {"question_id": "qid", "answer": "ans"},
        "judges": [{"field": "ok"}],
    }
    (tmp_path / "m.json").write_text(json.dumps(mapping), encoding="utf-8")
    (r,) = load_qa(tmp_path).runs
    assert r.score.accuracy == 0.5 and r.score.judges == ("ok",)
    assert r.not_publishable_because == ("no declared protocol for benchmark 'custom' (diagnostic only)",)


def test_bad_cell_names_row_and_column(tmp_path: Path) -> None:
    load = load_qa(_setup(tmp_path, MAPPING, CSV.replace(",1,5,100", ",maybe,5,100")))
    (err,) = load.errors
    assert err.file == "rows.csv" and err.path == "$[0].j1"


def test_mapping_errors(tmp_path: Path) -> None:
    load = load_qa(_setup(tmp_path, {**MAPPING, "judges": []}))
    assert load.errors[0].file == "map.json" and load.errors[0].path == "$.judges"
    load = load_qa(_setup(tmp_path, {**MAPPING, "file": "nope.csv"}))
    assert load.errors[0].message == tree.OUTSIDE  # the same sentence for a missing file as for one outside
    assert any(s.file == "rows.csv" for s in load.skipped)


def test_sniff() -> None:
    assert generic.sniff(MAPPING, "x.json") and not generic.sniff({"fields": {}}, "x.json")
    with pytest.raises(IngestError):
        from memeval_core.qa.importers._common import Source

        generic.data_path(Source("m.json", "", {"memeval_mapping": 1}), Path())


def test_a_number_beyond_any_float_is_an_ingest_error() -> None:
    with pytest.raises(IngestError, match=r"\$\.rows\[0\]\.latency: expected a number, got an integer too large"):
        generic._parse_number(Source("m.json", "0" * 64, None), 10**400, ["rows", 0, "latency"])


def test_an_overlong_csv_cell_is_one_files_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long_cell = "x" * 200_000  # above the csv module's own default limit (131,072), below memeval's (1 MiB)
    assert len(load_qa(_setup(tmp_path, MAPPING, CSV.replace("psychology", long_cell))).runs) == 1
    monkeypatch.setenv("MEMEVAL_MAX_CSV_FIELD_KB", "64")
    _setup(tmp_path, MAPPING, CSV.replace("psychology", long_cell))
    run = {"schema_version": 1, "run": {"benchmark": "longmemeval-s", "system": "ok"},
           "questions": [{"benchmark": "longmemeval-s", "question_id": "q", "answer": "a",
                          "verdicts": [{"judge": "j", "score": 1, "scale": "binary"}]}]}  # fmt: skip
    (tmp_path / "ok.json").write_text(json.dumps(run))
    load = load_qa(tmp_path)
    (err,) = load.errors
    assert err.file == "rows.csv" and err.path == "line 4" and "field larger than field limit" in err.message
    assert [r.meta.system for r in load.runs] == ["ok"]


def test_a_repeated_question_id_is_found_in_one_pass(tmp_path: Path) -> None:
    questions = [{"benchmark": "longmemeval-s", "question_id": f"q{i % 20_000}", "answer": "a",
                  "verdicts": [{"judge": "j", "score": 1, "scale": "binary"}]} for i in range(40_000)]  # fmt: skip
    run = {"schema_version": 1, "run": {"benchmark": "longmemeval-s", "system": "dup"}, "questions": questions}
    (tmp_path / "dup.json").write_text(json.dumps(run))
    (err,) = load_qa(tmp_path).errors
    assert (err.path, err.message) == ("$.questions[20000].question_id", "question id 'q0' appears more than once")


def test_an_unedited_mapping_skeleton_is_refused_naming_the_value(tmp_path: Path) -> None:
    from memeval_core.qa import shapes

    (tmp_path / "rows.csv").write_text(CSV, encoding="utf-8")
    rows = load_qa(tmp_path).skipped  # the CSV alone: no mapping yet
    assert any(s.file == "rows.csv" for s in rows)
    skeleton = shapes.mapping_skeleton([{"id": "q1", "j1": "1"}], "rows.csv")
    (tmp_path / "map.json").write_text(json.dumps(skeleton), encoding="utf-8")
    (err,) = load_qa(tmp_path).errors
    assert (err.file, err.path) == ("map.json", "$.benchmark")
    assert err.message == "still holds a value to fill in from the mapping skeleton"
