"""Shared building blocks of the app's pages: cached loading, URL state, downloads, safe text, empty state.

Every page starts with ``loaded = ui.load_current()``: it resolves the results directory (from
``$MEMEVAL_RESULTS`` or ``results/``, never from the URL, so a shared link cannot make the server
read an arbitrary folder), loads it through a ``st.cache_data`` wrapper keyed on a cheap fingerprint
of the files, and shows the source and any load errors in the sidebar.

Text that comes from a report (provider names, case ids, failure messages) is shown with
``st.text``, ``st.code`` or inside ``st.dataframe``, which render plain text; where a Markdown
label is unavoidable it goes through :func:`md_escape`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from memeval_core import sources
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import PmbRun
from memeval_core.results import load_pmb_results
from memeval_core.sync import SyncError, sync

LOCAL_COPY_EXAMPLE = "MEMEVAL_RESULTS=../shared/data/precisionmembench make app"
"""The command the empty state suggests for working offline with a local copy of the PMB data."""

T = TypeVar("T")


@dataclass(frozen=True)
class LoadProblem:
    """One file that could not be loaded (a picklable copy of :class:`memeval_core.errors.IngestError`)."""

    file: str
    """File path, relative to the results directory where possible."""
    path: str
    """JSON path of the offending value; ``$`` for the whole document."""
    message: str
    """What was wrong."""
    hint: str
    """How to fix it; may be empty."""

    def __str__(self) -> str:
        text = f"{self.file}: {self.path}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(frozen=True)
class Loaded:
    """Everything loaded from the results directory, as the pages see it."""

    results_dir: str
    """The results directory that was read."""
    runs: tuple[PmbRun, ...]
    """Re-scored, verified PMB runs (single-turn first)."""
    errors: tuple[LoadProblem, ...]
    """Files that could not be loaded."""
    fixture: PmbFixture | None
    """The PMB fixture the runs were scored against."""
    skipped: tuple[str, ...]
    """JSON files that are neither PMB reports nor fixtures."""


def results_root() -> Path:
    """The results directory: ``$MEMEVAL_RESULTS`` or the project's ``results/`` (deliberately not the URL)."""
    return sources.results_dir()


def fingerprint(*dirs: Path | None) -> str:
    """A cheap identity of the files under ``dirs``: SHA-256 over (path, size, mtime_ns) of every visible file.

    Changes when a file is added, removed, rewritten or touched, so the cached load is redone; costs
    one ``stat`` per file, so widget changes (which rerun the page) never re-read the JSON.
    """
    h = hashlib.sha256()
    for d in dirs:
        if d is None:
            continue
        h.update(f"dir\0{d}\0".encode())
        if not d.is_dir():
            h.update(b"missing\0")
            continue
        for dirpath, dirnames, filenames in os.walk(d):
            # Hidden folders hold sync staging copies, which the loader ignores too.
            dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                p = Path(dirpath) / name
                try:
                    st_ = p.stat()
                except OSError:
                    continue
                h.update(f"{p}\0{st_.st_size}\0{st_.st_mtime_ns}\0".encode())
    return h.hexdigest()


@st.cache_data(show_spinner="Loading and re-scoring results…", max_entries=16)
def load(results_dir: str, fixtures_dir: str | None, fingerprint: str) -> Loaded:
    """Load, re-score and verify every PMB file under ``results_dir`` (cached per ``fingerprint``).

    A directory holding a snapshot (an export) is read from it; see :mod:`memeval_core.results`.
    """
    del fingerprint  # only part of the cache key
    res = load_pmb_results(Path(results_dir), Path(fixtures_dir) if fixtures_dir else None)
    return Loaded(
        results_dir=results_dir,
        runs=res.runs,
        # IngestError is a frozen dataclass exception, which pickle (and so st.cache_data) cannot restore.
        errors=tuple(LoadProblem(e.file, e.path, e.message, e.hint) for e in res.errors),
        fixture=res.fixture,
        skipped=res.skipped,
    )


def load_current() -> Loaded:
    """Load the configured results directory (cached) and show its source and errors in the sidebar."""
    root = results_root()
    fixtures = sources.fixtures_dir()
    loaded = load(str(root), str(fixtures) if fixtures else None, fingerprint(root, fixtures))
    sidebar_source(loaded)
    return loaded


def sidebar_source(loaded: Loaded) -> None:
    """Sidebar: which results directory is read, what was found, and every load error (file, JSON path, message)."""
    with st.sidebar:
        st.caption(f"Results directory (set with ${sources.RESULTS_ENV})")
        st.code(loaded.results_dir, language=None, wrap_lines=True)
        n_single = sum(r.identity.benchmark == "pmb-single-turn" for r in loaded.runs)
        n_session = len(loaded.runs) - n_single
        st.caption(f"{len(loaded.runs)} runs loaded: {n_single} single-turn, {n_session} session.")
        if loaded.fixture is not None:
            st.caption("Fixture")
            st.code(loaded.fixture.source, language=None, wrap_lines=True)
        if loaded.errors:
            n = len(loaded.errors)
            st.error(f"{n} file{'s' if n != 1 else ''} could not be loaded:")
            for e in loaded.errors:
                text = f"file: {e.file}\nat:   {e.path}\n{e.message}"
                st.code(f"{text}\nfix:  {e.hint}" if e.hint else text, language=None, wrap_lines=True)
        if loaded.skipped:
            with st.expander(f"{len(loaded.skipped)} other JSON file(s) skipped"):
                st.text("\n".join(loaded.skipped))


