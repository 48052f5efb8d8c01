"""One list of every file under a results directory that was not loaded, with the reason and the fix.

The PMB and QA loaders each see every file and each leaves alone what the other reads (a QA run is
"skipped" by the PMB loader, a PMB report by the QA loader). A file is *not loaded* when neither loader
took it: it failed to read or validate (an error, listed once even when both loaders report it), or
no loader recognised it. Files used as inputs (the PMB fixture, the LoCoMo dataset, a disputed-answer
list, a mapping's data file) are loaded, not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memeval_core.errors import IngestError
from memeval_core.qa.ingest import Skipped

USED_AS_INPUT = ("LoCoMo dataset (join target)", "a PrecisionMemBench report (the PMB loader reads it)")
"""QA skip reasons of files that are inputs of the load, not files left out."""


class PmbFiles(Protocol):
    """What a PMB load (or its headers) says about its files."""

    @property
    def errors(self) -> tuple[IngestError, ...]: ...
    @property
    def skipped(self) -> tuple[str, ...]: ...


class QaFiles(Protocol):
    """What a QA load (or its headers) says about its files."""

    @property
    def errors(self) -> tuple[IngestError, ...]: ...
    @property
    def skipped(self) -> tuple[Skipped, ...]: ...


@dataclass(frozen=True)
class NotLoaded:
    """One file that was not loaded."""

    file: str
    """Path relative to the results directory."""
    reason: str
    """Why, in one sentence (with the JSON path of the problem when there is one)."""
    fix: str
    """What to do about it; may be empty."""
    failed: bool = True
    """True for a file that could not be read or validated; False for one no loader recognised."""

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}" + (f" ({self.fix})" if self.fix else "")


def not_loaded(pmb: PmbFiles | None, qa: QaFiles | None) -> list[NotLoaded]:
    """Every file neither loader took, errors first (in load order), then unrecognised files by path."""
    out: list[NotLoaded] = []
    seen: set[tuple[str, str]] = set()
    for err in [*(pmb.errors if pmb else ()), *(qa.errors if qa else ())]:
        reason = err.message if err.path == "$" else f"{err.path}: {err.message}"
        if (err.file, reason) not in seen:
            seen.add((err.file, reason))
            out.append(NotLoaded(err.file, reason, err.hint))
    failed = {n.file for n in out}
    left: list[NotLoaded] = []
    if qa is not None:
        not_pmb = set(pmb.skipped) if pmb is not None else None
        for s in qa.skipped:
            pmb_took = not_pmb is not None and s.file.endswith(".json") and s.file not in not_pmb
            if s.reason not in USED_AS_INPUT and not pmb_took and s.file not in failed:
                left.append(NotLoaded(s.file, s.reason, s.fix, failed=False))
    elif pmb is not None:
        left = [NotLoaded(f, "not a PrecisionMemBench report or fixture file", "", False) for f in pmb.skipped]
    return out + sorted(left, key=lambda n: n.file)
