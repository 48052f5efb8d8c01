"""CSV cells that a spreadsheet would run as a formula are made inert (OWASP's CSV injection advice).

A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
apostrophe, which spreadsheets show as text. Numbers stay numbers (``-2`` as a number is untouched; the
text ``"-2+3"`` is not). Column names are treated like cells: pivots make provider names into headers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas only for the annotation: the CLI's CSV and JSON output needs no pandas
    import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet may read as the start of a formula."""
NUMERIC_KINDS = "biufcm"
"""NumPy dtype kinds (bool, integers, floats, complex, timedelta) whose cells are never text."""


def cell(value: Any) -> Any:
    """``value``, with an apostrophe in front when it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def rows(flat_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flat rows with every key and value passed through :func:`cell`."""
    return [{cell(k): cell(v) for k, v in r.items()} for r in flat_rows]


def frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with every text cell and column name passed through :func:`cell`."""
    out = df.copy()
    out.columns = [cell(c) for c in out.columns]
    for i, dtype in enumerate(out.dtypes):
        if dtype.kind not in NUMERIC_KINDS:
            out.isetitem(i, [cell(v) for v in out.iloc[:, i]])
    return out
