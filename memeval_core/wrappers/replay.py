"""``replay REPORT``: answers each search with the ids a committed report recorded for the matching case.

A search is matched to the case (single-turn) or turn (session) with the same query, user, scope and limit
(``maxBeliefs``, 20 when the case sets none); the answer is the relevant ids the report recorded for it, in
order. Cases that share all four cannot be told apart: the first one's ids answer for all. The replay asks
for every scope in one search (``supportsMultiScope``) so that the scope list identifies the case; the
harness's per-scope merge of identical answers gives the same list anyway.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memeval_core.pmb.fixtures import HARNESS_USER, PmbFixture
from memeval_core.runner.context import DEFAULT_MAX_BELIEFS
from memeval_core.wrappers.server import Provider, require, scopes_of

Key = tuple[str, str, tuple[str, ...], int]
"""(query, user, scopes, limit)."""

REPLAY_CONFIG = {"seedDelayMs": 0, "supportsMultiScope": True}
"""The provider settings to run a replay with."""


def case_keys(fixture: PmbFixture, session: bool) -> dict[Any, Key]:
    """The search key of every case (single) or (case, turn) (session), in fixture order."""
    if session:
        return {
            (s.case_id, t.turn_index): (t.user_message, HARNESS_USER, tuple(t.scope), DEFAULT_MAX_BELIEFS)
            for s in fixture.session_cases
            for t in s.turns
        }
    return {
        c.case_id: (c.query, c.user_id or HARNESS_USER, tuple(c.scope), int((c.budget or {}).get("maxBeliefs", 20)))
        for c in fixture.cases
    }


class Replay(Provider):
    """Replays one report (single-turn or session, told apart by its cases' shape)."""

    name = "replay"

    def __init__(self, report: dict[str, Any], fixture: PmbFixture) -> None:
        cases: Sequence[dict[str, Any]] = report.get("cases") or []
        self.session = bool(cases) and "turnIndex" in cases[0]
        keys = case_keys(fixture, self.session)
        self.answers: dict[Key, list[str]] = {}
        for entry in cases:
            case = (entry["caseId"], entry["turnIndex"]) if self.session else entry["caseId"]
            ids = entry.get("retrievedBeliefIds" if self.session else "relevantBeliefs") or []
            if case in keys:
                self.answers.setdefault(keys[case], list(ids))

    @classmethod
    def from_file(cls, path: Path, fixture: PmbFixture) -> Replay:
        """The replay of the report at ``path``."""
        return cls(json.loads(path.read_text(encoding="utf-8")), fixture)

    def search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        query, user = require(body, "query", str), require(body, "user_id", str)
        scopes = tuple(scopes_of(body.get("scope")) or ())
        limit = body.get("limit", DEFAULT_MAX_BELIEFS)
        ids = self.answers.get((query, user, scopes, int(limit)))
        if ids is None and len(scopes) == 1:
            # The harness's one-search-per-scope mode (no supportsMultiScope): a case whose scopes include this one.
            found = {
                tuple(v)
                for k, v in self.answers.items()
                if k[:2] == (query, user) and k[3] == limit and scopes[0] in k[2]
            }
            ids = list(found.pop()) if len(found) == 1 else []
        ids = ids or []
        return [{"id": i, "memory": "", "metadata": {"beliefId": i}} for i in ids[: int(limit)]]
