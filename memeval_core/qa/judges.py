"""How far the judges of QA runs agree, and whether the ranking of runs depends on the judge.

Inputs are scored runs (:class:`memeval_core.qa.ingest.LoadedRun`) whose questions carry verdicts
of two or more judges. Everything is re-derived from the verdicts:

- **Accuracy per judge** (:func:`judge_accuracy`): the run's accuracy under one judge alone,
  ``Σ_q s_qj / n_j`` over scored questions the judge graded plus every failed question (which scores 0
  under every judge, as in :mod:`memeval_core.qa.scoring`); ``s_qj`` is the rescaled score.
- **Agreement** (:func:`agreement`) over the *items* (scored questions) that at least two judges graded.
  Verdicts are compared as pass/fail (rescaled score >= 0.6, see :data:`memeval_core.qa.scoring.PASS_THRESHOLD`):
  raw agreement (mean share of agreeing judge pairs per item), unanimity, Cohen's kappa per judge pair,
  Fleiss' kappa (items with every judge's verdict), Krippendorff's alpha (nominal). For graded judges
  (any scale other than binary) Krippendorff's alpha (interval) is also computed on the rescaled scores.
  Formulas: :mod:`memeval_core.agreement`. Each statistic has a percentile bootstrap interval over items
  (:mod:`memeval_core.agreement.intervals`) with an explicit seed, number of resamples and alpha.
- **Rankings** (:func:`ranking`): runs of one benchmark that share a judge panel and agree on
  ``includes_adversarial`` are ranked under each judge (rank = 1 + runs with a strictly higher accuracy);
  for each judge pair: Kendall's tau-b between the two accuracy vectors, its bootstrap interval over
  questions, and whether the leader changes (:func:`memeval_core.agreement.rank_correlation.leader_changes`).
- **Disagreements** (:func:`disagreements`): scored questions whose judges do not all give the same pass/fail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from memeval_core.agreement.intervals import BootstrapReport, agreement_terms, bootstrap_kendall_tau, bootstrap_many
from memeval_core.agreement.kappa import FloatArray, ItemTerms, cohen_kappa_terms
from memeval_core.agreement.rank_correlation import LeaderChanges, leader_changes
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.models import Verdict
from memeval_core.qa.scoring import PASS_THRESHOLD, passes, rescale


def _judges(runs: Sequence[LoadedRun]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(j for r in runs for j in r.score.judges))


def is_multi_judge(run: LoadedRun) -> bool:
    """The run has at least one scored question graded by two or more judges."""
    return any(q.scored and len(q.verdicts) >= 2 for q in run.run.questions)


def panel_key(run: LoadedRun) -> tuple[str, bool | None, tuple[str, ...]]:
    """Runs are compared only within a panel: same benchmark, same ``includes_adversarial``, same judges."""
    return (run.meta.benchmark, run.meta.includes_adversarial, tuple(sorted(run.score.judges)))


def panel_label(key: tuple[str, bool | None, tuple[str, ...]]) -> str:
    """``benchmark (with/without category 5): judge, judge`` for a :func:`panel_key`."""
    benchmark, adversarial, judges = key
    adv = "" if adversarial is None else f" ({'with' if adversarial else 'without'} category 5)"
    return f"{benchmark}{adv}: {', '.join(judges)}"


def panels(runs: Sequence[LoadedRun]) -> dict[tuple[str, bool | None, tuple[str, ...]], tuple[LoadedRun, ...]]:
    """Multi-judge runs grouped by :func:`panel_key`, in first-seen order."""
    out: dict[tuple[str, bool | None, tuple[str, ...]], list[LoadedRun]] = {}
    for r in runs:
        if is_multi_judge(r):
            out.setdefault(panel_key(r), []).append(r)
    return {k: tuple(v) for k, v in out.items()}


# ------------------------------------------------------------------ accuracy per judge


@dataclass(frozen=True)
class JudgeAccuracy:
    """The accuracy one judge assigns to one run."""

    run_id: str
    """Run id."""
    display_name: str
    """Run display name."""
    judge: str
    """Judge (verdict source) name."""
    n_graded: int
    """Scored questions this judge graded (failed questions are counted in ``n`` but need no verdict)."""
    n: int
    """Questions in this judge's denominator: graded plus failed."""
    accuracy: float | None
    """Mean rescaled score over the ``n`` questions (failures 0); None when ``n`` is 0."""
    pass_rate: float | None
    """Share of the ``n`` questions this judge passes (rescaled score >= 0.6; failures fail)."""


