"""The stored home page: the top of every board, written and read back bit for bit as the app computes it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


PARTS = "0" * 64


def _front(headers: tuple[PmbHeaders, QaHeaders], top_rows: int = front.TOP_ROWS) -> front.FrontPage:
    pmb, qa = headers
    return front.front_page(pmb.table, pmb.fixture, qa.runs, qa.locomo_source, PARTS, top_rows)


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


def test_the_sidebar_counts_do_not_depend_on_the_order_of_the_runs(
    shared_data: Path, headers: tuple[PmbHeaders, QaHeaders]
) -> None:
    pmb, qa = load_all_results(shared_data, shared_data, cache_dir=None)
    counts = _front(headers).run_counts
    suites = [r.identity.benchmark for r in pmb.runs]
    assert list(counts.items()) == list(front.run_counts(suites[::-1], qa.runs[::-1]).items())
    assert list(counts)[:3] == ["pmb-single-turn", "pmb-session", "locomo"]
    assert sum(counts.values()) == len(pmb.runs) + len(qa.runs) == headers[0].table.num_rows + len(headers[1].runs)
    assert runs_table(pmb.runs).num_rows == headers[0].table.num_rows


def test_a_board_row_has_the_boards_columns() -> None:
    assert tuple(front.BoardRow.model_fields) == home.COLUMNS


def test_a_malformed_file_names_the_field(headers: tuple[PmbHeaders, QaHeaders]) -> None:
    doc = json.loads(front.front_bytes(_front(headers)))
    doc["boards"][0]["rows"][0]["score"] = 1.5
    with pytest.raises(front.FrontError, match=r"f\.json: field boards\.0\.rows\.0\.score: .*less than or equal to 1"):
        front.parse_front(json.dumps(doc).encode(), "f.json")
    doc["boards"][0]["rows"][0]["score"] = float("nan")
    with pytest.raises(front.FrontError, match=r"f\.json: .*boards\.0\.rows\.0\.score"):
        front.parse_front(json.dumps(doc).encode(), "f.json")
    with pytest.raises(front.FrontError, match=r"f\.json: field \$: Invalid JSON: recursion limit exceeded"):
        front.parse_front(b"[" * 100_000 + b"]" * 100_000, "f.json")
    with pytest.raises(front.FrontError, match=r"f\.json: field \$: Invalid JSON: EOF while parsing"):
        front.parse_front(b"{", "f.json")
    doc = json.loads(front.front_bytes(_front(headers)))
    doc["scoring_version"] = "0"
    with pytest.raises(front.FrontError, match="computed with scoring version 0"):
        front.parse_front(json.dumps(doc).encode(), "f.json")


def _refused(headers: tuple[PmbHeaders, QaHeaders], change: Callable[[dict[str, Any]], None]) -> str:
    doc = json.loads(front.front_bytes(_front(headers)))
    change(doc)
    with pytest.raises(front.FrontError) as info:
        front.parse_front(json.dumps(doc).encode(), "f.json")
    return str(info.value)


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value

    return change


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        ("boards.0.rows.0.reference", "yes", "boards.0.rows.0.reference: Input should be a valid boolean"),
        ("boards.0.rows.0.items", "5", "boards.0.rows.0.items: Input should be a valid integer"),
        ("boards.0.rows.0.rank", True, "boards.0.rows.0.rank: Input should be a valid integer"),
        ("layout", True, "field layout"),
        ("boards.0.rows.0.rank", None, "a run has a rank and a run id, a reference row neither"),
        ("boards.0.rows.0.score", 0.5, "the interval does not hold the score"),
        ("boards.0.rows.0.score_high", None, "an interval has both ends"),
        ("boards.0.rows.0.score_low", None, "an interval has both ends"),
        ("boards.0.rows.-1.display_name", "Reference: <b>me</b>", "a reference row is one of"),
        ("boards.0.n_runs", 1, "at most n_runs"),
        ("boards.0.n_below_nothing", None, "exactly when the board has the returns-nothing row"),
        ("boards.0.item_name", "questions", "a board of Pass rate counts cases"),
        ("boards.0.rows.1.rank", 99, "the runs are in rank order"),
        ("top_rows", 2, "a board holds more runs than top_rows"),
        ("run_counts.locomo", -1, "run_counts.locomo: Input should be greater than or equal to 0"),
    ],
)
def test_a_stored_page_that_does_not_hold_together_is_refused(
    headers: tuple[PmbHeaders, QaHeaders], path: str, value: object, words: str
) -> None:
    if ".-1." in path:  # the last row of the board

        def change(doc: dict[str, Any]) -> None:
            doc["boards"][0]["rows"][-1][path.rsplit(".", 1)[1]] = value
    else:
        change = _set(path, value)
    message = _refused(headers, change)
    assert message.startswith("f.json: field ") and words in message and "\n" not in message


def test_the_publishable_view_holds_qa_boards_only(headers: tuple[PmbHeaders, QaHeaders]) -> None:
    def pmb_in_view(doc: dict[str, Any]) -> None:
        doc["publishable_qa_boards"].append(doc["boards"][0])

    assert "publishable_qa_boards: QA boards only" in _refused(headers, pmb_in_view)
    stored = _front(headers)
    assert all(b.score_name == "Accuracy" for b in stored.publishable_qa_boards)
    only = front.boards_of(stored, publishable_only=True)
    assert [b.benchmark for b in only][:2] == ["pmb-single-turn", "pmb-session"]


def test_a_score_over_no_items_has_no_interval(headers: tuple[PmbHeaders, QaHeaders]) -> None:
    row = _front(headers).boards[2].rows[0].model_dump()  # a QA run
    front.BoardRow.model_validate(row | {"items": 0, "score_low": None, "score_high": None})
    with pytest.raises(ValueError, match="a score over items has its interval"):
        front.BoardRow.model_validate(row | {"score_low": None, "score_high": None})
