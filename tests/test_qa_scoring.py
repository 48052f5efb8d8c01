from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pyarrow as pa
import pytest
from _data import require
from _qa_data import AUDIT, LOCOMO_JSON, MEMOBASE, real
from _qa_oracle import (
    accuracy_excluding,
    kind_of,
    loaded_score,
    score_question,
    score_questions,
    score_run,
    scored_scores,
)

from memeval_core.qa.columns import columns_of
from memeval_core.qa.importers import mem0_eval
from memeval_core.qa.ingest import loaded_run
from memeval_core.qa.locomo import join_columns, load_locomo
from memeval_core.qa.models import QaQuestion, QaRun, RunMeta, Verdict
from memeval_core.qa.scoring import (
    GROUPMEMBENCH_KINDS,
    GroupScore,
    QuestionScore,
    RunScore,
    accuracy_without,
    combine_repeats,
    fama,
    looks_like_abstention,
    parse_disputed,
    passes,
    rescale,
    score_columns,
    summarize_table,
)
from memeval_core.qa.table import scores_from_table, table_of


def _v(judge: str, score: float, scale: str = "binary") -> Verdict:
    return Verdict(judge=judge, score=score, scale=scale)  # type: ignore[arg-type]


def _q(qid: str, verdicts: list[Verdict], answer: str | None = "a", **kw: object) -> QaQuestion:
    return QaQuestion(benchmark="b", question_id=qid, answer=answer, verdicts=verdicts, **kw)  # type: ignore[arg-type]


def _table(questions: list[QaQuestion], w: float = 1.0) -> pa.Table:
    """The questions scored as the load scores them: over columns, into the question table."""
    columns = columns_of(questions)
    return table_of(columns, score_columns(columns, w))


def _score(q: QaQuestion) -> QuestionScore:
    """One question scored as the load scores it."""
    (s,) = scores_from_table(_table([q]))
    return s


def _run_score(run: QaRun, w: float = 1.0) -> RunScore:
    """A run's aggregates as the load computes them."""
    return summarize_table(_table(run.questions, w))


def test_rubric_rescaled_and_thresholded_at_3() -> None:
    assert rescale(_v("j", 3, "rubric-0-5")) == pytest.approx(0.6)
    assert passes(_v("j", 3, "rubric-0-5")) and not passes(_v("j", 2, "rubric-0-5"))
    s = _score(_q("a", [_v("j", 3, "rubric-0-5")]))
    assert s.score == pytest.approx(0.6) and s.correct


def test_several_judges_mean_and_majority() -> None:
    s = _score(_q("a", [_v("a", 1), _v("b", 1), _v("c", 0)]))
    assert s.score == pytest.approx(2 / 3) and s.majority is True and s.correct
    two = _score(_q("b", [_v("a", 1), _v("b", 0)]))
    assert two.score == 0.5 and two.majority is False and not two.correct
    assert _score(_q("c", [_v("a", 1)])).majority is None


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
    s = _run_score(run)
    assert s.n_questions == 4 and s.n_unscored == 1 and s.failures == 3
    assert s.failure_reasons == {"no answer": 1, "error": 1, "not judged": 1}
    assert s.accuracy == 0.25 and s.per_judge_accuracy == {"j": 0.25}


def test_fama() -> None:
    assert fama(0.8) == 0.8
    assert fama(0.8, faa=0.5) == pytest.approx(0.3)
    assert fama(0.2, faa=0.0, w=1.0) == 0.0
    assert _score(_q("a", [_v("j", 1)], faa=0.25)).fama == pytest.approx(0.25)
    assert _score(_q("b", [_v("j", 1)], mpa=0.5, faa=0.75)).fama == pytest.approx(0.25)


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
    s = _run_score(run)
    assert s.kinds["abstention"].n == 3 and s.kinds["abstention"].accuracy == pytest.approx(2 / 3)
    assert s.kinds["temporal"].accuracy == 1.0 and "multi_hop" not in s.kinds
    assert looks_like_abstention("That is not mentioned in the conversation.")
    assert not looks_like_abstention("In May.")


def test_repeats_mean_and_spread() -> None:
    runs = [
        QaRun(run=RunMeta(benchmark="b", system="s"), questions=[_q("a", [_v("j", x)]), _q("b", [_v("j", 1)])])
        for x in (1, 0, 1)
    ]
    rep = combine_repeats([_run_score(r) for r in runs])
    assert rep.n == 3 and rep.mean == pytest.approx(5 / 6)
    assert rep.std == pytest.approx(0.28867513, abs=1e-8) and (rep.min, rep.max) == (0.5, 1.0)