def judge_accuracy(run: LoadedRun) -> tuple[JudgeAccuracy, ...]:
    """Accuracy under each judge of the run alone (see the module docstring), in the run's judge order."""
    out = []
    pairs = [(q, s) for q, s in zip(run.run.questions, run.question_scores, strict=True) if s.scored]
    for j in run.score.judges:
        scores: list[float] = []
        passed = 0
        graded = 0
        for q, s in pairs:
            v = next((v for v in q.verdicts if v.judge == j), None)
            if v is not None:
                graded += 1
            if s.failure is not None:
                scores.append(0.0)
            elif v is not None:
                scores.append(rescale(v))
                passed += passes(v)
        n = len(scores)
        out.append(
            JudgeAccuracy(
                run_id=run.run_id,
                display_name=run.display_name,
                judge=j,
                n_graded=graded,
                n=n,
                accuracy=math.fsum(scores) / n if n else None,
                pass_rate=passed / n if n else None,
            )
        )
    return tuple(out)


# ------------------------------------------------------------------ verdict matrices and agreement


@dataclass(frozen=True, eq=False)
class VerdictMatrix:
    """Verdicts of several judges on the same items, as an ``(items x judges)`` array."""

    name: str
    """What the items are (a run's display name, or a pooled label)."""
    judges: tuple[str, ...]
    """Column order."""
    scores: FloatArray
    """Rescaled scores in [0, 1]; NaN where the judge gave no verdict."""
    graded: bool
    """Some verdict uses a scale other than binary (0-5 rubric or a unit score)."""

    @property
    def passes(self) -> FloatArray:
        """1.0 where the verdict passes (rescaled >= 0.6), 0.0 where it fails, NaN where missing."""
        out: FloatArray = np.where(
            np.isnan(self.scores), np.nan, (self.scores >= PASS_THRESHOLD - 1e-12).astype(np.float64)
        )
        return out


def _row(verdicts: Sequence[Verdict], judges: Sequence[str]) -> list[float]:
    by_judge = {v.judge: rescale(v) for v in verdicts}
    return [by_judge.get(j, math.nan) for j in judges]


def verdict_matrix(runs: Sequence[LoadedRun], name: str | None = None) -> VerdictMatrix:
    """Items of ``runs`` (scored questions with 2+ verdicts) by judge; judges in first-seen order.

    Raw verdicts are used even on failed questions (no answer, error): agreement is about what the
    judges said, accuracy is what counts failures as 0.
    """
    if not runs:
        raise ValueError("verdict_matrix needs at least one run")
    judges = _judges(runs)
    rows: list[list[float]] = []
    graded = False
    for r in runs:
        for q in r.run.questions:
            if q.scored and len(q.verdicts) >= 2:
                rows.append(_row(q.verdicts, judges))
                graded = graded or any(v.scale != "binary" for v in q.verdicts)
    matrix = np.array(rows, dtype=np.float64).reshape(len(rows), len(judges))
    label = name if name is not None else (runs[0].display_name if len(runs) == 1 else f"{len(runs)} runs pooled")
    return VerdictMatrix(label, judges, matrix, graded)


@dataclass(frozen=True)
class PairAgreement:
    """Two judges compared on the items both graded."""

    judge_a: str
    """First judge."""
    judge_b: str
    """Second judge."""
    n_items: int
    """Items both graded."""
    agreement: float
    """Share of those items with the same pass/fail."""
    kappa: BootstrapReport
    """Cohen's kappa on pass/fail with its bootstrap interval."""


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of one judge panel on one set of items, every statistic with its bootstrap interval."""

    name: str
    """What the items are (run display name or pooled label)."""
    judges: tuple[str, ...]
    """The judges compared."""
    n_items: int
    """Items with at least two verdicts."""
    n_complete: int
    """Items with every judge's verdict (Fleiss' kappa uses only these)."""
    n_unanimous: int
    """Items whose verdicts all give the same pass/fail."""
    graded: bool
    """Some verdict is graded (not binary): Krippendorff's interval alpha is computed on the scores."""
    raw_agreement: BootstrapReport
    """Mean share of agreeing judge pairs per item (pass/fail)."""
    unanimity: BootstrapReport
    """Share of items with unanimous pass/fail."""
    fleiss_kappa: BootstrapReport
    """Fleiss' kappa on pass/fail over complete items."""
    krippendorff_alpha_nominal: BootstrapReport
    """Krippendorff's alpha, nominal, on pass/fail."""
    krippendorff_alpha_interval: BootstrapReport | None
    """Krippendorff's alpha, interval, on rescaled scores (graded judges only)."""
    pairs: tuple[PairAgreement, ...]
    """Cohen's kappa for each pair of judges."""
    seed: int
    """Bootstrap seed."""
    n_resamples: int
    """Bootstrap resamples."""
    alpha: float
    """Two-sided level of every interval."""


