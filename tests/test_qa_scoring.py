from __future__ import annotations

import pytest
from _data import require
from _qa_data import AUDIT, MEMOBASE, real

from memeval_core.qa.importers import mem0_eval
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.scoring import (
    accuracy_excluding,
    combine_repeats,
    fama,
    load_disputed,
    looks_like_abstention,
    passes,
    rescale,
    score_question,
    score_run,
)


def _v(judge: str, score: float, scale: str = "binary") -> Verdict:
    return Verdict(judge=judge, score=score, scale=scale)  # type: ignore[arg-type]


def _q(qid: str, verdicts: list[Verdict], answer: str | None = "a", **kw: object) -> QaQuestion:
    return QaQuestion(benchmark="b", question_id=qid, answer=answer, verdicts=verdicts, **kw)  # type: ignore[arg-type]


def test_rubric_rescaled_and_thresholded_at_3() -> None:
    assert rescale(_v("j", 3, "rubric-0-5")) == pytest.approx(0.6)
    assert passes(_v("j", 3, "rubric-0-5")) and not passes(_v("j", 2, "rubric-0-5"))
    s = score_question(_q("a", [_v("j", 3, "rubric-0-5")]))
    assert s.score == pytest.approx(0.6) and s.correct


def test_several_judges_mean_and_majority() -> None:
    s = score_question(_q("a", [_v("a", 1), _v("b", 1), _v("c", 0)]))
    assert s.score == pytest.approx(2 / 3) and s.majority is True and s.correct
    two = score_question(_q("b", [_v("a", 1), _v("b", 0)]))
    assert two.score == 0.5 and two.majority is False and not two.correct
    assert score_question(_q("c", [_v("a", 1)])).majority is None


def test_failures_score_zero_and_stay_counted() -> None:
    run = QaRun(
        run=RunMeta(benchmark="b", system="s"),
        questions=[
            _q("ok", [_v("j", 1)]),
            _q("blank", [_v("j", 1)], answer="  "),
            _q("err", [_v("j", 1)], error=True),
            _q("unjudged", []),
            _q("outside", [], scored=False),
        ],
    )
    s = score_run(run)
    assert s.n_questions == 4 and s.n_unscored == 1 and s.failures == 3
    assert s.failure_reasons == {"no answer": 1, "error": 1, "not judged": 1}
    assert s.accuracy == 0.25 and s.per_judge_accuracy == {"j": 0.25}


def test_fama() -> None:
    assert fama(0.8) == 0.8
    assert fama(0.8, faa=0.5) == pytest.approx(0.3)
    assert fama(0.2, faa=0.0, w=1.0) == 0.0
    assert score_question(_q("a", [_v("j", 1)], faa=0.25)).fama == pytest.approx(0.25)
    assert score_question(_q("b", [_v("j", 1)], mpa=0.5, faa=0.75)).fama == pytest.approx(0.25)


def test_groupmembench_kinds_and_abstention() -> None:
    run = QaRun(
        run=RunMeta(benchmark="groupmembench", system="s"),
        questions=[
            _q("a", [_v("j", 1)], kind="abstention", answer="Paris"),
            _q("b", [_v("j", 0)], kind="abstention", answer="I don't know."),
            _q("c", [_v("j", 1)], kind="abstention", abstained=True, answer="It is unclear"),
            _q("d", [_v("j", 1)], category="temporal"),
        ],
    )
    s = score_run(run)
    assert s.kinds["abstention"].n == 3 and s.kinds["abstention"].accuracy == pytest.approx(2 / 3)
    assert s.kinds["temporal"].accuracy == 1.0 and "multi_hop" not in s.kinds
    assert looks_like_abstention("That is not mentioned in the conversation.")
    assert not looks_like_abstention("In May.")


def test_repeats_mean_and_spread() -> None:
    runs = [
        QaRun(run=RunMeta(benchmark="b", system="s"), questions=[_q("a", [_v("j", x)]), _q("b", [_v("j", 1)])])
        for x in (1, 0, 1)
    ]
    rep = combine_repeats([score_run(r) for r in runs])
    assert rep.n == 3 and rep.mean == pytest.approx(5 / 6)
    assert rep.std == pytest.approx(0.28867513, abs=1e-8) and (rep.min, rep.max) == (0.5, 1.0)
    assert rep.per_question == {"a": pytest.approx(2 / 3), "b": 1.0}


def test_disputed_questions() -> None:
    disputed = load_disputed(require(AUDIT / "errors.json"))
    assert len(disputed) == 156 and "conv-26-q1" in disputed
    (run,) = mem0_eval.load(real(MEMOBASE / "memobase_eval_0503_3000.json"))
    from _qa_data import LOCOMO_JSON

    from memeval_core.qa.locomo import join, load_locomo

    joined, _ = join(run, load_locomo(require(LOCOMO_JSON)))
    s = score_run(joined)
    acc, removed = accuracy_excluding(s, disputed)
    assert removed == 156
    kept_correct = sum(q.correct for q in s.questions if q.question_id not in disputed)
    assert acc == pytest.approx(kept_correct / 1384) and round(acc or 0, 4) == 0.7363
