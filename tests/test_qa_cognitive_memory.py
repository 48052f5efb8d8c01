from __future__ import annotations

import json
from pathlib import Path

import pytest
from _data import SHARED_DATA, require
from _qa_data import COGNITIVE, real, write
from _qa_oracle import loaded_score

from memeval_core.errors import IngestError
from memeval_core.qa.importers import cognitive_memory
from memeval_core.qa.importers._common import UnjudgedError
from memeval_core.qa.ingest import load_qa

CURRENT = COGNITIVE / "locomo" / "results" / "current_sdk_20260505"


def test_one_conversation_shard_keeps_unjudged_category_5_outside() -> None:
    (run,) = cognitive_memory.load(real(CURRENT / "parallel" / "conv0.json"))
    s = loaded_score(run)
    assert len(run.questions) == 199 and s.n_questions == 152 and s.n_unscored == 47
    assert s.correct == 103  # aggregate.overall.llm_accuracy 0.6776 = 103/152
    assert s.accuracy == pytest.approx(run.run.stated["llm_accuracy"])
    assert run.run.includes_adversarial is False
    assert (run.run.system, run.run.top_k, run.run.prompt_mode) == ("cognitive_memory", 60, "mem0")


def test_ten_shards_merge_into_1986_questions_900_of_1540() -> None:
    load = load_qa(require(COGNITIVE / "locomo"), datasets=SHARED_DATA / "locomo")
    assert not load.errors
    main = next(r for r in load.runs if r.merged_from)
    assert len(main.merged_from) == 10
    assert len(main.run.questions) == 1986 and main.score.n_questions == 1540 and main.score.correct == 900
    assert main.join is not None and main.join.by_key["question_id"] == 1986
    assert main.display_name == "cognitive_memory (current_sdk_20260505)"
    assert main.not_publishable_because == ("judge model not stated",)
    assert any("oracle_ceiling_mem0.json" in s.file and "without judge" in s.reason for s in load.skipped)


def test_judge_reliability_two_verdicts() -> None:
    src = real(CURRENT / "judge_reliability.json")
    (run,) = cognitive_memory.load(src)
    s = loaded_score(run)
    assert s.n_questions == 50 and s.n_judges == 2 and run.run.sampled
    assert s.per_judge_accuracy == {"original": pytest.approx(0.58), "alt": pytest.approx(0.52)}
    agree = sum(1 for q in run.questions if q.verdicts[0].score == q.verdicts[1].score)
    assert agree / 50 == pytest.approx(src.data["summary"]["raw_agreement"])
    # strict majority of two verdicts: both must pass -> the 26 items where both say correct
    assert s.majority_accuracy == pytest.approx(26 / 50)


def test_longmemeval_s_primary_and_naive_rag() -> None:
    (primary,) = cognitive_memory.load(
        real(COGNITIVE / "longmemeval" / "results" / "current_sdk_20260505" / "primary.json")
    )
    s = loaded_score(primary)
    assert primary.run.benchmark == "longmemeval-s"
    assert (s.n_questions, s.correct) == (500, 363)
    assert s.categories["temporal-reasoning"].n == 133
    assert sum(q.is_abstention is True for q in primary.questions) == 30
    (naive,) = cognitive_memory.load(real(COGNITIVE / "longmemeval" / "results" / "naive_rag_results.json"))
    assert loaded_score(naive).correct == 350 and naive.run.system == "naive_rag"


def test_longmemeval_variant_from_sessions() -> None:
    assert cognitive_memory.longmemeval_variant([3, 4, 2]) == "longmemeval-oracle"
    assert cognitive_memory.longmemeval_variant([53, 48]) == "longmemeval-s"
    assert cognitive_memory.longmemeval_variant([480, 500]) == "longmemeval-m"


def test_hand_made_missing_prediction_and_no_verdicts(tmp_path: Path) -> None:
    pq = [
        {"conv_index": 0, "question_index": 0, "question": "q", "ground_truth": "g", "prediction": None,
         "category": 2, "llm_correct": True},
        {"conv_index": 0, "question_index": 1, "question": "r", "ground_truth": "g", "prediction": "p",
         "category": 2},
    ]  # fmt: skip
    (run,) = cognitive_memory.load(write(tmp_path, "c.json", json.dumps({"per_question": pq})))
    s = loaded_score(run)
    assert s.n_questions == 2 and s.failure_reasons == {"no answer": 1, "not judged": 1} and s.accuracy == 0.0
    only_unjudged = [pq[1]]
    with pytest.raises(UnjudgedError):
        cognitive_memory.load(write(tmp_path, "d.json", json.dumps({"per_question": only_unjudged})))


@pytest.mark.parametrize(
    ("bad", "where", "message"),
    [
        ({"question_index": "1"}, "question_index", "expected an integer"),
        ({"conv_index": 12}, "conv_index", "conversations 0..9"),
        ({"category": None}, "category", "expected an integer or a string"),
        ({"question": 3}, "question", "expected a string"),
        ({"retrieval_time_ms": -1}, "retrieval_time_ms", "non-negative"),
        ({}, None, "2 answers without any llm_correct verdict"),
    ],
)
def test_a_file_without_verdicts_is_checked_like_one_with_them(
    tmp_path: Path, bad: dict[str, object], where: str | None, message: str
) -> None:
    # Only checked and counted (no questions built), with the errors a judged file gives, in the same order.
    ok = {"conv_index": 0, "question_index": 0, "question": "q", "category": 2, "retrieval_time_ms": 5}
    for judged in (False, True):
        first = {**ok, "llm_correct": True} if judged else ok
        src = write(tmp_path, "c.json", json.dumps({"per_question": [first, {**ok, "question_index": 1, **bad}]}))
        if where is None:
            if not judged:
                with pytest.raises(UnjudgedError, match=message):
                    cognitive_memory.load(src)
            continue
        with pytest.raises(IngestError, match=message) as exc:
            cognitive_memory.load(src)
        assert exc.value.path == f"$.per_question[1].{where}", judged
