from __future__ import annotations

import json
from pathlib import Path

import pytest
from _data import require
from _qa_data import LOCOMO_JSON, MFLOW, real, write
from _qa_oracle import accuracy_excluding, loaded, loaded_score

from memeval_core.errors import IngestError
from memeval_core.qa.importers import memorybench
from memeval_core.qa.locomo import join_columns, load_locomo


def test_supermemory_report_slim() -> None:
    src = real(MFLOW / "locomo-supermemory" / "results" / "report_slim.json")
    assert memorybench.sniff(src.data, src.rel)
    (run,) = memorybench.load(src)
    s = loaded_score(run)
    assert (s.n_questions, s.correct, s.failures) == (1986, 1291, 0)
    assert run.run.includes_adversarial is True
    assert (run.run.system, run.run.answer_model, run.run.judge_models, run.run.top_k) == (
        "supermemory",
        "gpt-5-mini",
        ["gpt-4o-mini"],
        10,
    )
    # MemoryBench labels mapped to raw codes: 4 (its "world-knowledge") = memeval single_hop, 587/841
    assert s.categories["4"].n == 841 and s.categories["4"].correct == 587
    assert s.categories["4"].name == "single_hop"
    assert s.categories["5"].correct == 300
    # without category 5: 991 / 1540 (FINAL_SUMMARY.json "excluding_adversarial")
    adversarial = [q.question_id for q in run.questions if q.category == "5"]
    acc, removed = accuracy_excluding(loaded(run).question_scores, adversarial)
    assert removed == 446 and acc == pytest.approx(991 / 1540)
    joined, report = join_columns(run, load_locomo(require(LOCOMO_JSON)))
    assert report.by_key["question_id"] == 1986 and report.category_conflicts == 0
    assert joined.questions[0].gold_evidence_ids == ["D1:3"]


def test_error_and_missing_hypothesis(tmp_path: Path) -> None:
    doc = {
        "provider": "x",
        "benchmark": "locomo",
        "evaluations": [
            {"questionId": "conv-26-q0", "questionType": "temporal", "score": 1, "hypothesis": "yes"},
            {"questionId": "conv-26-q1", "questionType": "temporal", "score": 1, "hypothesis": None},
            {"questionId": "conv-26-q2", "questionType": "temporal", "score": 0, "hypothesis": "", "error": "boom"},
        ],
    }
    (run,) = memorybench.load(write(tmp_path, "report.json", json.dumps(doc)))
    s = loaded_score(run)
    assert s.n_questions == 3 and s.failures == 2 and s.correct == 1
    assert run.questions[0].category == "3"


def test_unknown_question_type(tmp_path: Path) -> None:
    doc = {"benchmark": "locomo", "evaluations": [{"questionId": "conv-26-q0", "questionType": "odd", "score": 1}]}
    with pytest.raises(IngestError) as exc:
        memorybench.load(write(tmp_path, "report.json", json.dumps(doc)))
    assert exc.value.path == "$.evaluations[0].questionType"
