"""Compare two PMB reports case by case, latency aside: how the tests prove the runner matches the harness."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memeval_core.pmb.assertions import normalize_failure
from memeval_core.runner.report import summary

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


def explain(diff: Difference, theirs: dict[str, Any], fixture_categories: dict[str, str]) -> str | None:
    """Why a replayed report differs from the committed one, when the reason is known; None otherwise.

    ``fixture_categories``: case id -> the fixture's category.
    """

    if diff.field == "failures" and [normalize_failure(f) for f in diff.theirs or []] == diff.ours:
        return "the report's harness tags each failure with `[provider] `"
    if diff.field in ("pinnedBeliefs", "pinnedBeliefIds") and sorted(diff.ours or []) == sorted(diff.theirs or []):
        return "same pinned facts in another order: the report was made by the provider's own adapter"
    if diff.case != "retrieval":
        return None
    cases = theirs.get("cases") or []
    restated = summary(cases, int(theirs["retrieval"].get("caseCount") or 0))
    if not _same(restated.get(diff.field), diff.theirs):
        return "the report's aggregate contradicts its own per-case data"
    if any(fixture_categories.get(e["caseId"], e["category"]) != e["category"] for e in cases if "turnIndex" not in e):
        return "the report's per-case categories are those of an older fixture"
    return None
