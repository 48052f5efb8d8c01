"""Shared AppTest scaffolding: run one page of app.py with URL query parameters, and read what it shows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app.py"


def run_page(page: str, timeout: float = 120, **query: str) -> AppTest:
    """``page`` of app.py after its first run with the given URL query parameters; fails on any exception."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def table(at: AppTest, *columns: str, leading: bool = False) -> pd.DataFrame:
    """The one shown table that has all ``columns`` (``leading``: exactly these as its first columns)."""

    def fits(df: pd.DataFrame) -> bool:
        if leading:
            return list(df.columns[: len(columns)]) == list(columns)
        return all(c in df.columns for c in columns)

    found = [d.value for d in at.dataframe if fits(d.value)]
    assert len(found) == 1, f"{columns}: {len(found)} tables"
    value: pd.DataFrame = found[0]
    return value
