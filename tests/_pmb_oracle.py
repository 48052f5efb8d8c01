"""The PMB re-scoring, aggregation and leaderboard rules written case by case and run by run: the oracle of the
columnar load.

A load re-scores a report over its entries' columns (:func:`memeval_core.pmb.rescore.single_turn_rows`,
``session_rows``), aggregates columns (``aggregate_columns``) and ranks a runs table in Arrow
(:func:`memeval_core.leaderboard.table_rows`). The functions here state the same rules over report models,
:class:`ScoredCase` objects and runs, one at a time; tests check that both give the same results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from memeval_core.latency import summarize
from memeval_core.leaderboard import sort_key
from memeval_core.pmb.assertions import check_case, unique
from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.models import Ingestion, RetrievalSummary, SessionReport, SingleTurnReport
from memeval_core.pmb.pass_types import PASS_TYPES, classify_pass
from memeval_core.pmb.rescore import (
    FIELD_NAMES,
    Aggregate,
    CategoryAggregate,
    ScoredCase,
    ScoredColumns,
    aggregate_columns,
)
from memeval_core.pmb.run import Benchmark, PmbRun, RunIdentity
from memeval_core.pmb.runs_table import row_of
from memeval_core.pmb.session import check_turn
from memeval_core.rounding import ms, ratio


def rescore_single_turn(report: SingleTurnReport, fixture: PmbFixture) -> tuple[ScoredCase, ...]:
    """Re-derive every case of a single-turn report (case ids must exist in the fixture), case by case.

    The readable form of what a load does over columns (:func:`memeval_core.pmb.rescore.single_turn_rows`); tests
    hold one to the other.
    """
    out: list[ScoredCase] = []
    for e in report.cases:
        case = fixture.case_by_id[e.case_id]
        chk = check_case(
            case, e.pinned_beliefs, e.relevant_beliefs, e.retrieved_questions, e.failures, fixture.pinned_in_seed
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
                relevant=tuple(unique(e.relevant_beliefs)),
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
    """Re-derive every turn of a session report, in (case, turn index) order, turn by turn (see
    :func:`rescore_single_turn`; a load does it over columns in :func:`memeval_core.pmb.rescore.session_rows`)."""
    out: list[ScoredCase] = []
    for e in sorted(report.cases, key=lambda e: (e.case_id, e.turn_index)):
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
                relevant=tuple(unique(e.retrieved_belief_ids)),
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


def columns_of(cases: Sequence[ScoredCase]) -> ScoredColumns:
    """The fields of ``cases`` as columns (field name -> that field of every case, in case order)."""
    return {name: tuple(getattr(c, name) for c in cases) for name in FIELD_NAMES}


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def aggregate(cases: Sequence[ScoredCase], *, stated_categories: bool = False) -> Aggregate:
    """Aggregate re-derived cases into run-level numbers, case by case: passes by type, means over non-null
    values, the latency summary, and categories largest first (ties: first appearance).

    ``stated_categories`` groups by the category each entry of the report states instead of the
    fixture's, which is how a report's own category block must be checked.
    """
    types: dict[str, int] = dict.fromkeys(PASS_TYPES, 0)
    by_cat: dict[str, list[ScoredCase]] = {}
    for c in cases:
        if c.pass_type is not None:
            types[c.pass_type] += 1
        by_cat.setdefault(c.stated_category if stated_categories else c.category, []).append(c)
    cats = [
        CategoryAggregate(
            category=k,
            cases=len(group),
            passed=sum(c.passed for c in group),
            mean_precision=_mean([c.precision for c in group]),
            mean_recall=_mean([c.recall for c in group]),
        )
        for k, group in sorted(by_cat.items(), key=lambda kv: -len(kv[1]))
    ]
    return Aggregate(
        cases=len(cases),
        passed=sum(c.passed for c in cases),
        pass_types=types,
        mean_precision=_mean([c.precision for c in cases]),
        mean_recall=_mean([c.recall for c in cases]),
        mean_drift=_mean([c.drift for c in cases]),
        latency=summarize([c.latency_ms for c in cases]),
        categories=tuple(cats),
    )


def table_from_cases(cases: Sequence[ScoredCase]) -> CaseTable:
    """The table of ``cases``, in order."""
    return CaseTable.from_columns(columns_of(cases))


def run_from_cases(
    identity: RunIdentity,
    cases: Sequence[ScoredCase],
    stated: RetrievalSummary,
    ingestion: Ingestion | None,
    mismatches: tuple[str, ...] = (),
    extra_fields: tuple[str, ...] = (),
) -> PmbRun:
    """A run from its re-derived cases: their table and aggregates (grouped by the fixture's categories)."""
    cols = columns_of(cases)
    return PmbRun(
        identity=identity,
        table=CaseTable.from_columns(cols),
        aggregate=aggregate_columns(cols),
        stated=stated,
        ingestion=ingestion,
        mismatches=mismatches,
        extra_fields=extra_fields,
    )


def _drift(r: dict[str, Any]) -> float | None:
    """A runs-table row's mean drift as a leaderboard shows it: session runs only."""
    return ratio(r["mean_drift"]) if r["benchmark"] == "pmb-session" else None


def leaderboard_row(r: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard row of one runs-table row (its columns as Python values)."""
    return {
        "run_id": r["run_id"],
        "display_name": r["display_name"],
        "provider": r["provider"],
        "benchmark": r["benchmark"],
        "cases": r["cases"],
        "passed": r["passed"],
        "pass_types": {name: r[name] for name in PASS_TYPES},
        "mean_precision": ratio(r["mean_precision"]),
        "mean_recall": ratio(r["mean_recall"]),
        "mean_drift": _drift(r),
        "latency_mean_ms": ms(r["latency_mean_ms"]),
        "latency_p50_ms": ms(r["latency_p50_ms"]),
        "latency_p95_ms": ms(r["latency_p95_ms"]),
        "ingestion_total_ms": ms(r["ingestion_total_ms"]),
        "verified": not r["mismatches"],
        "mismatches": r["mismatches"],
    }


def rank_key(r: dict[str, Any]) -> tuple[Any, ...]:
    """Single-turn runs first, then :func:`memeval_core.leaderboard.sort_key`."""
    return (r["benchmark"] != "pmb-single-turn", *sort_key(r))


def ranked(out: list[dict[str, Any]], benchmark: Benchmark | None) -> list[dict[str, Any]]:
    """Leaderboard rows of one benchmark (all when None), in rank order (:func:`rank_key`; ties keep their order)."""
    if benchmark is not None:
        out = [r for r in out if r["benchmark"] == benchmark]
    return sorted(out, key=rank_key)


def rows(runs: Sequence[PmbRun], benchmark: Benchmark | None = None) -> list[dict[str, Any]]:
    """Leaderboard rows of runs, best first, optionally for one benchmark: the rows of their runs-table rows,
    made in Python, one at a time: the readable oracle of :func:`memeval_core.leaderboard.table_rows`, which the
    CLI, app and export use."""
    return ranked([leaderboard_row(row_of(r)) for r in runs], benchmark)
