"""The PMB fixture: single-turn cases, session cases and the belief corpus, loaded and indexed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from memeval_core.pmb.assertions import PreparedCase, prepare_case
from memeval_core.pmb.models import Belief, RetrievalCase, SessionCase, SessionTurn
from memeval_core.pmb.session import PreparedTurn, prepare_turn

HARNESS_USER = "test-user"
"""The user id the harness issues queries for (its pinned beliefs are the 'pinned seed')."""

CASES_FILE = "retrieval.cases.json"
SESSION_CASES_FILE = "session-retrieval.cases.json"
BELIEFS_FILE = "beliefs.seed.json"
FIXTURE_FILES = (CASES_FILE, SESSION_CASES_FILE, BELIEFS_FILE)


@dataclass(frozen=True)
class PmbFixture:
    """Everything the harness scores against, with lookups by id."""

    cases: tuple[RetrievalCase, ...]
    """Single-turn cases in fixture order."""
    session_cases: tuple[SessionCase, ...]
    """Session cases in fixture order."""
    beliefs: tuple[Belief, ...]
    """The seed corpus."""
    source: str = ""
    """Where the fixture was read from (for messages)."""
    sha256: Mapping[str, str] = field(default_factory=dict)
    """SHA-256 of each fixture file, by file name."""

    @cached_property
    def case_by_id(self) -> dict[str, RetrievalCase]:
        """Single-turn cases by case id."""
        return {c.case_id: c for c in self.cases}

    @cached_property
    def turn_by_key(self) -> dict[tuple[str, int], SessionTurn]:
        """Session turns by (session case id, turn index)."""
        return {(s.case_id, t.turn_index): t for s in self.session_cases for t in s.turns}

    @cached_property
    def belief_by_id(self) -> dict[str, Belief]:
        """Beliefs by id, including beliefs created during session turns."""
        out = {b.id: b for b in self.beliefs}
        for s in self.session_cases:
            for t in s.turns:
                doc = t.create_belief_at_turn
                if doc and isinstance(doc.get("_id"), str) and doc["_id"] not in out:
                    out[doc["_id"]] = Belief.model_validate({"user_id": HARNESS_USER, "type": "unknown", **doc})
        return out

    @cached_property
    def pinned_in_seed(self) -> frozenset[str]:
        """Pinned beliefs of the harness user: excluded from a mustInclude-derived gold set."""
        return frozenset(b.id for b in self.beliefs if b.pinned and b.user_id == HARNESS_USER)

    @cached_property
    def prepared_cases(self) -> dict[str, PreparedCase]:
        """:attr:`case_by_id`, prepared for scoring (see :class:`~memeval_core.pmb.assertions.PreparedCase`)."""
        seed = self.pinned_in_seed
        return {c.case_id: prepare_case(c, seed) for c in self.cases}

    @cached_property
    def prepared_turns(self) -> dict[tuple[str, int], PreparedTurn]:
        """:attr:`turn_by_key`, prepared for scoring (see :class:`~memeval_core.pmb.session.PreparedTurn`)."""
        return {key: prepare_turn(turn) for key, turn in self.turn_by_key.items()}

    @cached_property
    def category_order(self) -> tuple[str, ...]:
        """Categories in the order the benchmark lists them: by case count, then first appearance."""
        counts: dict[str, int] = {}
        for c in self.cases:
            counts[c.category] = counts.get(c.category, 0) + 1
        return tuple(sorted(counts, key=lambda k: -counts[k]))
