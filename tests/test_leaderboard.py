"""The leaderboard reproduces the upstream README tables from raw per-case data."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from memeval_core import leaderboard
from memeval_core.pmb.ingest import load_pmb
from tests import _pmb_oracle as oracle
from tests._data import PMB_DIR, require


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], dict[str, object]]:
    load = load_pmb(require(PMB_DIR))
    return {(r["benchmark"], r["display_name"]): r for r in oracle.rows(load.runs)}  # type: ignore[misc]


# Upstream README, "Retrieval Precision" and "Pass type breakdown" tables (commit 18c7955).
README_SINGLE = {
    # name: (active, total, precision 2dp, recall 2dp, p50, structural, trivially empty)
    "tenure": (43, 77, 1.00, 1.00, 9.77, 25, 9),
    "supermemory": (4, 21, 0.22, 0.71, 69.41, 14, 3),
    "agentmemory": (0, 7, 0.17, 0.97, 82.28, 5, 2),
    "yourmemory": (0, 21, 0.17, 0.88, 313.39, 15, 6),
    "atomicmemory": (0, 9, 0.15, 0.95, 71.01, 6, 3),
    "gbrain": (5, 34, 0.14, 0.17, 543.84, 20, 9),
    "zep": (0, 9, 0.09, 0.95, 124.36, 6, 3),
    "vector": (0, 11, 0.09, 1.00, 71.87, 8, 3),
    "hindsight": (0, 9, 0.06, 1.00, 589.86, 6, 3),
    "mem0": (0, 9, 0.06, 0.99, 64.94, 6, 3),
    "a-mem": (0, 9, 0.06, 0.99, 13.80, 6, 3),
}

# Upstream README, session table: turns passed, mean drift, mean precision, session p50.
README_SESSION = {
    "tenure": (12, 0.0, 1.0, 47.79),
    "yourmemory": (1, 0.7365, 0.1965, 430.49),
    "supermemory": (1, 0.7493, 0.1825, 172.32),
    "gbrain": (1, 0.0, None, 535.61),
    "agentmemory": (0, 0.8087, 0.1913, 98.49),
    "atomicmemory": (0, 0.8449, 0.1551, 355.08),
    "zep": (0, 0.8888, 0.1112, 418.13),
    "vector": (0, 0.9142, 0.0858, 256.75),
    "a-mem": (0, 0.9259, 0.0741, 25.66),
    "hindsight": (0, 0.9285, 0.0715, 1880.60),
    "mem0": (0, 0.9398, 0.0602, 377.93),
}


@pytest.mark.parametrize("name", sorted(README_SINGLE))
def test_single_turn_matches_upstream_readme(rows, name: str) -> None:  # type: ignore[no-untyped-def]
    active, total, prec, rec, p50, structural, empty = README_SINGLE[name]
    r = rows[("pmb-single-turn", name)]
    assert r["pass_types"] == {"active_retrieval": active, "structural": structural, "trivially_empty": empty}
    assert (r["passed"], r["cases"]) == (total, 77)
    assert round(r["mean_precision"], 2) == prec
    assert round(r["mean_recall"], 2) == rec
    assert r["latency_p50_ms"] == p50


def test_issue_headline_numbers(rows) -> None:  # type: ignore[no-untyped-def]
    mem0 = rows[("pmb-single-turn", "mem0")]
    assert (mem0["passed"], mem0["mean_precision"], mem0["mean_recall"], mem0["latency_p50_ms"]) == (
        9,
        0.0558,
        0.9884,
        64.94,
    )
    tenure = rows[("pmb-single-turn", "tenure")]
    assert (tenure["pass_types"]["active_retrieval"], tenure["passed"], tenure["mean_precision"]) == (43, 77, 1.0)
    assert rows[("pmb-single-turn", "vector")]["ingestion_total_ms"] is None
    assert rows[("pmb-single-turn", "tenure")]["ingestion_total_ms"] == 984.62


@pytest.mark.parametrize("name", sorted(README_SESSION))
def test_session_matches_upstream_readme(rows, name: str) -> None:  # type: ignore[no-untyped-def]
    passed, drift, prec, p50 = README_SESSION[name]
    r = rows[("pmb-session", name)]
    assert (r["passed"], r["cases"]) == (passed, 12)
    assert r["mean_drift"] == drift
    assert r["mean_precision"] == prec
    assert r["latency_p50_ms"] == p50


def test_order_and_keys(rows) -> None:  # type: ignore[no-untyped-def]
    ordered = oracle.rows(load_pmb(require(PMB_DIR)).runs)
    assert list(ordered[0]) == list(leaderboard.COLUMNS)
    assert ordered[0]["display_name"] == "tenure" and ordered[0]["benchmark"] == "pmb-single-turn"
    assert [r["benchmark"] for r in ordered] == ["pmb-single-turn"] * 13 + ["pmb-session"] * 11
    assert ordered[13]["display_name"] == "tenure"
    assert rows[("pmb-single-turn", "mem0")]["mean_drift"] is None


def test_csv_and_json_round_trip() -> None:
    rs = oracle.rows(load_pmb(require(PMB_DIR)).runs, "pmb-single-turn")
    parsed = json.loads(b"".join(leaderboard.json_chunks([rs])))
    assert parsed == rs
    table = list(csv.DictReader(io.StringIO(leaderboard.to_csv(rs))))
    assert len(table) == 13
    assert table[0]["display_name"] == "tenure" and table[0]["active_retrieval"] == "43"
    assert "passTypes.structural" in next(t["mismatches"] for t in table if t["display_name"] == "vector (nomic)")
    text = leaderboard.to_table(rs)
    assert text.splitlines()[1].startswith("tenure") and "NO (4)" in text


@pytest.mark.parametrize("benchmark", [None, "pmb-single-turn", "pmb-session"])
def test_rows_of_the_runs_table_in_batches_are_the_rows_of_the_runs(
    benchmark: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memeval_core.pmb.runs_table import runs_table

    runs = load_pmb(require(PMB_DIR)).runs
    monkeypatch.setattr(leaderboard, "ROW_BATCH", 5)  # 24 runs: five batches, the last one short
    batches = list(leaderboard.row_batches(runs_table(runs), benchmark))  # type: ignore[arg-type]
    expected = oracle.rows(runs, benchmark)  # type: ignore[arg-type]
    assert [r for b in batches for r in b] == expected
    assert all(len(b) == 5 for b in batches[:-1]) and 0 < len(batches[-1]) <= 5


def test_ties_keep_the_order_of_the_runs_as_the_per_row_oracle_does() -> None:
    import pyarrow as pa

    from memeval_core.pmb.runs_table import runs_table

    table = runs_table(load_pmb(require(PMB_DIR)).runs)
    # Every rank key the same: runs tie, and only the table's order (single-turn runs first) decides.
    keys = {"display_name": "same", "active_retrieval": 3, "passed": 9, "mean_precision": 0.5, "mean_drift": 0.25}
    for name, value in keys.items():
        table = table.set_column(table.schema.get_field_index(name), name, pa.array([value] * len(table)))
    for benchmark in (None, "pmb-single-turn", "pmb-session"):
        want = oracle.ranked([oracle.leaderboard_row(r) for r in table.to_pylist()], benchmark)  # type: ignore[arg-type]
        assert leaderboard.table_rows(table, benchmark) == want  # type: ignore[arg-type]
    in_table = table.select(["run_id", "benchmark"]).to_pylist()
    want = [r["run_id"] for b in ("pmb-single-turn", "pmb-session") for r in in_table if r["benchmark"] == b]
    assert [r["run_id"] for r in leaderboard.table_rows(table)] == want


def test_arrow_rounding_is_the_python_rounding_bit_for_bit() -> None:
    import random

    import pyarrow as pa

    from memeval_core.rounding import js_round

    rng = random.Random(19)
    values = [rng.random() * 10 ** rng.randint(-6, 4) for _ in range(20_000)]
    values += [k / 2 * 10.0**-d for d in (2, 4) for k in range(-400, 400)]  # decimal halves and the grid between
    values += [math.nextafter(v, math.inf) for v in values[-1600:]] + [math.nextafter(v, 0) for v in values[-1600:]]
    values += [0.0, -0.0, 1e-17, 5e-324, 0.99995, 0.00005, 0.12345, 2.675, 1.005, -0.00005, 1e11 + 0.005, 1e12]
    for decimals in (2, 4):
        arrow = leaderboard._js_round(pa.chunked_array([[*values, None]]), decimals).to_pylist()  # type: ignore[list-item]
        assert arrow == [js_round(v, decimals) for v in values] + [None]
        assert [math.copysign(1, a) for a in arrow[:-1]] == [math.copysign(1, js_round(v, decimals)) for v in values]


def test_json_batch_by_batch_is_the_standard_librarys_indented_text() -> None:
    rs = oracle.rows(load_pmb(require(PMB_DIR)).runs)
    odd = {**rs[0], "display_name": 'a "b"\n]\n  [c\u2028', "mismatches": ["x\n]", "[", "\x1f é"]}
    rs = [*rs, odd]
    for batches in ([rs], [rs[:1]], [], [[]], [rs[:5], [], rs[5:6], rs[6:]], [[odd], [odd]]):
        some = [r for b in batches for r in b]
        text = b"".join(leaderboard.json_chunks(batches)).decode()
        assert text == json.dumps(some, indent=2, ensure_ascii=False) + "\n"
