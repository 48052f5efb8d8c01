"""Reference systems simulated over the fixture: one that returns nothing, one that returns everything.

They bound what a pass count means. A system that returns nothing passes every case whose
assertions hold for empty tiers (the trivially-empty and some structural passes); a system that
returns everything passes only cases that assert nothing about what must be left out.

Both are scored with the harness's own checks (:func:`memeval_core.pmb.assertions.check_case` and
:func:`memeval_core.pmb.session.check_turn`) and classified with
:func:`memeval_core.pmb.pass_types.classify_pass`:

- *returns nothing*: pinned, relevant and open-question tiers all empty;
- *returns everything*: pinned tier = every pinned belief of the harness user
  (:attr:`PmbFixture.pinned_in_seed`), relevant tier = every belief of the corpus in fixture order
  (other users' beliefs included), questions tier = every ``open_question`` belief. In sessions the
  corpus grows: a belief created at turn ``t`` (``createBeliefAtTurn``) is ingested after turn ``t``,
  so it is returned from turn ``t + 1`` on and in every later session case (the fixture's session
  cases run in order against one store).

Assumption: persona-prelude checks need the prelude text, which cannot be simulated; they are
counted as satisfied. :attr:`ReferenceSystem.persona_assumed` lists the passed cases whose verdict
rests on that assumption, so a page can show the count as an upper bound. Sessions have no prelude
checks. Order-sensitive checks (``orderedBefore``) see the fixture order of the corpus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from memeval_core.explore.case_view import SESSION_CATEGORY
from memeval_core.pmb.assertions import CaseCheck, check_case
from memeval_core.pmb.fixtures import HARNESS_USER, PmbFixture
from memeval_core.pmb.models import Belief
from memeval_core.pmb.pass_types import PASS_TYPES, PassType, classify_pass
from memeval_core.pmb.run import Benchmark
from memeval_core.pmb.session import TurnCheck, check_turn

ReferenceName = Literal["returns nothing", "returns everything"]
REFERENCE_NAMES: tuple[ReferenceName, ...] = ("returns nothing", "returns everything")

PERSONA_ASSUMPTION = (
    "persona-prelude checks cannot be simulated (reports do not store the prelude text) and are counted as satisfied"
)


@dataclass(frozen=True)
class ReferenceCase:
    """One simulated case or session turn."""

    case_id: str
    """Case id (session turns: the session case id)."""
    turn_index: int | None
    """Session turn index; None for single-turn cases."""
    category: str
    """Fixture category."""
    passed: bool
    """Verdict of the harness checks on the simulated tiers."""
    pass_type: PassType | None
    """Pass type; None when failed."""
    precision: float | None
    """Precision of the simulated relevant tier."""
    recall: float | None
    """Recall of the simulated relevant tier."""
    failures: tuple[str, ...]
    """Harness failure messages."""


@dataclass(frozen=True)
class ReferenceSystem:
    """A simulated system scored over every case of one PMB suite."""

    name: ReferenceName
    """Which reference system."""
    benchmark: Benchmark
    """Suite simulated."""
    assumption: str
    """What the simulation had to assume."""
    cases: tuple[ReferenceCase, ...]
    """Every case (session: turn) in fixture order."""
    persona_assumed: tuple[str, ...]
    """Ids of passed cases that have persona-prelude assertions (their pass rests on the assumption)."""

    @property
    def passed(self) -> int:
        """Cases passed."""
        return sum(c.passed for c in self.cases)

    @property
    def pass_rate(self) -> float | None:
        """passed / cases."""
        return self.passed / len(self.cases) if self.cases else None

    @property
    def pass_types(self) -> dict[str, int]:
        """Passes by type, keys as in :data:`PASS_TYPES`."""
        out: dict[str, int] = dict.fromkeys(PASS_TYPES, 0)
        for c in self.cases:
            if c.pass_type is not None:
                out[c.pass_type] += 1
        return out

    @property
    def mean_precision(self) -> float | None:
        """Mean of non-null precisions."""
        return _mean([c.precision for c in self.cases])

    @property
    def mean_recall(self) -> float | None:
        """Mean of non-null recalls."""
        return _mean([c.recall for c in self.cases])


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def _case(case_id: str, turn: int | None, category: str, chk: CaseCheck | TurnCheck) -> ReferenceCase:
    """One simulated case (session: turn) as the harness's check scored it."""
    pass_type = classify_pass(chk.passed, chk.precision, category)
    return ReferenceCase(case_id, turn, category, chk.passed, pass_type, chk.precision, chk.recall, chk.failures)


