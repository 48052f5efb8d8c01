from __future__ import annotations

import json
from pathlib import Path

import pytest
from _data import require
from _qa_data import MFLOW, real, write
from _qa_oracle import loaded_score

from memeval_core.errors import IngestError
from memeval_core.qa.importers import mem0_eval, mflow_longmemeval
from memeval_core.qa.ingest import load_qa


@pytest.mark.parametrize(
    ("system", "correct"), [("mflow", 89), ("supermemory", 74), ("mem0", 71), ("zep", 61), ("cognee", 57)]
)
def test_longmemeval_oracle_100(system: str, correct: int) -> None:
    src = real(MFLOW / f"longmemeval-{system}" / "results" / "eval_100_per_question.json")
    assert mflow_longmemeval.sniff(src.data, src.rel) and not mem0_eval.sniff(src.data, src.rel)
    (run,) = mflow_longmemeval.load(src)
    s = loaded_score(run)
    assert (s.n_questions, s.correct, s.failures) == (100, correct, 0)
    assert run.run.benchmark == "longmemeval-oracle" and run.run.system == system
    assert s.categories["temporal-reasoning"].n == 60 and s.categories["multi-session"].n == 40


def test_zep_detailed_duplicate_is_dropped_for_the_richer_file() -> None:
    load = load_qa(require(MFLOW / "longmemeval-zep"))
    (r,) = load.runs
    assert r.meta.source_file is not None and r.meta.source_file.endswith("zep_oracle_100_detailed.json")
    assert r.duplicates == ("results/eval_100_per_question.json",)
    assert r.run.questions[0].latency_ms == pytest.approx(6747.0)
    assert r.meta.judge_models == ["gpt-4o-mini"]  # from benchmark_summary.json


def test_evolving_events_two_graded_judges() -> None:
    src = real(MFLOW / "evolving-events" / "results" / "mflow" / "topk5_gpt5mini" / "unified_evaluated.json")
    (run,) = mflow_longmemeval.load(src)
    s = loaded_score(run)
    assert s.n_judges == 2 and s.n_questions == 100
    # summary.json: Human-like Correctness 0.958 (= directllm mean), DeepEval 0.636
    assert s.per_judge_accuracy["directllm_correctness"] == pytest.approx(0.9585)
    assert round(s.per_judge_accuracy["deepeval_correctness"], 3) == 0.636
    assert s.accuracy == pytest.approx((0.9585 + s.per_judge_accuracy["deepeval_correctness"]) / 2)
    assert (run.run.system, run.run.top_k, run.run.variant) == ("mflow", 5, "topk5_gpt5mini")


def test_evolving_events_null_judge_is_skipped_not_zero() -> None:
    src = real(MFLOW / "evolving-events" / "results" / "cognee" / "topk10_gpt54" / "unified_evaluated.json")
    (run,) = mflow_longmemeval.load(src)
    s = loaded_score(run)
    assert sum(len(q.verdicts) == 1 for q in run.questions) == 1 and s.failures == 0
    assert round(s.per_judge_accuracy["deepeval_correctness"], 3) == 0.628  # summary.json, over 99 scores


def test_out_of_scale_score_is_an_error(tmp_path: Path) -> None:
    doc = [{"question": "q", "answer": "a", "golden_answer": "g", "metrics": {"directllm_correctness": 1.5}}]
    with pytest.raises(IngestError) as exc:
        mflow_longmemeval.load(write(tmp_path, "u.json", json.dumps(doc)))
    assert exc.value.path == "$[0].metrics.directllm_correctness"


def test_missing_answer_counts(tmp_path: Path) -> None:
    doc = [
        {"question_id": "a", "question": "q", "gold_answer": "g", "generated_answer": "", "llm_score": 1},
        {"question_id": "b", "question": "q", "gold_answer": "g", "generated_answer": "x", "llm_score": 1},
    ]
    (run,) = mflow_longmemeval.load(write(tmp_path, "p.json", json.dumps(doc)))
    s = loaded_score(run)
    assert s.n_questions == 2 and s.failures == 1 and s.accuracy == 0.5
