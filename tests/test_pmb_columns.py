"""The columnar scoring path a load takes gives exactly what the per-case functions of tests/_pmb_oracle.py give."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from memeval_core.pmb.assertions import (
    RelevantExpectation,
    check_case,
    check_fields,
    check_prepared,
    prepare_case,
)
from memeval_core.pmb.case_table import CaseTable
from memeval_core.pmb.entries import columns_of_report
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import load_fixture, read_json, sniff
from memeval_core.pmb.models import BeliefsExpect, SessionReport, SingleTurnReport
from memeval_core.pmb.rescore import (
    AGGREGATED,
    FIELD_NAMES,
    ScoredCase,
    aggregate_columns,
    columns,
    picked,
    session_rows,
    single_turn_rows,
)
from memeval_core.pmb.session import check_prepared_turn, check_turn, prepare_turn
from memeval_core.pmb.verify import may_be_tagged, verify_columns
from tests._data import PMB_DIR, json_files, require
from tests._pmb_oracle import aggregate, columns_of, rescore_session, rescore_single_turn


@cache
def _fixture() -> PmbFixture:
    return load_fixture(require(PMB_DIR) / "fixtures")


@cache
def _reports() -> tuple[SingleTurnReport | SessionReport, ...]:
    out: list[SingleTurnReport | SessionReport] = []
    for path in json_files(require(PMB_DIR)):
        data = read_json(path, path.name).data
        kind = sniff(data)
        if kind == "single-turn-report":
            out.append(SingleTurnReport.model_validate(data))
        elif kind == "session-report":
            out.append(SessionReport.model_validate(data))
    return tuple(out)


def _case(**changes: object) -> ScoredCase:
    base: dict[str, object] = dict.fromkeys(FIELD_NAMES)
    base.update(
        case_id="c1",
        label="",
        category="Scope",
        stated_category="Scope",
        description="d",
        pinned=(),
        relevant=("b-1",),
        passed=False,
        noise_ids=(),
        returned_nothing=False,
        failures=(),
        taken_from_report=(),
        latency_ms=1.0,
        stated_passed=False,
        stated_failures=(),
        stated_noise_ids=(),
    )
    base.update(changes)
    return ScoredCase(**base)  # type: ignore[arg-type]


def test_rows_are_the_rescored_cases() -> None:
    fixture = _fixture()
    for report in _reports():
        if isinstance(report, SessionReport):
            rows, cases = session_rows(columns_of_report(report).entries, fixture), rescore_session(report, fixture)
        else:
            rows = single_turn_rows(columns_of_report(report).entries, fixture)
            cases = rescore_single_turn(report, fixture)
        assert len(rows) == len(cases) > 0
        # Every field, by name: a row in the wrong order would put a value under another field.
        assert [dict(zip(FIELD_NAMES, row, strict=True)) for row in rows] == [vars(c) for c in cases]


def test_columns_transpose_rows_and_cases() -> None:
    cases = (_case(), _case(case_id="c2", turn_index=4, precision=0.5))
    cols = columns_of(cases)
    assert list(cols) == list(FIELD_NAMES)
    assert cols["case_id"] == ("c1", "c2") and cols["turn_index"] == (None, 4) and cols["precision"] == (None, 0.5)
    assert columns([]) == dict.fromkeys(FIELD_NAMES, ())
    assert columns_of([]) == columns([])


def test_picked_gathers_rows_of_each_column() -> None:
    a, b = ("x", "y", "z"), (1, 2, 3)
    assert picked([2, 0], a, b) == [("z", "x"), (3, 1)]
    assert picked([1], a, b) == [("y",), (2,)]
    assert picked([], a, b) == [(), ()]


def test_aggregate_columns_is_the_aggregate_of_the_cases() -> None:
    fixture = _fixture()
    for report in _reports():
        if isinstance(report, SessionReport):
            cases = rescore_session(report, fixture)
        else:
            cases = rescore_single_turn(report, fixture)
        for stated in (False, True):
            assert aggregate_columns(columns_of(cases), stated_categories=stated) == aggregate(
                cases, stated_categories=stated
            )
    # Categories: largest first, ties in order of first appearance; means over non-null values only.
    cases = (
        _case(category="B", passed=True, precision=0.5),
        _case(category="A", precision=None, recall=1.0),
        _case(category="A", passed=True, precision=1.0, recall=0.0),
        _case(category="C"),
    )
    agg = aggregate_columns(columns_of(cases))
    assert [(c.category, c.cases, c.passed, c.mean_precision, c.mean_recall) for c in agg.categories] == [
        ("A", 2, 1, 1.0, 0.5),
        ("B", 1, 1, 0.5, None),
        ("C", 1, 0, None, None),
    ]
    assert (agg.cases, agg.passed, agg.mean_precision) == (4, 2, 0.75)


def test_verify_columns_finds_every_kind_of_mismatch() -> None:
    cases = (
        _case(),
        _case(case_id="c2", stated_passed=True, precision=0.5, stated_precision=0.5 + 1e-12),
        _case(case_id="c3", precision=0.5, stated_precision=0.25, failures=("b",), stated_failures=("a",)),
        _case(case_id="c4", turn_index=1, drift=0.5, stated_drift=0.5, noise_ids=("n", "m"), stated_noise_ids=("m",)),
        _case(case_id="c5", failures=("x", "y"), stated_failures=("[tag] y", "x")),
    )
    index = {(c.case_id, c.turn_index): i for i, c in enumerate(cases)}
    assert verify_columns(columns_of(cases), index) == [
        "$.cases[1].passed (c2): stated true, re-derived false",
        "$.cases[2].retrievalPrecision (c3): stated 0.25, re-derived 0.5",
        "$.cases[2].failures (c3): stated but not re-derived ['a'], re-derived but not stated ['b']",
        "$.cases[3].noiseBeliefIds (c4 turn 1): stated ['m'], re-derived ['m', 'n']",
    ]
    with pytest.raises(KeyError):
        verify_columns(columns_of(cases), {})


def test_equal_failure_lists_still_differ_when_the_stated_ones_carry_a_tag() -> None:
    # Stated and re-derived lists are equal as given, but normalizing strips the stated tag.
    case = _case(failures=("[p] missing x",), stated_failures=("[p] missing x",))
    assert verify_columns(columns_of([case]), {("c1", None): 0}) == [
        "$.cases[0].failures (c1): stated but not re-derived ['missing x'], re-derived but not stated []"
    ]
    # Upper-case and other messages sorting before "[" do not hide a tagged one.
    case = _case(failures=("A", "[p] b"), stated_failures=("A", "[p] b"))
    assert len(verify_columns(columns_of([case]), {("c1", None): 0})) == 1


def test_may_be_tagged() -> None:
    assert may_be_tagged(["a", "[p] b"]) and not may_be_tagged(["a", "b]", ""]) and not may_be_tagged([])


def test_from_columns_stores_what_from_cases_stores() -> None:
    nan = math.nan
    cases = (
        _case(questions=None, precision=nan, drift=0.0, failures=("f",), stated_failures=("f",)),
        _case(case_id="c2", turn_index=2, questions=("q",), pass_type="structural", stated_category="Other"),
        _case(case_id="c3", failures=("g", "f"), stated_failures=("f", "g"), noise_ids=("n",)),
    )
    table = CaseTable.from_columns(columns_of(cases))
    assert table.present("precision").tolist() == [True, False, False]
    assert np.isnan(table.column("precision")[0]) and table.column("precision")[1:].tolist() == [0.0, 0.0]
    assert table.present("drift").tolist() == [True, False, False]
    assert table.present("questions").tolist() == [False, True, False]
    assert table.present("turn_index").tolist() == [False, True, False]
    assert table.column("turn_index").tolist() == [0, 2, 0]
    assert table.values("stated_category") == ["Scope", "Other", "Scope"]
    # Row by row, what goes in comes out (NaN aside, which never equals itself).
    assert table.cases([1, 2]) == cases[1:]
    assert table.case(0).precision is not None and math.isnan(table.case(0).precision)
    whole = columns_of(cases[1:])  # no NaN, which never equals itself
    for stated in (False, True):  # the columns AGGREGATED names are all aggregate_columns reads
        aggregated = {name: whole[name] for name in AGGREGATED}
        assert aggregate_columns(aggregated, stated_categories=stated) == aggregate_columns(
            whole, stated_categories=stated
        )


def test_prepared_case_checks_like_check_case() -> None:
    fixture = _fixture()
    seed = fixture.pinned_in_seed
    for report in _reports():
        if isinstance(report, SessionReport):
            continue
        for e in report.cases:
            case = fixture.case_by_id[e.case_id]
            args = (e.pinned_beliefs, [*e.relevant_beliefs, *e.relevant_beliefs[:1]], e.retrieved_questions, e.failures)
            expected = check_case(case, *args, seed)
            assert check_prepared(prepare_case(case, seed), *args) == expected
            relevant, *fields = check_fields(fixture.prepared_cases[e.case_id], *args)
            assert relevant == tuple(dict.fromkeys(e.relevant_beliefs))
            assert tuple(fields) == (
                expected.failures,
                expected.persona_failures,
                expected.precision,
                expected.recall,
                expected.pinned_coverage,
            )


def test_relevant_expectation_reads_the_model() -> None:
    rb = BeliefsExpect.model_validate(
        {"mustExclude": ["x"], "shouldOnlyInclude": ["a", "b", "a"], "orderedBefore": [["a", "b"]], "maxCount": 2}
    )
    exp = RelevantExpectation.of(rb)
    assert exp.only is not None and list(exp.only) == ["a", "b"]
    assert (exp.must_exclude, exp.ordered_before, exp.max_count, exp.min_count) == (("x",), (("a", "b"),), 2, None)
    assert exp.reads_union and not RelevantExpectation.of(BeliefsExpect()).reads_union


def test_prepared_turn_checks_like_check_turn() -> None:
    fixture = _fixture()
    assert fixture.prepared_turns.keys() == fixture.turn_by_key.keys()
    for report in _reports():
        if not isinstance(report, SessionReport):
            continue
        for e in report.cases:
            turn = fixture.turn_by_key[(e.case_id, e.turn_index)]
            for questions in (e.retrieved_questions, None, ["q-1"]):
                args = (e.retrieved_belief_ids, e.pinned_belief_ids, questions, e.failures)
                assert check_prepared_turn(prepare_turn(turn), *args) == check_turn(turn, *args)


def test_prepared_cases_cover_the_fixture() -> None:
    fixture = _fixture()
    assert fixture.prepared_cases.keys() == fixture.case_by_id.keys()
    case = fixture.cases[0]
    prepared = fixture.prepared_cases[case.case_id]
    assert (prepared.category, prepared.description) == (case.category, case.description)
