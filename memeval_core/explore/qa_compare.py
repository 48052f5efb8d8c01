"""Compare two QA runs (LoCoMo, LongMemEval, ...) question by question: paired table, one question, statistics.

Two runs pair only when they are of the same benchmark and agree on ``includes_adversarial``
(whether LoCoMo category 5 is scored); otherwise :class:`ValueError` says why. Questions are paired
on ``question_id`` among the questions *scored* in both runs (a question outside a run's accuracy
denominator has nothing to compare); failures (no answer, error, not judged) score 0, count as
wrong and stay paired.

Per question (:mod:`memeval_core.qa.scoring`): ``score`` = mean rescaled verdict score in [0, 1];
``correct`` = ``score >= 0.6``.

Statistics (:func:`qa_compare_stats`): this is the QA adapter of :mod:`memeval_core.explore.paired`, whose
paired outcome table it builds (:func:`outcome_table`: outcome = correct, value = score): exact McNemar on
correctness, paired bootstrap intervals of the share correct (``accuracy``) and of the mean score (the
leaderboard's accuracy, ``score``), Holm across categories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

from memeval_core.explore.paired import TABLE_COLUMNS, PairedReport, Terms, paired_stats
from memeval_core.qa.ingest import LoadedRun, QaRunHeader
from memeval_core.qa.models import QaQuestion
from memeval_core.qa.scoring import QuestionScore, passes, rescale
from memeval_core.stats.bootstrap import BootstrapMethod

OUTCOME_OF: dict[tuple[bool, bool], str] = {
    (True, True): "both correct",
    (True, False): "A wins",
    (False, True): "B wins",
    (False, False): "both wrong",
}
"""Outcome by (A correct, B correct)."""

QA_PAIR_COLUMNS = [
    "question_id",
    "category",
    "category_name",
    "question",
    "gold_answer",
    "a_answer",
    "b_answer",
    "a_score",
    "b_score",
    "a_correct",
    "b_correct",
    "outcome",
    "a_failure",
    "b_failure",
]

Scored = tuple[QaQuestion, QuestionScore]
H = TypeVar("H", bound=QaRunHeader)


def _source(run: QaRunHeader) -> str:
    return run.meta.source_file or run.run_id


def check_pairable(run_a: QaRunHeader, run_b: QaRunHeader) -> None:
    """Raise :class:`ValueError` unless A and B are of one benchmark and agree on scoring LoCoMo category 5."""
    ma, mb = run_a.meta, run_b.meta
    if ma.benchmark != mb.benchmark:
        raise ValueError(
            f"cannot pair {_source(run_a)} ({ma.benchmark}) with {_source(run_b)} ({mb.benchmark}): "
            "different benchmarks"
        )
    if ma.includes_adversarial != mb.includes_adversarial:

        def said(x: bool | None) -> str:
            return {True: "scores", False: "does not score", None: "does not say whether it scores"}[x]

        raise ValueError(
            f"cannot pair {_source(run_a)} with {_source(run_b)}: {run_a.display_name} {said(ma.includes_adversarial)} "
            f"category 5 (adversarial) and {run_b.display_name} {said(mb.includes_adversarial)} it; "
            "runs that differ in it are not compared"
        )


def _scored_index(run: LoadedRun) -> dict[str, Scored]:
    out: dict[str, Scored] = {}
    for q, s in zip(run.run.questions, run.question_scores, strict=True):
        if not s.scored:
            continue
        if q.question_id in out:
            raise ValueError(f"{_source(run)}: question {q.question_id!r} appears twice")
        out[q.question_id] = (q, s)
    return out


def paired_questions(run_a: LoadedRun, run_b: LoadedRun) -> list[tuple[Scored, Scored]]:
    """Questions scored in both runs, as ((question, score) of A, (question, score) of B) in A's order."""
    check_pairable(run_a, run_b)
    b_index = _scored_index(run_b)
    return [(a, b_index[k]) for k, a in _scored_index(run_a).items() if k in b_index]


