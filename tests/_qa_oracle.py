"""The QA scoring rules and the LoCoMo join written question by question: the oracle of the columnar load.

The load scores a run as columns (:func:`memeval_core.qa.scoring.score_columns`, ``summarize_table``) and joins
it as columns (:func:`memeval_core.qa.locomo.join_columns`). The functions here state the same rules over
question models, one question at a time; tests check that both give the same results.
:func:`loaded` and :func:`loaded_score` are the load's own scoring, for tests that check an importer's numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import pyarrow as pa

from memeval_core.qa import locomo
from memeval_core.qa.columns import ColumnRun, columns_of
from memeval_core.qa.ingest import LoadedRun, loaded_run
from memeval_core.qa.models import QaQuestion, QaRun
from memeval_core.qa.scoring import (
    GROUPMEMBENCH_KINDS,
    PASS_THRESHOLD,
    GroupScore,
    QuestionScore,
    RunScore,
    accuracy_without,
    looks_like_abstention,
)
from memeval_core.qa.table import SCORE_COLUMNS, table_of


def loaded(run: ColumnRun | QaRun) -> LoadedRun:
    """The run scored as the load scores it (over its columns), not joined."""
    return LoadedRun.of(run, "id", "name") if isinstance(run, QaRun) else loaded_run(run, "id", "name")


def loaded_score(run: ColumnRun | QaRun) -> RunScore:
    """The run's aggregates as the load computes them."""
    return loaded(run).score


def kind_of(q: QaQuestion) -> str | None:
    """The question's GroupMemBench kind: ``kind``, else the category when it names a kind."""
    if q.kind in GROUPMEMBENCH_KINDS:
        return q.kind
    return q.category if q.category in GROUPMEMBENCH_KINDS else None


def score_question(q: QaQuestion, w: float = 1.0) -> QuestionScore:
    """Score one question (see the module docstring of :mod:`memeval_core.qa.scoring` for the rules)."""
    verdicts = q.verdicts
    n = len(verdicts)
    # Why a scored question counts as a failure (error, no answer, not judged), or None.
    failure: str | None = None
    if q.scored:
        answer = q.answer
        if q.error:
            failure = "error"
        elif answer is None or not answer.strip():
            failure = "no answer"
        elif not n:
            failure = "not judged"
    if failure is not None:
        per_judge = {v.judge: 0.0 for v in verdicts}
        majority_failed = False if n >= 2 else None
        return QuestionScore(q.question_id, q.category, q.scored, failure, 0.0, False, majority_failed, per_judge, 0.0)
    majority: bool | None
    if n == 1:
        # The common case: one judge. fsum([x]) / 1 is x (a negative zero becomes 0.0, as fsum does).
        v = verdicts[0]
        x = v.score / 5.0 if v.scale == "rubric-0-5" else v.score
        per_judge = {v.judge: x}
        score = x + 0.0
        majority = None
    else:
        values = [v.score / 5.0 if v.scale == "rubric-0-5" else v.score for v in verdicts]
        per_judge = dict(zip([v.judge for v in verdicts], values, strict=True))
        score = math.fsum(values) / n if n else 0.0
        majority = sum(x >= PASS_THRESHOLD - 1e-12 for x in values) * 2 > n if n >= 2 else None
    correct = score >= PASS_THRESHOLD - 1e-12
    if (q.kind == "abstention" or q.category == "abstention") and kind_of(q) == "abstention":
        abstained = q.abstained if q.abstained is not None else looks_like_abstention(q.answer)
        correct = abstained
        score = 1.0 if abstained else 0.0
        majority = abstained if majority is not None else None
    mpa = q.mpa if q.mpa is not None else score
    faa = q.faa
    # fama(mpa, faa or 1, w), inline.
    fama_value = max(0.0, mpa - w * (1.0 - (faa if faa is not None else 1.0)))
    return QuestionScore(q.question_id, q.category, q.scored, None, score, correct, majority, per_judge, fama_value)


def _group(name: str | None, members: Sequence[QuestionScore]) -> GroupScore:
    """Accuracy of scored questions: mean score (correctly rounded sum), and how many are correct."""
    return GroupScore(
        name, len(members), math.fsum(s.score for s in members) / len(members), sum(s.correct for s in members)
    )


def _per_judge_accuracy(judges: Sequence[str], scored: Sequence[QuestionScore], n_failed: int) -> dict[str, float]:
    """Per judge: the mean of its rescaled scores over the scored questions that did not fail, plus a 0 per failure."""
    values: dict[str, list[float]] = {j: [] for j in judges}
    for s in scored:
        if s.failure is None:
            for judge, value in s.per_judge.items():
                values[judge].append(value)
    for vs in values.values():
        vs.extend([0.0] * n_failed)
    return {j: math.fsum(vs) / len(vs) for j, vs in values.items() if vs}


