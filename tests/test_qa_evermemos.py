from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _qa_data import AUDIT, real, write
from _qa_oracle import loaded_score

from memeval_core.errors import IngestError
from memeval_core.qa import ingest
from memeval_core.qa.importers import evermemos
from memeval_core.qa.importers._common import UnjudgedError


def test_ap_v1_three_verdicts_mean_and_majority() -> None:
    src = real(AUDIT / "ap-baseline" / "v1" / "ap_eval_results_scored.json")
    assert evermemos.sniff(src.data, src.rel)
    (run,) = evermemos.load(src)
    s = loaded_score(run)
    assert s.n_questions == 1540 and s.n_judges == 3 and s.failures == 0
    # accuracy = mean of the three judge runs = 490 true verdicts / 4620 (file: 0.10606...)
    assert s.accuracy == pytest.approx(490 / 4620)
    assert s.accuracy == pytest.approx(src.data["accuracy"])
    assert s.majority_accuracy == pytest.approx(164 / 1540)
    assert run.questions[0].question_id == "conv-26-q0"
    assert run.run.stated["correct"] == 163


def test_ap_v2_scored() -> None:
    (run,) = evermemos.load(real(AUDIT / "ap-baseline" / "v2" / "ap_eval_results_scored.json"))
    s = loaded_score(run)
    assert s.accuracy == pytest.approx(0.6281385281385282)
    assert s.majority_accuracy == pytest.approx(966 / 1540)
    unanimous = sum(1 for q in run.questions if len({v.score for v in q.verdicts}) == 1)
    assert unanimous == 1498


def test_unscored_answers_file_is_unjudged() -> None:
    with pytest.raises(UnjudgedError, match="not graded"):
        evermemos.load(real(AUDIT / "ap-baseline" / "v1" / "ap_eval_results.json"))


def _doc(items: list[dict[str, object]]) -> str:
    return json.dumps({"total_questions": len(items), "detailed_results": {"locomo_exp_user_0": items}})


def test_hand_made_edge_cases(tmp_path: Path) -> None:
    items = [
        {"question_id": "locomo_0_qa0", "question": "q0", "golden_answer": "a", "generated_answer": "a",
         "llm_judgments": {"judgment_1": True, "judgment_2": True, "judgment_3": False}, "category": "2"},
        {"question_id": "locomo_0_qa1", "question": "q1", "golden_answer": "b", "generated_answer": "",
         "llm_judgments": {"judgment_1": True, "judgment_2": True, "judgment_3": True}, "category": "2"},
    ]  # fmt: skip
    (run,) = evermemos.load(write(tmp_path, "e.json", _doc(items)))
    s = loaded_score(run)
    assert s.accuracy == pytest.approx((2 / 3 + 0) / 2)
    assert s.failures == 1 and s.majority_accuracy == pytest.approx(0.5)


def test_bad_judgment_value(tmp_path: Path) -> None:
    items = [{"question_id": "locomo_0_qa0", "question": "q", "llm_judgments": {"judgment_1": "yes"}}]
    with pytest.raises(IngestError) as exc:
        evermemos.load(write(tmp_path, "e.json", _doc(items)))
    assert exc.value.path == "$.detailed_results.locomo_exp_user_0[0].llm_judgments.judgment_1"


def test_a_negative_zero_judgment_keeps_its_sign(tmp_path: Path) -> None:
    items = [
        {"question_id": f"locomo_0_qa{i}", "question": "q", "category": 1, "llm_judgments": {"judgment_1": value}}
        for i, value in enumerate([0, -0.0, 0.0, -0.0, False])
    ]
    (tmp_path / "eval_results.json").write_text(json.dumps({"detailed_results": {"locomo_exp_user_0": items}}))
    (run,) = evermemos.load(ingest.read_source(tmp_path / "eval_results.json", "eval_results.json"))
    signs = [math.copysign(1.0, q.verdicts[0].score) for q in run.questions]
    assert signs == [1.0, -1.0, 1.0, -1.0, 1.0]


@pytest.mark.parametrize(
    ("bad", "where", "message"),
    [
        ({"question_id": 7}, "[1].question_id", "expected a string"),
        ({"llm_judgments": []}, "[1].llm_judgments", "expected an object"),
        ({"category": 1.5}, "[1].category", "expected an integer or a string"),
        ({"question": None}, "[1].question", "expected a string"),
        ({}, None, "2 answers, but every llm_judgments is empty"),
    ],
)
def test_an_ungraded_file_is_checked_like_a_graded_one(
    tmp_path: Path, bad: dict[str, object], where: str | None, message: str
) -> None:
    # Only checked and counted (no questions built), with the same errors, in the same order, as when graded.
    ok = {"question_id": "locomo_0_qa0", "question": "q", "category": 1, "llm_judgments": {}}
    items = [ok, {**ok, "question_id": "locomo_0_qa1", **bad}]
    for graded in (False, True):
        if graded:  # one judgment more makes the full loop run: it must stop at the same item
            items = [{**ok, "llm_judgments": {"judgment_1": True}}, *items[1:]]
        src = write(tmp_path, "e.json", _doc(items))
        if where is None:
            if not graded:
                with pytest.raises(UnjudgedError, match=message):
                    evermemos.load(src)
            continue
        with pytest.raises(IngestError, match=message) as exc:
            evermemos.load(src)
        assert exc.value.path == f"$.detailed_results.locomo_exp_user_0{where}", graded
