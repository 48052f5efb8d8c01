"""Compare two QA runs (LoCoMo, LongMemEval, ...) question by question: paired table, one question, statistics.

Two runs pair only when they are of the same benchmark and agree on ``includes_adversarial``
(whether LoCoMo category 5 is scored); otherwise :class:`ValueError` says why. Questions are paired
on ``question_id`` among the questions *scored* in both runs (a question outside a run's accuracy
denominator has nothing to compare); failures (no answer, error, not judged) score 0, count as
wrong and stay paired.

Per question (:mod:`memeval_core.qa.scoring`): ``score`` = mean rescaled verdict score in [0, 1];
``correct`` = ``score >= 0.6``.

Statistics (:func:`qa_compare_stats`), overall and per category, each with its method named:

- correctness: exact McNemar test (:mod:`memeval_core.stats.mcnemar`) with the discordant counts
  ``b`` (A correct, B wrong) and ``c`` (B correct, A wrong); across categories the p-values are
  Holm-adjusted (:mod:`memeval_core.stats.holm`);
- share correct: paired bootstrap interval of ``mean(correct_A) - mean(correct_B)``;
- mean score (the leaderboard's accuracy): paired bootstrap interval of ``mean(score_A) - mean(score_B)``.

Every bootstrap starts from ``numpy.random.default_rng(seed)`` afresh, so each category's interval
is reproducible on its own. "Statistically tied" = the interval includes zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memeval_core.explore.categories import ordered_categories
from memeval_core.explore.compare import PairFilter, Verdict, filter_pairs
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.models import QaQuestion
from memeval_core.qa.scoring import QuestionScore, passes, rescale
from memeval_core.stats.bootstrap import BootstrapMethod, BootstrapReport, paired_bootstrap
from memeval_core.stats.holm import holm_adjust
from memeval_core.stats.mcnemar import McNemarReport, mcnemar_exact

QA_OUTCOMES = ("both correct", "A wins", "B wins", "both wrong")
"""Outcome of a paired question: both correct, only A correct, only B correct, neither."""

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


def _source(run: LoadedRun) -> str:
    return run.run.run.source_file or run.run_id


def check_pairable(run_a: LoadedRun, run_b: LoadedRun) -> None:
    """Raise :class:`ValueError` unless A and B are of one benchmark and agree on scoring LoCoMo category 5."""
    ma, mb = run_a.run.run, run_b.run.run
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
    for q, s in zip(run.run.questions, run.score.questions, strict=True):
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


def filter_questions(frame: pd.DataFrame, which: PairFilter = "all", text: str = "") -> pd.DataFrame:
    """Rows of :func:`qa_paired_frame` matching an outcome filter and a text search.

    The filters of the PMB comparison (:func:`memeval_core.explore.compare.filter_pairs`), with
    correct in place of passed: ``all``; ``differences`` (exactly one correct); ``a_wins``;
    ``b_wins``; ``both_fail`` (both wrong). ``text``: case-insensitive literal substring of the
    question id or the question (blank matches everything).
    """
    # The same semantics as the PMB filter, so its code decides: rename, filter, keep the matching rows.
    renamed = frame[["question_id", "question", "a_correct", "b_correct"]].set_axis(
        ["case_id", "description", "a_passed", "b_passed"], axis=1
    )
    return frame.loc[filter_pairs(renamed, which, text).index]


@dataclass(frozen=True)
class QaPairedStats:
    """Statistics of A against B over one set of paired questions (all, or one category)."""

    scope: str
    """``all questions`` or the category (``<code> <name>``, or the code alone without a name)."""
    category: str | None
    """Raw category code; None for the overall scope."""
    n: int
    """Paired questions."""
    mcnemar: McNemarReport
    """Exact McNemar test on correctness (``b`` = A correct and B wrong, ``c`` = the reverse)."""
    holm_p: float | None
    """Categories: McNemar p Holm-adjusted across the categories; None for the overall scope."""
    accuracy: BootstrapReport
    """Paired bootstrap interval of the difference in share correct (A - B)."""
    score: BootstrapReport
    """Paired bootstrap interval of the difference in mean score (A - B), the leaderboard's accuracy."""


@dataclass(frozen=True)
class QaComparisonReport:
    """A against B on one QA benchmark, overall and per category, with the methods and their parameters."""

    a: str
    """Display name of A."""
    b: str
    """Display name of B."""
    benchmark: str
    """Benchmark compared."""
    includes_adversarial: bool | None
    """LoCoMo: category 5 is scored in both runs; None for other benchmarks."""
    only_a: int
    """Scored questions only A has (not compared)."""
    only_b: int
    """Scored questions only B has (not compared)."""
    seed: int
    """Seed of every bootstrap (``numpy.random.default_rng(seed)``)."""
    n_resamples: int
    """Bootstrap resamples."""
    alpha: float
    """Level: intervals have confidence ``1 - alpha``; McNemar verdicts use ``p < alpha``."""
    correct_test: str
    """Method of the test on correctness."""
    interval_method: str
    """Method of the bootstrap intervals."""
    multiple_testing: str
    """Adjustment across categories."""
    overall: QaPairedStats
    """All paired questions."""
    categories: tuple[QaPairedStats, ...]
    """One per category with paired questions, in A's scoring order (numeric codes numerically, then by name)."""


