"""Where the shared real data lives, and a skip for machines without it."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT.parent / "shared" / "data"
PMB_DIR = SHARED_DATA / "precisionmembench"


def require(path: Path) -> Path:
    """Return path, or skip the test when the shared data folder is absent on this machine."""
    if not path.exists():
        pytest.skip(f"shared real data not available at {path} (the tests read ../shared/data beside the project)")
    return path
