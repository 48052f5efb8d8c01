"""The home page, stored: the top of every board, written beside a results dataset's manifest.

A results dataset on the Hub may hold any number of runs, but the home page shows only the first
:data:`TOP_ROWS` runs of each board (every run is on the details pages). Each push computes those rows over the
whole dataset, with the same code the app runs on a folder (:func:`memeval_core.explore.home.all_boards`), and
commits them as ``memeval-front.json`` (:class:`FrontPage`). The app's first page from a dataset then reads the
manifest and this file: bytes that grow with the number of pushes (the manifest's parts), not of runs.

Floats are written with Python's shortest round-trip representation, so a board read back is the same frame,
bit for bit, as the one computed from the runs (:func:`boards_of`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memeval_core import SCORING_VERSION, labels
from memeval_core.errors import first_problem
from memeval_core.explore.home import Board, board_frame, board_rows, pmb_boards, qa_boards
from memeval_core.explore.reference import REFERENCE_NAMES
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.qa.ingest import QaRunHeader

FRONT_FILE = "memeval-front.json"
"""The stored home page's path in a results dataset."""
TOP_ROWS = 100
"""Runs per board on the home page (and in :data:`FRONT_FILE`)."""
MAX_FRONT_BYTES = 16 * 1024 * 1024
"""A stored home page larger than this is refused unread (the file a push writes is a few hundred KB)."""
SLACK = 1e-12
"""Rounding allowed when an interval's ends are compared with its score."""
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A rate: a finite number from 0 to 1."""
SCORES = {"Pass rate": "cases", "Accuracy": "questions"}
"""What each kind of board scores, and what its items are."""
REFERENCE_ROWS = tuple(f"Reference: {n}" for n in REFERENCE_NAMES)
"""The names of the reference rows a PMB board may hold."""


class FrontError(ValueError):
    """A stored home page that cannot be read; the message names the file and the field."""


class BoardRow(BaseModel):
    """One row of a board (:data:`memeval_core.explore.home.COLUMNS`, in that order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int | None = Field(ge=1)
    """Rank on the whole board; None for a reference row."""
    display_name: str
    """The system's name (``Reference: …`` for a reference row)."""
    score: Fraction | None
    """Pass rate or accuracy, as a fraction; None when the run has no item."""
    score_low: Fraction | None
    """Low end of the score's 95% Wilson interval."""
    score_high: Fraction | None
    """High end of the score's 95% Wilson interval."""
    items: int = Field(ge=0)
    """Cases or questions behind the score."""
    badge: str
    """Verification or protocol badge (``✓ verified``, ``✓ publishable``, ``diagnostic: …``, ``simulated``)."""
    made_by: str | None
    """A PMB report's provenance in one line; None without any."""
    reference: bool
    """A simulated reference system, not a submitted run."""
    run_id: str | None
    """The run's id; None for a reference row."""
    upstream_repository: str | None
    """Repository the run's file comes from, when the pusher's catalogue listed it."""
    upstream_commit: str | None
    """Commit of that file upstream."""
    upstream_path: str | None
    """Path of that file upstream."""
    licence: str | None
    """The file's licence."""

    @model_validator(mode="after")
    def _run_or_reference(self) -> BoardRow:
        """A run has a rank and an id; a reference row has neither and one of the reference names; a score over
        items has an interval that holds it (a score over no items, as a repeat group's can be, has none)."""
        if self.reference != (self.rank is None) or self.reference != (self.run_id is None):
            raise ValueError("a run has a rank and a run id, a reference row neither")
        if self.reference and self.display_name not in REFERENCE_ROWS:
            raise ValueError(f"a reference row is one of {', '.join(REFERENCE_ROWS)}")
        low, score, high = self.score_low, self.score, self.score_high
        if (low is None) != (high is None) or (low is not None and score is None):
            raise ValueError("an interval has both ends, and only around a score")
        if score is not None and low is None and self.items > 0:
            raise ValueError("a score over items has its interval")
        if low is not None and score is not None and high is not None and not low - SLACK <= score <= high + SLACK:
            raise ValueError("the interval does not hold the score")
        return self


class StoredBoard(BaseModel):
    """The top of one board."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    benchmark: str
    """Benchmark id."""
    title: str
    """The board's human name."""
    score_name: Literal["Pass rate", "Accuracy"]
    """What the score is."""
    item_name: Literal["cases", "questions"]
    """What an item is (cases for a pass rate, questions for an accuracy)."""
    n_runs: int = Field(ge=0)
    """Runs on the whole board."""
    n_below_nothing: int | None = Field(ge=0)
    """PMB: runs on the whole board passing fewer cases than the system returning nothing; None without it."""
    rows: tuple[BoardRow, ...]
    """The first :attr:`FrontPage.top_rows` runs, best first, then the reference rows."""

    @model_validator(mode="after")
    def _consistent(self) -> StoredBoard:
        """Runs first, by rank, then references; no more runs than the board has; the counts agree with the rows."""
        if SCORES[self.score_name] != self.item_name:
            raise ValueError(f"a board of {self.score_name} counts {SCORES[self.score_name]}")
        flags = [r.reference for r in self.rows]
        if flags != sorted(flags):
            raise ValueError("rows: the runs come first, then the reference rows")
        ranks = [r.rank for r in self.rows if r.rank is not None]
        if ranks != sorted(ranks) or len(ranks) > self.n_runs:
            raise ValueError("rows: the runs are in rank order, at most n_runs of them")
        nothing = any(r.display_name == REFERENCE_ROWS[0] for r in self.rows if r.reference)
        if nothing != (self.n_below_nothing is not None) or (self.n_below_nothing or 0) > self.n_runs:
            raise ValueError("n_below_nothing: set, at most n_runs, exactly when the board has the returns-nothing row")
        return self


class FrontPage(BaseModel):
    """``memeval-front.json``: the home page of a results dataset, computed over all of its runs by the push
    that wrote it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Literal[1]
    """Version of this format."""
    scoring_version: str
    """The scoring code the boards were computed with."""
    parts_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """SHA-256 of the manifest's parts it was computed over (:func:`memeval_core.hub_results.parts_digest`): a
    manifest whose parts differ (edited by hand) does not use it."""
    top_rows: int = Field(ge=1)
    """Runs kept per board."""
    run_counts: dict[str, Annotated[int, Field(ge=0)]]
    """Runs per benchmark id, in the sidebar's order (:func:`run_counts`)."""
    locomo_unjoined: bool
    """LoCoMo runs were scored without the LoCoMo dataset (no categories, no evidence)."""
    boards: tuple[StoredBoard, ...]
    """Every board, as the home page shows it: PMB suites, then QA benchmarks."""
    publishable_qa_boards: tuple[StoredBoard, ...]
    """The QA boards with only the publishable runs (the home page's "publishable only" view; the PMB boards do
    not change)."""

    @field_validator("layout", mode="before")
    @classmethod
    def _not_a_truth_value(cls, value: object) -> object:
        """JSON ``true`` equals 1 to a literal check; it is no layout."""
        if isinstance(value, bool):
            raise ValueError("a layout is a number")
        return value

    @model_validator(mode="after")
    def _within_top(self) -> FrontPage:
        """No board holds more than :attr:`top_rows` runs; the publishable view holds QA boards only."""
        if any(
            sum(not r.reference for r in b.rows) > self.top_rows for b in (*self.boards, *self.publishable_qa_boards)
        ):
            raise ValueError("a board holds more runs than top_rows")
        if any(b.score_name != "Accuracy" for b in self.publishable_qa_boards):
            raise ValueError("publishable_qa_boards: QA boards only")
        return self


def run_counts(pmb_benchmarks: Sequence[str], qa_runs: Sequence[QaRunHeader]) -> dict[str, int]:
    """Runs per benchmark: the benchmarks memeval knows in their order (:data:`memeval_core.labels.BENCHMARKS`),
    then any other by name, so the order does not depend on the order runs were loaded or pushed."""
    counts = Counter([*pmb_benchmarks, *(q.meta.benchmark for q in qa_runs)])
    order = {b: i for i, b in enumerate(labels.BENCHMARKS)}
    return {b: counts[b] for b in sorted(counts, key=lambda b: (order.get(b, len(order)), b))}


def locomo_unjoined(qa_runs: Sequence[QaRunHeader], locomo_source: str | None) -> bool:
    """LoCoMo runs are present but the LoCoMo dataset was not: they are scored without categories and evidence."""
    return locomo_source is None and any(q.meta.benchmark == "locomo" for q in qa_runs)


def _stored(board: Board, top_rows: int) -> StoredBoard:
    """The top ``top_rows`` runs of ``board`` (and its references) as stored."""
    top = board.top(top_rows)
    return StoredBoard(
        benchmark=top.benchmark, title=top.title, score_name=top.score_name, item_name=top.item_name,
        n_runs=top.n_runs, n_below_nothing=top.n_below_nothing,
        rows=tuple(BoardRow.model_validate(r) for r in board_rows(top.frame)),
    )  # fmt: skip


def front_page(
    pmb_runs: pa.Table,
    fixture: PmbFixture | None,
    qa_runs: Sequence[QaRunHeader],
    locomo_source: str | None,
    parts_sha256: str,
    top_rows: int = TOP_ROWS,
) -> FrontPage:
    """The home page of these runs (a PMB runs table and QA run headers), each board cut to ``top_rows`` runs;
    ``parts_sha256`` names the parts they were read from."""
    pmb = [_stored(b, top_rows) for b in pmb_boards(pmb_runs, fixture)]
    qa = [_stored(b, top_rows) for b in qa_boards(qa_runs)]
    publishable = [_stored(b, top_rows) for b in qa_boards(qa_runs, publishable_only=True)]
    return FrontPage(
        layout=1,
        scoring_version=SCORING_VERSION,
        parts_sha256=parts_sha256,
        top_rows=top_rows,
        run_counts=run_counts(pmb_runs.column("benchmark").to_pylist(), qa_runs),
        locomo_unjoined=locomo_unjoined(qa_runs, locomo_source),
        boards=(*pmb, *qa),
        publishable_qa_boards=tuple(publishable),
    )


def boards_of(front: FrontPage, publishable_only: bool = False) -> list[Board]:
    """The boards stored in ``front``, as :func:`memeval_core.explore.home.all_boards` gives them (cut to the top)."""
    pmb = [s for s in front.boards if s.score_name == "Pass rate"]
    stored = [*pmb, *front.publishable_qa_boards] if publishable_only else front.boards
    return [
        Board(s.benchmark, s.title, s.score_name, s.item_name, _frame(s), s.n_runs, s.n_below_nothing) for s in stored
    ]


def _frame(board: StoredBoard) -> pd.DataFrame:
    return board_frame([r.model_dump() for r in board.rows])


def front_bytes(front: FrontPage) -> bytes:
    """The file as written: fields in the model's order, no indent (the app reads it, not people), a trailing
    newline."""
    return (json.dumps(front.model_dump(mode="json"), separators=(",", ":")) + "\n").encode()


def parse_front(data: bytes, where: str) -> FrontPage:
    """The stored home page in ``data``, validated strictly (it comes from a remote dataset: no type is coerced);
    :class:`FrontError` naming ``where`` and the field when it is malformed, too large or too deeply nested, or
    was computed by other scoring code."""
    if len(data) > MAX_FRONT_BYTES:
        raise FrontError(f"{where}: {len(data):,} bytes, more than a stored home page may hold ({MAX_FRONT_BYTES:,})")
    try:
        front = FrontPage.model_validate_json(data, strict=True)
    except ValidationError as exc:
        raise FrontError(f"{where}: {first_problem(exc)}") from exc
    if front.scoring_version != SCORING_VERSION:
        raise FrontError(f"{where}: computed with scoring version {front.scoring_version}, not {SCORING_VERSION}")
    return front


@dataclass(frozen=True)
class OpenedFront:
    """A results dataset's stored home page, read at one commit."""

    commit: str
    """The commit it was read at."""
    front: FrontPage
    """The top of every board over all of the dataset's runs."""
