"""Columnar cases: every real case round-trips exactly, text is shared across runs, and pickling keeps it all."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from memeval_core.pmb.case_table import FIELDS, CaseTable, StringPool
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import find_fixture_dir, iter_json_files, load_fixture, read_json, sniff
from memeval_core.pmb.models import SessionReport, SingleTurnReport
from memeval_core.pmb.rescore import ScoredCase, rescore_session, rescore_single_turn
from tests._data import PMB_DIR, require


def _real_cases(root: Path) -> list[tuple[ScoredCase, ...]]:
    fixture_dir = find_fixture_dir(root)
    assert fixture_dir is not None
    fixture: PmbFixture = load_fixture(fixture_dir)
    out = []
    for path in iter_json_files(root):
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
    pool = StringPool()
    assert len(real) == 24
    for cases in real:
        table = CaseTable.from_cases(cases, pool)
        assert table.n == len(cases)
        assert table.cases() == cases
        assert tuple(table.case(i) for i in range(len(cases))) == cases
        assert table.cases([len(cases) - 1, 0]) == (cases[-1], cases[0])


def test_text_is_stored_once_across_runs(real: list[tuple[ScoredCase, ...]]) -> None:
    pool = StringPool()
    for cases in real:
        CaseTable.from_cases(cases, pool)
    every_string = {s for cases in real for c in cases for s in (c.case_id, c.category, c.description, *c.relevant)}
    assert every_string <= set(pool.strings)
    assert len(pool) == len(set(pool.strings))


def test_edge_values_survive() -> None:
    cases = (
        _case(),
        _case(case_id="s1", turn_index=0, label="t0", questions=(), precision=0.0, recall=1.0, pass_type="structural"),
        _case(case_id="s1", turn_index=3, questions=("q-1",), drift=0.25, passed=True, pass_type="active_retrieval"),
        _case(relevant=(), failures=(), stated_precision=0.5, stated_drift=1.0, stated_noise_ids=("n", "n")),
    )
    table = CaseTable.from_cases(cases)
    assert table.cases() == cases
    assert table.cases([2, 0]) == (cases[2], cases[0])
    assert table.cases([]) == ()
    assert table.index_of("s1", 3) == 2
    assert table.index_of("s1", 0) == 1
    assert table.index_of("c1") == 0
    assert table.index_of("s1") is None
    assert table.index_of("nope") is None
    assert table.pass_types() == [None, "structural", "active_retrieval", None]
    assert table.texts("case_id") == ["c1", "s1", "s1", "c1"]
    assert table.present("precision").tolist() == [False, True, False, False]
    np.testing.assert_array_equal(table.column("latency_ms"), [12.5] * 4)
    with pytest.raises(ValueError, match="list field"):
        table.column("relevant")
    assert [table.case(i) for i in range(4)] == list(cases)
    with pytest.raises(IndexError, match="out of range"):
        table.case(4)


def test_pickle_round_trip_shares_the_pool(real: list[tuple[ScoredCase, ...]]) -> None:
    pool = StringPool()
    tables = [CaseTable.from_cases(cases, pool) for cases in real[:3]]
    back = pickle.loads(pickle.dumps(tables))
    assert back[0].pool is back[1].pool
    for t, cases in zip(back, real[:3], strict=True):
        assert t.cases() == cases
    # The rebuilt pool keeps encoding consistently.
    assert back[0].pool.encode([pool.strings[0]]).tolist() == [0]


def _arrays(table: CaseTable) -> list[tuple[str, str, str, tuple[int, ...], list[object], bool]]:
    return [
        (kind, name, a.dtype.str, a.shape, a.tolist(), a.flags.writeable)
        for kind, arrays in (("columns", table.columns), ("offsets", table.offsets), ("masks", table.masks))
        for name, a in arrays.items()
    ]


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_a_pickled_table_has_the_same_arrays(real: list[tuple[ScoredCase, ...]], protocol: int) -> None:
    # One buffer for all arrays of a table: same values, dtypes, shapes, still writable, also when empty.
    tables = [CaseTable.from_cases(cases) for cases in (*real[:2], ())]
    two_d = CaseTable(2, StringPool(), {"grid": np.arange(6, dtype=np.int16).reshape(2, 3)}, {}, {})
    for table in (*tables, two_d):
        back = pickle.loads(pickle.dumps(table, protocol))
        assert back.n == table.n and _arrays(back) == _arrays(table)
        assert all(a.flags.aligned for a in back.columns.values())
    odd = CaseTable(1, StringPool(), {"objects": np.array([None], dtype=object)}, {}, {})
    assert pickle.loads(pickle.dumps(odd, protocol)).columns["objects"].tolist() == [None]  # pickled the usual way


def _owner(array: np.ndarray) -> int:
    """Identity of the object holding an array's bytes."""
    owner: object = array
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    return id(owner.obj if isinstance(owner, memoryview) else owner)


def test_every_scored_case_field_has_a_storage_kind() -> None:
    assert [name for name, _ in FIELDS] == list(ScoredCase.__dataclass_fields__)


def _edge_cases() -> tuple[ScoredCase, ...]:
    return (
        _case(),
        _case(case_id="s1", turn_index=0, label="t0", questions=(), precision=0.0, recall=1.0, pass_type="structural"),
        _case(case_id="s1", turn_index=3, questions=("q-1",), drift=0.25, passed=True, pass_type="active_retrieval"),
        _case(relevant=(), failures=(), stated_precision=0.5, stated_drift=1.0, stated_noise_ids=("n", "n")),
    )


def test_tables_of_other_pools_join_into_one(real: list[tuple[ScoredCase, ...]]) -> None:
    """Each table in a pool of its own (as runs come back from worker processes): joined, every case stays."""
    parts = [*real[:4], _edge_cases(), real[-1]]
    joined = CaseTable.concat([CaseTable.from_cases(cases) for cases in parts])
    assert joined.cases() == tuple(case for cases in parts for case in cases)
    assert CaseTable.concat([CaseTable.from_cases(_edge_cases())]).cases() == _edge_cases()


def test_arrow_columns_hold_each_fields_values(real: list[tuple[ScoredCase, ...]]) -> None:
    """The Arrow arrays equal the values Python reads out (id lists as lists, absent values as nulls)."""
    for cases in (_edge_cases(), real[0], real[-1]):
        table = CaseTable.from_cases(cases)
        arrays = table.arrow_columns(pa.array(table.pool.strings, pa.string()))
        for (name, _), array in zip(FIELDS, arrays, strict=True):
            want = [list(v) if isinstance(v, tuple) else v for v in (getattr(c, name) for c in cases)]
            assert array.to_pylist() == want, name
