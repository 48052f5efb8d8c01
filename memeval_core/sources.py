"""Where results and fixtures are read from: a flag, an environment variable, or ``results/``."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = PROJECT_ROOT / "results"
RESULTS_ENV = "MEMEVAL_RESULTS"
FIXTURES_ENV = "MEMEVAL_FIXTURES"


def results_dir(flag: str | os.PathLike[str] | None = None) -> Path:
    """The results directory: ``--results`` if given, else ``$MEMEVAL_RESULTS``, else ``results/``."""
    chosen = flag or os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS
    return Path(chosen).expanduser()


def fixtures_dir(flag: str | os.PathLike[str] | None = None) -> Path | None:
    """An explicit fixtures directory (``--fixtures`` or ``$MEMEVAL_FIXTURES``); None: find it under results."""
    chosen = flag or os.environ.get(FIXTURES_ENV)
    return Path(chosen).expanduser() if chosen else None