def test_disputed_questions() -> None:
    errors = real(AUDIT / "errors.json")
    disputed = parse_disputed(errors.data, errors.rel)
    assert len(disputed) == 156 and "conv-26-q1" in disputed
    (run,) = mem0_eval.load(real(MEMOBASE / "memobase_eval_0503_3000.json"))
    joined, _ = join_columns(run, load_locomo(require(LOCOMO_JSON)))
    s = loaded_run(joined, "id", "name").question_scores
    assert s == score_questions(joined)
    acc, removed = accuracy_excluding(s, disputed)
    assert removed == 156
    kept_correct = sum(q.correct for q in s if q.question_id not in disputed)
    assert acc == pytest.approx(kept_correct / 1384) and round(acc or 0, 4) == 0.7363


# The reference below is the per-question definition written once more, independently: score_question for each
# question, then one aggregation loop. The load's columnar scoring and the oracle's score_run must agree with it
# bit for bit.


def _reference(run: QaRun, w: float = 1.0) -> RunScore:
    questions = run.questions
    per_q = tuple(score_question(q, w) for q in questions)
    judges: dict[str, None] = {}
    for q in questions:
        for v in q.verdicts:
            judges[v.judge] = None
    scored: list[QuestionScore] = []
    judge_values: dict[str, list[float]] = {j: [] for j in judges}
    cats: dict[str, list[QuestionScore]] = {}
    kinds: dict[str, list[QuestionScore]] = {}
    names: dict[str, str | None] = {}
    reasons: dict[str, int] = {}
    latencies: list[float] = []
    multi = False
    for q, s in zip(questions, per_q, strict=True):
        if not s.scored:
            continue
        scored.append(s)
        multi = multi or len(q.verdicts) >= 2
        if s.failure is not None:
            reasons[s.failure] = reasons.get(s.failure, 0) + 1
            for j, values in judge_values.items():
                values.append(s.per_judge.get(j, 0.0))
        else:
            for j, x in s.per_judge.items():
                judge_values[j].append(x)
        if q.category is not None:
            cats.setdefault(q.category, []).append(s)
            names[q.category] = q.category_name
        k = kind_of(q)
        if k is not None:
            kinds.setdefault(k, []).append(s)
        if q.latency_ms is not None:
            latencies.append(q.latency_ms)

    def group(ss: list[QuestionScore], name: str | None) -> GroupScore:
        return GroupScore(name, len(ss), math.fsum(s.score for s in ss) / len(ss), sum(s.correct for s in ss))

    def code_key(code: str) -> tuple[int, int | str]:
        return (0, int(code)) if code.isdigit() else (1, code)

    n = len(scored)
    return RunScore(
        n_questions=n,
        n_unscored=len(per_q) - n,
        accuracy=math.fsum(s.score for s in scored) / n if n else None,
        correct=sum(s.correct for s in scored),
        majority_accuracy=sum(bool(s.majority) for s in scored) / n if multi and n else None,
        failures=sum(reasons.values()),
        failure_reasons=reasons,
        judges=tuple(judges),
        per_judge_accuracy={j: math.fsum(v) / len(v) for j, v in judge_values.items() if v},
        categories={c: group(cats[c], names[c]) for c in sorted(cats, key=code_key)},
        kinds={k: group(kinds[k], k) for k in GROUPMEMBENCH_KINDS if k in kinds},
        fama=math.fsum(s.fama for s in scored) / n if n else None,
        latency_ms=tuple(latencies),
    )


def _exact(x: Any) -> Any:
    """A comparable form that tells 0.0 from -0.0, 1 from 1.0 and True, and sees dict order."""
    if isinstance(x, RunScore):  # fields as attributes: builds the questions
        return ("RunScore", [(f.name, _exact(getattr(x, f.name))) for f in dataclasses.fields(x)])
    if isinstance(x, GroupScore | QuestionScore):
        return (type(x).__name__, [(k, _exact(v)) for k, v in x.__dict__.items()])
    if isinstance(x, dict):
        return ("dict", [(_exact(k), _exact(v)) for k, v in x.items()])
    if isinstance(x, tuple | list):
        return (type(x).__name__, [_exact(v) for v in x])
    return (type(x).__name__, repr(x))


