"""Each assertion type of a single-turn PMB case, with hand-computed expectations."""

from __future__ import annotations

from typing import Any

import pytest

from memeval_core.pmb.assertions import check_case, gold_relevant
from memeval_core.pmb.models import RetrievalCase


def case(expect: dict[str, Any], category: str = "Alias resolution") -> RetrievalCase:
    return RetrievalCase.model_validate({"caseId": "c1", "category": category, "query": "q", "expect": expect})


def run(c: RetrievalCase, pinned=(), relevant=(), questions=(), stated=(), seed=frozenset()):  # type: ignore[no-untyped-def]
    return check_case(c, list(pinned), list(relevant), list(questions), list(stated), set(seed))


def test_should_only_include_exact_set_passes_with_precision_and_recall_one() -> None:
    r = run(case({"relevantBeliefs": {"shouldOnlyInclude": ["a", "b"]}}), relevant=["b", "a"])
    assert r.passed and r.failures == ()
    assert (r.precision, r.recall) == (1.0, 1.0)


def test_should_only_include_extra_and_missing() -> None:
    r = run(case({"relevantBeliefs": {"shouldOnlyInclude": ["a", "b"]}}), relevant=["a", "x", "y"])
    assert r.failures == (
        "unexpected belief in relevantBeliefs: x",
        "unexpected belief in relevantBeliefs: y",
        "missing expected belief: b",
    )
    assert r.precision == pytest.approx(1 / 3)
    assert r.recall == pytest.approx(1 / 2)
    assert not r.passed


def test_empty_gold_and_nothing_returned_has_null_precision() -> None:
    r = run(case({"relevantBeliefs": {"shouldOnlyInclude": []}}))
    assert r.passed and r.precision is None and r.recall is None


def test_nothing_returned_with_gold_is_precision_zero() -> None:
    r = run(case({"relevantBeliefs": {"shouldOnlyInclude": ["a"]}}))
    assert r.precision == 0.0 and r.recall == 0.0
    assert r.failures == ("missing expected belief: a",)


def test_must_include_counts_pinned_tier_too() -> None:
    c = case({"relevantBeliefs": {"mustInclude": ["p", "a"]}})
    r = run(c, pinned=["p"], relevant=["a"], seed={"p"})
    assert r.passed
    # Gold = mustInclude minus pinned seeds = {a}: precision 1/1, recall 1/1.
    assert gold_relevant(c, {"p"}) == ["a"]
    assert (r.precision, r.recall) == (1.0, 1.0)
    r2 = run(c, relevant=["a"], seed={"p"})
    assert r2.failures == ("missing expected belief: p",)


def test_must_exclude_and_should_include() -> None:
    r = run(case({"relevantBeliefs": {"mustExclude": ["bad"], "shouldInclude": ["good"]}}), pinned=["bad"])
    assert r.failures == ("forbidden belief surfaced: bad", "expected belief missing (shouldInclude): good")
    # No gold set: one returned relevant id -> precision 0/1, recall undefined.
    r2 = run(case({"relevantBeliefs": {"mustExclude": ["bad"]}}), relevant=["z"])
    assert r2.passed and r2.precision == 0.0 and r2.recall is None


def test_max_and_min_count() -> None:
    c = case({"relevantBeliefs": {"maxCount": 1, "minCount": 1}})
    assert run(c, relevant=["a", "b"]).failures == ("relevantBeliefs count 2 > maxCount 1",)
    assert run(c).failures == ("relevantBeliefs count 0 < minCount 1",)
    assert run(c, relevant=["a"]).passed


def test_ordered_before() -> None:
    c = case({"relevantBeliefs": {"orderedBefore": [["a", "b"]]}})
    assert run(c, relevant=["a", "b"]).passed
    assert run(c, relevant=["b", "a"]).failures == ("ranking: a (idx 1) should precede b (idx 0)",)
    assert run(c, relevant=["b"]).failures == ("orderedBefore: a not in relevantBeliefs",)


def test_pinned_facts_include_exclude_and_coverage() -> None:
    c = case({"pinnedFacts": {"mustInclude": ["p1", "p2"], "mustExclude": ["p3"]}})
    r = run(c, pinned=["p1", "p3"])
    assert r.failures == ("missing pinned belief: p2", "forbidden belief in pinnedFacts: p3")
    assert r.pinned_coverage == 0.5
    assert run(case({})).pinned_coverage is None


def test_open_questions_include_exclude() -> None:
    c = case({"openQuestions": {"mustInclude": ["q1"], "mustExclude": ["q2"]}})
    assert run(c, questions=["q2"]).failures == ("missing expected question: q1", "forbidden question surfaced: q2")
    assert run(c, questions=["q1"]).passed


def test_persona_failures_are_taken_from_the_report_and_fail_the_case() -> None:
    c = case({"personaPrelude": {"nonEmpty": True}, "relevantBeliefs": {"shouldOnlyInclude": []}})
    r = run(c, stated=["personaPrelude empty", "unexpected belief in relevantBeliefs: zz"])
    assert r.failures == ()
    assert r.persona_failures == ("personaPrelude empty",)
    assert not r.passed


def test_duplicates_in_returned_ids_count_once() -> None:
    r = run(case({"relevantBeliefs": {"shouldOnlyInclude": ["a"]}}), relevant=["a", "a"])
    assert r.passed and r.precision == 1.0
