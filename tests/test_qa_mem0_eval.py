from __future__ import annotations

import json
from pathlib import Path

import pytest
from _data import SHARED_DATA, require
from _qa_data import LOCOMO_JSON, MEMOBASE, MFLOW, real, write
from _qa_oracle import loaded_score

from memeval_core.errors import IngestError
from memeval_core.qa.importers import mem0_eval
from memeval_core.qa.ingest import load_qa, read_source
from memeval_core.qa.locomo import join_columns, load_locomo


def test_memobase_0503_is_1092_of_1540() -> None:
    src = real(MEMOBASE / "memobase_eval_0503_3000.json")
    assert mem0_eval.sniff(src.data, src.rel)
    (run,) = mem0_eval.load(src)
    s = loaded_score(run)
    assert (s.n_questions, s.correct, s.failures) == (1540, 1092, 0)
    assert s.accuracy == pytest.approx(1092 / 1540)
    assert round(100 * (s.accuracy or 0), 2) == 70.91
    assert run.run.system == "memobase"
    assert run.run.includes_adversarial is False
    # Per-category llm_score from PROVENANCE: "1" 63.83 (n=282), "3" 52.08 (n=96), "4" 71.82 (n=841)
    assert s.categories["1"].n == 282 and round(100 * (s.categories["1"].accuracy or 0), 2) == 63.83
    assert s.categories["3"].n == 96 and round(100 * (s.categories["3"].accuracy or 0), 2) == 52.08
    assert round(100 * (s.categories["4"].accuracy or 0), 2) == 71.82
    assert s.categories["1"].name == "multi_hop"


def test_memobase_0710_joins_by_position() -> None:
    (run,) = mem0_eval.load(real(MEMOBASE / "memobase_eval_0710_3000.json"))
    assert loaded_score(run).correct == 1167
    joined, report = join_columns(run, load_locomo(require(LOCOMO_JSON)))
    assert report.joined == 1540 and report.by_key["conversation+position"] == 1540
    assert report.category_conflicts == 0
    # conv-30 (index 1) has a category-5 item at qa index 79 followed by two others: positions 79, 80 -> qa 80, 81
    ids = {q.question_id for q in joined.questions}
    assert {"conv-30-q80", "conv-30-q81"} <= ids and "conv-30-q79" not in ids


def test_mflow_mem0_shards_merge_into_776_of_1540() -> None:
    root = require(MFLOW / "locomo-mem0")
    load = load_qa(root, datasets=SHARED_DATA / "locomo")
    assert not load.errors
    (r,) = load.runs
    assert r.score.n_questions == 1540 and r.score.correct == 776
    assert len(r.merged_from) == 10
    assert r.join is not None and r.join.joined == 1540
    assert r.join.by_key["question_text"] == 152  # conv0_eval.json names no conversation
    assert r.meta.answer_model == "gpt-5-mini" and r.meta.top_k == 30  # from the conv summaries
    assert r.publishable, r.not_publishable_because


def test_summary_layout_reads_models_and_latency() -> None:
    src = real(MFLOW / "locomo-mem0" / "results" / "per_conversation" / "conv1_full_eval.json")
    (run,) = mem0_eval.load(src)
    assert len(run.questions) == 81 and loaded_score(run).correct == 33
    q = run.questions[0]
    assert q.conversation == "conv-30" and q.question_id == "conv-30-f0"
    assert q.verdicts[0].label == '{"label":"WRONG"}'
    assert q.latency_ms == pytest.approx((0.718 + 0.603 + 10.69) * 1000)
    assert q.gold_evidence_ids == ["D1:2"]


def test_missing_response_scores_zero_and_is_counted(tmp_path: Path) -> None:
    items = [
        {"question": "a?", "answer": "x", "response": "x", "category": "1", "llm_score": 1},
        {"question": "b?", "answer": "y", "response": None, "category": "2", "llm_score": 1},
        {"question": "c?", "answer": "z", "response": "z", "category": "4"},
    ]
    src = write(tmp_path, "r.json", json.dumps({"0": items}))
    (run,) = mem0_eval.load(src)
    s = loaded_score(run)
    assert s.n_questions == 3 and s.failures == 2
    assert s.failure_reasons == {"no answer": 1, "not judged": 1}
    assert s.accuracy == pytest.approx(1 / 3)


def test_bad_verdict_names_the_path(tmp_path: Path) -> None:
    items = [{"question": "a?", "answer": "x", "response": "x", "category": "1", "llm_score": "maybe"}]
    src = write(tmp_path, "r.json", json.dumps({"3": items}))
    with pytest.raises(IngestError) as exc:
        mem0_eval.load(src)
    assert exc.value.file == "r.json" and exc.value.path == "$.3[0].llm_score"


def test_bad_json_is_an_ingest_error_with_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"0": [{"question": ', encoding="utf-8")
    with pytest.raises(IngestError) as exc:
        read_source(tmp_path / "broken.json", "broken.json")
    assert exc.value.file == "broken.json" and "not valid JSON" in exc.value.message
    load = load_qa(tmp_path)
    assert [e.file for e in load.errors] == ["broken.json"] and not load.runs


@pytest.mark.parametrize(
    ("name", "text", "path"),
    [
        ("r.json", json.dumps({"0": [{"question": "a\ud83d?", "response": "x", "llm_score": 1}]}), "$.0[0].question"),
        ("r.jsonl", '{"question": "ok"}\n' + json.dumps({"question": "a", "answer": "\udc00"}), "line 2 $.answer"),
    ],
)
def test_a_lone_surrogate_is_an_ingest_error_with_its_path(tmp_path: Path, name: str, text: str, path: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(IngestError) as exc:
        read_source(tmp_path / name, name)
    assert (exc.value.file, exc.value.path) == (name, path) and "lone UTF-16 surrogate" in exc.value.message
    assert [e.path for e in load_qa(tmp_path).errors] == [path]
