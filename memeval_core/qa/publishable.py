"""Whether a QA run may be published on the leaderboard: computed from the run, never set by hand.

Each benchmark declares a :class:`Protocol`; :func:`check` tests the run's metadata and scores
against it and returns every condition that fails. A run without a declared protocol is
diagnostic only.

LoCoMo protocol: every question of locomo10.json is scored - 1,540 (categories 1-4) or 1,986 (with
category 5), and the run says which; every question matched to the dataset; no sampling; no failed
question; answer model, top-k and judge stated; the judge is the reference judge of the mem0 LLM-judge
protocol (``gpt-4o-mini``), which EverMemOS, Zep and M-flow harnesses also use. LoCoMo has no single
reference k (published harnesses use 10, 30, 60), so k must be stated, not equal to a value.

LongMemEval protocol (S, M, oracle): all 500 questions; the reference judge of LongMemEval's own
``evaluate_qa.py`` (``gpt-4o-2024-08-06``, written ``gpt-4o`` by some harnesses); same other rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from memeval_core.qa import locomo
from memeval_core.qa.locomo import JoinReport
from memeval_core.qa.models import QaRun
from memeval_core.qa.scoring import RunScore


@dataclass(frozen=True)
class Protocol:
    """The declared conditions a benchmark's publishable runs meet."""

    benchmark: str
    """Benchmark id."""
    complete_with_adversarial: int
    """Scored questions of a complete run that includes the adversarial category (other benchmarks: all)."""
    complete_without_adversarial: int | None
    """Scored questions of a complete run without the adversarial category; None when not applicable."""
    reference_judges: frozenset[str]
    """Judge models accepted as the reference judge."""
    reference_top_k: int | None
    """Required k, or None when only a stated k is required."""
    needs_dataset_join: bool
    """Questions must be matched to the dataset file (LoCoMo)."""


PROTOCOLS: dict[str, Protocol] = {
    "locomo": Protocol(
        "locomo",
        locomo.TOTAL_QUESTIONS,
        locomo.TOTAL_WITHOUT_ADVERSARIAL,
        frozenset({"gpt-4o-mini"}),
        None,
        True,
    ),
    **{
        b: Protocol(b, 500, None, frozenset({"gpt-4o-2024-08-06", "gpt-4o"}), None, False)
        for b in ("longmemeval-s", "longmemeval-m", "longmemeval-oracle")
    },
}
"""Declared protocol per benchmark."""


def check(run: QaRun, score: RunScore, join: JoinReport | None = None) -> tuple[bool, list[str]]:
    """``(publishable, reasons)``: reasons lists every protocol condition the run fails (empty when publishable)."""
    meta = run.run
    protocol = PROTOCOLS.get(meta.benchmark)
    if protocol is None:
        return False, [f"no declared protocol for benchmark {meta.benchmark!r} (diagnostic only)"]
    reasons: list[str] = []
    if meta.sampled:
        reasons.append("the questions are a sample of the dataset")
    expected = protocol.complete_with_adversarial
    if protocol.complete_without_adversarial is not None:
        if meta.includes_adversarial is None:
            reasons.append("the run does not say whether category 5 (adversarial) is scored")
        elif not meta.includes_adversarial:
            expected = protocol.complete_without_adversarial
    if score.n_questions != expected:
        reasons.append(f"incomplete corpus: {score.n_questions} of {expected} questions scored")
    if protocol.needs_dataset_join:
        if join is None:
            reasons.append("not checked against the dataset (locomo10.json not found)")
        elif join.joined < join.total:
            reasons.append(f"{join.total - join.joined} of {join.total} questions not matched to the dataset")
    if score.failures:
        detail = ", ".join(f"{n} {why}" for why, n in sorted(score.failure_reasons.items()))
        reasons.append(f"{score.failures} failed questions ({detail})")
    if not meta.answer_model:
        reasons.append("answer model not stated")
    if meta.top_k is None:
        reasons.append("top-k not stated")
    elif protocol.reference_top_k is not None and meta.top_k != protocol.reference_top_k:
        reasons.append(f"top-k {meta.top_k} is not the reference k {protocol.reference_top_k}")
    if not meta.judge_models:
        reasons.append("judge model not stated")
    elif not set(meta.judge_models) <= protocol.reference_judges:
        other = sorted(set(meta.judge_models) - protocol.reference_judges)
        ref = ", ".join(sorted(protocol.reference_judges))
        reasons.append(f"judge {', '.join(other)} is not the reference judge ({ref})")
    return not reasons, reasons
