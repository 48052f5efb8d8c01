"""The home page's answer: one ranked board per benchmark, main score with its 95% interval, references.

Each board is a table with one row per run, best first, built from the leaderboard rows the CLI and the
export use (:mod:`memeval_core.leaderboard`, :mod:`memeval_core.qa.leaderboard`), so every number is the
same everywhere:

- PMB: the score is the pass rate (passed / cases); rows keep memeval's rank (active passes first, see
  :func:`memeval_core.leaderboard.sort_key`). The reference systems *returns nothing* and *returns
  everything* are rows too, marked and unranked.
- QA: the score is the accuracy; rows are ranked by it within the benchmark's rank group, publishable
  or not; the badge says which, and ``publishable_only`` keeps only those (ranks recomputed).

The interval is Wilson's score interval at 95% (:func:`wilson`) over the items behind the score.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memeval_core import labels, leaderboard
from memeval_core.catalogue import CatalogueError, upstream_of, upstream_record
from memeval_core.explore.reference import REFERENCE_NAMES, reference_system
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import BENCHMARKS, Benchmark
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import QaRunHeader

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""
INTERVAL_METHOD = "Wilson score interval, 95%"
"""How the boards' intervals are computed, for captions and column help."""
UPSTREAM = ("upstream_repository", "upstream_commit", "upstream_path", "licence")
"""Where a catalogued run's file comes from (see :mod:`memeval_core.catalogue`); None for other runs."""
COLUMNS = (
    "rank",
    "display_name",
    "score",
    "score_low",
    "score_high",
    "items",
    "badge",
    "made_by",
    "reference",
    "run_id",
    *UPSTREAM,
)
"""The board's columns (machine keys; headers from :mod:`memeval_core.labels`)."""


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    r"""Wilson's score interval of a proportion ``successes / n``; None for ``n == 0``.

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z\sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}}}{1 + z^2/n}

    Unlike the normal approximation it stays within [0, 1] and is sensible at 0 and n successes.
    ``successes`` may be fractional (a mean of graded scores times ``n``).
    """
    if n <= 0:
        return None
    p = min(max(successes / n, 0.0), 1.0)
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return max(0.0, (centre - margin) / denominator), min(1.0, (centre + margin) / denominator)


@dataclass(frozen=True)
class Board:
    """One benchmark's ranked board."""

    benchmark: str
    """Benchmark id."""
    title: str
    """Its human name."""
    score_name: str
    """What the score is ("Pass rate", "Accuracy")."""
    item_name: str
    """What an item is ("cases", "questions")."""
    frame: pd.DataFrame
    """:data:`COLUMNS`, best first, then the reference rows (PMB: no rank, no run id). It may hold only the top
    of the board (:meth:`top`); the counts below are the whole board's."""
    n_runs: int
    """Runs on the whole board (references not counted)."""
    n_below_nothing: int | None
    """PMB: runs on the whole board that pass fewer cases than the system returning nothing; None without
    that reference (no fixture, or QA)."""

    @property
    def runs(self) -> pd.DataFrame:
        """The rows of submitted runs in :attr:`frame` (no references)."""
        return self.frame[~self.frame["reference"]].reset_index(drop=True)

    def top(self, n: int) -> Board:
        """The board with only its first ``n`` runs (and every reference row); the counts stay the whole board's."""
        if len(self.runs) <= n:
            return self
        kept = pd.concat([self.runs.head(n), self.frame[self.frame["reference"]]])
        # Rebuilt from its rows, as every board is, so that its column types are the rows' own.
        return dataclasses.replace(self, frame=board_frame(board_rows(kept)))


def board_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A board's frame of ``rows`` (:data:`COLUMNS`, missing values None)."""
    return pd.DataFrame(rows, columns=list(COLUMNS))


