from __future__ import annotations

from _qa_oracle import loaded_score

from memeval_core.qa.locomo import JoinReport
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.publishable import PROTOCOLS, check


def _lme(n: int, **meta: object) -> QaRun:
    base: dict[str, object] = {
        "benchmark": "longmemeval-s",
        "system": "s",
        "answer_model": "gpt-4o-mini",
        "judge_models": ["gpt-4o-2024-08-06"],
        "top_k": 10,
    }
    qs = [
        QaQuestion(benchmark="longmemeval-s", question_id=f"q{i}", answer="a", verdicts=[Verdict(judge="j", score=1)])
        for i in range(n)
    ]
    return QaRun(run=RunMeta(**{**base, **meta}), questions=qs)  # type: ignore[arg-type]


def test_complete_run_is_publishable() -> None:
    run = _lme(500)
    assert check(run, loaded_score(run)) == (True, [])


def test_every_failed_condition_is_listed() -> None:
    run = _lme(499, judge_models=["gpt-4o-mini"], top_k=None, answer_model=None, sampled=True)
    ok, reasons = check(run, loaded_score(run))
    assert not ok
    assert reasons == [
        "the questions are a sample of the dataset",
        "incomplete corpus: 499 of 500 questions scored",
        "answer model not stated",
        "top-k not stated",
        "judge gpt-4o-mini is not the reference judge (gpt-4o, gpt-4o-2024-08-06)",
    ]


def test_failures_block_publishing() -> None:
    run = _lme(500)
    qs = list(run.questions)
    qs[0] = qs[0].model_copy(update={"answer": None})
    run = run.model_copy(update={"questions": qs})
    assert check(run, loaded_score(run))[1] == ["1 failed questions (1 no answer)"]


def test_locomo_needs_adversarial_flag_and_join() -> None:
    qs = [QaQuestion(benchmark="locomo", question_id=f"q{i}", answer="a", verdicts=[Verdict(judge="j", score=1)])
          for i in range(1540)]  # fmt: skip
    meta = RunMeta(benchmark="locomo", system="s", answer_model="m", judge_models=["gpt-4o-mini"], top_k=10)
    run = QaRun(run=meta, questions=qs)
    _, reasons = check(run, loaded_score(run))
    assert "the run does not say whether category 5 (adversarial) is scored" in reasons
    assert "incomplete corpus: 1540 of 1986 questions scored" in reasons
    assert "not checked against the dataset (locomo10.json not found)" in reasons
    run = run.model_copy(update={"run": meta.model_copy(update={"includes_adversarial": False})})
    join = JoinReport(1540, 1539, {"question_id": 1539}, ("q0",), 0, 0, 0)
    assert check(run, loaded_score(run), join)[1] == ["1 of 1540 questions not matched to the dataset"]
    full = JoinReport(1540, 1540, {"question_id": 1540}, (), 0, 0, 0)
    assert check(run, loaded_score(run), full) == (True, [])


def test_undeclared_benchmark() -> None:
    run = _lme(3, benchmark="evolving-events")
    assert check(run, loaded_score(run))[0] is False
    assert set(PROTOCOLS) == {"locomo", "longmemeval-s", "longmemeval-m", "longmemeval-oracle"}
