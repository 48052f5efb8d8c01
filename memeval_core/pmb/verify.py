"""Verification: every number a report states about itself, compared with the re-derived one.

A stated aggregate is rounded the way the harness rounds (4 decimals for ratios, 2 for mean
latency); the re-derived value is rounded the same way before comparing. Per-case verdicts,
precision, recall, failure lists, drift and noise ids are compared too. Each mismatch is one
sentence naming the JSON path, the stated and the re-derived value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from memeval_core.pmb.assertions import normalize_failure
from memeval_core.pmb.models import Ingestion, RetrievalSummary
from memeval_core.pmb.rescore import Aggregate, ScoredColumns
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
        # Equal values (the usual case) are always the same; only a difference needs the tolerance.
        if stated != derived and not _same(stated, derived):
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


def may_be_tagged(messages: Iterable[str]) -> bool:
    """True when a message starts with "[", as a tag :func:`normalize_failure` strips does."""
    return any(message.startswith("[") for message in messages)


def verify_columns(cols: ScoredColumns, entry_index: dict[tuple[str, int | None], int]) -> list[str]:
    """Mismatches between each case's stated verdict/metrics and the re-derived ones, of cases given as columns
    (:func:`memeval_core.pmb.rescore.columns`)."""
    keys = list(zip(cols["case_id"], cols["turn_index"], strict=True))
    compared = ("passed", "precision", "recall", "failures", "drift", "noise_ids")
    # Most stated values equal the re-derived ones exactly, and equal values never mismatch: only the other cases
    # need a closer look. A tag on a stated message (see normalize_failure) makes lists that are equal as stated
    # differ once normalized; such a list equals a re-derived one, so a tagged re-derived message sends every case.
    if may_be_tagged(f for failures in cols["failures"] for f in failures):
        suspects = list(range(len(keys)))
    else:
        suspects = [i for i in range(len(keys)) if any(cols[f"stated_{n}"][i] != cols[n][i] for n in compared)]
    m = _Mismatches()
    for i in suspects:
        case_id, turn = keys[i]
        path = f"$.cases[{entry_index[keys[i]]}]"
        stated_passed, passed = cols["stated_passed"][i], cols["passed"][i]
        if stated_passed != passed:
            m.items.append(
                f"{path}.passed ({case_id}): stated {str(stated_passed).lower()}, re-derived {str(passed).lower()}"
            )
        m.check(f"{path}.retrievalPrecision ({case_id})", cols["stated_precision"][i], cols["precision"][i])
        m.check(f"{path}.retrievalRecall ({case_id})", cols["stated_recall"][i], cols["recall"][i])
        stated_failures, failures = cols["stated_failures"][i], cols["failures"][i]
        normalized = sorted(normalize_failure(f) for f in stated_failures)
        if normalized != sorted(failures):
            extra = sorted(set(normalized) - set(failures))
            missing = sorted(set(failures) - set(stated_failures))
            m.items.append(
                f"{path}.failures ({case_id}): stated but not re-derived {extra}, re-derived but not stated {missing}"
            )
        if turn is not None:
            m.check(f"{path}.driftScore ({case_id} turn {turn})", cols["stated_drift"][i], cols["drift"][i])
            stated_noise, noise = sorted(cols["stated_noise_ids"][i]), sorted(cols["noise_ids"][i])
            if stated_noise != noise:
                m.items.append(
                    f"{path}.noiseBeliefIds ({case_id} turn {turn}): stated {stated_noise}, re-derived {noise}"
                )
    return m.items