def url_bound(param: str) -> dict[str, Any]:
    """Widget keyword arguments that mirror the widget's value in the URL as ``?param=value``.

    Use as ``st.selectbox("Sort by", options, **ui.url_bound("sort"))``. Streamlit then initialises
    the widget from the URL, writes changes back, drops the parameter when it equals the default
    and ignores values that are not an option. For selection widgets the URL holds the option's
    label, so keep ``format_func`` the identity for readable links.
    """
    return {"key": param, "bind": "query-params"}


def url_value(param: str, allowed: Sequence[T], default: T) -> T:
    """The URL's ``?param=`` for state that is not a widget, when it names one of ``allowed``; else ``default``."""
    raw = st.query_params.get(param)
    for option in allowed:
        if str(option) == raw:
            return option
    return default


def set_url_value(param: str, value: object, default: object) -> None:
    """Write non-widget state to the URL; the parameter is dropped when it equals ``default`` to keep links short."""
    if value == default:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != str(value):
        st.query_params[param] = str(value)


def sort_frame(df: pd.DataFrame, column: str | None, descending: bool) -> pd.DataFrame:
    """``df`` sorted by ``column`` (stable, missing values last); unchanged when ``column`` is None or absent."""
    if column is None or column not in df.columns:
        return df
    return df.sort_values(column, ascending=not descending, na_position="last", kind="stable").reset_index(drop=True)


def frame_csv(df: pd.DataFrame) -> str:
    """CSV text of exactly ``df``: its columns in order, no index."""
    return df.to_csv(index=False, lineterminator="\n")


def frame_json(df: pd.DataFrame) -> str:
    """JSON text of exactly ``df``: a list of row objects in column order; missing values are ``null``."""
    text: str = df.to_json(orient="records", force_ascii=False, indent=2)
    return text + "\n"


def download_buttons(df: pd.DataFrame, stem: str, key: str) -> None:
    """CSV and JSON download buttons of exactly the table shown (same rows, order and columns).

    ``on_click="ignore"``: downloading does not rerun the page.
    """
    row = st.container(horizontal=True)
    row.download_button(
        "Download CSV",
        data=frame_csv(df),
        file_name=f"{stem}.csv",
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
        icon=":material/download:",
    )
    row.download_button(
        "Download JSON",
        data=frame_json(df),
        file_name=f"{stem}.json",
        mime="application/json",
        key=f"{key}-json",
        on_click="ignore",
        icon=":material/download:",
    )


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&])")


def md_escape(text: str) -> str:
    """Escape report-derived text for a Markdown context (labels): every Markdown, emoji, LaTeX and HTML trigger."""
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


def plain(text: str) -> None:
    """Show report-derived text verbatim (never interpreted as Markdown or HTML)."""
    st.text(text)


VERIFICATION_BADGE_HELP = (
    "✓ verified: every value the report states matches its re-derived value; "
    "✗ N mismatches: N stated values differ (listed under the table)."
)
"""Help text for a column of :func:`verification_badge` values."""


def verification_badge(mismatches: Sequence[str]) -> str:
    """``✓ verified``, or ``✗ N mismatch(es)`` when stated values differ from the re-derived ones."""
    n = len(mismatches)
    if n == 0:
        return "✓ verified"
    return f"✗ {n} mismatch{'es' if n != 1 else ''}"


def empty_state(loaded: Loaded) -> None:
    """Explain that there are no results and offer a one-click download of the public PMB baselines.

    Offline (:class:`SyncError`), says so and how to point ``$MEMEVAL_RESULTS`` at a local copy.
    After a successful download the page reruns and shows the new data.
    """
    root = Path(loaded.results_dir)
    st.info("No PrecisionMemBench results found in this results directory:", icon=":material/folder_off:")
    st.code(str(root), language=None, wrap_lines=True)
    if loaded.errors:
        st.warning("Some files there could not be loaded; the sidebar lists them.")
    st.markdown(
        "Download the public PrecisionMemBench fixtures and baseline reports from GitHub "
        f"into `{md_escape(str(root / 'precisionmembench'))}`:"
    )
    if st.button("Download the public PMB baselines", key="sync-pmb", type="primary", icon=":material/download:"):
        try:
            with st.spinner("Downloading the PMB fixtures and baseline reports…"):
                res = sync(root)
        except (SyncError, OSError) as exc:
            st.error("The download failed, so nothing was changed:", icon=":material/cloud_off:")
            st.code(str(exc), language=None, wrap_lines=True)
            st.markdown("Offline? Point `MEMEVAL_RESULTS` at a local copy of the PMB data and restart the app:")
            st.code(LOCAL_COPY_EXAMPLE, language="bash")
        else:
            st.session_state["sync-done"] = f"Downloaded {len(res.files)} files from {res.source}."
            st.rerun()
    else:
        st.caption(
            "Working offline? Start the app with `MEMEVAL_RESULTS` pointing at a local copy, e.g. "
            f"`{LOCAL_COPY_EXAMPLE}`."
        )


def flash_sync_result() -> None:
    """Show (once) the message a successful download left for the next run."""
    msg = st.session_state.pop("sync-done", None)
    if msg:
        st.success(str(msg), icon=":material/check_circle:")
