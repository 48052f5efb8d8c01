"""The record of a run in progress, so that ``--resume`` continues it without re-seeding.

``DIR/.<report name>.partial.jsonl``: a header line (what the run is), one ``ingestion`` line once seeding has
finished, then one ``entry`` line per finished case (session: per finished turn, after its ingest). Lines are
flushed as they are written, so a killed run loses at most the case under way; a torn last line is ignored.
The report itself is written only when every case is done (temp file + rename), and the checkpoint removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from memeval_core.errors import IngestError


@dataclass
class Resumed:
    """What a checkpoint holds."""

    header: dict[str, Any]
    ingestion: list[dict[str, Any]] | None = None
    """Per-belief ingestion of the finished seeding; None when seeding had not finished (or was not asked)."""
    seeded: bool = False
    """Seeding finished (or the run did not seed): the wrapper's store is as the run left it."""
    entries: list[dict[str, Any]] = field(default_factory=list)


def partial_path(report: Path) -> Path:
    """Where the checkpoint of ``report`` lives."""
    return report.with_name(f".{report.stem}.partial.jsonl")


def read(path: Path, header: dict[str, Any]) -> Resumed | None:
    """The checkpoint at ``path``; None when there is none. Refuses one made for another run."""
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").split("\n")
    out: Resumed | None = None
    for n, line in enumerate(lines, 1):
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            if n >= len(lines) - 1:  # the torn last line of a killed run
                break
            raise IngestError(str(path), f"line {n}", "is not JSON", "delete the file to start over") from None
        if out is None:
            if doc.get("header") != header:
                raise IngestError(
                    str(path), "line 1", f"was written by another run ({doc.get('header')})",
                    "run without --resume, or with the same --url, --provider, --suite and fixture",
                )  # fmt: skip
            out = Resumed(header=header)
        elif "ingestion" in doc:
            out.ingestion, out.seeded = doc["ingestion"], True
        else:
            out.entries.append(doc["entry"])
    return out


class Writer:
    """Appends to a checkpoint."""

    def __init__(self, path: Path, header: dict[str, Any], *, fresh: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh: IO[str] = path.open("w" if fresh else "a", encoding="utf-8")
        if fresh:
            self._write({"header": header})

    def _write(self, doc: dict[str, Any]) -> None:
        self._fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
        self._fh.flush()

    def seeded(self, ingestion: list[dict[str, Any]] | None) -> None:
        """Seeding finished (``ingestion`` None: the run did not seed)."""
        self._write({"ingestion": ingestion})

    def entry(self, entry: dict[str, Any]) -> None:
        """One finished case or turn."""
        self._write({"entry": entry})

    def close(self, *, remove: bool) -> None:
        """Close; delete the file once the report is written."""
        self._fh.close()
        if remove:
            self.path.unlink(missing_ok=True)
