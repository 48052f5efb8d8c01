"""Re-score a PMB report from its raw returned ids against the fixture, and aggregate it.

Per-case scoring lives in :mod:`assertions` and :mod:`session`; this module applies it to every
entry of a report, given as columns, and aggregates the results the way ``buildRetrievalReport.ts`` does
(means over non-null values, nearest-rank latency percentiles, categories by case count).

tests/_pmb_oracle.py holds the same rules case by case, over report models and :class:`ScoredCase` objects; the
tests hold the column code here to it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from memeval_core.latency import LatencySummary, summarize
from memeval_core.pmb.assertions import check_fields
from memeval_core.pmb.entries import Columns
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.pass_types import PASS_TYPES, PassType, classify_pass
from memeval_core.pmb.session import check_prepared_turn


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


ScoredRow = tuple[Any, ...]
"""The fields of one :class:`ScoredCase`, in constructor order (``ScoredCase(*row)`` builds the object)."""

ScoredColumns = dict[str, tuple[Any, ...]]
"""Field name of :class:`ScoredCase` -> that field of every case, in case order."""

FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(ScoredCase))
"""The fields of :class:`ScoredCase`, in constructor order."""


def single_turn_rows(entries: Columns, fixture: PmbFixture) -> list[ScoredRow]:
    """Every case of a single-turn report re-derived (case ids must exist in the fixture), from the report's
    entries given as columns (see :mod:`~memeval_core.pmb.entries`), in report order, as rows: a load packs them
    into columns without a :class:`ScoredCase` each."""
    out: list[ScoredRow] = []
    prepared = fixture.prepared_cases
    for case_id, stated_category, pinned, returned, questions, stated_failures, latency, *stated in zip(
        entries["case_id"],
        entries["category"],
        entries["pinned_beliefs"],
        entries["relevant_beliefs"],
        entries["retrieved_questions"],
        entries["failures"],
        entries["retrieval_latency_ms"],
        entries["passed"],
        entries["retrieval_precision"],
        entries["retrieval_recall"],
        strict=True,
    ):
        case = prepared[case_id]
        category = case.category
        relevant, failures, persona, precision, recall, coverage = check_fields(
            case, pinned, returned, questions, stated_failures
        )
        passed = not failures and not persona  # as CaseCheck.passed has it
        stated_passed, stated_precision, stated_recall = stated
        out.append(
            (
                case_id,  # case_id
                None,  # turn_index
                "",  # label
                category,  # category
                stated_category or category,  # stated_category
                case.description,  # description
                tuple(pinned),  # pinned
                relevant,  # relevant
                tuple(questions),  # questions
                passed,  # passed
                classify_pass(passed, precision, category),  # pass_type
                precision,  # precision
                recall,  # recall
                coverage,  # pinned_coverage
                None,  # drift
                (),  # noise_ids
                not returned,  # returned_nothing
                failures + persona,  # failures
                persona,  # taken_from_report
                latency,  # latency_ms
                stated_passed,  # stated_passed
                stated_precision,  # stated_precision
                stated_recall,  # stated_recall
                tuple(stated_failures),  # stated_failures
                None,  # stated_drift
                (),  # stated_noise_ids
            )
        )
    return out


def turn_order(entries: Columns) -> list[int]:
    """Positions of a session report's entries in (case id, turn index) order."""
    keys = list(zip(entries["case_id"], entries["turn_index"], strict=True))
    return sorted(range(len(keys)), key=lambda i: keys[i])


