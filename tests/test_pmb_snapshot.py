"""A snapshot reconstructs the loaded runs exactly, and is byte-identical when rewritten."""

from __future__ import annotations

from pathlib import Path

from memeval_core import leaderboard
from memeval_core.pmb.ingest import load_pmb
from memeval_core.pmb.snapshot import has_snapshot, read_snapshot, write_snapshot
from tests._data import PMB_DIR, require


def test_round_trip_is_exact_and_deterministic(tmp_path: Path) -> None:
    load = load_pmb(require(PMB_DIR))
    paths = write_snapshot(load, tmp_path / "a")
    assert has_snapshot(tmp_path / "a")
    back = read_snapshot(tmp_path / "a")
    assert leaderboard.rows(back.runs) == leaderboard.rows(load.runs)
    assert [r.cases for r in back.runs] == [r.cases for r in load.runs]
    assert back.fixture is not None and load.fixture is not None
    assert back.fixture.cases == load.fixture.cases
    assert back.fixture.session_cases == load.fixture.session_cases
    assert back.fixture.category_order == load.fixture.category_order
    write_snapshot(back, tmp_path / "b")
    for p in paths:
        assert (tmp_path / "b" / p.name).read_bytes() == p.read_bytes(), p.name


def test_results_loader_prefers_a_snapshot(tmp_path: Path) -> None:
    from memeval_core.results import load_pmb_results

    load = load_pmb(require(PMB_DIR))
    write_snapshot(load, tmp_path)
    assert leaderboard.rows(load_pmb_results(tmp_path).runs) == leaderboard.rows(load.runs)
