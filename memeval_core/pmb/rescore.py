"""Re-score a PMB report from its raw returned ids against the fixture, and aggregate it.

Per-case scoring lives in :mod:`assertions` and :mod:`session`; this module applies it to every
entry of a report and aggregates the results the way ``buildRetrievalReport.ts`` does (means over
non-null values, nearest-rank latency percentiles, categories by case count).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from memeval_core.latency import LatencySummary, summarize
from memeval_core.pmb.assertions import check_case
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.models import SessionReport, SingleTurnReport
from memeval_core.pmb.pass_types import PASS_TYPES, PassType, classify_pass
from memeval_core.pmb.session import check_turn


@dataclass(frozen=True)
class ScoredCase:
    """One single-turn case or session turn, re-derived, next to what the report stated."""

    case_id: str
    """Case id (session turns: the session case id)."""
    turn_index: int | None
    """Session turns: turn index; single-turn cases: None."""
    label: str
    """Session turns: turn label; single-turn cases: empty."""
    category: str
    """Category from the fixture (the benchmark's current truth)."""
    stated_category: str
    """Category as the report states it (differs when the report predates a fixture change)."""
    description: str
    """Case description from the fixture (session turns: the user message)."""
    pinned: tuple[str, ...]
    """Returned pinned ids."""
    relevant: tuple[str, ...]
    """Returned relevant ids, in returned order."""
    questions: tuple[str, ...] | None
    """Returned open-question ids; None when the report does not record them."""
    passed: bool
    """Re-derived verdict."""
    pass_type: PassType | None
    """Re-derived pass type; None when failed."""
    precision: float | None
    """Re-derived precision."""
    recall: float | None
    """Re-derived recall."""
    pinned_coverage: float | None
    """Re-derived pinned coverage (single-turn)."""
    drift: float | None
    """Harness drift (session turns); None for single-turn cases."""
    noise_ids: tuple[str, ...]
    """Noise ids that surfaced (session turns)."""
    returned_nothing: bool
    """The relevant tier came back empty."""
    failures: tuple[str, ...]
    """Re-derived failure messages, followed by those taken from the report."""
    taken_from_report: tuple[str, ...]
    """Failures that cannot be re-derived (persona prelude, unrecorded tiers): the report's word."""
    latency_ms: float
    """Retrieval latency of this case."""
    stated_passed: bool
    """What the report said about passing."""
    stated_precision: float | None
    """What the report said about precision."""
    stated_recall: float | None
    """What the report said about recall."""
    stated_failures: tuple[str, ...]
    """The report's failure messages."""
    stated_drift: float | None
    """Session turns: the report's drift score."""
    stated_noise_ids: tuple[str, ...]
    """Session turns: the report's noise ids."""


def rescore_single_turn(report: SingleTurnReport, fixture: PmbFixture) -> tuple[ScoredCase, ...]:
    """Re-derive every case of a single-turn report (case ids must exist in the fixture)."""
    out: list[ScoredCase] = []
    pinned_in_seed = fixture.pinned_in_seed
    for e in report.cases:
        case = fixture.case_by_id[e.case_id]
        chk = check_case(
            case,
            e.pinned_beliefs,
            e.relevant_beliefs,
            e.retrieved_questions,
            e.failures,
            pinned_in_seed,
        )
        out.append(
            ScoredCase(
                case_id=e.case_id,
                turn_index=None,
                label="",
                category=case.category,
                stated_category=e.category or case.category,
                description=case.description,
                pinned=tuple(e.pinned_beliefs),
                relevant=tuple(dict.fromkeys(e.relevant_beliefs)),
                questions=tuple(e.retrieved_questions),
                passed=chk.passed,
                pass_type=classify_pass(chk.passed, chk.precision, case.category),
                precision=chk.precision,
                recall=chk.recall,
                pinned_coverage=chk.pinned_coverage,
                drift=None,
                noise_ids=(),
                returned_nothing=not e.relevant_beliefs,
                failures=chk.failures + chk.persona_failures,
                taken_from_report=chk.persona_failures,
                latency_ms=e.retrieval_latency_ms,
                stated_passed=e.passed,
                stated_precision=e.retrieval_precision,
                stated_recall=e.retrieval_recall,
                stated_failures=tuple(e.failures),
                stated_drift=None,
                stated_noise_ids=(),
            )
        )
    return tuple(out)


def rescore_session(report: SessionReport, fixture: PmbFixture) -> tuple[ScoredCase, ...]:
    """Re-derive every turn of a session report, in (case, turn index) order."""
    out: list[ScoredCase] = []
    for e in sorted(report.cases, key=lambda x: (x.case_id, x.turn_index)):
        turn = fixture.turn_by_key[(e.case_id, e.turn_index)]
        chk = check_turn(turn, e.retrieved_belief_ids, e.pinned_belief_ids, e.retrieved_questions, e.failures)
        out.append(
            ScoredCase(
                case_id=e.case_id,
                turn_index=e.turn_index,
                label=turn.label,
                category=e.category,
                stated_category=e.category,
                description=turn.user_message,
                pinned=tuple(e.pinned_belief_ids),
                relevant=tuple(dict.fromkeys(e.retrieved_belief_ids)),
                questions=None if e.retrieved_questions is None else tuple(e.retrieved_questions),
                passed=chk.passed,
                pass_type=classify_pass(chk.passed, chk.precision, e.category),
                precision=chk.precision,
                recall=chk.recall,
                pinned_coverage=None,
                drift=chk.drift,
                noise_ids=chk.noise_ids,
                returned_nothing=chk.returned_nothing,
                failures=chk.failures + chk.report_failures,
                taken_from_report=chk.report_failures,
                latency_ms=e.retrieval_latency_ms,
                stated_passed=e.passed,
                stated_precision=e.retrieval_precision,
                stated_recall=e.retrieval_recall,
                stated_failures=tuple(e.failures),
                stated_drift=e.drift_score,
                stated_noise_ids=tuple(e.noise_belief_ids),
            )
        )
    return tuple(out)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


@dataclass(frozen=True)
class CategoryAggregate:
    """Re-derived aggregates of one category."""

    category: str
    """Category name."""
    cases: int
    """Cases (turns) in the category."""
    passed: int
    """Cases passed."""
    mean_precision: float | None
    """Mean of non-null precisions."""
    mean_recall: float | None
    """Mean of non-null recalls."""


@dataclass(frozen=True)
class Aggregate:
    """Re-derived aggregates of one run (unrounded)."""

    cases: int
    """Cases (single-turn) or turns (session) scored."""
    passed: int
    """Cases passed."""
    pass_types: dict[str, int]
    """Passes by type, keys as in :data:`PASS_TYPES`."""
    mean_precision: float | None
    """Mean of non-null precisions."""
    mean_recall: float | None
    """Mean of non-null recalls."""
    mean_drift: float | None
    """Session runs: mean harness drift over turns; None for single-turn runs."""
    latency: LatencySummary
    """Latency summary over cases."""
    categories: tuple[CategoryAggregate, ...]
    """Per-category aggregates, largest category first (ties: first appearance)."""

    @property
    def pass_rate(self) -> float | None:
        """passed / cases."""
        return self.passed / self.cases if self.cases else None


def aggregate(cases: Sequence[ScoredCase], *, stated_categories: bool = False) -> Aggregate:
    """Aggregate re-derived cases into run-level numbers.

    ``stated_categories`` groups by the category each entry of the report states instead of the
    fixture's, which is how a report's own category block must be checked.
    """
    types: dict[str, int] = dict.fromkeys(PASS_TYPES, 0)
    for c in cases:
        if c.pass_type is not None:
            types[c.pass_type] += 1
    by_cat: dict[str, list[ScoredCase]] = {}
    for c in cases:
        by_cat.setdefault(c.stated_category if stated_categories else c.category, []).append(c)
    cats = tuple(
        CategoryAggregate(
            category=k,
            cases=len(v),
            passed=sum(c.passed for c in v),
            mean_precision=_mean([c.precision for c in v]),
            mean_recall=_mean([c.recall for c in v]),
        )
        for k, v in sorted(by_cat.items(), key=lambda kv: -len(kv[1]))
    )
    drifts = [c.drift for c in cases if c.drift is not None]
    return Aggregate(
        cases=len(cases),
        passed=sum(c.passed for c in cases),
        pass_types=types,
        mean_precision=_mean([c.precision for c in cases]),
        mean_recall=_mean([c.recall for c in cases]),
        mean_drift=math.fsum(drifts) / len(drifts) if drifts else None,
        latency=summarize([c.latency_ms for c in cases]),
        categories=cats,
    )