def session_rows(entries: Columns, fixture: PmbFixture) -> list[ScoredRow]:
    """Every turn of a session report re-derived, from the report's entries given as columns, as rows, in
    (case, turn index) order."""
    out: list[ScoredRow] = []
    prepared = fixture.prepared_turns
    order = turn_order(entries)
    names = (
        "case_id",
        "turn_index",
        "category",
        "retrieved_belief_ids",
        "pinned_belief_ids",
        "retrieved_questions",
        "noise_belief_ids",
        "drift_score",
        "passed",
        "failures",
        "retrieval_latency_ms",
        "retrieval_precision",
        "retrieval_recall",
    )
    for (
        case_id,
        turn_index,
        category,
        returned,
        pinned,
        questions,
        stated_noise,
        stated_drift,
        stated_passed,
        stated_failures,
        latency,
        stated_precision,
        stated_recall,
    ) in zip(*picked(order, *(entries[name] for name in names)), strict=True):
        turn = prepared[(case_id, turn_index)]
        chk = check_prepared_turn(turn, returned, pinned, questions, stated_failures)
        out.append(
            (
                case_id,  # case_id
                turn_index,  # turn_index
                turn.label,  # label
                category,  # category
                category,  # stated_category
                turn.user_message,  # description
                tuple(pinned),  # pinned
                tuple(dict.fromkeys(returned)),  # relevant
                None if questions is None else tuple(questions),  # questions
                chk.passed,  # passed
                classify_pass(chk.passed, chk.precision, category),  # pass_type
                chk.precision,  # precision
                chk.recall,  # recall
                None,  # pinned_coverage
                chk.drift,  # drift
                chk.noise_ids,  # noise_ids
                chk.returned_nothing,  # returned_nothing
                chk.failures + chk.report_failures,  # failures
                chk.report_failures,  # taken_from_report
                latency,  # latency_ms
                stated_passed,  # stated_passed
                stated_precision,  # stated_precision
                stated_recall,  # stated_recall
                tuple(stated_failures),  # stated_failures
                stated_drift,  # stated_drift
                tuple(stated_noise),  # stated_noise_ids
            )
        )
    return out


def columns(rows: Sequence[ScoredRow]) -> ScoredColumns:
    """Rows transposed into one tuple per field."""
    if not rows:
        return dict.fromkeys(FIELD_NAMES, ())
    return dict(zip(FIELD_NAMES, zip(*rows, strict=True), strict=True))


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


def picked(rows: Sequence[int], *columns: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The values at ``rows`` of each column."""
    return [tuple(col[row] for row in rows) for col in columns]


AGGREGATED = ("category", "stated_category", "passed", "pass_type", "precision", "recall", "drift", "latency_ms")
"""The columns :func:`aggregate_columns` reads."""


def aggregate_columns(cols: ScoredColumns, *, stated_categories: bool = False) -> Aggregate:
    """Aggregate re-derived cases, given as columns, into run-level numbers: passes by type, means over non-null
    precisions, recalls and drifts, the latency summary, and per-category numbers, largest category first (ties:
    first appearance).

    ``stated_categories`` groups by the category each entry of the report states instead of the
    fixture's, which is how a report's own category block must be checked.
    """
    types: dict[str, int] = dict.fromkeys(PASS_TYPES, 0)
    for t, count in Counter(cols["pass_type"]).items():
        if t is not None:
            types[t] += count
    passed, precision, recall = cols["passed"], cols["precision"], cols["recall"]
    by_cat: dict[str, list[int]] = {}
    for i, k in enumerate(cols["stated_category" if stated_categories else "category"]):
        by_cat.setdefault(k, []).append(i)
    cats: list[CategoryAggregate] = []
    for k, rows in sorted(by_cat.items(), key=lambda kv: -len(kv[1])):
        ok, p, r = picked(rows, passed, precision, recall)
        cats.append(
            CategoryAggregate(
                category=k, cases=len(rows), passed=sum(ok), mean_precision=_mean(p), mean_recall=_mean(r)
            )
        )
    drifts = [d for d in cols["drift"] if d is not None]
    return Aggregate(
        cases=len(passed),
        passed=sum(passed),
        pass_types=types,
        mean_precision=_mean(precision),
        mean_recall=_mean(recall),
        mean_drift=math.fsum(drifts) / len(drifts) if drifts else None,
        latency=summarize(cols["latency_ms"]),
        categories=tuple(cats),
    )
