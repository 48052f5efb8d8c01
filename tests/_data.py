"""Where the shared real data lives, and a skip for machines without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval_core import tree

PROJECT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT.parent / "shared" / "data"
PMB_DIR = SHARED_DATA / "precisionmembench"


def require(path: Path) -> Path:
    """Return path, or skip the test when the shared data folder is absent on this machine."""
    if not path.exists():
        pytest.skip(f"shared real data not available at {path} (the tests read ../shared/data beside the project)")
    return path


def json_files(root: Path) -> list[Path]:
    """Every readable ``*.json`` under ``root`` in the loaders' walk order (:func:`memeval_core.tree.walk`)."""
    return [root / entry.rel for entry in tree.walk(root, (".json",)).files]
