"""Licence names: the SPDX id a licence text or a ``License:`` line names (a leaf module: no memeval imports)."""

from __future__ import annotations

import re

UNKNOWN = "unknown"
"""The licence of a file with no licence statement memeval recognises."""

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("CC-BY-NC-4.0", re.compile(r"Attribution[- ]NonCommercial 4\.0|CC[- ]BY[- ]NC[- ]4\.0", re.I)),
    ("CC-BY-4.0", re.compile(r"Creative Commons Attribution 4\.0|CC[- ]BY[- ]4\.0", re.I)),
    ("CC0-1.0", re.compile(r"CC0 1\.0|Creative Commons Zero", re.I)),
    ("Apache-2.0", re.compile(r"Apache License,?\s+(?:Version )?2\.0|Apache[- ]2\.0", re.I)),
    ("BSD-3-Clause", re.compile(r"BSD[- ]3[- ]Clause|Neither the name of", re.I)),
    ("BSD-2-Clause", re.compile(r"BSD[- ]2[- ]Clause", re.I)),
    ("MIT", re.compile(r"\bMIT License\b|\bMIT\b|Permission is hereby granted, free of charge", re.I)),
)


def spdx(text: str) -> str:
    """The SPDX id of the licence a licence text or a ``License:`` line names, else :data:`UNKNOWN`."""
    for name, pattern in _PATTERNS:
        if pattern.search(text):
            return name
    return UNKNOWN