def board_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a board's ``frame``, a missing value (NaN in a data frame) as None."""
    return [
        {str(k): None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
        for r in frame.to_dict(orient="records")
    ]


def board(benchmark: str, title: str, score_name: str, item_name: str, frame: pd.DataFrame) -> Board:
    """The board of the whole ``frame`` (every run), its counts taken from it."""
    runs = frame[~frame["reference"]]
    nothing = frame[frame["reference"] & (frame["display_name"] == "Reference: returns nothing")]
    below = None if nothing.empty else int((runs["score"] < float(nothing["score"].iloc[0])).sum())
    return Board(benchmark, title, score_name, item_name, frame, len(runs), below)


def _upstream(source: str | None, sha256: str | None) -> dict[str, str | None]:
    """The upstream columns of a run's file(s); every value None when the catalogue does not list them."""
    try:
        return upstream_record(upstream_of(source, sha256))
    except CatalogueError:
        return dict.fromkeys(UPSTREAM)


def made_by(provenance: Sequence[tuple[str, str]]) -> str | None:
    """A report's provenance in one line: package and version, the day it ran, the wrapper; None without any."""
    p = dict(provenance)
    tool = " ".join(x for x in (p.get("package"), p.get("version")) if x)
    parts = [x for x in (tool, (p.get("runDate") or "")[:10], p.get("wrapperUrl")) if x]
    return " · ".join(parts) or None


def _row(
    rank: int | None,
    name: str,
    score: float | None,
    successes: float,
    n: int,
    badge: str,
    run_id: str | None,
    reference: bool = False,
    provenance: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    low_high = wilson(successes, n) if score is not None else None
    return dict.fromkeys(UPSTREAM) | {
        "rank": rank,
        "display_name": name,
        "score": score,
        "score_low": low_high[0] if low_high else None,
        "score_high": low_high[1] if low_high else None,
        "items": n,
        "badge": badge,
        "made_by": made_by(provenance),
        "reference": reference,
        "run_id": run_id,
    }


def verification_badge(n_mismatches: int) -> str:
    """``✓ verified``, or ``✗ N mismatch(es)`` when N stated values differ from the re-derived ones."""
    n = n_mismatches
    return "✓ verified" if n == 0 else f"✗ {n} mismatch{'es' if n != 1 else ''}"


BOARD_INPUTS = ("run_id", "display_name", "passed", "cases", "source", "sha256", "provenance")
"""The runs-table columns a PMB board reads besides the number of mismatches."""


def pmb_board(runs: pa.Table, benchmark: Benchmark, fixture: PmbFixture | None) -> Board | None:
    """The board of one PMB suite from the runs table (:mod:`memeval_core.pmb.runs_table`), references included
    when the fixture is known; None without runs. Reads only :data:`BOARD_INPUTS` and the mismatch counts."""
    order = leaderboard.rank_order(runs, benchmark)
    if not len(order):
        return None
    ranked = runs.select(list(BOARD_INPUTS)).take(order).to_pydict()
    mismatches = pc.list_value_length(runs["mismatches"]).take(order).to_pylist()
    out = [
        _row(
            rank,
            name,
            passed / cases if cases else None,
            passed,
            cases,
            verification_badge(n_mismatches),
            run_id,
            provenance=[(p["key"], p["value"]) for p in provenance],
        )
        | _upstream(source, sha256)
        for rank, (run_id, name, passed, cases, source, sha256, provenance, n_mismatches) in enumerate(
            zip(*ranked.values(), mismatches, strict=True), start=1
        )
    ]
    if fixture is not None:
        for name in REFERENCE_NAMES:
            ref = reference_system(fixture, name, benchmark)
            n = len(ref.cases)
            out.append(_row(None, f"Reference: {name}", ref.pass_rate, ref.passed, n, "simulated", None, True))
    frame = board_frame(out)
    return board(benchmark, labels.benchmark_name(benchmark), "Pass rate", "cases", frame)


def qa_boards(runs: Sequence[QaRunHeader], publishable_only: bool = False) -> list[Board]:
    """One board per QA rank group (benchmark, and LoCoMo's category-5 rule), ranked by accuracy."""
    files = {q.run_id: (q.meta.source_file, q.meta.source_sha256) for q in runs}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in qa_leaderboard.rows(list(runs)):
        if r["accuracy"] is not None and (r["publishable"] or not publishable_only):
            groups.setdefault(r["rank_group"], []).append(r)
    boards = []
    for group, members in groups.items():
        members.sort(key=lambda r: (-r["accuracy"], r["display_name"]))
        first: dict[float, int] = {}  # rank = 1 + runs with a higher accuracy = first position of this accuracy
        for i, m in enumerate(members, start=1):
            first.setdefault(m["accuracy"], i)
        out = []
        for r in members:
            rank = first[r["accuracy"]]
            badge = "✓ publishable" if r["publishable"] else "diagnostic: " + "; ".join(r["not_publishable_because"])
            out.append(
                _row(
                    rank,
                    r["display_name"],
                    r["accuracy"],
                    r["accuracy"] * r["n_questions"],
                    r["n_questions"],
                    badge,
                    r["run_id"],
                )
                | _upstream(*files[r["run_id"]])
            )
        benchmark = members[0]["benchmark"]
        title = labels.benchmark_name(benchmark) + group.removeprefix(benchmark)
        boards.append(board(benchmark, title, "Accuracy", "questions", board_frame(out)))
    order = {b: i for i, b in enumerate(labels.BENCHMARKS)}
    return sorted(boards, key=lambda b: (order.get(b.benchmark, len(order)), b.title))


def all_boards(
    pmb_runs: pa.Table, fixture: PmbFixture | None, qa_runs: Sequence[QaRunHeader], publishable_only: bool = False
) -> list[Board]:
    """Every board (PMB runs from the runs table, QA runs from their headers): PMB single-turn, PMB session, then
    the QA benchmarks."""
    return [*pmb_boards(pmb_runs, fixture), *qa_boards(qa_runs, publishable_only)]


def pmb_boards(runs: pa.Table, fixture: PmbFixture | None) -> list[Board]:
    """The board of each PMB suite present: single-turn, then session."""
    return [b for b in (pmb_board(runs, bm, fixture) for bm in BENCHMARKS) if b is not None]


def below_nothing(board: Board) -> tuple[int, int] | None:
    """PMB: (runs that pass fewer cases than the system returning nothing, runs) over the whole board; None
    without that reference."""
    return None if board.n_below_nothing is None else (board.n_below_nothing, board.n_runs)
