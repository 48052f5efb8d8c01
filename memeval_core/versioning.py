"""Upgrading versioned documents (memeval's run format, leaderboard.json) before validation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Migration = Callable[[dict[str, Any]], dict[str, Any]]


def migrate(data: Any, current: int, migrations: Mapping[int, Migration], first: int = 1) -> Any:
    """Bring a document's ``schema_version`` up to ``current``, one step at a time.

    ``migrations[v]`` turns a version-``v`` document into version ``v + 1``; a missing version is
    read as ``current``. Anything not a dict is returned untouched for the model to reject. Raises
    ``ValueError`` for a non-integer, future or pre-``first`` version.
    """
    if not isinstance(data, dict):
        return data
    version = data.get("schema_version", current)
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"schema_version must be an integer, got {version!r}")
    if version > current:
        raise ValueError(
            f"schema_version {version} is newer than this memeval understands ({current}); upgrade memeval"
        )
    if version < first:
        raise ValueError(f"schema_version {version} is not supported: it does not exist (the first version is {first})")
    out = dict(data)
    while version < current:
        out = migrations[version](out)
        version += 1
    out["schema_version"] = current
    return out
