"""Which licence covers each input of an export, and whether its text may be republished.

A file memeval's catalogue lists (:mod:`memeval_core.catalogue`, matched by SHA-256) has the licence the
catalogue records for it. Any other file's licence is read from the nearest licence statement at or above its
folder inside the results directory: a ``LICENSE`` / ``LICENCE`` / ``COPYING`` file (with or without
``.txt`` / ``.md``), or the ``License:`` line of a ``PROVENANCE.md`` (the layout of the shared public data).
The text is matched against the licences benchmark results are published under; anything else is ``unknown``.

Question and gold-answer text also belongs to the benchmark's dataset: :data:`DATASET_TEXT` names
the licence of each dataset whose licence is known (LoCoMo's ``LICENSE.txt``: CC BY-NC 4.0).
"""

from __future__ import annotations

import re
from pathlib import Path

from memeval_core import catalogue, tree
from memeval_core.spdx import UNKNOWN as UNKNOWN
from memeval_core.spdx import spdx as spdx

PERMISSIVE = frozenset({"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "CC-BY-4.0", "CC0-1.0"})
"""Licences whose text a public dataset may carry, with attribution."""

DATASET_TEXT: dict[str, str] = {"locomo": "CC-BY-NC-4.0"}
"""Licence of the question and gold-answer text of each benchmark dataset, where it is known."""

_NAMES = ("LICENSE", "LICENCE", "COPYING", "LICENSE.txt", "LICENSE.md", "LICENCE.txt", "LICENCE.md")
_PROVENANCE_LINE = re.compile(r"^\W*License\W.*$", re.I | re.M)


def _statement(folder: Path) -> str | None:
    """The licence stated in ``folder`` itself, or None when it states none."""
    for name in _NAMES:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            return spdx(path.read_text(encoding="utf-8", errors="replace")[:20_000])
    provenance = folder / "PROVENANCE.md"
    if provenance.is_file() and not provenance.is_symlink():
        line = _PROVENANCE_LINE.search(provenance.read_text(encoding="utf-8", errors="replace")[:20_000])
        if line is not None:
            return spdx(line.group(0))
    return None


def _sha256(path: Path) -> str | None:
    """The SHA-256 of a regular file (not a link), None when there is none to read."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return tree.file_sha256(path)
    except OSError:
        return None


def of_file(results: Path, rel: str, cache: dict[str, str | None] | None = None, sha256: str | None = None) -> str:
    """The licence of the file ``rel`` under ``results``: the catalogue's, else the nearest statement above it.

    A file whose SHA-256 (``sha256`` when the caller knows it, else computed) matches a catalogue entry takes
    that entry's licence, whatever ``LICENSE`` files lie around it. ``cache`` (folder → licence, None for a
    folder without a statement) spares re-reading the same statements for the files of one export.
    """
    digest = sha256 or _sha256(results / rel)
    listed = catalogue.licence_of(digest) if digest else None
    if listed is not None:
        return listed
    cache = {} if cache is None else cache
    parts = rel.split("/")[:-1]
    for depth in range(len(parts), -1, -1):
        key = "/".join(parts[:depth])
        if key not in cache:
            cache[key] = _statement(results / key if key else results)
        found = cache[key]
        if found is not None:
            return found
    return UNKNOWN


def of_digest(sha256: str | None) -> str:
    """The catalogue's licence of the file with this SHA-256, else ``unknown``: for a file known only by its digest
    (a run read from a Hub dataset), with no folder around it to read a statement from."""
    listed = catalogue.licence_of(sha256) if sha256 else None
    return UNKNOWN if listed is None else listed


def text_allowed(licences: set[str] | frozenset[str]) -> bool:
    """True when text under all these licences may go into a public dataset (every one permissive)."""
    return bool(licences) and licences <= PERMISSIVE


def card_licence(licences: set[str] | frozenset[str]) -> str:
    """The front matter's ``license:``: the one licence all inputs share (lower case), else ``other``."""
    return next(iter(licences)).lower() if len(licences) == 1 and UNKNOWN not in licences else "other"