def score_questions(run: QaRun | ColumnRun, w: float = 1.0) -> tuple[QuestionScore, ...]:
    """:func:`score_question` of every question, in run order."""
    return tuple(score_question(q, w) for q in run.questions)


def score_run(run: QaRun | ColumnRun, w: float = 1.0) -> RunScore:
    """The run's aggregates over its scored questions (:func:`summarize` of :func:`score_questions`)."""
    return summarize(run.questions, score_questions(run, w))


def _code_key(code: str) -> tuple[int, int | str]:
    return (0, int(code)) if code.isdigit() else (1, code)


def summarize(run_questions: Sequence[QaQuestion], questions: Sequence[QuestionScore]) -> RunScore:
    """Aggregate scored questions (``questions[i]`` scores ``run_questions[i]``).

    Accuracy, FAMA and group accuracies are means of question scores (``math.fsum``, correctly rounded);
    majority accuracy is defined only when some scored question has 2+ verdicts; categories are ordered by
    code (numeric codes numerically) and named after their last scored question; kinds follow
    :data:`GROUPMEMBENCH_KINDS`.
    """
    pairs = [(q, s) for q, s in zip(run_questions, questions, strict=True) if s.scored]
    scored = [s for _, s in pairs]
    n = len(scored)
    reasons = dict(Counter(s.failure for s in scored if s.failure is not None))
    n_failed = sum(reasons.values())
    judges = tuple(dict.fromkeys(v.judge for q in run_questions for v in q.verdicts))
    by_category: dict[str, list[QuestionScore]] = {}
    names: dict[str, str | None] = {}
    by_kind: dict[str, list[QuestionScore]] = {}
    for q, s in pairs:
        if q.category is not None:
            by_category.setdefault(q.category, []).append(s)
            names[q.category] = q.category_name
        if (kind := kind_of(q)) is not None:
            by_kind.setdefault(kind, []).append(s)
    multi = any(len(q.verdicts) >= 2 for q, _ in pairs)
    return RunScore(
        n_questions=n,
        n_unscored=len(questions) - n,
        accuracy=math.fsum(s.score for s in scored) / n if n else None,
        correct=sum(s.correct for s in scored),
        majority_accuracy=sum(bool(s.majority) for s in scored) / n if n and multi else None,
        failures=n_failed,
        failure_reasons=reasons,
        judges=judges,
        per_judge_accuracy=_per_judge_accuracy(judges, scored, n_failed),
        categories={c: _group(names[c], by_category[c]) for c in sorted(by_category, key=_code_key)},
        kinds={k: _group(k, by_kind[k]) for k in GROUPMEMBENCH_KINDS if k in by_kind},
        fama=math.fsum(s.fama for s in scored) / n if n else None,
        latency_ms=tuple(q.latency_ms for q, _ in pairs if q.latency_ms is not None),
    )


def scored_scores(questions: Sequence[QuestionScore]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Id and score of every scored question, in run order (what :func:`accuracy_without` needs)."""
    kept = [s for s in questions if s.scored]
    return tuple([s.question_id for s in kept]), tuple([s.score for s in kept])


def accuracy_excluding(questions: Sequence[QuestionScore], excluded: Iterable[str]) -> tuple[float | None, int]:
    """Accuracy over scored questions whose id is not in ``excluded``, and how many were excluded."""
    return accuracy_without(*scored_scores(questions), excluded)


def questions_table(questions: Sequence[QaQuestion], scores: Sequence[QuestionScore]) -> pa.Table:
    """The questions and their scores (same order, same length) as one table of the load's schema."""
    if len(questions) != len(scores):
        raise ValueError(f"{len(questions)} questions but {len(scores)} scores")
    score_columns = {name: [getattr(s, name) for s in scores] for name, _ in SCORE_COLUMNS}
    return table_of(columns_of(questions), score_columns)


def join(run: QaRun, ds: locomo.LocomoDataset) -> tuple[QaRun, locomo.JoinReport]:
    """:func:`memeval_core.qa.locomo.join_columns` applied to question models: the same matches and report.

    The run's questions are copied (``model_copy``), never changed; an unmatched question that keeps its id is
    the very same object.
    """
    columns = columns_of(run.questions)
    plan = locomo._plan_of(columns, ds)
    joined = locomo._joined_columns(columns, plan)
    out: list[QaQuestion] = []
    for row, (q, hit) in enumerate(zip(run.questions, plan.hits, strict=True)):
        if hit is not None:
            out.append(q.model_copy(update={name: values[row] for name, values in joined.items()}))
        elif row in plan.renamed:
            out.append(q.model_copy(update={"question_id": plan.renamed[row]}))
        else:
            out.append(q)
    return run.model_copy(update={"questions": out}), plan.report
