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
import pyarrow as pa

from memeval_core.explore.paired import TABLE_COLUMNS, PairedReport, Terms, paired_stats
from memeval_core.qa.ingest import LoadedRun, QaRunHeader
from memeval_core.qa.models import QaQuestion
from memeval_core.qa.scoring import passes, rescale
from memeval_core.qa.table import questions_from_table, scores_from_table
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

_SHARED = ["question_id", "category", "category_name", "question", "gold_answer"]
"""The columns of a paired question that are A's (the others come as ``a_<field>`` and ``b_<field>``)."""
_SIDES = ["answer", "score", "correct", "failure"]
"""The question table's columns that A and B each have in the paired frame."""
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


@dataclass(frozen=True)
class PairedQuestions:
    """The questions scored in both A and B, as A's and B's rows of their question tables, in A's order."""

    a: pa.Table
    """A's rows (:data:`memeval_core.qa.table.SCHEMA`)."""
    b: pa.Table
    """B's matching rows."""
    only_a: int
    """Scored questions only A has (left out of every comparison)."""
    only_b: int
    """Scored questions only B has."""


def _scored(run: LoadedRun) -> tuple[pa.Table, dict[str, int]]:
    """The run's scored questions and each one's row by question id; a ValueError naming the file when an id
    appears twice."""
    table = run.table.filter(run.table["scored"])
    rows: dict[str, int] = {}
    for row, question_id in enumerate(table["question_id"].to_pylist()):
        if rows.setdefault(question_id, row) != row:
            raise ValueError(f"{_source(run)}: question {question_id!r} appears twice")
    return table, rows


def paired_questions(run_a: LoadedRun, run_b: LoadedRun) -> PairedQuestions:
    """The questions scored in both runs (and how many only one of them scored)."""
    check_pairable(run_a, run_b)
    (table_b, rows_b), (table_a, rows_a) = _scored(run_b), _scored(run_a)
    rows = [(row, rows_b[k]) for k, row in rows_a.items() if k in rows_b]
    take_a, take_b = pa.array([a for a, _ in rows], pa.int64()), pa.array([b for _, b in rows], pa.int64())
    only_a, only_b = len(rows_a.keys() - rows_b.keys()), len(rows_b.keys() - rows_a.keys())
    return PairedQuestions(table_a.take(take_a), table_b.take(take_b), only_a, only_b)


def qa_paired_frame(run_a: LoadedRun, run_b: LoadedRun) -> pd.DataFrame:
    """One row per question scored in both runs, in A's order.

    Columns: ``question_id, category`` (raw code), ``category_name, question, gold_answer,
    a_answer, b_answer, a_score, b_score`` (mean rescaled verdict score), ``a_correct, b_correct``
    (score >= 0.6), ``outcome`` (``both correct`` / ``A wins`` / ``B wins`` / ``both wrong``),
    ``a_failure, b_failure`` (``no answer`` / ``error`` / ``not judged``, or None).
    """
    pairs = paired_questions(run_a, run_b)
    a, b = (side.select([*_SHARED, *_SIDES]).to_pydict() for side in (pairs.a, pairs.b))
    columns = {name: a[name] for name in _SHARED}
    columns.update({f"{x}_{name}": side[name] for name in _SIDES for x, side in (("a", a), ("b", b))})
    columns["outcome"] = [OUTCOME_OF[x, y] for x, y in zip(a["correct"], b["correct"], strict=True)]
    # Row by row, as records would be: each column's type is inferred from its values (no rows: all object).
    rows = list(zip(*(columns[name] for name in QA_PAIR_COLUMNS), strict=True))
    frame = pd.DataFrame(rows, columns=QA_PAIR_COLUMNS)
    return frame.astype({"a_correct": bool, "b_correct": bool, "a_score": "float64", "b_score": "float64"})


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


def outcome_table(pairs: PairedQuestions) -> pd.DataFrame:
    """The paired outcome table (:data:`memeval_core.explore.paired.TABLE_COLUMNS`) of :func:`paired_questions`.

    ``item`` is the question id, ``category`` A's raw category code (None: none), ``a``/``b`` correct, the values
    the scores; rows in A's order.
    """
    return pd.DataFrame(
        {
            "item": pairs.a["question_id"].to_pylist(),
            "category": pd.Series(pairs.a["category"].to_pylist(), dtype=object),
            "a": np.array(pairs.a["correct"].to_pylist(), dtype=bool),
            "b": np.array(pairs.b["correct"].to_pylist(), dtype=bool),
            "a_value": np.array(pairs.a["score"].to_pylist(), dtype=np.float64),
            "b_value": np.array(pairs.b["score"].to_pylist(), dtype=np.float64),
        },
        columns=list(TABLE_COLUMNS),
    )


def _category_labels(pairs: PairedQuestions) -> dict[str, str]:
    """Each category's scope label: ``<code> <name>``, or the code alone without a name (A's first name met)."""
    names: dict[str, str | None] = {}
    for code, name in zip(pairs.a["category"].to_pylist(), pairs.a["category_name"].to_pylist(), strict=True):
        if code is not None:
            names.setdefault(code, name)
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
    if not pairs.a.num_rows:
        raise ValueError(f"{_source(run_a)} and {_source(run_b)} have no scored question in common")
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
        only_a=pairs.only_a,
        only_b=pairs.only_b,
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


def _side(run: LoadedRun, row: pa.Table) -> tuple[QaQuestion, QaSide]:
    """The question in the one-row table ``row`` of ``run``'s questions, and the run's answer to it."""
    (q,), (s,) = questions_from_table(row), scores_from_table(row)
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
    return q, QaSide(run.display_name, q.answer, s.score, s.correct, s.failure, q.error_message, verdicts)


def qa_question_detail(run_a: LoadedRun, run_b: LoadedRun, question_id: str) -> QaQuestionView:
    """The question ``question_id`` for A and B: question, gold, both answers and every verdict."""
    pairs = paired_questions(run_a, run_b)
    rows = pairs.a["question_id"].to_pylist()
    if question_id in rows:
        row = rows.index(question_id)
        (qa, a), (qb, b) = _side(run_a, pairs.a.slice(row, 1)), _side(run_b, pairs.b.slice(row, 1))
        gold = qa.gold_answer if qa.gold_answer is not None else qb.gold_answer
        return QaQuestionView(question_id, qa.category, qa.category_name, qa.question, gold, a, b)
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
