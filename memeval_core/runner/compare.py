"""Compare two PMB reports case by case, latency aside: how the runner proves it matches the harness."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SINGLE_FIELDS = (
    "pinnedBeliefs",
    "relevantBeliefs",
    "retrievedQuestions",
    "retrievalPrecision",
    "retrievalRecall",
    "pinnedCoverage",
    "passed",
    "failures",
)
SESSION_FIELDS = (
    "retrievedBeliefIds",
    "pinnedBeliefIds",
    "noiseBeliefIds",
    "driftScore",
    "retrievalPrecision",
    "retrievalRecall",
    "passed",
    "failures",
)
SUMMARY_FIELDS = (
    "caseCount",
    "turnCount",
    "meanPrecision",
    "meanRecall",
    "totalPassed",
    "totalCases",
    "passRate",
    "activeRetrievalPasses",
    "passTypes",
    "categories",
)


@dataclass(frozen=True)
class Difference:
    """One field of one case (or of the aggregates) that differs."""

    case: Any
    """Case id, (case id, turn index), or ``"retrieval"`` for the aggregates."""
    field: str
    ours: Any
    theirs: Any


def _key(entry: dict[str, Any]) -> Any:
    return (entry["caseId"], entry["turnIndex"]) if "turnIndex" in entry else entry["caseId"]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return abs(a - b) <= 1e-9
    return bool(a == b)


def compare_cases(ours: dict[str, Any], theirs: dict[str, Any], skip: Iterable[Any] = ()) -> list[Difference]:
    """Differences of every case present in ``theirs``; cases in ``skip`` are compared without their ids."""
    mine = {_key(e): e for e in ours.get("cases") or []}
    vague = set(skip)
    out = []
    for entry in theirs.get("cases") or []:
        key = _key(entry)
        fields = SESSION_FIELDS if "turnIndex" in entry else SINGLE_FIELDS
        got = mine.get(key)
        if got is None:
            out.append(Difference(key, "(case)", None, "present"))
            continue
        for f in fields:
            if key in vague and f not in ("pinnedBeliefs", "pinnedBeliefIds", "retrievedQuestions"):
                continue
            if not _same(got.get(f), entry.get(f)):
                out.append(Difference(key, f, got.get(f), entry.get(f)))
    return out


def compare_summary(ours: dict[str, Any], theirs: dict[str, Any]) -> list[Difference]:
    """Differences of the stated aggregates (latency aside)."""
    a, b = ours.get("retrieval") or {}, theirs.get("retrieval") or {}
    out = []
    for f in SUMMARY_FIELDS:
        if f in b and not _same(a.get(f), b.get(f)):
            out.append(Difference("retrieval", f, a.get(f), b.get(f)))
    return out