def unpaired_counts(run_a: LoadedRun, run_b: LoadedRun) -> tuple[int, int]:
    """Scored questions only A has, and only B has (left out of every comparison)."""
    check_pairable(run_a, run_b)
    a, b = _scored_index(run_a).keys(), _scored_index(run_b).keys()
    return len(a - b), len(b - a)


def qa_paired_frame(run_a: LoadedRun, run_b: LoadedRun) -> pd.DataFrame:
    """One row per question scored in both runs, in A's order.

    Columns: ``question_id, category`` (raw code), ``category_name, question, gold_answer,
    a_answer, b_answer, a_score, b_score`` (mean rescaled verdict score), ``a_correct, b_correct``
    (score >= 0.6), ``outcome`` (``both correct`` / ``A wins`` / ``B wins`` / ``both wrong``),
    ``a_failure, b_failure`` (``no answer`` / ``error`` / ``not judged``, or None).
    """
    rows = [
        {
            "question_id": qa.question_id,
            "category": qa.category,
            "category_name": qa.category_name,
            "question": qa.question,
            "gold_answer": qa.gold_answer,
            "a_answer": qa.answer,
            "b_answer": qb.answer,
            "a_score": sa.score,
            "b_score": sb.score,
            "a_correct": sa.correct,
            "b_correct": sb.correct,
            "outcome": OUTCOME_OF[sa.correct, sb.correct],
            "a_failure": sa.failure,
            "b_failure": sb.failure,
        }
        for (qa, sa), (qb, sb) in paired_questions(run_a, run_b)
    ]
    frame = pd.DataFrame(rows, columns=QA_PAIR_COLUMNS)
    frame["a_correct"] = frame["a_correct"].astype(bool)
    frame["b_correct"] = frame["b_correct"].astype(bool)
    frame["a_score"] = frame["a_score"].astype("float64")
    frame["b_score"] = frame["b_score"].astype("float64")
    return frame


QA_TERMS = Terms(
    items="questions",
    everything="all questions",
    verb="answers",
    how=" correctly",
    right="correct",
    search=("question_id", "question"),
    both_right="both_correct",
    both_wrong="both_wrong",
    outcome="accuracy",
    outcome_statistic="difference in share correct (A - B), correct = score >= 0.6",
    value="score",
    value_statistic="difference in mean score (A - B)",
    category_column=True,
    value_count=False,
)
"""The words of a QA comparison (statistics columns ``category``, ``accuracy_*`` = share correct, ``score_*``)."""


def outcome_table(pairs: list[tuple[Scored, Scored]]) -> pd.DataFrame:
    """The paired outcome table (:data:`memeval_core.explore.paired.TABLE_COLUMNS`) of :func:`paired_questions`.

    ``item`` is the question id, ``category`` A's raw category code (None: none), ``a``/``b`` correct, the values
    the scores; rows in A's order.
    """
    return pd.DataFrame(
        {
            "item": [qa.question_id for (qa, _), _ in pairs],
            "category": pd.Series([qa.category for (qa, _), _ in pairs], dtype=object),
            "a": np.array([sa.correct for (_, sa), _ in pairs], dtype=bool),
            "b": np.array([sb.correct for _, (_, sb) in pairs], dtype=bool),
            "a_value": np.array([sa.score for (_, sa), _ in pairs], dtype=np.float64),
            "b_value": np.array([sb.score for _, (_, sb) in pairs], dtype=np.float64),
        },
        columns=list(TABLE_COLUMNS),
    )


def _category_labels(pairs: list[tuple[Scored, Scored]]) -> dict[str, str]:
    """Each category's scope label: ``<code> <name>``, or the code alone without a name (A's first name met)."""
    names: dict[str, str | None] = {}
    for (q, _), _ in pairs:
        if q.category is not None:
            names.setdefault(q.category, q.category_name)
    return {code: f"{code} {name}" if name and name != code else code for code, name in names.items()}


