"""Typed errors that say which file, where in it, what was wrong and how to fix it."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


def cli_error(message: str, code: int) -> int:
    """Print ``error: <message>`` to stderr for a command that cannot go on; return its exit code."""
    print(f"error: {message}", file=sys.stderr)
    return code


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


def refuse_unwritable(data: Any, rel: str, line: int | None = None) -> None:
    """Raise :class:`IngestError` at the first value of parsed JSON that no JSON writer could write back.

    Python's parser, which reads what orjson refuses in order to explain it, accepts two such things: NaN and
    Infinity, which JSON does not allow, and strings (values or keys) holding a lone UTF-16 surrogate, an escape
    such as ``"\\ud83d"`` that JSON's grammar allows but that no UTF-8 text can hold. ``line``: the line of a
    JSON Lines file that ``data`` is, named before the path.
    """

    def where(at: tuple[int | str, ...]) -> str:
        return json_path(at) if line is None else f"line {line} {json_path(at)}"

    stack: list[tuple[Any, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        value, at = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
            hint = "write NaN/Infinity as null or a finite number"
            raise IngestError(rel, where(at), f"{shown} is not a number JSON allows", hint)
        if isinstance(value, str) and not is_text(value):
            raise IngestError(rel, where(at), f"holds {_SURROGATE}", _SURROGATE_HINT)
        if isinstance(value, dict):
            if not all(is_text(key) for key in value):
                raise IngestError(rel, where(at), f"a key holds {_SURROGATE}", _SURROGATE_HINT)
            stack.extend((v, (*at, k)) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, (*at, i)) for i, v in reversed(list(enumerate(value))))


_SURROGATE = "a lone UTF-16 surrogate (an escape such as \\ud83d without its other half), which is not text"
_SURROGATE_HINT = "escape the whole character (both halves of the pair) or remove it"


def is_text(name: str) -> bool:
    """Whether a string is UTF-8 text: not when it holds a lone surrogate, as a JSON escape such as ``"\\ud83d"``
    may, and as ``os`` hands on the undecodable bytes of a file name."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class SnapshotError(ValueError):
    """A snapshot (an export's ``data/snapshot/`` or a cache entry) that cannot be read: the message names the
    file and the field, and says to export again."""
