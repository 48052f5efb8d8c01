"""The report payload of ``src/utils/buildRetrievalReport.ts``: the same keys, in the same order, rounded the same way.

Pass types follow memeval's :func:`~memeval_core.pmb.pass_types.classify_pass`, which reproduces the pass types
of every current upstream baseline (the indexed ``buildRetrievalReport.ts`` still has the older two-way split).
"""

from __future__ import annotations

import math
from typing import Any

from memeval_core.pmb.pass_types import classify_pass
from memeval_core.runner.numbers import js_round, js_sum

_PASS_KEYS = {"active_retrieval": "activeRetrieval", "structural": "structural", "trivially_empty": "triviallyEmpty"}


def _mean4(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return js_round(js_sum(present) / len(present), 4) if present else None


def _nearest_rank(ordered: list[float], q: float) -> float:
    """``sorted[Math.ceil(q * n) - 1] ?? 0``."""
    i = math.ceil(q * len(ordered)) - 1
    return ordered[i] if 0 <= i < len(ordered) else 0


def _categories(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        groups.setdefault(e["category"], []).append(e)
    out = []
    for cat, rows in sorted(groups.items(), key=lambda kv: -len(kv[1])):  # stable, like Array.prototype.sort
        passed = sum(1 for r in rows if r["passed"])
        out.append(
            {
                "category": cat,
                "caseCount": len(rows),
                "passed": passed,
                "failed": len(rows) - passed,
                "meanPrecision": _mean4([r["retrievalPrecision"] for r in rows]),
                "meanRecall": _mean4([r["retrievalRecall"] for r in rows]),
            }
        )
    return out


def summary(entries: list[dict[str, Any]], case_count: int, turn_count: int | None = None) -> dict[str, Any]:
    """``buildRetrievalSummary``."""
    latencies = [float(e["retrievalLatencyMs"]) for e in entries]
    ordered = sorted(latencies)
    types = dict.fromkeys(_PASS_KEYS.values(), 0)
    for e in entries:
        kind = classify_pass(e["passed"], e["retrievalPrecision"], e["category"])
        if kind is not None:
            types[_PASS_KEYS[kind]] += 1
    passed = sum(1 for e in entries if e["passed"])
    out: dict[str, Any] = {
        "meanLatencyMs": js_round(js_sum(latencies) / len(latencies), 2) if latencies else 0,
        "p50LatencyMs": _nearest_rank(ordered, 0.5),
        "p95LatencyMs": _nearest_rank(ordered, 0.95),
        "caseCount": case_count,
        "meanPrecision": _mean4([e["retrievalPrecision"] for e in entries]),
        "meanRecall": _mean4([e["retrievalRecall"] for e in entries]),
        "totalPassed": passed,
        "totalCases": len(entries),
        "passRate": js_round(passed / len(entries), 4) if entries else None,
        "activeRetrievalPasses": types["activeRetrieval"],
        "passTypes": types,
        "categories": _categories(entries),
    }
    if turn_count is not None:
        out["turnCount"] = turn_count
    return out


def ingestion_block(per_belief: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``ingestion`` object both eval tests write from ``adapter.ingestionReport``."""
    latencies = [float(r["latencyMs"]) for r in per_belief]
    total = js_sum(latencies)
    return {
        "beliefCount": len(per_belief),
        "totalMs": js_round(total, 2),
        "meanPerBeliefMs": js_round(total / len(latencies), 2) if latencies else 0,
        "perBelief": per_belief,
    }


def payload(
    provider: str,
    entries: list[dict[str, Any]],
    case_count: int,
    *,
    turn_count: int | None = None,
    ingestion: list[dict[str, Any]] | None = None,
    provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``buildReportPayload`` (+ ``provenance``, which upstream's newer runs add after ``provider``)."""
    out: dict[str, Any] = {"provider": provider}
    if provenance is not None:
        out["provenance"] = provenance
    out["retrieval"] = summary(entries, case_count, turn_count)
    out["cases"] = entries
    if ingestion is not None:
        out["ingestion"] = ingestion_block(ingestion)
    return out
