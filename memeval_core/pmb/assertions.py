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
from collections.abc import Iterable, Mapping, Sequence, Set
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


@dataclass(frozen=True, slots=True)
class RelevantExpectation:
    """The relevant-tier assertions of a case, read out of their pydantic model once (its attribute reads are slow)."""

    must_include: tuple[str, ...]
    must_exclude: tuple[str, ...]
    should_include: tuple[str, ...]
    only: Mapping[str, None] | None
    """``shouldOnlyInclude`` without repeats, in order; None when not stated."""
    max_count: int | None
    min_count: int | None
    ordered_before: tuple[tuple[str, str], ...]
    reads_union: bool
    """An assertion looks for ids among pinned and relevant ones together."""

    @classmethod
    def of(cls, rb: BeliefsExpect) -> RelevantExpectation:
        """The assertions of ``rb``."""
        return cls(
            must_include=tuple(rb.must_include),
            must_exclude=tuple(rb.must_exclude),
            should_include=tuple(rb.should_include),
            only=None if rb.should_only_include is None else dict.fromkeys(rb.should_only_include),
            max_count=rb.max_count,
            min_count=rb.min_count,
            ordered_before=tuple(rb.ordered_before),
            reads_union=bool(rb.must_include or rb.must_exclude or rb.should_include),
        )


def _relevant_failures(
    rb: RelevantExpectation, relevant: Sequence[str], relevant_set: Set[str], union: Set[str]
) -> list[str]:
    """Failures of the relevant-beliefs assertions (``union`` is read only when ``rb.reads_union``)."""
    # Most cases assert one or two things: each comprehension runs only when its list is non-empty.
    failures: list[str] = []
    if rb.must_include:
        failures += [f"missing expected belief: {i}" for i in rb.must_include if i not in union]
    if rb.must_exclude:
        failures += [f"forbidden belief surfaced: {i}" for i in rb.must_exclude if i in union]
    if rb.should_include:
        failures += [f"expected belief missing (shouldInclude): {i}" for i in rb.should_include if i not in union]
    if rb.only is not None:
        failures += [f"unexpected belief in relevantBeliefs: {i}" for i in relevant if i not in rb.only]
        failures += [f"missing expected belief: {i}" for i in rb.only if i not in relevant_set]
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


def check_tier(expect: IdsExpect, returned: Set[str], missing: str, forbidden: str) -> list[str]:
    """Failures of a must-include / must-exclude tier, with the harness's message prefixes."""
    failures = [f"{missing}: {i}" for i in expect.must_include if i not in returned] if expect.must_include else []
    if expect.must_exclude:
        failures += [f"{forbidden}: {i}" for i in expect.must_exclude if i in returned]
    return failures


def gold_relevant(case: RetrievalCase, pinned_in_seed: Set[str]) -> list[str]:
    """The gold relevant set G the harness scores precision and recall against."""
    rb = case.expect.relevant_beliefs or NO_BELIEFS_EXPECT
    if rb.should_only_include is not None:
        return unique(rb.should_only_include)
    return unique(i for i in rb.must_include if i not in pinned_in_seed)


@dataclass(frozen=True, slots=True)
class PreparedCase:
    """A fixture case in the form scoring reads it (attribute reads of the pydantic models are slow).

    Built once per case per fixture (:attr:`~memeval_core.pmb.fixtures.PmbFixture.prepared_cases`): a load
    scores every case once per report, and the gold sets do not change between reports.
    """

    category: str
    description: str
    relevant: RelevantExpectation
    """Relevant-tier assertions (none when the case states none)."""
    pinned: IdsExpect | None
    """Pinned-tier assertions; None when the case asserts nothing there."""
    questions: IdsExpect | None
    """Open-question-tier assertions; None when the case asserts nothing there."""
    gold: frozenset[str]
    """The gold relevant set G (:func:`gold_relevant`)."""
    required_pinned: frozenset[str]
    """Pinned ids the case requires (pinned coverage is the share of them returned)."""


