"""Re-derive a single-turn PMB case from the ids a system returned, exactly as the harness does.

Mirrors ``src/retrieval.external.eval.test.ts`` of tenurehq/precisionMemBench: the same checks in
the same order with the same failure messages, and the same precision, recall and pinned coverage:

- relevant gold set ``G`` = ``shouldOnlyInclude`` if stated, else ``mustInclude`` minus pinned seeds;
  returned relevant ids ``R`` (deduplicated, in order);
- precision = None if ``R`` and ``G`` are both empty, 0 if only ``R`` is empty, else ``|G ∩ R| / |R|``;
- recall = None if ``G`` is empty, else ``|G ∩ R| / |G|``;
- pinned coverage = None if no pinned ``mustInclude``, else the share of them returned as pinned.

Persona-prelude checks need the prelude text, which reports do not store: their failures are
taken from the report's own failure list and marked as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass

from memeval_core.pmb.models import BeliefsExpect, IdsExpect, RetrievalCase

PERSONA_PREFIX = "personaPrelude"
_HARNESS_TAG = re.compile(r"^\[[^\]]+\] ")


# Shared empty expectations: the models are frozen, and building defaults per case copies their lists.
NO_BELIEFS_EXPECT = BeliefsExpect()
NO_IDS_EXPECT = IdsExpect()


def normalize_failure(message: str) -> str:
    """A failure message without the ``[provider] `` tag some harness variants put in front."""
    # Most messages carry no tag; the regex only runs on those that could.
    return _HARNESS_TAG.sub("", message, count=1) if message.startswith("[") else message


def unique(ids: Iterable[str]) -> list[str]:
    """Ids in first-seen order without repeats (the harness builds JS Sets)."""
    return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class CaseCheck:
    """Outcome of re-deriving one case."""

    failures: tuple[str, ...]
    """Failures re-derived from returned ids (persona checks excluded)."""
    persona_failures: tuple[str, ...]
    """Persona-prelude failures taken from the report (not re-derivable)."""
    precision: float | None
    """Re-derived retrieval precision."""
    recall: float | None
    """Re-derived retrieval recall."""
    pinned_coverage: float | None
    """Re-derived pinned coverage."""

    @property
    def passed(self) -> bool:
        """A case passes only when every assertion holds."""
        return not self.failures and not self.persona_failures


def check_relevant(rb: BeliefsExpect, relevant: Sequence[str], union: set[str]) -> list[str]:
    """Failures of the relevant-beliefs assertions."""
    failures: list[str] = []
    relevant_set = set(relevant)
    failures += [f"missing expected belief: {i}" for i in rb.must_include if i not in union]
    failures += [f"forbidden belief surfaced: {i}" for i in rb.must_exclude if i in union]
    failures += [f"expected belief missing (shouldInclude): {i}" for i in rb.should_include if i not in union]
    if rb.should_only_include is not None:
        expected = unique(rb.should_only_include)
        expected_set = set(expected)
        failures += [f"unexpected belief in relevantBeliefs: {i}" for i in relevant if i not in expected_set]
        failures += [f"missing expected belief: {i}" for i in expected if i not in relevant_set]
    if rb.max_count is not None and len(relevant) > rb.max_count:
        failures.append(f"relevantBeliefs count {len(relevant)} > maxCount {rb.max_count}")
    if rb.min_count is not None and len(relevant) < rb.min_count:
        failures.append(f"relevantBeliefs count {len(relevant)} < minCount {rb.min_count}")
    for a, b in rb.ordered_before:
        idx_a = relevant.index(a) if a in relevant_set else -1
        idx_b = relevant.index(b) if b in relevant_set else -1
        if idx_a == -1:
            failures.append(f"orderedBefore: {a} not in relevantBeliefs")
        if idx_b == -1:
            failures.append(f"orderedBefore: {b} not in relevantBeliefs")
        if idx_a != -1 and idx_b != -1 and idx_a >= idx_b:
            failures.append(f"ranking: {a} (idx {idx_a}) should precede {b} (idx {idx_b})")
    return failures


def check_tier(expect: IdsExpect, returned: set[str], missing: str, forbidden: str) -> list[str]:
    """Failures of a must-include / must-exclude tier, with the harness's message prefixes."""
    return [f"{missing}: {i}" for i in expect.must_include if i not in returned] + [
        f"{forbidden}: {i}" for i in expect.must_exclude if i in returned
    ]


def gold_relevant(case: RetrievalCase, pinned_in_seed: Set[str]) -> list[str]:
    """The gold relevant set G the harness scores precision and recall against."""
    rb = case.expect.relevant_beliefs or NO_BELIEFS_EXPECT
    if rb.should_only_include is not None:
        return unique(rb.should_only_include)
    return unique(i for i in rb.must_include if i not in pinned_in_seed)


def check_case(
    case: RetrievalCase,
    pinned: Sequence[str],
    relevant: Sequence[str],
    questions: Sequence[str],
    stated_failures: Sequence[str],
    pinned_in_seed: Set[str],
) -> CaseCheck:
    """Re-derive one case from the returned ids of its three tiers."""
    relevant = unique(relevant)
    pinned_set, question_set = set(pinned), set(questions)
    union = pinned_set | set(relevant)
    exp = case.expect
    failures = check_relevant(exp.relevant_beliefs or NO_BELIEFS_EXPECT, relevant, union)
    failures += check_tier(
        exp.pinned_facts or NO_IDS_EXPECT,
        pinned_set,
        "missing pinned belief",
        "forbidden belief in pinnedFacts",
    )
    failures += check_tier(
        exp.open_questions or NO_IDS_EXPECT,
        question_set,
        "missing expected question",
        "forbidden question surfaced",
    )
    persona = tuple(
        f
        for f in (normalize_failure(m) for m in stated_failures if PERSONA_PREFIX in m)
        if f.startswith(PERSONA_PREFIX)
    )

    gold = gold_relevant(case, pinned_in_seed)
    hits = len(set(gold) & set(relevant))
    if not relevant and not gold:
        precision: float | None = None
    elif not relevant:
        precision = 0.0
    else:
        precision = hits / len(relevant)
    recall = None if not gold else hits / len(gold)

    required_pinned = unique((exp.pinned_facts or NO_IDS_EXPECT).must_include)
    pinned_coverage = (
        None if not required_pinned else sum(1 for i in required_pinned if i in pinned_set) / len(required_pinned)
    )
    return CaseCheck(tuple(failures), persona, precision, recall, pinned_coverage)
