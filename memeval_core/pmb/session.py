"""Re-derive one PMB session turn from the ids a system returned, exactly as the harness does.

Mirrors ``src/session-retrieval.external.eval.test.ts``: gold ``G`` = ``shouldOnlyInclude`` if
stated, else ``mustInclude``; ``R`` = returned relevant ids, ``P`` = returned pinned ids;
hits = ``|{g in G : g in R or g in P}|``;

- precision = None if ``R`` is empty, else hits / ``|R|``;
- recall = None if ``G`` is empty, else hits / ``|G|``;
- harness drift = 1 - precision, and 0 when ``R`` is empty (an empty answer is *not* isolation:
  :attr:`TurnCheck.returned_nothing` says so);
- noise ids: the turn's ``noiseCheck.mustNotSurface`` ids that were returned (relevant or pinned).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memeval_core.pmb.assertions import check_tier, normalize_failure, unique
from memeval_core.pmb.models import BeliefsExpect, IdsExpect, SessionTurn


@dataclass(frozen=True)
class TurnCheck:
    """Outcome of re-deriving one session turn."""

    failures: tuple[str, ...]
    """Failures re-derived from returned ids, harness messages."""
    noise_ids: tuple[str, ...]
    """Noise beliefs that surfaced."""
    precision: float | None
    """Re-derived precision."""
    recall: float | None
    """Re-derived recall."""
    drift: float
    """Harness drift: 1 - precision, 0 when nothing relevant was returned."""
    returned_nothing: bool
    """True when the relevant tier came back empty (drift 0 by construction, not isolation)."""
    report_failures: tuple[str, ...] = ()
    """Open-question failures taken from the report when it did not record the question tier."""

    @property
    def passed(self) -> bool:
        """A turn passes only when every assertion holds."""
        return not self.failures and not self.report_failures


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A fixture turn in the form scoring reads it (attribute reads of the pydantic models are slow).

    Built once per turn per fixture (:attr:`~memeval_core.pmb.fixtures.PmbFixture.prepared_turns`): a load
    scores every turn once per report.
    """

    turn_index: int
    label: str
    user_message: str
    only: tuple[str, ...] | None
    """``shouldOnlyInclude`` without repeats; None when not stated."""
    only_set: frozenset[str]
    must_include: tuple[str, ...]
    must_exclude: tuple[str, ...]
    pinned: IdsExpect | None
    questions: IdsExpect | None
    noise: tuple[str, ...] | None
    """``noiseCheck.mustNotSurface``; None without a noise check."""
    gold: tuple[str, ...]
    """The gold set (:func:`gold_turn`)."""


def prepare_turn(turn: SessionTurn) -> PreparedTurn:
    """The assertions of ``turn`` prepared for :func:`check_prepared_turn`."""
    expect = turn.expect
    rb = expect.relevant_beliefs
    only = None if rb is None or rb.should_only_include is None else tuple(unique(rb.should_only_include))
    return PreparedTurn(
        turn_index=turn.turn_index,
        label=turn.label,
        user_message=turn.user_message,
        only=only,
        only_set=frozenset(only or ()),
        must_include=() if rb is None else tuple(rb.must_include),
        must_exclude=() if rb is None else tuple(rb.must_exclude),
        pinned=expect.pinned_facts,
        questions=expect.open_questions,
        noise=None if expect.noise_check is None else tuple(expect.noise_check.must_not_surface),
        gold=tuple(gold_turn(rb)),
    )


def check_turn(
    turn: SessionTurn,
    relevant: Sequence[str],
    pinned: Sequence[str],
    questions: Sequence[str] | None,
    stated_failures: Sequence[str] = (),
) -> TurnCheck:
    """Re-derive one turn.

    ``questions`` None means the report did not record the question tier: open-question
    failures are then taken from ``stated_failures``.
    """
    return check_prepared_turn(prepare_turn(turn), relevant, pinned, questions, stated_failures)


def check_prepared_turn(
    turn: PreparedTurn,
    relevant: Sequence[str],
    pinned: Sequence[str],
    questions: Sequence[str] | None,
    stated_failures: Sequence[str] = (),
) -> TurnCheck:
    """:func:`check_turn` for a prepared turn."""
    relevant = unique(relevant)
    relevant_set, pinned_set = set(relevant), set(pinned)
    t = turn.turn_index
    failures: list[str] = []
    if turn.only is not None:
        failures += [f"turn {t}: unexpected relevant belief: {i}" for i in relevant if i not in turn.only_set]
        failures += [f"turn {t}: missing expected belief: {i}" for i in turn.only if i not in relevant_set]
    if turn.must_include:
        failures += [
            f"turn {t}: missing belief: {i}" for i in turn.must_include if i not in relevant_set and i not in pinned_set
        ]
    if turn.must_exclude:
        failures += [
            f"turn {t}: forbidden belief: {i}" for i in turn.must_exclude if i in relevant_set or i in pinned_set
        ]
    if turn.pinned is not None:
        failures += check_tier(turn.pinned, pinned_set, f"turn {t}: missing pinned", f"turn {t}: forbidden pinned")
    taken: tuple[str, ...] = ()
    if turn.questions is not None:
        missing_q, forbidden_q = f"turn {t}: missing question", f"turn {t}: forbidden question"
        if questions is not None:
            failures += check_tier(turn.questions, set(questions), missing_q, forbidden_q)
        else:
            taken = tuple(f for f in map(normalize_failure, stated_failures) if f.startswith((missing_q, forbidden_q)))
    noise: list[str] = []
    if turn.noise is not None:
        for i in turn.noise:
            if i in relevant_set or i in pinned_set:
                noise.append(i)
                failures.append(f"turn {t}: noise belief surfaced: {i}")

    gold = turn.gold
    hits = sum(1 for g in gold if g in relevant_set or g in pinned_set)
    precision = None if not relevant else hits / len(relevant)
    recall = None if not gold else hits / len(gold)
    drift = 0.0 if precision is None else 1 - precision
    return TurnCheck(tuple(failures), tuple(noise), precision, recall, drift, not relevant, taken)


def gold_turn(rb: BeliefsExpect | None) -> list[str]:
    """Gold set of a turn: shouldOnlyInclude if stated, else mustInclude."""
    if rb is None:
        return []
    if rb.should_only_include is not None:
        return unique(rb.should_only_include)
    return unique(rb.must_include)
