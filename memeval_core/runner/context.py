"""The harness's context building: the seed index, pinned facts, open questions, search, relation expansion, caps.

Mirrors ``BaseAdapter`` of ``src/adapters/baseAdapter.ts`` (tenurehq/precisionMemBench at commit 2209e60; the
``L`` numbers below are lines of that file) line by line; each function names the method it mirrors. Beliefs are
the fixture's raw JSON objects, as the harness holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memeval_core.runner.config import BeliefToText, ProviderConfig

Belief = dict[str, Any]
Search = Callable[[str, int, "str | list[str] | None", set[str]], list[Belief]]
"""``searchText`` bound to a wrapper and a user: ``(query, limit, scope, pinned ids)`` -> beliefs, in order."""

DEFAULT_MAX_BELIEFS = 20
DEFAULT_MAX_PINNED_FACTS = 10
DEFAULT_MAX_QUESTIONS = 15
"""``DEFAULT_BUDGET`` of baseAdapter.ts."""

HARNESS_USER = "test-user"
EVAL_PERSONA_UNIVERSAL = (
    "You prefer direct answers without preamble. You push back when plans have problems rather than defaulting "
    "to agreement. You edit AI output; you do not let AI edit your prose."
)
"""``EVAL_PERSONA.universal`` of both eval test files: the prelude of the harness user; every other user has none."""


def persona_prelude(user_id: str) -> str:
    """``personaDoc?.universal ?? ""`` for the eval persona (per-scope texts are never used by buildContext)."""
    return EVAL_PERSONA_UNIVERSAL if user_id == HARNESS_USER else ""


def belief_to_text(belief: Belief, mode: BeliefToText) -> str:
    """``BaseAdapter.beliefToText``: canonical name, aliases, content and why-it-matters, joined by spaces.

    Upstream oddity, mirrored: the adapter stores ``beliefToText`` from the config (``this.beliefToTextMode``,
    L117) but ``beliefToText()`` (L395-404) never reads it, so ``content`` sends the same text as
    ``canonical_name_aliases``.
    """
    del mode  # read and ignored, as upstream does
    parts = [belief.get("canonical_name"), *(belief.get("aliases") or []), belief.get("content")]
    parts.append(belief.get("why_it_matters"))
    return " ".join(str(p) for p in parts if p)  # `.filter(Boolean)`: drops "", null and undefined


def _in_scope(belief: Belief, scope: Sequence[str]) -> bool:
    return any(s in scope for s in belief.get("scope") or [])


@dataclass
class SeedIndex:
    """``seedIndex``: every belief the harness knows, by id, in insertion order (a JS Map)."""

    beliefs: dict[str, Belief] = field(default_factory=dict)

    def add(self, belief: Belief) -> None:
        """``seedIndex.set``: a new id goes last, a known id keeps its place."""
        self.beliefs[str(belief["_id"])] = belief

    def pinned_facts(self, user_id: str, scope: Sequence[str]) -> list[Belief]:
        """``listPinnedFacts``."""
        return [
            b
            for b in self.beliefs.values()
            if b.get("user_id") == user_id
            and b.get("pinned") is True
            and b.get("type") != "open_question"
            and not b.get("superseded_by")
            and not b.get("resolved_at")
            and _in_scope(b, scope)
        ]

    def open_questions(self, user_id: str, scope: Sequence[str]) -> list[Belief]:
        """``listPinnedOpenQuestions`` (pinned open questions only, despite the tier's name)."""
        return [
            b
            for b in self.beliefs.values()
            if b.get("user_id") == user_id
            and b.get("type") == "open_question"
            and b.get("pinned") is True
            and not b.get("resolved_at")
            and _in_scope(b, scope)
        ]

    def expand_relations(
        self, user_id: str, found: Sequence[Belief], scope: Sequence[str], exclude: set[str]
    ) -> list[Belief]:
        """``expandRelationParticipants``: participants of returned relations, filtered by user and scope.

        Upstream oddity, mirrored: ``excludeIds`` (L340) is not updated as participants are added (L338-352), so
        two relations sharing a participant add it twice; the report's ``[...new Set(ids)]`` removes the repeat
        later, but the repeat still takes a place under the cap.
        """
        out: list[Belief] = []
        for rel in found:
            if rel.get("type") != "relation":
                continue
            for pid in rel.get("participants") or []:
                b = self.beliefs.get(pid)
                if pid in exclude or b is None or b.get("type") == "open_question" or b.get("user_id") != user_id:
                    continue
                if scope and not _in_scope(b, scope):
                    continue
                out.append(b)
        return out


@dataclass(frozen=True)
class Context:
    """What ``buildContext`` returns, as the ids the eval tests read back from its JSON."""

    prelude: str
    pinned: list[str]
    relevant: list[str]
    questions: list[str]


def _interleave(per_scope: list[list[Belief]], cap: int) -> list[Belief]:
    """The rank-by-rank merge of per-scope results, without repeats, at most ``cap`` (buildContext, L208-242)."""
    seen: set[str] = set()
    out: list[Belief] = []
    longest = max((len(r) for r in per_scope), default=0)
    for rank in range(longest):
        if len(out) >= cap:
            break
        for results in per_scope:
            if rank >= len(results):
                continue
            bid = str(results[rank]["_id"])
            if bid in seen:
                continue
            seen.add(bid)
            out.append(results[rank])
            if len(out) >= cap:
                break
    return out


def build_context(
    index: SeedIndex,
    search: Search,
    cfg: ProviderConfig,
    user_id: str,
    scope: list[str],
    query: str,
    budget: dict[str, Any] | None = None,
) -> Context:
    """``BaseAdapter.buildContext``; ``search`` is :meth:`searchText` bound to the wrapper and the user."""
    b = {"maxBeliefs": DEFAULT_MAX_BELIEFS, "maxPinnedFacts": DEFAULT_MAX_PINNED_FACTS}
    b |= {"maxQuestions": DEFAULT_MAX_QUESTIONS, **(budget or {})}
    max_beliefs, max_questions = int(b["maxBeliefs"]), int(b["maxQuestions"])
    pinned = index.pinned_facts(user_id, scope)
    questions = index.open_questions(user_id, scope)
    pinned_ids = {str(p["_id"]) for p in pinned}
    found: list[Belief] = []
    if query.strip() and max_beliefs > 0:
        if len(scope) > 1 and not cfg.supports_multi_scope:
            found = _interleave([search(query, max_beliefs, s, pinned_ids) for s in scope], max_beliefs)
        else:
            one: str | list[str] | None = scope if len(scope) > 1 else (scope[0] if scope else None)
            found = search(query, max_beliefs, one, pinned_ids)
    expansions = (
        index.expand_relations(user_id, found, scope, pinned_ids | {str(f["_id"]) for f in found}) if found else []
    )
    # Upstream oddity, mirrored: pinned facts are capped by maxBeliefs (L266-267), not by maxPinnedFacts, which
    # DEFAULT_BUDGET sets (L62) and nothing reads.
    capped_pinned = pinned[:max_beliefs]
    capped_relevant = [*found, *expansions][: max(0, max_beliefs - len(capped_pinned))]
    return Context(
        prelude=persona_prelude(user_id),
        pinned=[str(p["_id"]) for p in capped_pinned],
        relevant=[str(r["_id"]) for r in capped_relevant],
        questions=[str(q["_id"]) for q in questions[:max_questions]],
    )


def map_results(index: SeedIndex, ids: Sequence[str], exclude: set[str]) -> list[Belief]:
    """``searchText``'s mapping: first occurrence of each id, pinned ids dropped, mapped through the seed index.

    The caller has already refused ids the seed index does not know (upstream drops them silently).
    """
    seen: set[str] = set()
    out: list[Belief] = []
    for bid in ids:
        if bid in seen:
            continue
        seen.add(bid)
        if bid in exclude:
            continue
        b = index.beliefs.get(bid)
        if b is not None:
            out.append(b)
    return out
