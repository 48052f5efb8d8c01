"""Typed errors that say which file, where in it, what was wrong and how to fix it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


def json_path(loc: Sequence[int | str]) -> str:
    """Render a location tuple as a JSONPath-like string: ``("cases", 3, "caseId")`` -> ``$.cases[3].caseId``."""
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def first_problem(exc: ValidationError) -> str:
    """A validation's first error as ``field a.b.0: message`` (``field $`` for the whole document)."""
    err = exc.errors()[0]
    message = err["msg"].removeprefix("Value error, ")  # a model's own check says what is wrong in its own words
    return f"field {'.'.join(str(x) for x in err['loc']) or '$'}: {message}"


@dataclass(frozen=True)
class IngestError(Exception):
    """One problem with one input file; the other files still load."""

    file: str
    """The file's path as the user gave it (relative to the results directory where possible)."""
    path: str
    """JSON path of the offending value, ``$`` for the whole document."""
    message: str
    """What was wrong."""
    hint: str = ""
    """How to fix it."""

    def __reduce__(self) -> tuple[type[IngestError], tuple[str, str, str, str]]:
        # Exceptions pickle through their args, which a dataclass leaves empty; caches and worker
        # processes need errors to survive pickling.
        return (IngestError, (self.file, self.path, self.message, self.hint))

    def __str__(self) -> str:
        text = f"{self.file}: {self.path}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class SnapshotError(ValueError):
    """A snapshot (an export's ``data/snapshot/`` or a cache entry) that cannot be read: the message names the
    file and the field, and says to export again."""
