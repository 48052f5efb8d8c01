"""One case across runs side by side: verdict, returned ids classified per tier, latency.

Classification of the ids a system returned, per tier (``G`` = the gold relevant set the harness
scores precision against: single-turn ``shouldOnlyInclude`` if stated, else ``mustInclude`` minus
pinned seeds; session ``shouldOnlyInclude`` if stated, else ``mustInclude``):

- **forbidden**: returned ids an assertion forbids in that tier: relevant ``mustExclude`` (checked
  on pinned and relevant tiers), ``pinnedFacts.mustExclude`` (pinned tier),
  ``openQuestions.mustExclude`` (questions tier), session ``noiseCheck.mustNotSurface`` (pinned and
  relevant tiers);
- **correct**: returned, not forbidden, and asked for in that tier: relevant tier: ids of ``G``,
  ``mustInclude`` or ``shouldInclude``; pinned tier: ``pinnedFacts.mustInclude`` and the ids that
  ``mustInclude``/``shouldInclude`` (and, in sessions, ``G``) accept from either tier; questions
  tier: ``openQuestions.mustInclude``;
- **unexpected**: any other returned id. In the relevant tier these lower precision (and fail a
  ``shouldOnlyInclude`` assertion when there is one); the pinned and questions tiers have no
  exclusivity assertion, so there they are not failures;
- **missing**: required ids not returned where required: ``shouldOnlyInclude`` ids absent from the
  relevant tier; ``mustInclude``/``shouldInclude`` ids absent from both pinned and relevant tiers;
  ``pinnedFacts.mustInclude`` absent from the pinned tier (listed under the pinned tier);
  ``openQuestions.mustInclude`` absent from the questions tier.

A tier the report did not record (the questions tier of session reports) has ``recorded=False``
and no ids; its failures are the report's own (see :attr:`ScoredCase.taken_from_report`).

A run *returned nothing* on a case only when no tier holds an id (the harness's own flag looks at the
relevant tier alone; a run that returned pinned facts or open questions did return something). Every
belief id a view mentions carries its text from the fixture's ``beliefs.seed.json``
(:attr:`CaseView.beliefs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd
import pyarrow as pa

from memeval_core import parquet
from memeval_core.pmb.assertions import gold_relevant, unique
from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.models import BeliefsExpect, CaseExpect, IdsExpect, PreludeExpect, SessionTurnExpect
from memeval_core.pmb.pass_types import PassType
from memeval_core.pmb.rescore import ScoredCase
from memeval_core.pmb.run import Benchmark, PmbRun
from memeval_core.pmb.session import gold_turn

SESSION_CATEGORY = "Session-level noise isolation"
"""The one category of session turns (the harness states it on every session entry)."""

TierName = Literal["pinned", "relevant", "questions"]
TIERS: tuple[TierName, ...] = ("pinned", "relevant", "questions")
TIER_NAMES: dict[TierName, str] = {
    "pinned": "pinned facts",
    "relevant": "relevant beliefs",
    "questions": "open questions",
}
"""How each tier reads in a sentence or a table."""
PASS_TYPE_NAMES: dict[str, str] = {"active_retrieval": "active", "structural": "structural", "trivially_empty": "empty"}
"""How each pass type reads (the leaderboard's column names: active, structural and empty passes)."""
UNKNOWN_BELIEF = "(not in beliefs.seed.json)"
"""The text of a belief id the fixture's belief corpus does not hold."""


@dataclass(frozen=True)
class Expectation:
    """What a case (or session turn) asserts, tier by tier."""

    gold: tuple[str, ...]
    """The gold relevant set ``G`` precision and recall are scored against."""
    should_only_include: tuple[str, ...] | None
    """Relevant tier must be exactly these; None when not asserted."""
    must_include: tuple[str, ...]
    """Ids that must be returned (pinned or relevant tier)."""
    must_exclude: tuple[str, ...]
    """Ids that must not be returned (pinned or relevant tier)."""
    should_include: tuple[str, ...]
    """Ids expected in pinned or relevant tier."""
    pinned_must_include: tuple[str, ...]
    """Ids the pinned tier must hold."""
    pinned_must_exclude: tuple[str, ...]
    """Ids the pinned tier must not hold."""
    questions_must_include: tuple[str, ...]
    """Ids the open-questions tier must hold."""
    questions_must_exclude: tuple[str, ...]
    """Ids the open-questions tier must not hold."""
    noise_must_not_surface: tuple[str, ...]
    """Session turns: drift beliefs that must not surface (pinned or relevant tier)."""
    max_count: int | None
    """At most this many relevant ids."""
    min_count: int | None
    """At least this many relevant ids."""
    ordered_before: tuple[tuple[str, str], ...]
    """Pairs (a, b): a ranked before b in the relevant tier."""
    persona_prelude: PreludeExpect | None
    """Prelude assertions (single-turn; not re-derivable from reports)."""


@dataclass(frozen=True)
class ClassifiedTier:
    """The ids one run returned in one tier, classified against the expectation."""

    tier: TierName
    """Which tier."""
    recorded: bool
    """False when the report does not record this tier."""
    returned: tuple[str, ...]
    """Returned ids in returned order."""
    correct: tuple[str, ...]
    """Returned and asked for."""
    unexpected: tuple[str, ...]
    """Returned, neither asked for nor forbidden."""
    forbidden: tuple[str, ...]
    """Returned though forbidden."""
    missing: tuple[str, ...]
    """Required here but not returned."""


@dataclass(frozen=True)
class CaseOutcome:
    """What one run did on the case."""

    display_name: str
    """Run display name."""
    run_id: str
    """Run id."""
    passed: bool
    """Re-derived verdict."""
    pass_type: PassType | None
    """Pass type; None when failed."""
    precision: float | None
    """Re-derived precision."""
    recall: float | None
    """Re-derived recall."""
    drift: float | None
    """Session turns: harness drift; None for single-turn cases."""
    returned_nothing: bool
    """Nothing came back in any tier (see :func:`nothing_returned`)."""
    latency_ms: float
    """Retrieval latency."""
    tiers: tuple[ClassifiedTier, ...]
    """Pinned, relevant and questions tiers, in that order."""
    failures: tuple[str, ...]
    """Failure messages (re-derived, then the report's own for checks that cannot be re-derived)."""
    taken_from_report: tuple[str, ...]
    """The failures that are the report's word."""

    def tier(self, name: TierName) -> ClassifiedTier:
        """The classified tier called ``name``."""
        return next(t for t in self.tiers if t.tier == name)


@dataclass(frozen=True)
class CaseView:
    """One case (or session turn) with the outcome of every run that has it."""

    case_id: str
    """Case id (session: session case id)."""
    turn_index: int | None
    """Session turn index; None for single-turn cases."""
    label: str
    """Session turn label; empty for single-turn cases."""
    category: str
    """Fixture category."""
    description: str
    """Case description (session: the case description)."""
    query: str
    """Query sent to the system (session: the user message of the turn)."""
    topics: tuple[str, ...]
    """Session turn topics; empty for single-turn cases."""
    expectation: Expectation
    """What the case asserts."""
    outcomes: tuple[CaseOutcome, ...]
    """One per run that ran the case, in the order the runs were given."""
    beliefs: dict[str, str] = field(default_factory=dict)
    """Text of every belief id the expectation names or a run returned or missed (see :func:`belief_text`)."""


def _ids(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(unique(values))


def _expectation(e: CaseExpect | SessionTurnExpect, gold: Iterable[str]) -> Expectation:
    """What a single-turn case (``e`` a :class:`CaseExpect`) or a session turn asserts, with its gold set."""
    rb, pf, oq = e.relevant_beliefs or BeliefsExpect(), e.pinned_facts or IdsExpect(), e.open_questions or IdsExpect()
    single = e if isinstance(e, CaseExpect) else None  # for the assertions only single-turn cases make
    noise = None if isinstance(e, CaseExpect) else e.noise_check
    return Expectation(
        gold=_ids(gold),
        should_only_include=None if rb.should_only_include is None else _ids(rb.should_only_include),
        must_include=_ids(rb.must_include),
        must_exclude=_ids(rb.must_exclude),
        should_include=_ids(rb.should_include) if single else (),
        pinned_must_include=_ids(pf.must_include),
        pinned_must_exclude=_ids(pf.must_exclude),
        questions_must_include=_ids(oq.must_include),
        questions_must_exclude=_ids(oq.must_exclude),
        noise_must_not_surface=_ids(noise.must_not_surface) if noise else (),
        max_count=rb.max_count if single else None,
        min_count=rb.min_count if single else None,
        ordered_before=tuple((a, b) for a, b in rb.ordered_before) if single else (),
        persona_prelude=single.persona_prelude if single else None,
    )


def _single_expectation(fixture: PmbFixture, case_id: str) -> tuple[Expectation, str, str, str]:
    case = fixture.case_by_id.get(case_id)
    if case is None:
        raise KeyError(f"case {case_id!r} is not in the fixture's retrieval cases ({fixture.source or 'fixture'})")
    exp = _expectation(case.expect, gold_relevant(case, set(fixture.pinned_in_seed)))
    return exp, case.category, case.description, case.query


def _turn_expectation(fixture: PmbFixture, case_id: str, turn_index: int) -> tuple[Expectation, str, str, str]:
    turn = fixture.turn_by_key.get((case_id, turn_index))
    if turn is None:
        raise KeyError(f"session turn ({case_id!r}, {turn_index}) is not in the fixture's session cases")
    session = next(s for s in fixture.session_cases if s.case_id == case_id)
    exp = _expectation(turn.expect, gold_turn(turn.expect.relevant_beliefs))
    return exp, SESSION_CATEGORY, session.description, turn.user_message


def wanted(exp: Expectation, tier: TierName, session: bool) -> frozenset[str]:
    """Ids the case asks for in ``tier``: returned there (and not forbidden), they are correct."""
    # Ids an assertion accepts from either tier; in sessions, gold hits count in the pinned tier too.
    either = set(exp.must_include) | set(exp.should_include) | (set(exp.gold) if session else set())
    if tier == "pinned":
        return frozenset(set(exp.pinned_must_include) | either)
    if tier == "relevant":
        return frozenset(set(exp.gold) | either)
    return frozenset(exp.questions_must_include)


def nothing_returned(tiers: Iterable[ClassifiedTier]) -> bool:
    """True only when no tier holds a returned id (a run that returned only pinned facts did return something)."""
    return not any(t.returned for t in tiers)


def classify_tiers(scored: ScoredCase, exp: Expectation) -> tuple[ClassifiedTier, ...]:
    """Classify the returned ids of one scored case, tier by tier (rules in the module docstring)."""
    session = scored.turn_index is not None
    pinned, relevant = scored.pinned, scored.relevant
    union = set(pinned) | set(relevant)
    forbidden_any = set(exp.must_exclude) | set(exp.noise_must_not_surface)

    def split(
        returned: Sequence[str], wanted: set[str], forbidden: set[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        bad = tuple(i for i in returned if i in forbidden)
        good = tuple(i for i in returned if i in wanted and i not in forbidden)
        other = tuple(i for i in returned if i not in wanted and i not in forbidden)
        return good, other, bad

    soi, relevant_set = set(exp.should_only_include or ()), set(relevant)
    missing_rel = tuple(
        i
        for i in unique([*exp.gold, *exp.must_include, *exp.should_include])
        if ((i not in relevant_set) if i in soi else (i not in union))
    )
    rel = split(relevant, set(wanted(exp, "relevant", session)), forbidden_any)
    pin = split(pinned, set(wanted(exp, "pinned", session)), forbidden_any | set(exp.pinned_must_exclude))
    out = [
        ClassifiedTier(
            "pinned",
            True,
            pinned,
            *pin,
            tuple(i for i in exp.pinned_must_include if i not in set(pinned)),
        ),
        ClassifiedTier("relevant", True, relevant, *rel, missing_rel),
    ]
    if scored.questions is None:
        out.append(ClassifiedTier("questions", False, (), (), (), (), ()))
    else:
        q = scored.questions
        qs = split(q, set(wanted(exp, "questions", session)), set(exp.questions_must_exclude))
        out.append(
            ClassifiedTier("questions", True, q, *qs, tuple(i for i in exp.questions_must_include if i not in set(q)))
        )
    return tuple(out)


def case_view(runs: Sequence[PmbRun], fixture: PmbFixture, case_id: str, turn_index: int | None = None) -> CaseView:
    """One case across runs: single-turn runs when ``turn_index`` is None, else session runs.

    Runs of the other suite, and runs that did not report the case, are left out.
    """
    benchmark: Benchmark = "pmb-single-turn" if turn_index is None else "pmb-session"
    scored = []
    for run in runs:
        row = run.table.index_of(case_id, turn_index) if run.identity.benchmark == benchmark else None
        if row is not None:
            scored.append((run.identity.display_name, run.identity.run_id, run.table.case(row)))
    return _view(fixture, case_id, turn_index, scored)


def case_view_of_rows(
    cases: pa.Table, names: Mapping[str, str], fixture: PmbFixture, case_id: str, turn_index: int | None = None
) -> CaseView:
    """:func:`case_view` from the rows of one case in the cases table (``run_id`` and every :class:`ScoredCase`
    column, as :attr:`memeval_core.pmb.snapshot.PmbHeaders.read_case` gives them), for the runs ``names`` lists
    (run id -> display name), in its order; rows of other runs or cases are left out."""
    rows = cases.filter(parquet.rows_equal(cases, {"case_id": case_id, "turn_index": turn_index}))
    position = {run_id: n for n, run_id in enumerate(rows.column("run_id").to_pylist())}
    table = CaseTable.from_arrow(rows)
    shown = [(names[i], i, table.case(position[i])) for i in names if i in position]
    return _view(fixture, case_id, turn_index, shown)


def _view(
    fixture: PmbFixture, case_id: str, turn_index: int | None, scored: Sequence[tuple[str, str, ScoredCase]]
) -> CaseView:
    """The view of one case from each run's scored case: ``(display name, run id, case)``."""
    topics: tuple[str, ...]
    if turn_index is None:
        exp, category, description, query = _single_expectation(fixture, case_id)
        label, topics = "", ()
    else:
        exp, category, description, query = _turn_expectation(fixture, case_id, turn_index)
        turn = fixture.turn_by_key[(case_id, turn_index)]
        label, topics = turn.label, tuple(turn.topics)
    outcomes = [_outcome(name, run_id, case, exp) for name, run_id, case in scored]
    texts = {i: belief_text(fixture, i) for i in _mentioned(exp, outcomes)}
    return CaseView(case_id, turn_index, label, category, description, query, topics, exp, tuple(outcomes), texts)


def _outcome(display_name: str, run_id: str, scored: ScoredCase, exp: Expectation) -> CaseOutcome:
    tiers = classify_tiers(scored, exp)
    return CaseOutcome(
        display_name=display_name,
        run_id=run_id,
        passed=scored.passed,
        pass_type=scored.pass_type,
        precision=scored.precision,
        recall=scored.recall,
        drift=scored.drift,
        returned_nothing=nothing_returned(tiers),
        latency_ms=scored.latency_ms,
        tiers=tiers,
        failures=scored.failures,
        taken_from_report=scored.taken_from_report,
    )


def belief_text(fixture: PmbFixture, belief_id: str) -> str:
    """The belief's text from ``beliefs.seed.json`` (its canonical name when it has no text); a marker when unknown."""
    belief = fixture.belief_by_id.get(belief_id)
    if belief is None:
        return UNKNOWN_BELIEF
    return belief.content or belief.canonical_name or UNKNOWN_BELIEF


def _mentioned(exp: Expectation, outcomes: Iterable[CaseOutcome]) -> list[str]:
    """Every belief id the expectation names or an outcome returned or missed, first-seen order."""
    ids = [i for _, group in _id_assertions(exp) for i in group]
    ids += [i for pair in exp.ordered_before for i in pair]
    ids += [i for o in outcomes for t in o.tiers for i in (*t.returned, *t.missing)]
    return list(dict.fromkeys(ids))


CASE_KEY_SEPARATOR = "/"
"""Separates a session case id from its turn index in a case key (``<case_id>/<turn_index>``)."""

ID_CLASSES = ("correct", "unexpected", "forbidden", "missing")
"""How a returned (or missing) id is classified, in display order."""
CLASS_MARKS = {"correct": "✓ correct", "unexpected": "+ unexpected", "forbidden": "✗ forbidden", "missing": "○ missing"}
"""How each classification reads on screen (:func:`marked`); downloads keep the bare word."""
CLASS_LEGEND = (
    "✓ correct = returned and asked for; + unexpected = returned, not asked for (lowers precision in the relevant "
    "tier); ✗ forbidden = returned though an assertion excludes it; ○ missing = required, not returned; blank = "
    "neither. Gold ✓: the case asks for this belief in this tier."
)
"""What the marks of :data:`CLASS_MARKS` and the gold column mean."""
TIER_COUNTS: dict[TierName, str] = {"pinned": "n_pinned", "relevant": "n_relevant", "questions": "n_open_questions"}
"""The :func:`outcome_frame` column counting the ids returned in each tier."""


def case_key(case_id: str, turn_index: int | None = None) -> str:
    """The key of a case in links: the case id for single-turn cases, ``<case_id>/<turn_index>`` for session turns."""
    return case_id if turn_index is None else f"{case_id}{CASE_KEY_SEPARATOR}{turn_index}"


def parse_case_key(key: str) -> tuple[str, int | None]:
    """Inverse of :func:`case_key`: ``(case_id, turn_index)``; turn_index None when there is no ``/<digits>`` suffix."""
    head, sep, tail = key.rpartition(CASE_KEY_SEPARATOR)
    if sep and head and tail.isdigit():
        return head, int(tail)
    return key, None


def expectation_frame(exp: Expectation) -> pd.DataFrame:
    """The assertions a case makes, one row each, only those it states.

    Columns: ``tier`` (pinned / relevant / questions / pinned or relevant), ``assertion`` (the
    fixture's name for it), ``value`` (ids joined with ``, ``; ``a < b`` for ordering pairs; a
    number for counts). The gold set ``G`` is listed first as ``gold (precision and recall)``.
    """
    rows: list[tuple[str, str, str]] = [("relevant", "gold (precision and recall)", ", ".join(exp.gold))]
    if exp.should_only_include is not None:
        rows.append(("relevant", "shouldOnlyInclude", ", ".join(exp.should_only_include)))
    lists = [
        ("pinned or relevant", "mustInclude", exp.must_include),
        ("pinned or relevant", "mustExclude", exp.must_exclude),
        ("pinned or relevant", "shouldInclude", exp.should_include),
        ("pinned or relevant", "noiseCheck.mustNotSurface", exp.noise_must_not_surface),
        ("pinned", "pinnedFacts.mustInclude", exp.pinned_must_include),
        ("pinned", "pinnedFacts.mustExclude", exp.pinned_must_exclude),
        ("questions", "openQuestions.mustInclude", exp.questions_must_include),
        ("questions", "openQuestions.mustExclude", exp.questions_must_exclude),
    ]
    rows += [(tier, name, ", ".join(ids)) for tier, name, ids in lists if ids]
    if exp.max_count is not None:
        rows.append(("relevant", "maxCount", str(exp.max_count)))
    if exp.min_count is not None:
        rows.append(("relevant", "minCount", str(exp.min_count)))
    if exp.ordered_before:
        rows.append(("relevant", "orderedBefore", ", ".join(f"{a} < {b}" for a, b in exp.ordered_before)))
    if exp.persona_prelude is not None:
        prelude = exp.persona_prelude.model_dump_json(exclude_defaults=True, by_alias=True)
        rows.append(("prelude", "personaPrelude", prelude))
    return pd.DataFrame(rows, columns=["tier", "assertion", "value"])


def id_matrix(view: CaseView) -> pd.DataFrame:
    """Every id any run returned (or missed) on the case, classified per run, side by side.

    One row per (tier, id) in tier order; within a tier the ids the case asks for there come first,
    then the others, each group in first-seen order over the runs (returned ids first, then missing
    ones). ``belief`` is the id's text, ``gold`` True when the case asks for the id in that tier (see
    :func:`wanted`). One column per run (display name) holding ``correct`` / ``unexpected`` /
    ``forbidden`` / ``missing``, or an empty string when that run neither returned nor missed it.
    Tiers a report did not record contribute nothing. Columns: ``tier, id, belief, gold, <display names...>``.
    """
    names = [o.display_name for o in view.outcomes]
    session = view.turn_index is not None
    rows: list[dict[str, object]] = []
    for tier in TIERS:
        cells: dict[str, dict[str, str]] = {}
        for o in view.outcomes:
            t = o.tier(tier)
            for cls in ID_CLASSES:
                for i in getattr(t, cls):
                    cells.setdefault(i, {}).setdefault(o.display_name, cls)
        asked = wanted(view.expectation, tier, session)
        for i in sorted(cells, key=lambda i: i not in asked):  # stable: first-seen order within each group
            by_run = cells[i]
            text = view.beliefs.get(i, UNKNOWN_BELIEF)
            rows.append(
                {"tier": tier, "id": i, "belief": text, "gold": i in asked, **{n: by_run.get(n, "") for n in names}}
            )
    frame = pd.DataFrame(rows, columns=["tier", "id", "belief", "gold", *names])
    frame["gold"] = frame["gold"].astype(bool)
    return frame


def marked(matrix: pd.DataFrame, runs: Sequence[str]) -> pd.DataFrame:
    """An :func:`id_matrix` as it reads on screen: tiers in words, each run's classifications with their marks."""
    shown = matrix.assign(tier=[TIER_NAMES[t].capitalize() for t in matrix["tier"]])
    for name in runs:
        shown[name] = [CLASS_MARKS.get(c, c) for c in matrix[name]]
    return shown


def _id_assertions(exp: Expectation) -> list[tuple[str, tuple[str, ...]]]:
    """The expectation's id assertions as (what it asks, in words; the ids), in the fixture's order."""
    return [
        ("gold", exp.gold),
        ("relevant: only these", exp.should_only_include or ()),
        ("must be returned", exp.must_include),
        ("should be returned", exp.should_include),
        ("must not be returned", exp.must_exclude),
        ("noise: must not surface", exp.noise_must_not_surface),
        ("pinned facts: must include", exp.pinned_must_include),
        ("pinned facts: must not include", exp.pinned_must_exclude),
        ("open questions: must include", exp.questions_must_include),
        ("open questions: must not include", exp.questions_must_exclude),
    ]


def expected_beliefs(view: CaseView) -> pd.DataFrame:
    """Every belief the case names, with its text and what the case asks of it, one row per id.

    Columns: ``id, belief`` (its text), ``expected`` (the assertions on it in words, joined with ``; ``:
    ``must be returned``, ``pinned facts: must include``, ``ranked before b-x``, ...). Ids in the order
    the assertions name them (gold first).
    """
    asks: dict[str, list[str]] = {}
    for phrase, ids in _id_assertions(view.expectation):
        for i in ids:
            asks.setdefault(i, []).append(phrase)
    for a, b in view.expectation.ordered_before:
        asks.setdefault(a, []).append(f"ranked before {b}")
        asks.setdefault(b, []).append(f"ranked after {a}")
    rows = [{"id": i, "belief": view.beliefs.get(i, UNKNOWN_BELIEF), "expected": "; ".join(p)} for i, p in asks.items()]
    return pd.DataFrame(rows, columns=["id", "belief", "expected"])


def expectation_notes(exp: Expectation) -> list[str]:
    """What the case asserts beyond naming beliefs (counts, an empty relevant tier, the persona prelude), in words."""
    notes = []
    if exp.should_only_include == ():
        notes.append("Relevant beliefs: none expected; anything returned there fails the case.")
    if exp.max_count is not None:
        notes.append(f"Relevant beliefs: at most {exp.max_count}.")
    if exp.min_count is not None:
        notes.append(f"Relevant beliefs: at least {exp.min_count}.")
    if exp.persona_prelude is not None:
        prelude = exp.persona_prelude.model_dump_json(exclude_defaults=True, by_alias=True)
        notes.append(f"Persona prelude: {prelude} (reports do not store the prelude; its verdict is the report's).")
    return notes


def tier_summary(outcome: CaseOutcome) -> str:
    """What one run returned, tier by tier, in words.

    ``pinned facts: 2 (1 correct, 1 unexpected) · relevant beliefs: nothing · open questions: not recorded``;
    ``returned nothing in any tier`` first when no tier holds an id.
    """
    parts = ["returned nothing in any tier"] if outcome.returned_nothing else []
    for t in outcome.tiers:
        name = TIER_NAMES[t.tier]
        counts = ", ".join(f"{len(getattr(t, c))} {c}" for c in ID_CLASSES if getattr(t, c))
        if not t.recorded:
            parts.append(f"{name}: not recorded")
        elif not t.returned:
            parts.append(f"{name}: nothing" + (f" ({counts})" if counts else ""))
        else:
            parts.append(f"{name}: {len(t.returned)} ({counts})")
    return " · ".join(parts)


def who_passed(view: CaseView, name: Callable[[str], str] = str, listed: int = 5) -> str:
    """``3 of 13 systems pass this case: tenure, gbrain and yourmemory.``; ``name`` formats each system's name.

    At most ``listed`` names are spelled out (``… and 4 more``).
    """
    what = "case" if view.turn_index is None else "turn"
    n, passers = len(view.outcomes), [o.display_name for o in view.outcomes if o.passed]
    if not passers:
        return f"No system passes this {what} (0 of {n:,})."
    if len(passers) == n:
        return f"All {n:,} systems pass this {what}." if n > 1 else f"{name(passers[0])} passes this {what}."
    shown = [name(p) for p in passers[:listed]]
    rest = len(passers) - len(shown)
    names = ", ".join(shown[:-1]) + f" and {shown[-1]}" if rest == 0 and len(shown) > 1 else ", ".join(shown)
    more = f" and {rest:,} more" if rest else ""
    verb = "passes" if len(passers) == 1 else "pass"
    return f"{len(passers):,} of {n:,} systems {verb} this {what}: {names}{more}."


def failures_frame(view: CaseView) -> pd.DataFrame:
    """Failure messages of every run on the case: ``display_name, failure, from_report``.

    ``from_report`` is True for checks that cannot be re-derived from the report's ids, whose
    verdict is the report's own word.
    """
    rows = [
        {"display_name": o.display_name, "failure": f, "from_report": f in o.taken_from_report}
        for o in view.outcomes
        for f in o.failures
    ]
    frame = pd.DataFrame(rows, columns=["display_name", "failure", "from_report"])
    frame["from_report"] = frame["from_report"].astype(bool)
    return frame


_OUTCOME_FIELDS = (
    "display_name", "run_id", "passed", "pass_type", "precision", "recall", "drift", "returned_nothing", "latency_ms"
)  # fmt: skip
"""The :class:`CaseOutcome` fields :func:`outcome_frame` shows as they are, in its column order."""


def outcome_frame(view: CaseView) -> pd.DataFrame:
    """One row per run: verdict, scores, latency and counts of classified ids over all tiers.

    Columns: ``display_name, run_id, passed, pass_type, precision, recall, drift, returned_nothing,
    latency_ms, n_returned, n_pinned, n_relevant, n_open_questions`` (returned per tier; NA for a tier
    the report did not record), ``n_correct, n_unexpected, n_forbidden, n_missing, failures`` (messages
    joined with `` | ``).
    """
    rows = [
        {
            **{name: getattr(o, name) for name in _OUTCOME_FIELDS},
            "n_returned": sum(len(t.returned) for t in o.tiers),
            **{TIER_COUNTS[t.tier]: len(t.returned) if t.recorded else None for t in o.tiers},
            **{f"n_{cls}": sum(len(getattr(t, cls)) for t in o.tiers) for cls in ID_CLASSES},
            "failures": " | ".join(o.failures),
        }
        for o in view.outcomes
    ]
    columns = [*_OUTCOME_FIELDS, "n_returned", *TIER_COUNTS.values(), *(f"n_{cls}" for cls in ID_CLASSES), "failures"]
    frame = pd.DataFrame(rows, columns=columns)
    floats = dict.fromkeys(("precision", "recall", "drift", "latency_ms"), "float64")
    return frame.astype(floats | dict.fromkeys(TIER_COUNTS.values(), "Int64"))


def case_keys(fixture: PmbFixture, benchmark: Benchmark) -> tuple[str, ...]:
    """Case keys of one suite in fixture order (session: every turn of every session case)."""
    if benchmark == "pmb-single-turn":
        return tuple(case_key(c.case_id) for c in fixture.cases)
    return tuple(case_key(s.case_id, t.turn_index) for s in fixture.session_cases for t in s.turns)
