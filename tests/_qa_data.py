"""Helpers for the QA tests: paths into the shared real data and a one-file importer runner."""

from __future__ import annotations

from pathlib import Path

from _data import SHARED_DATA, require

from memeval_core.qa.importers._common import Source
from memeval_core.qa.ingest import read_source

LOCOMO_JSON = SHARED_DATA / "locomo" / "data" / "locomo10.json"
MEMOBASE = SHARED_DATA / "memobase" / "docs" / "experiments" / "locomo-benchmark" / "fixture" / "memobase"
MFLOW = SHARED_DATA / "mflow-benchmarks" / "benchmarks"
AUDIT = SHARED_DATA / "locomo-audit"
COGNITIVE = SHARED_DATA / "cognitive-memory-benchmarks"


def real(path: Path) -> Source:
    """A shared-data file read as an importer source (skips the test when the data is absent)."""
    require(path)
    return read_source(path, path.relative_to(SHARED_DATA).as_posix())


def write(tmp: Path, name: str, text: str) -> Source:
    """Write a hand-made file and read it back as a source."""
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return read_source(p, name)
