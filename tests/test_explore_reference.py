"""Reference systems on the real PMB fixture, checked against counts reasoned from the raw case JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memeval_core.explore.reference import reference_frame, reference_system
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import load_pmb

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "precisionmembench"


@pytest.fixture(scope="module")
def fixture() -> PmbFixture:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    fx = load_pmb(DATA / "test-results", DATA / "fixtures").fixture
    assert fx is not None
    return fx


@pytest.fixture(scope="module")
def raw_cases() -> list[dict[str, Any]]:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    cases: list[dict[str, Any]] = json.loads((DATA / "fixtures" / "retrieval.cases.json").read_text())
    return cases


def _empty_tiers_satisfy(expect: dict[str, Any]) -> bool:
    """Every assertion holds for three empty tiers: nothing must be included, no minimum, no ranking."""
    rb, pf, oq = expect.get("relevantBeliefs", {}), expect.get("pinnedFacts", {}), expect.get("openQuestions", {})
    return (
        not rb.get("shouldOnlyInclude")
        and not rb.get("mustInclude")
        and not rb.get("shouldInclude")
        and not rb.get("orderedBefore")
        and not rb.get("minCount")
        and not pf.get("mustInclude")
        and not oq.get("mustInclude")
    )


def test_returns_nothing_passes_exactly_the_cases_empty_tiers_satisfy(
    fixture: PmbFixture, raw_cases: list[dict[str, Any]]
) -> None:
    ref = reference_system(fixture, "returns nothing", "pmb-single-turn")
    expected = {c["caseId"] for c in raw_cases if _empty_tiers_satisfy(c["expect"])}
    assert {c.case_id for c in ref.cases if c.passed} == expected
    assert ref.passed == len(expected) == 22
    # Nothing returned: no pass can be active; structural categories give 15, the rest 7 trivially empty.
    assert ref.pass_types == {"active_retrieval": 0, "structural": 15, "trivially_empty": 7}
    # Passes resting on the persona assumption: the passed cases with a personaPrelude block.
    with_persona = {c["caseId"] for c in raw_cases if "personaPrelude" in c["expect"]} & expected
    assert set(ref.persona_assumed) == with_persona and len(with_persona) == 8
    assert ref.mean_recall == 0.0 and ref.mean_precision == 0.0


def test_returns_everything_passes_only_the_case_without_exclusivity(
    fixture: PmbFixture, raw_cases: list[dict[str, Any]]
) -> None:
    ref = reference_system(fixture, "returns everything", "pmb-single-turn")
    # 35 beliefs returned: any shouldOnlyInclude fails; of the 2 cases without one, isolation-user-scoping
    # forbids the other user's belief, leaving recency-tiebreak-reinforcement.
    without_soi = [c["caseId"] for c in raw_cases if "shouldOnlyInclude" not in c["expect"].get("relevantBeliefs", {})]
    assert sorted(without_soi) == ["isolation-user-scoping", "recency-tiebreak-reinforcement"]
    assert [c.case_id for c in ref.cases if c.passed] == ["recency-tiebreak-reinforcement"]
    assert ref.pass_types == {"active_retrieval": 0, "structural": 1, "trivially_empty": 0}
    # Precision = |G| / 35 on every case (the relevant tier is never empty); recall 1 wherever G is non-empty.
    golds = [len(c["expect"].get("relevantBeliefs", {}).get("shouldOnlyInclude", [])) for c in raw_cases]
    assert ref.mean_precision == pytest.approx(sum(golds) / 35 / 77)
    assert ref.mean_recall == 1.0
    assert ref.persona_assumed == ()


def test_session_references(fixture: PmbFixture) -> None:
    nothing = reference_system(fixture, "returns nothing", "pmb-session")
    everything = reference_system(fixture, "returns everything", "pmb-session")
    assert len(nothing.cases) == len(everything.cases) == 12
    # Every turn but 9 requires a belief; turn 9 requires the pinned b-linting-current.
    assert nothing.passed == 0
    t9 = next(c for c in nothing.cases if c.turn_index == 9)
    assert t9.failures == ("turn 9: missing pinned: b-linting-current",)
    assert nothing.mean_precision is None and nothing.mean_recall == 0.0
    # Every turn asserts shouldOnlyInclude, which the whole corpus violates.
    assert everything.passed == 0 and everything.mean_recall == 1.0
    # The belief created after turn 4 is returned from turn 5 on, not before.
    by_turn = {(c.case_id[:7], c.turn_index): c for c in everything.cases}
    created = "unexpected relevant belief: b-ci-parallel-decision"
    assert not any(created in f for f in by_turn[("session", 4)].failures)
    assert any(created in f for f in by_turn[("session", 5)].failures)
    assert any(created in f for f in by_turn[("cross-s", 0)].failures)


def test_reference_frame(fixture: PmbFixture) -> None:
    frame = reference_frame(fixture, "pmb-single-turn")
    assert frame["name"].tolist() == ["returns nothing", "returns everything"]
    assert frame["passed"].tolist() == [22, 1]
    assert frame["persona_assumed"].tolist() == [8, 0]
    assert (frame["active_retrieval"] + frame["structural"] + frame["trivially_empty"] == frame["passed"]).all()


def test_bad_arguments(fixture: PmbFixture) -> None:
    with pytest.raises(ValueError, match="reference system"):
        reference_system(fixture, "returns some", "pmb-single-turn")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="benchmark"):
        reference_system(fixture, "returns nothing", "locomo")  # type: ignore[arg-type]
