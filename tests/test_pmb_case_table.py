"""A run's cases as an Arrow batch: every real case round-trips, through a worker's bytes and a snapshot's rows."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from memeval_core.pmb.case_table import CASE_SCHEMA, CaseTable
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import find_fixture_dir, load_fixture, read_json, sniff
from memeval_core.pmb.models import SessionReport, SingleTurnReport
from memeval_core.pmb.rescore import ScoredCase
from memeval_core.pmb.snapshot import CASES_SCHEMA
from tests._data import PMB_DIR, json_files, require
from tests._pmb_oracle import rescore_session, rescore_single_turn, table_from_cases


def _real_cases(root: Path) -> list[tuple[ScoredCase, ...]]:
    fixture_dir = find_fixture_dir(root)
    assert fixture_dir is not None
    fixture: PmbFixture = load_fixture(fixture_dir)
    out = []
    for path in json_files(root):
        raw = read_json(path, path.name)
        kind = sniff(raw.data)
        if kind == "single-turn-report":
            out.append(rescore_single_turn(SingleTurnReport.model_validate(raw.data), fixture))
        elif kind == "session-report":
            out.append(rescore_session(SessionReport.model_validate(raw.data), fixture))
    return out


@pytest.fixture(scope="module")
def real() -> list[tuple[ScoredCase, ...]]:
    return _real_cases(require(PMB_DIR))


def _case(**changes: object) -> ScoredCase:
    base: dict[str, object] = {
        "case_id": "c1",
        "turn_index": None,
        "label": "",
        "category": "Scope",
        "stated_category": "Scope",
        "description": "d",
        "pinned": (),
        "relevant": ("b-1", "b-2"),
        "questions": None,
        "passed": False,
        "pass_type": None,
        "precision": None,
        "recall": None,
        "pinned_coverage": None,
        "drift": None,
        "noise_ids": (),
        "returned_nothing": False,
        "failures": ("missing b-3",),
        "taken_from_report": (),
        "latency_ms": 12.5,
        "stated_passed": False,
        "stated_precision": None,
        "stated_recall": None,
        "stated_failures": (),
        "stated_drift": None,
        "stated_noise_ids": (),
    }
    base.update(changes)
    return ScoredCase(**base)  # type: ignore[arg-type]


def test_every_real_case_round_trips_exactly(real: list[tuple[ScoredCase, ...]]) -> None:
    assert len(real) == 24
    for cases in real:
        table = table_from_cases(cases)
        assert table.n == len(cases)
        assert table.cases() == cases
        assert tuple(table.case(i) for i in range(len(cases))) == cases
        assert table.cases([len(cases) - 1, 0]) == (cases[-1], cases[0])


def test_edge_values_survive() -> None:
    cases = _edge_cases()
    table = table_from_cases(cases)
    assert table.cases() == cases
    assert table.cases([2, 0]) == (cases[2], cases[0])
    assert table.cases([]) == ()
    assert table.index_of("s1", 3) == 2
    assert table.index_of("s1", 0) == 1
    assert table.index_of("c1") == 0
    assert table.index_of("s1") is None
    assert table.index_of("nope") is None
    assert table.values("pass_type") == [None, "structural", "active_retrieval", None]
    assert table.values("case_id") == ["c1", "s1", "s1", "c1"]
    assert table.values("questions", np.array([1, 0])) == [[], None]
    assert table.present("precision").tolist() == [False, True, False, False]
    assert table.column("turn_index").tolist() == [0, 0, 3, 0]
    np.testing.assert_array_equal(table.column("latency_ms"), [12.5] * 4)
    for name in ("relevant", "case_id", "pass_type"):
        with pytest.raises(ValueError, match="not a number or flag field"):
            table.column(name)
    assert [table.case(i) for i in range(4)] == list(cases)
    with pytest.raises(IndexError, match="out of range"):
        table.case(4)


def _edge_cases() -> tuple[ScoredCase, ...]:
    return (
        _case(),
        _case(case_id="s1", turn_index=0, label="t0", questions=(), precision=0.0, recall=1.0, pass_type="structural"),
        _case(case_id="s1", turn_index=3, questions=("q-1",), drift=0.25, passed=True, pass_type="active_retrieval"),
        _case(relevant=(), failures=(), stated_precision=0.5, stated_drift=1.0, stated_noise_ids=("n", "n")),
    )


def test_the_ipc_bytes_a_worker_sends_give_the_same_cases(real: list[tuple[ScoredCase, ...]]) -> None:
    for cases in (*real[:3], _edge_cases(), ()):
        table = table_from_cases(cases)
        back = CaseTable.from_ipc(pickle.loads(pickle.dumps(table.ipc())))
        assert back.arrow.equals(table.arrow) and back.cases() == cases


def test_a_runs_rows_of_a_larger_table_make_its_table(real: list[tuple[ScoredCase, ...]]) -> None:
    """A snapshot's cases table holds many runs in chunks (row groups): one run's rows may span two."""
    parts = [*real[:4], _edge_cases()]
    batches = [table_from_cases(cases).arrow for cases in parts]
    whole = pa.Table.from_batches(batches).add_column(0, "run_id", pa.array(["r"] * sum(b.num_rows for b in batches)))
    start = len(real[0]) - 2  # the last two cases of the first run and the whole second run
    rows = CaseTable.from_arrow(whole.slice(start, len(real[1]) + 2))
    assert rows.cases() == (*real[0][-2:], *real[1])
    assert CaseTable.from_arrow(whole.slice(0, 0)).cases() == ()


def test_the_table_has_the_snapshots_case_columns() -> None:
    assert CASE_SCHEMA.names == list(ScoredCase.__dataclass_fields__)
    assert pa.schema([("run_id", pa.string()), *CASE_SCHEMA]) == CASES_SCHEMA
