"""The home page, stored: the top of every board, written beside a results dataset's manifest.

A results dataset on the Hub may hold any number of runs, but the home page shows only the first
:data:`TOP_ROWS` runs of each board (every run is on the details pages). Each push computes those rows over the
whole dataset, with the same code the app runs on a folder (:func:`memeval_core.explore.home.all_boards`), and
commits them as ``memeval-front.json`` (:class:`FrontPage`). The app's first page from a dataset then reads the
manifest and this file: a fixed number of bytes, however many runs the dataset holds.

Floats are written with Python's shortest round-trip representation, so a board read back is the same frame,
bit for bit, as the one computed from the runs (:func:`boards_of`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memeval_core import SCORING_VERSION
from memeval_core.explore.home import Board, all_boards, board_frame, board_rows
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.qa.ingest import QaRunHeader

FRONT_FILE = "memeval-front.json"
"""The stored home page's path in a results dataset."""
TOP_ROWS = 100
"""Runs per board on the home page (and in :data:`FRONT_FILE`)."""
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class FrontError(ValueError):
    """A stored home page that cannot be read; the message names the file and the field."""


class BoardRow(BaseModel):
    """One row of a board (:data:`memeval_core.explore.home.COLUMNS`)."""

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
    """Repository the run's file comes from, when memeval's catalogue lists it."""
    upstream_commit: str | None
    """Commit of that file upstream."""
    upstream_path: str | None
    """Path of that file upstream."""
    licence: str | None
    """The file's licence."""


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
    """What an item is."""
    n_runs: int = Field(ge=0)
    """Runs on the whole board."""
    n_below_nothing: int | None = Field(ge=0)
    """PMB: runs on the whole board passing fewer cases than the system returning nothing; None without it."""
    rows: tuple[BoardRow, ...]
    """The first :attr:`FrontPage.top_rows` runs, best first, then the reference rows."""


class FrontPage(BaseModel):
    """``memeval-front.json``: the home page of a results dataset, computed over all of its runs by the push
    that wrote it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Literal[1]
    """Version of this format."""
    scoring_version: str
    """The scoring code the boards were computed with."""
    top_rows: int = Field(ge=1)
    """Runs kept per board."""
    run_counts: dict[str, int]
    """Runs per benchmark id, PMB suites first, in the order the app's sidebar lists them."""
    locomo_unjoined: bool
    """LoCoMo runs were scored without the LoCoMo dataset (no categories, no evidence)."""
    boards: tuple[StoredBoard, ...]
    """Every board, as the home page shows it."""
    publishable_boards: tuple[StoredBoard, ...]
    """Every board with only the publishable QA runs (the home page's "publishable only" view)."""


def run_counts(pmb_benchmarks: Sequence[str], qa_runs: Sequence[QaRunHeader]) -> dict[str, int]:
    """Runs per benchmark, in order of first appearance: the PMB runs' suites, then the QA runs'."""
    counts: dict[str, int] = {}
    for b in (*pmb_benchmarks, *(q.meta.benchmark for q in qa_runs)):
        counts[b] = counts.get(b, 0) + 1
    return counts


def locomo_unjoined(qa_runs: Sequence[QaRunHeader], locomo_source: str | None) -> bool:
    """LoCoMo runs are present but the LoCoMo dataset was not: they are scored without categories and evidence."""
    return locomo_source is None and any(q.meta.benchmark == "locomo" for q in qa_runs)


def _stored(board: Board) -> StoredBoard:
    rows = tuple(BoardRow.model_validate(r) for r in board_rows(board.frame))
    return StoredBoard(
        benchmark=board.benchmark, title=board.title, score_name=board.score_name, item_name=board.item_name,
        n_runs=board.n_runs, n_below_nothing=board.n_below_nothing, rows=rows,
    )  # fmt: skip


def front_page(
    pmb_runs: pa.Table,
    fixture: PmbFixture | None,
    qa_runs: Sequence[QaRunHeader],
    locomo_source: str | None,
    top_rows: int = TOP_ROWS,
) -> FrontPage:
    """The home page of these runs (a PMB runs table and QA run headers), each board cut to ``top_rows`` runs."""
    boards, publishable = (
        [_stored(b.top(top_rows)) for b in all_boards(pmb_runs, fixture, qa_runs, publishable_only=only)]
        for only in (False, True)
    )
    return FrontPage(
        layout=1,
        scoring_version=SCORING_VERSION,
        top_rows=top_rows,
        run_counts=run_counts(pmb_runs.column("benchmark").to_pylist(), qa_runs),
        locomo_unjoined=locomo_unjoined(qa_runs, locomo_source),
        boards=tuple(boards),
        publishable_boards=tuple(publishable),
    )


def boards_of(front: FrontPage, publishable_only: bool = False) -> list[Board]:
    """The boards stored in ``front``, as :func:`memeval_core.explore.home.all_boards` gives them (cut to the top)."""
    stored = front.publishable_boards if publishable_only else front.boards
    return [
        Board(
            s.benchmark,
            s.title,
            s.score_name,
            s.item_name,
            board_frame([r.model_dump() for r in s.rows]),
            s.n_runs,
            s.n_below_nothing,
        )
        for s in stored
    ]


def front_bytes(front: FrontPage) -> bytes:
    """The file as written: fields in the model's order (the run counts keep theirs), no indent (the app reads
    it, not people), a trailing newline."""
    return (json.dumps(front.model_dump(mode="json"), separators=(",", ":")) + "\n").encode()


def parse_front(data: bytes, where: str) -> FrontPage:
    """The stored home page in ``data``; :class:`FrontError` naming ``where`` and the field when it is malformed
    or was computed by other scoring code."""
    try:
        doc: Any = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FrontError(f"{where}: not valid JSON ({exc})") from exc
    try:
        front = FrontPage.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "$"
        raise FrontError(f"{where}: field {field}: {err['msg']}") from exc
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