def qa_compare_stats(
    run_a: LoadedRun,
    run_b: LoadedRun,
    *,
    seed: int,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    method: BootstrapMethod = "percentile",
) -> PairedReport:
    """McNemar on correctness, bootstrap intervals of share correct and mean score, Holm across categories.

    Questions without a category are in the overall scope only. Categories come in A's scoring order (numeric
    codes numerically, then the others by name).
    """
    pairs = paired_questions(run_a, run_b)
    if not pairs:
        raise ValueError(f"{_source(run_a)} and {_source(run_b)} have no scored question in common")
    only_a, only_b = unpaired_counts(run_a, run_b)
    return paired_stats(
        outcome_table(pairs),
        a=run_a.display_name,
        b=run_b.display_name,
        benchmark=run_a.meta.benchmark,
        terms=QA_TERMS,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        method=method,
        category_order=tuple(run_a.score.categories),
        category_labels=_category_labels(pairs),
        includes_adversarial=run_a.meta.includes_adversarial,
        only_a=only_a,
        only_b=only_b,
    )


@dataclass(frozen=True)
class QaSide:
    """One run's answer to an opened question."""

    display_name: str
    """The run."""
    answer: str | None
    """The generated answer (None: none)."""
    score: float
    """Mean rescaled verdict score (0 for a failure)."""
    correct: bool
    """``score >= 0.6``."""
    failure: str | None
    """``no answer`` / ``error`` / ``not judged``, or None."""
    error_message: str | None
    """What failed, when the harness says."""
    verdicts: pd.DataFrame
    """Every judge verdict: ``judge, score`` (raw), ``scale, rescaled, passes, model, label``."""


@dataclass(frozen=True)
class QaQuestionView:
    """One question opened for A and B."""

    question_id: str
    """Question id."""
    category: str | None
    """Raw category code."""
    category_name: str | None
    """Category name under memeval's convention."""
    question: str
    """The question."""
    gold_answer: str | None
    """The dataset's reference answer."""
    a: QaSide
    """A's answer and verdicts."""
    b: QaSide
    """B's answer and verdicts."""


def _side(run: LoadedRun, q: QaQuestion, s: QuestionScore) -> QaSide:
    verdicts = pd.DataFrame(
        [
            {
                "judge": v.judge,
                "score": v.score,
                "scale": v.scale,
                "rescaled": rescale(v),
                "passes": passes(v),
                "model": v.model,
                "label": v.label,
            }
            for v in q.verdicts
        ],
        columns=["judge", "score", "scale", "rescaled", "passes", "model", "label"],
    )
    return QaSide(run.display_name, q.answer, s.score, s.correct, s.failure, q.error_message, verdicts)


def qa_question_detail(run_a: LoadedRun, run_b: LoadedRun, question_id: str) -> QaQuestionView:
    """The question ``question_id`` for A and B: question, gold, both answers and every verdict."""
    for (qa, sa), (qb, sb) in paired_questions(run_a, run_b):
        if qa.question_id == question_id:
            return QaQuestionView(
                question_id=question_id,
                category=qa.category,
                category_name=qa.category_name,
                question=qa.question,
                gold_answer=qa.gold_answer if qa.gold_answer is not None else qb.gold_answer,
                a=_side(run_a, qa, sa),
                b=_side(run_b, qb, sb),
            )
    raise ValueError(f"question {question_id!r} is not scored in both {_source(run_a)} and {_source(run_b)}")


def default_pair(runs: Sequence[H]) -> tuple[H, H] | None:
    """The leader and the runner-up that can be paired, or None when no two runs can.

    Runs are ordered like the leaderboard: publishable first, then by accuracy (descending), then
    display name. A is the first run with a pairable partner, B its best pairable partner.
    """
    ordered = sorted(runs, key=lambda r: (not r.publishable, -(r.score.accuracy or 0.0), r.display_name))
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            try:
                check_pairable(a, b)
            except ValueError:
                continue
            return a, b
    return None
