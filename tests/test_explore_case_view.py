"""One case across runs: expectation and returned ids classified per tier, on real PMB runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memeval_core.explore import case_view as cv
from memeval_core.explore.case_view import (
    Expectation,
    case_key,
    case_keys,
    case_view,
    classify_tiers,
    expectation_frame,
    failures_frame,
    id_matrix,
    outcome_frame,
    parse_case_key,
)
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.rescore import ScoredCase
from memeval_core.pmb.snapshot import cases_table

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "precisionmembench"
MAIN = "session-drift-noise-10-turns-implicit-redis"


def expectation(fixture: PmbFixture, case_id: str, turn_index: int | None = None) -> Expectation:
    """The expectation of a single-turn case (``turn_index`` None) or of a session turn."""
    return case_view((), fixture, case_id, turn_index).expectation


@pytest.fixture(scope="module")
def pmb() -> PmbLoad:
    if not DATA.is_dir():
        pytest.skip(f"shared PMB data not found at {DATA}")
    return load_pmb(DATA / "test-results", DATA / "fixtures")


def test_single_turn_case_across_all_runs(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, "happy-stack-repository-layer")
    assert len(view.outcomes) == 13  # single-turn runs only
    assert view.category == "Type routing and open questions"
    e = view.expectation
    assert e.should_only_include == () and e.gold == ()
    assert e.pinned_must_include == ("b-db-decision",)
    assert e.questions_must_include == ("b-auth-open-q",)
    assert e.persona_prelude is not None and e.persona_prelude.non_empty
    by = {o.display_name: o for o in view.outcomes}
    ten = by["tenure"]
    assert ten.passed
    assert ten.tier("pinned").correct == ("b-db-decision",)
    assert ten.tier("pinned").missing == ()
    assert ten.tier("questions").correct == ("b-auth-open-q",)
    assert ten.tier("relevant").returned == ()
    mem0 = by["mem0"]
    rel = mem0.tier("relevant")
    # Nothing is wanted in the relevant tier, so everything mem0 returned there is unexpected.
    assert rel.correct == () and rel.forbidden == ()
    assert rel.unexpected == mem0.tier("relevant").returned and len(rel.unexpected) > 0
    assert all(f"unexpected belief in relevantBeliefs: {i}" in mem0.failures for i in rel.unexpected)


def test_missing_and_forbidden(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, "relation-expansion-respects-scope-filter")
    for o in view.outcomes:
        rel = o.tier("relevant")
        # Classes partition the returned ids.
        assert sorted(rel.correct + rel.unexpected + rel.forbidden) == sorted(rel.returned)
        assert set(rel.missing) == {"b-auth-depends-redis", "b-redis-code"} - set(rel.returned)
        assert set(rel.forbidden) == {"b-redis-writing"} & set(rel.returned)
        assert all(f"missing expected belief: {i}" in o.failures for i in rel.missing)


def test_session_turn(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, MAIN, 10)
    assert len(view.outcomes) == 11
    assert view.label == "re_entry" and view.topics == ("redis-cache-performance",)
    assert view.query.startswith("One more thing on the allkeys-lru decision")
    by = {o.display_name: o for o in view.outcomes}
    gb = by["gbrain"]
    # gbrain's relevant tier is empty, but it returned the pinned facts: it did not return nothing.
    assert gb.tier("relevant").returned == () and gb.tier("relevant").missing == ("b-redis-code",)
    assert gb.tier("pinned").returned == ("b-db-decision", "b-linting-current") and not gb.returned_nothing
    assert gb.tier("questions").recorded is False
    assert cv.tier_summary(gb) == (
        "pinned facts: 2 (2 unexpected) · relevant beliefs: nothing (1 missing) · open questions: not recorded"
    )
    mem0 = by["mem0"].tier("relevant")
    # Noise ids are forbidden in the relevant tier.
    assert set(mem0.forbidden) == {"b-error-handling", "b-functional-pipeline", "b-ci-parallel-decision"}
    assert mem0.missing == ("b-redis-code",)
    ten = by["tenure"].tier("relevant")
    assert ten.correct == ("b-redis-code",) and ten.unexpected == () and ten.forbidden == ()


def test_tiers_and_unknown_case(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, "alias-gha-resolves")
    assert [len(o.tiers) for o in view.outcomes] == [3] * 13
    (ten,) = [o.tier("relevant") for o in view.outcomes if o.display_name == "tenure"]
    assert ten.correct == ("b-ci-gha-entity",) and ten.unexpected == ()
    with pytest.raises(KeyError, match="no-such-case"):
        case_view(pmb.runs, pmb.fixture, "no-such-case")
    with pytest.raises(KeyError, match="turn"):
        expectation(pmb.fixture, MAIN, 99)


def _scored(pinned: tuple[str, ...], relevant: tuple[str, ...], questions: tuple[str, ...] | None) -> ScoredCase:
    return ScoredCase(
        case_id="hand",
        turn_index=None,
        label="",
        category="C",
        stated_category="C",
        description="",
        pinned=pinned,
        relevant=relevant,
        questions=questions,
        passed=False,
        pass_type=None,
        precision=None,
        recall=None,
        pinned_coverage=None,
        drift=None,
        noise_ids=(),
        returned_nothing=not relevant,
        failures=(),
        taken_from_report=(),
        latency_ms=0.5,
        stated_passed=False,
        stated_precision=None,
        stated_recall=None,
        stated_failures=(),
        stated_drift=None,
        stated_noise_ids=(),
    )


def _expect(**kw: object) -> Expectation:
    base: dict[str, object] = {
        "gold": (),
        "should_only_include": None,
        "must_include": (),
        "must_exclude": (),
        "should_include": (),
        "pinned_must_include": (),
        "pinned_must_exclude": (),
        "questions_must_include": (),
        "questions_must_exclude": (),
        "noise_must_not_surface": (),
        "max_count": None,
        "min_count": None,
        "ordered_before": (),
        "persona_prelude": None,
    }
    base.update(kw)
    return Expectation(**base)  # type: ignore[arg-type]


def test_hand_made_classification() -> None:
    exp = _expect(
        gold=("g1", "g2"),
        should_only_include=("g1", "g2"),
        must_include=("m1",),
        must_exclude=("x1",),
        pinned_must_include=("p1", "p2"),
        pinned_must_exclude=("px",),
        questions_must_include=("q1",),
        questions_must_exclude=("qx",),
    )
    # g2 only in the pinned tier: shouldOnlyInclude wants it among relevant beliefs, so it is missing there;
    # m1 only in the pinned tier: mustInclude accepts either tier, so it is not missing.
    tiers = classify_tiers(_scored(("p1", "g2", "m1", "px", "x1", "other"), ("g1", "junk", "x1"), ("q2", "qx")), exp)
    pinned, relevant, questions = tiers
    assert pinned.correct == ("p1", "m1")
    assert pinned.forbidden == ("px", "x1")
    assert pinned.unexpected == ("g2", "other")
    assert pinned.missing == ("p2",)
    assert relevant.correct == ("g1",)
    assert relevant.unexpected == ("junk",)
    assert relevant.forbidden == ("x1",)
    assert relevant.missing == ("g2",)
    assert (questions.correct, questions.unexpected, questions.forbidden, questions.missing) == (
        (),
        ("q2",),
        ("qx",),
        ("q1",),
    )
    unrecorded = classify_tiers(_scored((), (), None), exp)[2]
    assert unrecorded.recorded is False and unrecorded.missing == ()


def test_case_keys_round_trip(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    assert case_key("alias-kube-resolves") == "alias-kube-resolves"
    assert case_key(MAIN, 3) == f"{MAIN}/3"
    assert parse_case_key(f"{MAIN}/10") == (MAIN, 10)
    assert parse_case_key("alias-kube-resolves") == ("alias-kube-resolves", None)
    assert parse_case_key("a/b") == ("a/b", None)  # not a turn suffix
    assert parse_case_key("/3") == ("/3", None)
    single = case_keys(pmb.fixture, "pmb-single-turn")
    session = case_keys(pmb.fixture, "pmb-session")
    assert len(single) == 77 and single[0] == "happy-stack-repository-layer"
    assert len(session) == 12 and session[0] == f"{MAIN}/0"
    assert all(parse_case_key(k)[1] is not None for k in session)


def test_expectation_frame_lists_stated_assertions(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    df = expectation_frame(expectation(pmb.fixture, "happy-stack-repository-layer"))
    assert list(df.columns) == ["tier", "assertion", "value"]
    rows = {r["assertion"]: r["value"] for r in df.to_dict("records")}
    assert rows["pinnedFacts.mustInclude"] == "b-db-decision"
    assert rows["openQuestions.mustInclude"] == "b-auth-open-q"
    assert rows["personaPrelude"] == '{"nonEmpty":true}'
    assert "mustExclude" not in rows  # not stated
    turn = expectation_frame(expectation(pmb.fixture, MAIN, 10))
    noise = turn[turn["assertion"] == "noiseCheck.mustNotSurface"]["value"].iloc[0]
    assert "b-error-handling" in noise


def test_id_matrix_outcomes_and_failures(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, "alias-kube-resolves")
    m = id_matrix(view)
    assert list(m.columns[:4]) == ["tier", "id", "belief", "gold"] and len(m.columns) == 4 + 13
    assert list(dict.fromkeys(m["tier"])) == ["pinned", "relevant", "questions"]
    gha = m[(m["tier"] == "relevant") & (m["id"] == "b-ci-gha-entity")].iloc[0]
    assert (gha["tenure"], gha["gbrain"]) == ("correct", "missing")
    redis = m[(m["tier"] == "relevant") & (m["id"] == "b-redis-code")].iloc[0]
    assert (redis["tenure"], redis["mem0"]) == ("", "unexpected")
    # Every classified id of every run appears once in its tier.
    for o in view.outcomes:
        for t in o.tiers:
            col = m[(m["tier"] == t.tier)].set_index("id")[o.display_name]
            for cls in ("correct", "unexpected", "forbidden", "missing"):
                assert all(col[i] == cls for i in getattr(t, cls))
    out = outcome_frame(view).set_index("display_name")
    assert out.loc["mem0", "n_unexpected"] == 16 + 2 + 1  # relevant noise, two pinned extras, one question
    # tenure: the two gold ids; its three unexpected ids are pinned and question extras, which fail nothing.
    assert (out.loc["tenure", "n_returned"], out.loc["tenure", "n_correct"], out.loc["tenure", "n_unexpected"]) == (
        5,
        2,
        3,
    )
    assert out.loc["tenure", "failures"] == ""
    fails = failures_frame(view)
    assert list(fails.columns) == ["display_name", "failure", "from_report"]
    assert (fails["display_name"] == "mem0").sum() == 16
    assert "tenure" not in set(fails["display_name"])


def test_returned_nothing_only_when_every_tier_is_empty(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    # The case: tenure's relevant tier is empty, but it returned a pinned fact and an open question.
    ten = next(o for o in case_view(pmb.runs, pmb.fixture, "happy-stack-repository-layer").outcomes
               if o.display_name == "tenure")  # fmt: skip
    assert ten.tier("relevant").returned == ()
    assert "b-db-decision" in ten.tier("pinned").returned and ten.tier("questions").returned == ("b-auth-open-q",)
    assert not ten.returned_nothing
    assert "returned nothing" not in cv.tier_summary(ten)
    assert (
        outcome_frame(case_view(pmb.runs, pmb.fixture, "happy-stack-repository-layer"))["returned_nothing"].sum() == 0
    )
    # On a cold-start user tenure returns no id in any tier: that, and only that, is returning nothing.
    cold = {o.display_name: o for o in case_view(pmb.runs, pmb.fixture, "cold-start-user-no-beliefs").outcomes}
    assert cold["tenure"].returned_nothing and all(t.returned == () for t in cold["tenure"].tiers)
    assert cv.tier_summary(cold["tenure"]).startswith("returned nothing in any tier · pinned facts: nothing")
    for o in cold.values():
        assert o.returned_nothing == (not any(t.returned for t in o.tiers))


def test_nothing_returned_by_hand() -> None:
    exp = _expect()
    assert cv.nothing_returned(classify_tiers(_scored((), (), None), exp))
    assert cv.nothing_returned(classify_tiers(_scored((), (), ()), exp))
    assert not cv.nothing_returned(classify_tiers(_scored(("p",), (), None), exp))
    assert not cv.nothing_returned(classify_tiers(_scored((), (), ("q",)), exp))
    assert not cv.nothing_returned(classify_tiers(_scored((), ("r",), ()), exp))


def test_every_belief_id_shown_has_its_text(pmb: PmbLoad) -> None:
    fixture = pmb.fixture
    assert fixture is not None
    keys = [*case_keys(fixture, "pmb-single-turn"), *case_keys(fixture, "pmb-session")]
    for key in keys:
        view = case_view(pmb.runs, fixture, *parse_case_key(key))
        for frame in (id_matrix(view), cv.expected_beliefs(view)):
            for i, text in zip(frame["id"], frame["belief"], strict=True):
                assert text == fixture.belief_by_id[i].content != "", (key, i)
    view = case_view(pmb.runs, fixture, "happy-stack-repository-layer")
    assert view.beliefs["b-db-decision"] == "Decided on MongoDB after evaluating Postgres. Raw driver only."
    assert cv.belief_text(fixture, "b-no-such-belief") == cv.UNKNOWN_BELIEF


def test_a_case_read_as_rows_is_the_case_read_from_the_runs(pmb: PmbLoad) -> None:
    fixture = pmb.fixture
    assert fixture is not None
    cases = cases_table(pmb.runs)
    names = {r.identity.run_id: r.identity.display_name for r in reversed(pmb.runs)}  # any order: the view keeps it
    for key in [*case_keys(fixture, "pmb-single-turn"), *case_keys(fixture, "pmb-session")]:
        want = case_view(pmb.runs[::-1], fixture, *parse_case_key(key))
        assert cv.case_view_of_rows(cases, names, fixture, *parse_case_key(key)) == want, key
    some = dict(list(names.items())[:3])
    assert [o.run_id for o in cv.case_view_of_rows(cases, some, fixture, "alias-kube-resolves").outcomes] == [
        i for i in some if any(r.identity.run_id == i and r.identity.benchmark == "pmb-single-turn" for r in pmb.runs)
    ]


def test_expected_beliefs_and_notes(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, "happy-stack-repository-layer")
    exp = cv.expected_beliefs(view)
    assert list(exp.columns) == ["id", "belief", "expected"]
    assert dict(zip(exp["id"], exp["expected"], strict=True)) == {
        "b-db-decision": "pinned facts: must include",
        "b-auth-open-q": "open questions: must include",
    }
    notes = cv.expectation_notes(view.expectation)
    assert notes[0] == "Relevant beliefs: none expected; anything returned there fails the case."
    assert notes[1].startswith('Persona prelude: {"nonEmpty":true}')
    kube = cv.expected_beliefs(case_view(pmb.runs, pmb.fixture, "alias-kube-resolves")).set_index("id")
    assert kube.loc["b-ci-gha-entity", "expected"] == "gold; relevant: only these"
    turn = cv.expected_beliefs(case_view(pmb.runs, pmb.fixture, MAIN, 10)).set_index("id")
    assert turn.loc["b-error-handling", "expected"] == "noise: must not surface"
    hand = cv.expectation_notes(_expect(max_count=3, min_count=1, should_only_include=("g",)))
    assert hand == ["Relevant beliefs: at most 3.", "Relevant beliefs: at least 1."]


def test_gold_beliefs_are_marked_and_listed_first(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    view = case_view(pmb.runs, pmb.fixture, "alias-kube-resolves")
    m = id_matrix(view)
    rel = m[m["tier"] == "relevant"]
    assert set(rel["id"][:2]) == {"b-ci-gha-entity", "b-kubernetes-entity"}
    assert list(rel["gold"]) == [True, True] + [False] * (len(rel) - 2)
    happy = id_matrix(case_view(pmb.runs, pmb.fixture, "happy-stack-repository-layer")).set_index(["tier", "id"])
    assert happy.loc[("pinned", "b-db-decision"), "gold"] and happy.loc[("questions", "b-auth-open-q"), "gold"]
    assert not happy.loc[("pinned", "b-linting-current"), "gold"]
    shown = cv.marked(m, ["tenure"])
    assert set(shown["tier"]) == {"Pinned facts", "Relevant beliefs", "Open questions"}
    assert shown.loc[rel.index[0], "tenure"] == "✓ correct" and m.loc[rel.index[0], "tenure"] == "correct"


def test_outcome_counts_per_tier_and_who_passed(pmb: PmbLoad) -> None:
    assert pmb.fixture is not None
    by_name = sorted(pmb.runs, key=lambda r: r.identity.display_name)
    view = case_view(by_name, pmb.fixture, "happy-stack-repository-layer")
    out = outcome_frame(view).set_index("display_name")
    tenure = out.loc["tenure"]
    assert (tenure["n_pinned"], tenure["n_relevant"], tenure["n_open_questions"]) == (2, 0, 1)
    assert cv.who_passed(view) == "3 of 13 systems pass this case: gbrain, tenure and yourmemory."
    starred = cv.who_passed(view, lambda n: f"*{n}*", listed=2)
    assert starred == "3 of 13 systems pass this case: *gbrain*, *tenure* and 1 more."
    many = dataclasses.replace(view, outcomes=view.outcomes * 1_000)  # numbers as the app writes them: 1,000s
    assert cv.who_passed(many).startswith("3,000 of 13,000 systems pass this case: gbrain, tenure, yourmemory")
    assert cv.who_passed(many).endswith(" and 2,995 more.")
    turn = case_view(by_name, pmb.fixture, MAIN, 3)
    assert outcome_frame(turn)["n_open_questions"].isna().all()  # session reports do not record the tier
    assert cv.who_passed(turn) == "1 of 11 systems passes this turn: tenure."
