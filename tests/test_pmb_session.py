"""Session-turn re-derivation with hand-computed expectations."""

from __future__ import annotations

from typing import Any

import pytest

from memeval_core.pmb.models import SessionTurn
from memeval_core.pmb.session import check_turn


def turn(expect: dict[str, Any]) -> SessionTurn:
    return SessionTurn.model_validate({"turnIndex": 3, "label": "re_entry", "expect": expect})


def test_precision_counts_pinned_hits_over_relevant_size() -> None:
    t = turn({"relevantBeliefs": {"shouldOnlyInclude": ["g"]}})
    r = check_turn(t, relevant=["x", "g", "y", "z"], pinned=[], questions=None)
    assert r.precision == pytest.approx(0.25)
    assert r.drift == pytest.approx(0.75)
    assert r.recall == 1.0
    assert r.failures == (
        "turn 3: unexpected relevant belief: x",
        "turn 3: unexpected relevant belief: y",
        "turn 3: unexpected relevant belief: z",
    )


def test_returning_nothing_is_drift_zero_but_flagged_and_failing() -> None:
    r = check_turn(turn({"relevantBeliefs": {"shouldOnlyInclude": ["g"]}}), [], [], None)
    assert r.drift == 0.0 and r.precision is None and r.returned_nothing
    assert r.failures == ("turn 3: missing expected belief: g",)
    assert not r.passed


def test_noise_ids_surface_from_either_tier() -> None:
    t = turn({"noiseCheck": {"mustNotSurface": ["n1", "n2", "n3"]}})
    r = check_turn(t, relevant=["n1"], pinned=["n3"], questions=None)
    assert r.noise_ids == ("n1", "n3")
    assert r.failures == ("turn 3: noise belief surfaced: n1", "turn 3: noise belief surfaced: n3")


def test_must_include_can_be_met_by_pinned_and_pinned_facts() -> None:
    t = turn({"relevantBeliefs": {"mustInclude": ["a"]}, "pinnedFacts": {"mustInclude": ["p"]}})
    r = check_turn(t, relevant=[], pinned=["a"], questions=None)
    assert r.failures == ("turn 3: missing pinned: p",)
    assert r.recall == 1.0 and r.precision is None


def test_open_questions_taken_from_report_when_not_recorded() -> None:
    t = turn({"openQuestions": {"mustInclude": ["q"]}})
    r = check_turn(t, [], [], None, stated_failures=["[vector] turn 3: missing question: q"])
    assert r.report_failures == ("turn 3: missing question: q",)
    assert not r.passed
    r2 = check_turn(t, [], [], ["q"])
    assert r2.passed