def _random_run(rng: random.Random, size: int | None = None) -> QaRun:
    """Shared and unshared verdicts, every scale, 0-4 verdicts, a judge named twice, failures, kinds, FAMA."""
    judges = ["a", "b", "c", "llm"]
    pool = [
        Verdict(judge="a", score=1.0),
        Verdict(judge="a", score=0.0),
        Verdict(judge="b", score=-0.0),
        Verdict(judge="b", score=3.0, scale="rubric-0-5"),
        Verdict(judge="c", score=2.5, scale="rubric-0-5"),
        Verdict(judge="llm", score=0.6 - 1e-13, scale="unit"),
        Verdict(judge="llm", score=rng.random(), scale="unit"),
    ]
    questions = []
    n = rng.choice([0, 1, rng.randint(2, 40), rng.randint(40, 300)]) if size is None else size
    for i in range(n):
        k = rng.choice([0, 1, 1, 1, 2, 3, 4]) if rng.random() < 0.5 else rng.choice([1, 2, 3])
        if rng.random() < 0.6:
            verdicts = [rng.choice(pool) for _ in range(k)]
        else:
            verdicts = [Verdict(judge=rng.choice(judges), score=rng.random(), scale="unit") for _ in range(k)]
        kw: dict[str, Any] = {}
        if rng.random() < 0.4:
            kw["category"] = rng.choice(["1", "2", "10", "x", "temporal", "abstention", "multi_hop"])
            kw["category_name"] = rng.choice(["one", "two", None])
        if rng.random() < 0.2:
            kw["kind"] = rng.choice(["abstention", "temporal", "other"])
        if rng.random() < 0.2:
            kw["abstained"] = rng.choice([True, False])
        if rng.random() < 0.05:
            kw["error"] = True
        if rng.random() < 0.15:
            kw["scored"] = False
        if rng.random() < 0.05:
            kw["mpa"] = rng.random()
        if rng.random() < 0.05:
            kw["faa"] = rng.choice([0.0, 0.5, 1.0])
        if rng.random() < 0.3:
            kw["latency_ms"] = rng.choice([0.0, 12.5, 100.0])
        answer = rng.choice(["yes", "Paris ", "I don't know", "", " \n", "\u3000", None]) if rng.random() < 0.1 else "x"
        questions.append(QaQuestion(benchmark="b", question_id=f"q{i}", answer=answer, verdicts=verdicts, **kw))
    return QaRun(run=RunMeta(benchmark="b", system="s"), questions=questions)


@pytest.mark.parametrize("seed", range(6))
def test_score_run_equals_the_per_question_definition(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        run = _random_run(rng)
        w = rng.choice([1.0, 1.0, 0.5, -1.0, math.inf])
        expected = _reference(run, w)
        table = _table(run.questions, w)
        got = summarize_table(table)
        questions = scores_from_table(table)
        assert questions == tuple(score_question(q, w) for q in run.questions) == score_questions(run, w)
        assert scored_scores(questions) == (
            tuple(s.question_id for s in questions if s.scored),
            tuple(s.score for s in questions if s.scored),
        )
        assert _exact(got) == _exact(expected)
        assert type(questions) is tuple and all(type(s) is QuestionScore for s in questions)
        # Every question has a per_judge dict of its own, as when built one by one.
        assert len({id(s.per_judge) for s in questions}) == len(questions)
        assert got == expected and repr(got) == repr(expected)
        assert _exact(score_run(run, w)) == _exact(expected)


def test_score_run_of_odd_question_layouts() -> None:
    class SubQuestion(QaQuestion):
        pass

    v = Verdict(judge="j", score=1)
    odd = QaQuestion.model_construct(question_id="b", benchmark="b", answer="x", verdicts=[v])  # another dict order
    run = QaRun.model_construct(
        run=RunMeta(benchmark="b", system="s"),
        questions=[_q("a", [v]), odd, SubQuestion(benchmark="b", question_id="c", answer="y", verdicts=[v, v])],
    )
    assert _exact(_run_score(run)) == _exact(score_run(run)) == _exact(_reference(run))
    # Verdicts built without validation (out of scale, NaN) still score as score_question scores them.
    for x in (-0.5, math.nan, 2.0):
        unchecked = Verdict.model_construct(judge="j", score=x, scale="unit")
        question = QaQuestion.model_construct(benchmark="b", question_id="u", answer="x", verdicts=[unchecked])
        run = QaRun.model_construct(run=RunMeta(benchmark="b", system="s"), questions=[question, _q("v", [v])])
        assert _exact(_run_score(run)) == _exact(score_run(run)) == _exact(_reference(run))
    empty = QaRun(run=RunMeta(benchmark="b", system="s"), questions=[])
    assert _exact(_run_score(empty)) == _exact(score_run(empty)) == _exact(_reference(empty))


def _sample_run() -> QaRun:
    run = _random_run(random.Random(7), 200)
    assert len({s.failure for s in score_questions(run)}) > 1  # failures among the rest
    return run


def test_score_run_of_a_real_run() -> None:
    (run,) = mem0_eval.load(real(MEMOBASE / "memobase_eval_0503_3000.json"))
    joined, _ = join_columns(run, load_locomo(require(LOCOMO_JSON)))
    for r in (run, joined):
        assert _exact(loaded_score(r)) == _exact(score_run(r)) == _exact(_reference(r))


def test_accuracy_without_drops_every_question_of_an_excluded_id() -> None:
    ids, scores = ("a", "b", "c", "b"), (1.0, 0.0, 0.5, 1.0)
    assert accuracy_without(ids, scores, {"b"}) == (0.75, 2)  # both b's
    assert accuracy_without(ids, scores, []) == (0.625, 0)
    assert accuracy_without(ids, scores, frozenset("xyz")) == (0.625, 0)
    assert accuracy_without(ids, scores, ["a", "b", "c"]) == (None, 4)
    assert accuracy_without((), (), {"a"}) == (None, 0)
    with pytest.raises(ValueError, match="3 ids but 2 scores"):
        accuracy_without(ids[:3], scores[:2], set())
