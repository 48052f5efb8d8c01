"""Verification: every number a report states about itself, compared with the re-derived one.

A stated aggregate is rounded the way the harness rounds (4 decimals for ratios, 2 for mean
latency); the re-derived value is rounded the same way before comparing. Per-case verdicts,
precision, recall, failure lists, drift and noise ids are compared too. Each mismatch is one
sentence naming the JSON path, the stated and the re-derived value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memeval_core.pmb.assertions import normalize_failure
from memeval_core.pmb.models import Ingestion, RetrievalSummary
from memeval_core.pmb.rescore import Aggregate, ScoredCase
from memeval_core.rounding import js_round, ms, ratio

TOLERANCE = 1e-9


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.10g}"
    return "null" if value is None else str(value)


def _same(stated: float | int | None, derived: float | int | None) -> bool:
    if stated is None or derived is None:
        return stated is None and derived is None
    return math.isclose(float(stated), float(derived), rel_tol=0, abs_tol=TOLERANCE)


class _Mismatches:
    def __init__(self) -> None:
        self.items: list[str] = []

    def check(self, path: str, stated: float | int | None, derived: float | int | None) -> None:
        if not _same(stated, derived):
            self.items.append(f"{path}: stated {_fmt(stated)}, re-derived {_fmt(derived)}")

    def check_if_stated(self, path: str, stated: float | int | None, derived: float | int | None) -> None:
        if stated is not None:
            self.check(path, stated, derived)


def verify_summary(stated: RetrievalSummary, derived: Aggregate, session: bool) -> list[str]:
    """Mismatches between a report's stated ``retrieval`` block and the re-derived aggregate."""
    m = _Mismatches()
    r = "$.retrieval"
    m.check_if_stated(f"{r}.totalPassed", stated.total_passed, derived.passed)
    m.check_if_stated(f"{r}.totalCases", stated.total_cases, derived.cases)
    if session:
        m.check_if_stated(f"{r}.turnCount", stated.turn_count, derived.cases)
    m.check_if_stated(f"{r}.passRate", stated.pass_rate, ratio(derived.pass_rate))
    m.check_if_stated(
        f"{r}.activeRetrievalPasses", stated.active_retrieval_passes, derived.pass_types["active_retrieval"]
    )
    if stated.pass_types is not None:
        m.check(
            f"{r}.passTypes.activeRetrieval", stated.pass_types.active_retrieval, derived.pass_types["active_retrieval"]
        )
        m.check(f"{r}.passTypes.structural", stated.pass_types.structural, derived.pass_types["structural"])
        m.check(
            f"{r}.passTypes.triviallyEmpty", stated.pass_types.trivially_empty, derived.pass_types["trivially_empty"]
        )
    # A null stated mean is a statement too (no non-null values), so these are always compared.
    m.check(f"{r}.meanPrecision", stated.mean_precision, ratio(derived.mean_precision))
    m.check(f"{r}.meanRecall", stated.mean_recall, ratio(derived.mean_recall))
    m.check_if_stated(f"{r}.meanLatencyMs", stated.mean_latency_ms, ms(derived.latency.mean_ms))
    m.check_if_stated(f"{r}.p50LatencyMs", stated.p50_latency_ms, derived.latency.p50_ms)
    m.check_if_stated(f"{r}.p95LatencyMs", stated.p95_latency_ms, derived.latency.p95_ms)
    derived_cats = {c.category: c for c in derived.categories}
    for i, sc in enumerate(stated.categories):
        p = f"{r}.categories[{i}]"
        dc = derived_cats.get(sc.category)
        if dc is None:
            m.items.append(f"{p}: category {sc.category!r} is stated but no reported case has it")
            continue
        m.check(f"{p}.caseCount", sc.case_count, dc.cases)
        m.check(f"{p}.passed", sc.passed, dc.passed)
        m.check(f"{p}.failed", sc.failed, dc.cases - dc.passed)
        m.check(f"{p}.meanPrecision", sc.mean_precision, ratio(dc.mean_precision))
        m.check(f"{p}.meanRecall", sc.mean_recall, ratio(dc.mean_recall))
    if stated.categories:
        for name in sorted(set(derived_cats) - {c.category for c in stated.categories}):
            m.items.append(f"{r}.categories: category {name!r} has cases but is not stated")
    return m.items


def verify_ingestion(ing: Ingestion) -> list[str]:
    """Mismatches between stated ingestion totals and the per-belief timings."""
    m = _Mismatches()
    if not ing.per_belief:
        return []
    lat = [b.latency_ms for b in ing.per_belief]
    total = math.fsum(lat)
    m.check("$.ingestion.beliefCount", ing.belief_count, len(lat))
    m.check("$.ingestion.totalMs", ing.total_ms, js_round(total, 2))
    m.check("$.ingestion.meanPerBeliefMs", ing.mean_per_belief_ms, js_round(total / len(lat), 2))
    return m.items


def verify_cases(cases: Sequence[ScoredCase], entry_index: dict[tuple[str, int | None], int]) -> list[str]:
    """Mismatches between each case's stated verdict/metrics and the re-derived ones."""
    m = _Mismatches()
    for c in cases:
        p = f"$.cases[{entry_index[(c.case_id, c.turn_index)]}]"
        if c.stated_passed != c.passed:
            m.items.append(
                f"{p}.passed ({c.case_id}): stated {str(c.stated_passed).lower()}, re-derived {str(c.passed).lower()}"
            )
        m.check(f"{p}.retrievalPrecision ({c.case_id})", c.stated_precision, c.precision)
        m.check(f"{p}.retrievalRecall ({c.case_id})", c.stated_recall, c.recall)
        stated_failures = sorted(normalize_failure(f) for f in c.stated_failures)
        if stated_failures != sorted(c.failures):
            extra = sorted(set(stated_failures) - set(c.failures))
            missing = sorted(set(c.failures) - set(c.stated_failures))
            m.items.append(
                f"{p}.failures ({c.case_id}): stated but not re-derived {extra}, re-derived but not stated {missing}"
            )
        if c.turn_index is not None:
            m.check(f"{p}.driftScore ({c.case_id} turn {c.turn_index})", c.stated_drift, c.drift)
            if sorted(c.stated_noise_ids) != sorted(c.noise_ids):
                m.items.append(
                    f"{p}.noiseBeliefIds ({c.case_id} turn {c.turn_index}): "
                    f"stated {sorted(c.stated_noise_ids)}, re-derived {sorted(c.noise_ids)}"
                )
    return m.items
