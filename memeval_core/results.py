"""One entry point for loading whatever a results directory holds.

A directory with a snapshot (an export's ``data/snapshot/``, see :mod:`memeval_core.pmb.snapshot`)
is read from the snapshot; any other directory is scanned and re-scored from raw reports.
"""

from __future__ import annotations

from pathlib import Path

from memeval_core.pmb.ingest import PmbLoad, load_pmb
from memeval_core.pmb.snapshot import has_snapshot, read_snapshot


def load_pmb_results(results: Path, fixtures: Path | None = None) -> PmbLoad:
    """PMB runs of a results directory: from its snapshot if it has one, else from the raw reports."""
    if fixtures is None and has_snapshot(results):
        return read_snapshot(results)
    return load_pmb(results, fixtures)
