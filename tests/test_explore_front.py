"""The stored home page: the top of every board, written and read back bit for bit as the app computes it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from memeval_core.explore import front, home
from memeval_core.pmb.runs_table import runs_table
from memeval_core.pmb.snapshot import PmbHeaders
from memeval_core.qa.snapshot import QaHeaders
from memeval_core.results import load_all_results, load_headers


@pytest.fixture(scope="module")
def headers(shared_data: Path) -> tuple[PmbHeaders, QaHeaders]:
    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    return load_headers(shared_data, shared_data, cache_dir=None)


def _front(headers: tuple[PmbHeaders, QaHeaders], top_rows: int = front.TOP_ROWS) -> front.FrontPage:
    pmb, qa = headers
    return front.front_page(pmb.table, pmb.fixture, qa.runs, qa.locomo_source, top_rows)


def _assert_same(got: list[home.Board], want: list[home.Board]) -> None:
    assert [(b.benchmark, b.title, b.n_runs, b.n_below_nothing) for b in got] == [
        (b.benchmark, b.title, b.n_runs, b.n_below_nothing) for b in want
    ]
    for a, b in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)


@pytest.mark.parametrize("top_rows", [front.TOP_ROWS, 3])
@pytest.mark.parametrize("publishable_only", [False, True])
def test_boards_read_back_are_the_boards_computed(
    headers: tuple[PmbHeaders, QaHeaders], top_rows: int, publishable_only: bool
) -> None:
    pmb, qa = headers
    written = front.front_bytes(_front(headers, top_rows))
    back = front.parse_front(written, "memeval-front.json")
    want = [b.top(top_rows) for b in home.all_boards(pmb.table, pmb.fixture, qa.runs, publishable_only)]
    _assert_same(front.boards_of(back, publishable_only), want)
    assert front.front_bytes(back) == written


def test_the_top_keeps_the_whole_boards_counts_and_references(headers: tuple[PmbHeaders, QaHeaders]) -> None:
    pmb, qa = headers
    whole = home.all_boards(pmb.table, pmb.fixture, qa.runs)
    cut = front.boards_of(_front(headers, 3))
    single = cut[0]
    assert single.benchmark == "pmb-single-turn" and len(single.runs) == 3 < single.n_runs == len(whole[0].runs)
    assert home.below_nothing(single) == home.below_nothing(whole[0]) == (11, 13)
    assert list(single.frame["display_name"][-2:]) == ["Reference: returns nothing", "Reference: returns everything"]
    assert all(len(b.runs) == min(3, b.n_runs) for b in cut)


def test_the_sidebar_counts_keep_the_load_order(shared_data: Path, headers: tuple[PmbHeaders, QaHeaders]) -> None:
    pmb, qa = load_all_results(shared_data, shared_data, cache_dir=None)
    counts = _front(headers).run_counts
    assert counts == front.run_counts([r.identity.benchmark for r in pmb.runs], qa.runs)
    assert list(counts)[:2] == ["pmb-single-turn", "pmb-session"] and sum(counts.values()) == len(pmb.runs) + len(
        qa.runs
    )
    assert runs_table(pmb.runs).num_rows == headers[0].table.num_rows


def test_a_malformed_file_names_the_field(headers: tuple[PmbHeaders, QaHeaders]) -> None:
    doc = json.loads(front.front_bytes(_front(headers)))
    doc["boards"][0]["rows"][0]["score"] = 1.5
    with pytest.raises(front.FrontError, match=r"f\.json: field boards\.0\.rows\.0\.score: .*less than or equal to 1"):
        front.parse_front(json.dumps(doc).encode(), "f.json")
    doc["boards"][0]["rows"][0]["score"] = float("nan")
    with pytest.raises(front.FrontError, match=r"f\.json: .*boards\.0\.rows\.0\.score"):
        front.parse_front(json.dumps(doc).encode(), "f.json")
    with pytest.raises(front.FrontError, match=r"f\.json: not valid JSON"):
        front.parse_front(b"{", "f.json")
    doc = json.loads(front.front_bytes(_front(headers)))
    doc["scoring_version"] = "0"
    with pytest.raises(front.FrontError, match="computed with scoring version 0"):
        front.parse_front(json.dumps(doc).encode(), "f.json")
