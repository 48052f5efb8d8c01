"""The proof of equivalence: every committed baseline, replayed through the runner, gives back the same report.

Each report's recorded ids answer the runner's searches (``wrapper replay``); the runner then builds pinned
facts, open questions, expansions and caps itself and scores with memeval's assertion code. Every case must
equal the committed one (pass/fail, failures, ids in order, precision, recall, pinned coverage), and so must
the aggregates, latency aside. Cases a replay cannot tell apart are compared on their pinned facts and
questions only. Every other difference must have a known reason (:func:`tests._runner_compare.explain`),
and the list of them is pinned here and in docs/RUNNER.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.runner.config import ProviderConfig
from memeval_core.wrappers.replay import REPLAY_CONFIG, Key, Replay, case_keys
from tests._runner import BASELINE_DIR, fixture, run, serving
from tests._runner_compare import compare_cases, compare_summary, explain

REPORTS = sorted(p.name for p in BASELINE_DIR.glob("*.json")) if BASELINE_DIR.is_dir() else []

PINNED = "same pinned facts in another order: the report was made by the provider's own adapter"
TAGGED = "the report's harness tags each failure with `[provider] `"
CONTRADICTS = "the report's aggregate contradicts its own per-case data"
OLD_FIXTURE = "the report's per-case categories are those of an older fixture"

EXPLAINED: dict[str, dict[tuple[str, str], int]] = {
    "nomic-retrieval-report-vector.json": {("activeRetrievalPasses", CONTRADICTS): 1, ("passTypes", CONTRADICTS): 1},
    "qwen3-retrieval-report-vector.json": {("activeRetrievalPasses", CONTRADICTS): 1, ("passTypes", CONTRADICTS): 1},
    "retrieval-report-mem0.json": {("categories", CONTRADICTS): 1},
    "retrieval-report-zep.json": {("categories", OLD_FIXTURE): 1},
    "retrieval-report-tenure.json": {("pinnedBeliefs", PINNED): 10, ("categories", OLD_FIXTURE): 1},
    "session-retrieval-report-vector.json": {("failures", TAGGED): 12},
}
"""Report -> (field, reason) -> how many cases (or aggregates) differ for that reason. Every other report: none."""


def ambiguous_groups(fixture: PmbFixture, session: bool) -> list[list[Any]]:
    """Groups of cases (or turns) a replay cannot tell apart: same query, user, scope and limit.

    Cases that send no search (blank query, or ``maxBeliefs`` 0) are left out: their ids never come from the
    wrapper, so a replay reproduces them whatever it would answer.
    """
    by_key: dict[Key, list[Any]] = {}
    for case, key in case_keys(fixture, session).items():
        if key[0].strip() and key[3] > 0:
            by_key.setdefault(key, []).append(case)
    return [group for group in by_key.values() if len(group) > 1]


def replay(name: str, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """The committed report, the runner's report made by replaying it, and whether it is a session report."""
    theirs = json.loads((BASELINE_DIR / name).read_text())
    provider = Replay(theirs, fixture())
    with serving(provider) as srv:
        suite = "session" if provider.session else "single"
        cfg = ProviderConfig.model_validate(REPLAY_CONFIG)
        (path,) = run(srv.url, tmp_path, (suite,), cfg=cfg, reseed=False, provider="replay")
    return json.loads(path.read_text()), theirs, provider.session


def _ids(report: dict[str, Any], case: Any) -> tuple[str, ...]:
    entry = next(e for e in report["cases"] if (e["caseId"], e.get("turnIndex")) == case or e["caseId"] == case)
    return tuple(entry.get("relevantBeliefs", entry.get("retrievedBeliefIds")))


def test_there_are_reports_to_replay() -> None:
    if not REPORTS:
        pytest.skip(f"shared real data not available at {BASELINE_DIR}")
    assert len(REPORTS) == 24


def test_indistinguishable_cases_are_listed() -> None:
    fx = fixture()
    assert ambiguous_groups(fx, False) == [
        ["out-of-scope-coin-collecting", "universal-scope-belief-content-in-persona-prelude"]
    ]
    assert ambiguous_groups(fx, True) == []


@pytest.mark.parametrize("name", REPORTS)
def test_replay_reproduces_the_committed_report(name: str, tmp_path: Path) -> None:
    ours, theirs, session = replay(name, tmp_path)
    fx = fixture()
    # A group a replay cannot tell apart is compared on its ids only where the report recorded the same ids
    # for all of its cases (then the replay's answer is right for each); otherwise on everything but its ids.
    vague = [c for group in ambiguous_groups(fx, session) if len({_ids(theirs, c) for c in group}) > 1 for c in group]
    diffs = compare_cases(ours, theirs, vague) + compare_summary(ours, theirs)
    categories = {c.case_id: c.category for c in fx.cases}
    found: dict[tuple[str, str], int] = {}
    for d in diffs:
        reason = explain(d, theirs, categories)
        assert reason is not None, f"{name}: unexplained difference {d}"
        found[(d.field, reason)] = found.get((d.field, reason), 0) + 1
    assert found == EXPLAINED.get(name, {})
    assert len(ours["cases"]) == len(theirs["cases"])
    assert vague == []  # every committed report recorded the same ids for the cases a replay cannot tell apart