def agreement(matrix: VerdictMatrix, *, seed: int, n_resamples: int, alpha: float) -> AgreementReport:
    """Every agreement statistic of ``matrix`` with percentile bootstrap intervals over items (same seed each)."""
    if matrix.scores.shape[1] < 2:
        raise ValueError(f"{matrix.name}: agreement needs at least two judges, got {list(matrix.judges)}")
    p = matrix.passes
    present = ~np.isnan(p)
    usable = present.sum(axis=1) >= 2
    decided = np.where(present, p, 0.0)
    n_pass = decided.sum(axis=1)
    n_present = present.sum(axis=1)
    unanimous = usable & ((n_pass == 0) | (n_pass == n_present))

    pair_idx = list(combinations(range(len(matrix.judges)), 2))
    pair_terms = [cohen_kappa_terms(p[:, a], p[:, b]) for a, b in pair_idx]
    named: list[ItemTerms] = [
        agreement_terms(p, "raw_agreement"),
        agreement_terms(p, "unanimity"),
        agreement_terms(p, "fleiss_kappa"),
        agreement_terms(p, "krippendorff_alpha_nominal"),
    ]
    if matrix.graded:
        named.append(agreement_terms(matrix.scores, "krippendorff_alpha_interval"))
    reports = bootstrap_many([*named, *pair_terms], seed=seed, n_resamples=n_resamples, alpha=alpha)
    pairs = []
    for (a, b), terms, report in zip(pair_idx, pair_terms, reports[len(named) :], strict=True):
        agree = float(terms.features[:, 1].mean()) if terms.n_items else math.nan
        pairs.append(PairAgreement(matrix.judges[a], matrix.judges[b], terms.n_items, agree, report))
    return AgreementReport(
        name=matrix.name,
        judges=matrix.judges,
        n_items=int(usable.sum()),
        n_complete=int(present.all(axis=1).sum()),
        n_unanimous=int(unanimous.sum()),
        graded=matrix.graded,
        raw_agreement=reports[0],
        unanimity=reports[1],
        fleiss_kappa=reports[2],
        krippendorff_alpha_nominal=reports[3],
        krippendorff_alpha_interval=reports[4] if matrix.graded else None,
        pairs=tuple(pairs),
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
    )


def agreement_rows(report: AgreementReport) -> list[dict[str, Any]]:
    """One row per statistic (Cohen's kappa: one per pair): scope, statistic, judges, items, estimate, interval."""

    def one(statistic: str, judges: str, b: BootstrapReport) -> dict[str, Any]:
        return {
            "scope": report.name,
            "statistic": statistic,
            "judges": judges,
            "n_items": b.n_items,
            "estimate": b.estimate,
            "ci_low": b.low,
            "ci_high": b.high,
            "standard_error": b.standard_error,
            "n_undefined": b.n_undefined,
        }

    all_judges = ", ".join(report.judges)
    out = [
        one("raw_agreement", all_judges, report.raw_agreement),
        one("unanimity", all_judges, report.unanimity),
        *(one("cohen_kappa", f"{p.judge_a} vs {p.judge_b}", p.kappa) for p in report.pairs),
        one("fleiss_kappa", all_judges, report.fleiss_kappa),
        one("krippendorff_alpha_nominal", all_judges, report.krippendorff_alpha_nominal),
    ]
    if report.krippendorff_alpha_interval is not None:
        out.append(one("krippendorff_alpha_interval", all_judges, report.krippendorff_alpha_interval))
    return out


# ------------------------------------------------------------------ rankings under each judge


@dataclass(frozen=True)
class JudgePairRanking:
    """The rankings of the same runs under two judges, compared."""

    judge_a: str
    """First judge."""
    judge_b: str
    """Second judge."""
    changes: LeaderChanges
    """Leaders under each judge, swapped pairs and Kendall's tau-b (runs named by run id)."""
    tau_interval: BootstrapReport | None
    """Bootstrap interval of tau-b over questions (None with fewer than 3 runs)."""


@dataclass(frozen=True)
class JudgeRanking:
    """Runs of one judge panel ranked under each judge."""

    panel: str
    """Panel label (:func:`panel_label`)."""
    judges: tuple[str, ...]
    """The judges, sorted."""
    run_ids: tuple[str, ...]
    """The runs, in the order of the first judge's ranking."""
    display_names: dict[str, str]
    """Run id -> display name."""
    accuracy: dict[str, dict[str, float]]
    """Judge -> run id -> accuracy under that judge."""
    rank: dict[str, dict[str, int]]
    """Judge -> run id -> rank under that judge (1 = best; ties share the best rank)."""
    pairs: tuple[JudgePairRanking, ...]
    """Every judge pair compared."""

    @property
    def leader_changed(self) -> bool:
        """The top run differs between at least one pair of judges."""
        return any(p.changes.leader_changed for p in self.pairs)


