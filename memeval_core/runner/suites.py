"""One single-turn case or one session turn, run and scored as the two eval test files do.

Scoring is memeval's own (:func:`~memeval_core.pmb.assertions.check_fields`,
:func:`~memeval_core.pmb.session.check_prepared_turn`), which mirrors the tests' checks and messages; only
the persona-prelude checks, which need the prelude text a report does not keep, are done here.
"""

from __future__ import annotations

import time
from typing import Any

from memeval_core.pmb.assertions import check_fields
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.models import PreludeExpect, RetrievalCase, SessionTurn
from memeval_core.pmb.session import check_prepared_turn
from memeval_core.runner.context import HARNESS_USER, build_context
from memeval_core.runner.harness import Harness
from memeval_core.runner.numbers import js_round

SESSION_CATEGORY = "Session-level noise isolation"


def prelude_failures(expect: PreludeExpect | None, prelude: str) -> list[str]:
    """The ``personaPrelude`` checks of retrieval.external.eval.test.ts, in its order and words."""
    if expect is None:
        return []
    out = []
    if expect.non_empty and not prelude:
        out.append("personaPrelude empty")
    if expect.is_null and prelude != "":
        out.append("personaPrelude not empty")
    out += [f'personaPrelude missing "{s}"' for s in expect.contains if s not in prelude]
    out += [f'personaPrelude contains "{s}"' for s in expect.must_not_contain if s in prelude]
    return out


def run_case(h: Harness, fixture: PmbFixture, case: RetrievalCase) -> dict[str, Any]:
    """One single-turn case: build the context, check it, and the report entry."""
    user = case.user_id or HARNESS_USER
    search = h.searcher(user, f"case {case.case_id}")
    start = time.perf_counter()
    ctx = build_context(h.index, search, h.cfg, user, list(case.scope), case.query, case.budget)
    elapsed = (time.perf_counter() - start) * 1000
    pinned, questions = list(dict.fromkeys(ctx.pinned)), list(dict.fromkeys(ctx.questions))
    relevant, failures, _, precision, recall, coverage = check_fields(
        fixture.prepared_cases[case.case_id], pinned, ctx.relevant, questions, ()
    )
    all_failures = [*failures, *prelude_failures(case.expect.persona_prelude, ctx.prelude)]
    return {
        "caseId": case.case_id,
        "category": case.category,
        "description": case.description,
        "pinnedBeliefs": pinned,
        "relevantBeliefs": list(relevant),
        "retrievedQuestions": questions,
        "retrievalPrecision": precision,
        "retrievalRecall": recall,
        "pinnedCoverage": coverage,
        "passed": not all_failures,
        "failures": all_failures,
        "retrievalLatencyMs": js_round(elapsed, 2),
    }


def run_turn(h: Harness, fixture: PmbFixture, case_id: str, turn: SessionTurn) -> dict[str, Any]:
    """One session turn: build the context (default budget, harness user), check it, the report entry."""
    search = h.searcher(HARNESS_USER, f"session case {case_id} turn {turn.turn_index}")
    start = time.perf_counter()
    ctx = build_context(h.index, search, h.cfg, HARNESS_USER, list(turn.scope), turn.user_message)
    elapsed = (time.perf_counter() - start) * 1000
    pinned, relevant = list(dict.fromkeys(ctx.pinned)), list(dict.fromkeys(ctx.relevant))
    chk = check_prepared_turn(fixture.prepared_turns[(case_id, turn.turn_index)], relevant, pinned, ctx.questions)
    return {
        "caseId": case_id,
        "category": SESSION_CATEGORY,
        "turnIndex": turn.turn_index,
        "label": turn.label,
        "retrievedBeliefIds": relevant,
        "pinnedBeliefIds": pinned,
        "noiseBeliefIds": list(chk.noise_ids),
        "driftScore": chk.drift,
        "passed": chk.passed,
        "failures": list(chk.failures),
        "retrievalLatencyMs": js_round(elapsed, 2),
        "retrievalPrecision": chk.precision,
        "retrievalRecall": chk.recall,
    }


def after_turn(h: Harness, case_id: str, turn: SessionTurn, *, send: bool = True) -> None:
    """What the session test does after scoring a turn: ingest a created belief, apply an alias update.

    ``send=False`` replays the effect on the seed index only (resuming: the wrapper already has the belief).
    """
    created = turn.create_belief_at_turn
    if created:
        belief = dict(created)
        if send:
            h.ingest(belief, f"session case {case_id} turn {turn.turn_index}: ingesting {belief.get('_id')}")
        else:
            h.index.add(belief)
    update = turn.update_belief_at_turn
    if update and update.get("addAliases"):
        h.update_aliases(str(update.get("beliefId")), list(update["addAliases"]))