def _stats(
    scope: str,
    category: str | None,
    pairs: Sequence[tuple[Scored, Scored]],
    *,
    seed: int,
    n_resamples: int,
    alpha: float,
    method: BootstrapMethod,
) -> QaPairedStats:
    a_ok = [sa.correct for (_, sa), _ in pairs]
    b_ok = [sb.correct for _, (_, sb) in pairs]
    return QaPairedStats(
        scope=scope,
        category=category,
        n=len(pairs),
        mcnemar=mcnemar_exact(a_ok, b_ok, alpha=alpha),
        holm_p=None,
        accuracy=paired_bootstrap(
            np.array(a_ok, dtype=np.float64),
            np.array(b_ok, dtype=np.float64),
            statistic="difference in share correct (A - B), correct = score >= 0.6",
            seed=seed,
            n_resamples=n_resamples,
            alpha=alpha,
            method=method,
        ),
        score=paired_bootstrap(
            [sa.score for (_, sa), _ in pairs],
            [sb.score for _, (_, sb) in pairs],
            statistic="difference in mean score (A - B)",
            seed=seed,
            n_resamples=n_resamples,
            alpha=alpha,
            method=method,
        ),
    )


def qa_compare_stats(
    run_a: LoadedRun,
    run_b: LoadedRun,
    *,
    seed: int,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    method: BootstrapMethod = "percentile",
) -> QaComparisonReport:
    """McNemar on correctness, bootstrap intervals of share correct and mean score, Holm across categories.

    Questions without a category are in the overall scope only.
    """
    pairs = paired_questions(run_a, run_b)
    if not pairs:
        raise ValueError(f"{_source(run_a)} and {_source(run_b)} have no scored question in common")
    overall = _stats("all questions", None, pairs, seed=seed, n_resamples=n_resamples, alpha=alpha, method=method)
    by_cat: dict[str, list[tuple[Scored, Scored]]] = {}
    names: dict[str, str | None] = {}
    for p in pairs:
        q = p[0][0]
        if q.category is not None:
            by_cat.setdefault(q.category, []).append(p)
            names.setdefault(q.category, q.category_name)
    cats = []
    # A's score lists its categories in the scoring order (numeric codes numerically, then the others by name).
    for code in ordered_categories(by_cat, tuple(run_a.score.categories)):
        name = names[code]
        scope = f"{code} {name}" if name and name != code else code
        cats.append(_stats(scope, code, by_cat[code], seed=seed, n_resamples=n_resamples, alpha=alpha, method=method))
    adjusted = holm_adjust([s.mcnemar.p_value for s in cats])
    only_a, only_b = unpaired_counts(run_a, run_b)
    return QaComparisonReport(
        a=run_a.display_name,
        b=run_b.display_name,
        benchmark=run_a.run.run.benchmark,
        includes_adversarial=run_a.run.run.includes_adversarial,
        only_a=only_a,
        only_b=only_b,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        correct_test=overall.mcnemar.method,
        interval_method=overall.score.method,
        multiple_testing="Holm step-down over the categories' McNemar p-values",
        overall=overall,
        categories=tuple(
            QaPairedStats(s.scope, s.category, s.n, s.mcnemar, float(h), s.accuracy, s.score)
            for s, h in zip(cats, adjusted, strict=True)
        ),
    )


def qa_stats_frame(report: QaComparisonReport) -> pd.DataFrame:
    """The report as one row per scope (``all questions`` first, then categories).

    Columns: ``scope, category, n, both_correct, b, c, both_wrong, mcnemar_p, holm_p,
    accuracy_diff, accuracy_ci_low, accuracy_ci_high, accuracy_tied, score_diff, score_ci_low,
    score_ci_high, score_tied`` (accuracy = share correct; score = mean score).
    """
    rows = []
    for s in (report.overall, *report.categories):
        m = s.mcnemar
        rows.append(
            {
                "scope": s.scope,
                "category": s.category,
                "n": s.n,
                "both_correct": m.both_passed,
                "b": m.b,
                "c": m.c,
                "both_wrong": m.both_failed,
                "mcnemar_p": m.p_value,
                "holm_p": s.holm_p,
                **{
                    f"{name}_{field}": getattr(rep, attr)
                    for name, rep in (("accuracy", s.accuracy), ("score", s.score))
                    for field, attr in (("diff", "estimate"), ("ci_low", "ci_low"), ("ci_high", "ci_high"))
                },
                "accuracy_tied": s.accuracy.statistically_tied,
                "score_tied": s.score.statistically_tied,
            }
        )
    columns = [
        "scope",
        "category",
        "n",
        "both_correct",
        "b",
        "c",
        "both_wrong",
        "mcnemar_p",
        "holm_p",
        "accuracy_diff",
        "accuracy_ci_low",
        "accuracy_ci_high",
        "accuracy_tied",
        "score_diff",
        "score_ci_low",
        "score_ci_high",
        "score_tied",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame["holm_p"] = frame["holm_p"].astype("float64")
    return frame


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


def default_pair(runs: Sequence[LoadedRun]) -> tuple[LoadedRun, LoadedRun] | None:
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


def qa_verdict(report: QaComparisonReport) -> Verdict:
    """The verdict of a QA comparison: questions answered correctly, the share-correct gap and McNemar."""
    s = report.overall
    return Verdict(report.a, report.b, "questions", "answers", s.mcnemar, s.accuracy, how=" correctly")
