"""Checking an uploaded result file before it is saved: what it is, whether it loads, where it would rank.

Nothing here writes to the results directory; :func:`memeval_core.store.add_files` does that once the
user confirms. A file is tried as a PMB report first (scored against the results directory's
fixture), then as a QA run of any supported format (scored in a scratch folder, joined to the
results directory's ``locomo10.json`` when there is one).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval_core import leaderboard
from memeval_core.errors import IngestError
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import parse_json_bytes, run_from_bytes, sniff
from memeval_core.pmb.runs_table import runs_table
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import load_qa
from memeval_core.store import sanitize_name


@dataclass(frozen=True)
class UploadPreview:
    """The verdict on one uploaded file."""

    name: str
    """File name as uploaded."""
    safe_name: str
    """The name it would be stored under."""
    kind: str
    """``pmb`` or ``qa`` when it loads; ``invalid`` otherwise."""
    errors: tuple[IngestError, ...] = ()
    """Why it does not load (file, JSON path, message, how to fix)."""
    rows: tuple[dict[str, Any], ...] = ()
    """Its leaderboard row(s), ranked among the existing runs of the same benchmark (provisional)."""
    notes: tuple[str, ...] = field(default=())
    """Other things the user should know (e.g. files skipped inside a QA upload)."""

    @property
    def ok(self) -> bool:
        """True when the file loads as at least one run."""
        return not self.errors and bool(self.rows)


def preview(
    name: str,
    data: bytes,
    fixture: PmbFixture | None,
    existing_pmb: list[dict[str, Any]],
    existing_qa: list[dict[str, Any]],
    datasets: Path | None = None,
) -> UploadPreview:
    """Validate one uploaded file and place it, provisionally, among the existing leaderboard rows."""
    safe = sanitize_name(name)
    try:
        parsed = parse_json_bytes(data, name) if not safe.endswith((".jsonl", ".csv")) else None
    except IngestError as exc:
        return UploadPreview(name, safe, "invalid", (exc,))
    if parsed is not None and sniff(parsed) in ("single-turn-report", "session-report"):
        if fixture is None:
            err = IngestError(name, "$", "no PMB fixture to score this report against", "sync the PMB fixtures first")
            return UploadPreview(name, safe, "invalid", (err,))
        try:
            run = run_from_bytes(name, data, fixture)
        except IngestError as exc:
            return UploadPreview(name, safe, "invalid", (exc,))
        (row,) = leaderboard.table_rows(runs_table([run]))
        peers = [r for r in existing_pmb if r["benchmark"] == row["benchmark"]]
        rank = 1 + sum(1 for r in peers if leaderboard.sort_key(r) < leaderboard.sort_key(row))
        return UploadPreview(name, safe, "pmb", rows=({**row, "provisional_rank": rank, "of": len(peers) + 1},))
    with tempfile.TemporaryDirectory(prefix="memeval-upload-") as tmp:
        (Path(tmp) / safe).write_bytes(data)
        qa = load_qa(Path(tmp), datasets)
    if qa.errors:
        return UploadPreview(name, safe, "invalid", qa.errors)
    if not qa.runs:
        reason = "; ".join(s.reason for s in qa.skipped) or "no results found"
        err = IngestError(
            name,
            "$",
            f"not a result file memeval can read ({reason})",
            "upload a PMB report, a QA result of a supported format, or memeval's run format (docs/QA_RUN_FORMAT.md)",
        )
        return UploadPreview(name, safe, "invalid", (err,))
    rows = []
    for row in qa_leaderboard.rows(qa.runs):
        peers = [r for r in existing_qa if r["benchmark"] == row["benchmark"] and r["rank_group"] == row["rank_group"]]
        better = sum((r.get("accuracy") or 0) > (row["accuracy"] or 0) for r in peers)
        rows.append({**row, "provisional_rank": 1 + better, "of": len(peers) + 1})
    return UploadPreview(name, safe, "qa", rows=tuple(rows))


def validate_any(fixture: PmbFixture | None, datasets: Path | None = None) -> Any:
    """A :data:`memeval_core.store.Validator` accepting any loadable PMB or QA file."""

    def validate(name: str, data: bytes) -> None:
        result = preview(name, data, fixture, [], [], datasets)
        if not result.ok:
            raise result.errors[0]

    return validate