def _ranks(scores: dict[str, float]) -> dict[str, int]:
    return {r: 1 + sum(v > s for v in scores.values()) for r, s in scores.items()}


def _item_scores(runs: Sequence[LoadedRun], judge: str) -> FloatArray:
    """``(questions x runs)`` per-question scores under ``judge``: failures 0, ungraded NaN; union of questions."""
    ids = dict.fromkeys(s.question_id for r in runs for s in r.question_scores if s.scored)
    index = {q: i for i, q in enumerate(ids)}
    out = np.full((len(index), len(runs)), np.nan)
    for c, r in enumerate(runs):
        for s in r.question_scores:
            if not s.scored:
                continue
            if s.failure is not None:
                out[index[s.question_id], c] = 0.0
            elif judge in s.per_judge:
                out[index[s.question_id], c] = s.per_judge[judge]
    return out


def ranking(runs: Sequence[LoadedRun], *, seed: int, n_resamples: int, alpha: float) -> JudgeRanking:
    """Rank ``runs`` (one panel, 2+ runs) under each judge and compare every judge pair.

    The tau interval resamples questions (by question id, shared across runs) and ranks runs by their
    mean score under each judge in every resample; a run without a score in a resample leaves it undefined.
    """
    if len(runs) < 2:
        raise ValueError("ranking needs at least two runs")
    keys = {panel_key(r) for r in runs}
    if len(keys) != 1:
        raise ValueError(f"runs of different panels cannot be ranked together: {sorted(map(panel_label, keys))}")
    judges = next(iter(keys))[2]
    accuracy: dict[str, dict[str, float]] = {}
    for j in judges:
        accuracy[j] = {}
        for r in runs:
            acc = next(a.accuracy for a in judge_accuracy(r) if a.judge == j)
            if acc is None:
                raise ValueError(f"run {r.run_id} has no question in the denominator of judge {j}")
            accuracy[j][r.run_id] = acc
    ranks = {j: _ranks(accuracy[j]) for j in judges}
    pairs = []
    matrices = {j: _item_scores(runs, j) for j in judges}
    for a, b in combinations(judges, 2):
        changes = leader_changes(accuracy[a], accuracy[b])
        interval = None
        if len(runs) >= 3:
            interval = bootstrap_kendall_tau(matrices[a], matrices[b], seed=seed, n_resamples=n_resamples, alpha=alpha)
        pairs.append(JudgePairRanking(a, b, changes, interval))
    first = judges[0]
    order = sorted((r.run_id for r in runs), key=lambda rid: (ranks[first][rid], rid))
    return JudgeRanking(
        panel=panel_label(next(iter(keys))),
        judges=judges,
        run_ids=tuple(order),
        display_names={r.run_id: r.display_name for r in runs},
        accuracy=accuracy,
        rank=ranks,
        pairs=tuple(pairs),
    )


# ------------------------------------------------------------------ questions where judges disagree


@dataclass(frozen=True)
class Disagreement:
    """A scored question whose judges do not all give the same pass/fail."""

    run_id: str
    """Run id."""
    display_name: str
    """Run display name."""
    question_id: str
    """Question id."""
    category: str | None
    """Raw category code."""
    category_name: str | None
    """Category name under memeval's convention."""
    question: str
    """Question text."""
    gold_answer: str | None
    """Reference answer."""
    answer: str | None
    """The system's answer."""
    verdicts: dict[str, float]
    """Judge -> raw score as the judge gave it."""
    rescaled: dict[str, float]
    """Judge -> rescaled score in [0, 1]."""
    passed_by: tuple[str, ...]
    """Judges whose verdict passes."""
    failed_by: tuple[str, ...]
    """Judges whose verdict fails."""

    @property
    def spread(self) -> float:
        """Highest minus lowest rescaled score."""
        return max(self.rescaled.values()) - min(self.rescaled.values())


def disagreements(run: LoadedRun) -> tuple[Disagreement, ...]:
    """Every scored question with 2+ verdicts that are not unanimous on pass/fail, in run order."""
    out = []
    for q in run.run.questions:
        if not q.scored or len(q.verdicts) < 2:
            continue
        passed = tuple(v.judge for v in q.verdicts if passes(v))
        failed = tuple(v.judge for v in q.verdicts if not passes(v))
        if passed and failed:
            out.append(
                Disagreement(
                    run_id=run.run_id,
                    display_name=run.display_name,
                    question_id=q.question_id,
                    category=q.category,
                    category_name=q.category_name,
                    question=q.question,
                    gold_answer=q.gold_answer,
                    answer=q.answer,
                    verdicts={v.judge: v.score for v in q.verdicts},
                    rescaled={v.judge: rescale(v) for v in q.verdicts},
                    passed_by=passed,
                    failed_by=failed,
                )
            )
    return tuple(out)