def _single_turn(fixture: PmbFixture, name: ReferenceName) -> ReferenceSystem:
    everything = name == "returns everything"
    pinned = sorted(fixture.pinned_in_seed) if everything else []
    relevant = [b.id for b in fixture.beliefs] if everything else []
    questions = [b.id for b in fixture.beliefs if b.type == "open_question"] if everything else []
    seeds = set(fixture.pinned_in_seed)
    cases: list[ReferenceCase] = []
    persona: list[str] = []
    for case in fixture.cases:
        chk = check_case(case, pinned, relevant, questions, (), seeds)
        cases.append(_case(case.case_id, None, case.category, chk))
        if chk.passed and case.expect.persona_prelude is not None:
            persona.append(case.case_id)
    return ReferenceSystem(name, "pmb-single-turn", PERSONA_ASSUMPTION, tuple(cases), tuple(persona))


def _created(doc: dict[str, object] | None) -> Belief | None:
    if doc is None or not isinstance(doc.get("_id"), str):
        return None
    return Belief.model_validate({"user_id": HARNESS_USER, "type": "unknown", **doc})


def _session(fixture: PmbFixture, name: ReferenceName) -> ReferenceSystem:
    everything = name == "returns everything"
    corpus: list[Belief] = list(fixture.beliefs)
    cases: list[ReferenceCase] = []
    for session in fixture.session_cases:
        for turn in session.turns:
            if everything:
                relevant = [b.id for b in corpus]
                pinned = [b.id for b in corpus if b.pinned and b.user_id == HARNESS_USER]
                questions = [b.id for b in corpus if b.type == "open_question"]
            else:
                relevant, pinned, questions = [], [], []
            chk = check_turn(turn, relevant, pinned, questions)
            cases.append(_case(session.case_id, turn.turn_index, SESSION_CATEGORY, chk))
            # Ingested after the turn: visible from the next turn on.
            created = _created(turn.create_belief_at_turn)
            if created is not None and created.id not in {b.id for b in corpus}:
                corpus.append(created)
    return ReferenceSystem(name, "pmb-session", "sessions have no persona-prelude checks", tuple(cases), ())


def reference_system(fixture: PmbFixture, name: ReferenceName, benchmark: Benchmark) -> ReferenceSystem:
    """Simulate one reference system over one suite (see the module docstring for the tiers)."""
    if name not in REFERENCE_NAMES:
        raise ValueError(f"reference system must be one of {REFERENCE_NAMES}, got {name!r}")
    if benchmark == "pmb-single-turn":
        return _single_turn(fixture, name)
    if benchmark == "pmb-session":
        return _session(fixture, name)
    raise ValueError(f"benchmark must be 'pmb-single-turn' or 'pmb-session', got {benchmark!r}")


def reference_frame(fixture: PmbFixture, benchmark: Benchmark) -> pd.DataFrame:
    """Both reference systems as rows for the pass-quality bars' reference lines.

    Columns: ``name, benchmark, cases, passed, pass_rate, active_retrieval, structural,
    trivially_empty, mean_precision, mean_recall, persona_assumed`` (count of passes resting on the
    persona assumption).
    """
    rows = []
    for name in REFERENCE_NAMES:
        ref = reference_system(fixture, name, benchmark)
        rows.append(
            {
                "name": name,
                "benchmark": benchmark,
                "cases": len(ref.cases),
                "passed": ref.passed,
                "pass_rate": ref.pass_rate,
                **ref.pass_types,
                "mean_precision": ref.mean_precision,
                "mean_recall": ref.mean_recall,
                "persona_assumed": len(ref.persona_assumed),
            }
        )
    return pd.DataFrame(rows)
