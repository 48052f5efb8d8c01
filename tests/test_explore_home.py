"""The home page's boards: Wilson intervals, PMB rank order with the reference systems, QA ranked by accuracy."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from memeval_core.explore import home
from memeval_core.pmb.runs_table import runs_table
from memeval_core.results import load_all_results
from tests import _pmb_oracle as oracle


@pytest.mark.parametrize(("k", "n"), [(0, 77), (9, 77), (22, 77), (77, 77), (776, 1540), (1, 3)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    low, high = home.wilson(k, n) or (math.nan, math.nan)
    ref_low, ref_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx((ref_low, ref_high), abs=1e-12)


def test_wilson_of_nothing() -> None:
    assert home.wilson(0, 0) is None


@pytest.fixture(scope="module")
def boards(shared_data: Path) -> list[home.Board]:
    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    pmb, qa = load_all_results(shared_data, shared_data, cache_dir=None)
    return home.all_boards(runs_table(pmb.runs), pmb.fixture, qa.runs)


def test_pmb_boards_are_the_leaderboard_rows_of_their_suite(shared_data: Path) -> None:
    from memeval_core.pmb.ingest import load_pmb

    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    runs = load_pmb(shared_data / "precisionmembench").runs
    for benchmark in ("pmb-single-turn", "pmb-session"):
        board = home.pmb_board(runs_table(runs), benchmark, None)
        assert board is not None
        got = board.frame[["rank", "run_id", "display_name", "items", "badge"]].to_dict("records")
        rows = oracle.rows(runs, benchmark)  # the per-row oracle
        want = [
            {"rank": i, "run_id": r["run_id"], "display_name": r["display_name"], "items": r["cases"],
             "badge": home.verification_badge(len(r["mismatches"]))}
            for i, r in enumerate(rows, start=1)
        ]  # fmt: skip
        assert got == want
        assert list(board.frame["score"]) == [r["passed"] / r["cases"] for r in rows]
        assert any(b != "✓ verified" for b in board.frame["badge"]) or benchmark == "pmb-session"


def test_pmb_board_keeps_the_rank_and_adds_the_references(boards: list[home.Board]) -> None:
    single = boards[0]
    assert single.benchmark == "pmb-single-turn" and single.score_name == "Pass rate"
    runs = single.runs
    assert list(runs["display_name"][:2]) == ["tenure", "gbrain"] and list(runs["rank"][:3]) == [1, 2, 3]
    tenure = runs.iloc[0]
    assert (tenure["score"], tenure["items"], tenure["badge"]) == (1.0, 77, "✓ verified")
    refs = single.frame[single.frame["reference"]]
    assert list(refs["display_name"]) == ["Reference: returns nothing", "Reference: returns everything"]
    assert refs["rank"].isna().all() and refs["run_id"].isna().all()
    assert refs.iloc[0]["score"] == pytest.approx(22 / 77)
    assert home.below_nothing(single) == (11, 13)
    assert tenure["upstream_repository"] == "https://github.com/tenurehq/precisionMemBench"
    assert tenure["licence"] == "MIT"


def test_qa_boards_rank_every_run_by_accuracy_and_badge_it(boards: list[home.Board]) -> None:
    (locomo,) = [b for b in boards if b.title == "LoCoMo (without category 5)"]
    frame = locomo.frame
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)
    zep = frame[frame["display_name"] == "zep"].iloc[0]
    assert (zep["rank"], zep["score"], zep["badge"]) == (1, 0.7844, "diagnostic: top-k not stated")
    mem0 = frame[frame["display_name"] == "mem0"].iloc[0]
    assert (mem0["rank"], mem0["badge"]) == (7, "✓ publishable")
    low, high = home.wilson(0.5039 * 1540, 1540) or (0, 0)
    assert (mem0["score_low"], mem0["score_high"]) == pytest.approx((low, high))


def test_publishable_only_reranks(shared_data: Path) -> None:
    _, qa = load_all_results(shared_data, shared_data, cache_dir=None)
    only = home.qa_boards(qa.runs, publishable_only=True)
    (locomo,) = [b for b in only if b.title == "LoCoMo (without category 5)"]
    assert list(locomo.frame["display_name"]) == ["mem0"] and list(locomo.frame["rank"]) == [1]


def test_provenance_names_the_package_the_day_and_the_wrapper(boards: list[home.Board]) -> None:
    runner = (("package", "memeval"), ("version", "0.9"), ("runDate", "2026-12-01T10:00:00Z"),
              ("wrapperUrl", "http://127.0.0.1:8080"), ("suite", "single"))  # fmt: skip
    assert home.made_by(runner) == "memeval 0.9 · 2026-12-01 · http://127.0.0.1:8080"
    assert home.made_by((("runDate", "2026-11-02"),)) == "2026-11-02"
    assert home.made_by(()) is None
    # Of the published single-turn baselines only agentmemory's report states its provenance.
    stated = boards[0].frame.dropna(subset=["made_by"])
    assert list(stated["display_name"]) == ["agentmemory"]
    assert stated["made_by"].iloc[0] == "@agentmemory/agentmemory 0.9.22 · 2026-05-29"