def _asserts(expect: IdsExpect | None) -> IdsExpect | None:
    return expect if expect is not None and (expect.must_include or expect.must_exclude) else None


def prepare_case(case: RetrievalCase, pinned_in_seed: Set[str]) -> PreparedCase:
    """``case`` prepared for :func:`check_prepared`."""
    exp = case.expect
    return PreparedCase(
        category=case.category,
        description=case.description,
        relevant=RelevantExpectation.of(exp.relevant_beliefs or NO_BELIEFS_EXPECT),
        pinned=_asserts(exp.pinned_facts),
        questions=_asserts(exp.open_questions),
        gold=frozenset(gold_relevant(case, pinned_in_seed)),
        required_pinned=frozenset((exp.pinned_facts or NO_IDS_EXPECT).must_include),
    )


def check_case(
    case: RetrievalCase,
    pinned: Sequence[str],
    relevant: Sequence[str],
    questions: Sequence[str],
    stated_failures: Sequence[str],
    pinned_in_seed: Set[str],
) -> CaseCheck:
    """Re-derive one case from the returned ids of its three tiers."""
    return check_prepared(prepare_case(case, pinned_in_seed), pinned, relevant, questions, stated_failures)


def check_prepared(
    exp: PreparedCase,
    pinned: Sequence[str],
    relevant: Sequence[str],
    questions: Sequence[str],
    stated_failures: Sequence[str],
) -> CaseCheck:
    """:func:`check_case` for a prepared case."""
    return CaseCheck(*check_fields(exp, pinned, relevant, questions, stated_failures)[1:])


CheckFields = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], float | None, float | None, float | None]
"""The returned relevant ids without repeats, then the fields of a :class:`CaseCheck` in constructor order."""


def check_fields(
    exp: PreparedCase,
    pinned: Sequence[str],
    relevant: Sequence[str],
    questions: Sequence[str],
    stated_failures: Sequence[str],
) -> CheckFields:
    """:func:`check_prepared` as a plain tuple, for scoring a whole report without an object per case.

    Also returns ``relevant`` without repeats (in order), which the caller keeps.
    """
    relevant_set = set(relevant)
    # Repeats are rare: the set already tells whether dropping them is needed.
    unique_relevant = tuple(relevant) if len(relevant_set) == len(relevant) else tuple(dict.fromkeys(relevant))
    pinned_set = set(pinned)
    rb = exp.relevant
    union = pinned_set | relevant_set if rb.reads_union else relevant_set  # only read when reads_union
    failures = _relevant_failures(rb, unique_relevant, relevant_set, union)
    if exp.pinned is not None:
        failures += check_tier(exp.pinned, pinned_set, "missing pinned belief", "forbidden belief in pinnedFacts")
    if exp.questions is not None:
        failures += check_tier(
            exp.questions, set(questions), "missing expected question", "forbidden question surfaced"
        )
    # The prefix holds no newline, so it occurs in the joined text exactly when it occurs in some message.
    persona = (
        tuple(
            f
            for f in (normalize_failure(m) for m in stated_failures if PERSONA_PREFIX in m)
            if f.startswith(PERSONA_PREFIX)
        )
        if PERSONA_PREFIX in "\n".join(stated_failures)
        else ()
    )

    # Sets: G and R hold no repeats, so |G ∩ R| and the count of required pinned ids returned are set sizes.
    gold = exp.gold
    hits = len(gold & relevant_set)
    if not relevant and not gold:
        precision: float | None = None
    elif not relevant:
        precision = 0.0
    else:
        precision = hits / len(relevant_set)
    recall = None if not gold else hits / len(gold)

    required = exp.required_pinned
    pinned_coverage = None if not required else len(required & pinned_set) / len(required)
    return unique_relevant, tuple(failures), persona, precision, recall, pinned_coverage
