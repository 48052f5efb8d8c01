"""Shared building blocks of the app's pages: cached loading, URL state, downloads, safe text, empty state.

Every page starts with ``loaded = ui.load_current()``: it resolves the results directory (from
``$MEMEVAL_RESULTS`` or ``results/``, never from the URL, so a shared link cannot make the server
read an arbitrary folder), loads it through a ``st.cache_resource`` wrapper keyed on a cheap fingerprint
of the files, and shows the source and any load errors in the sidebar.

Text that comes from a report (provider names, case ids, failure messages) is shown with
``st.text``, ``st.code`` or inside ``st.dataframe``, which render plain text; where a Markdown
label is unavoidable it goes through :func:`md_escape`.
"""

from __future__ import annotations

import hmac
import html
import ipaddress
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from memeval_core import csvsafe, labels, leaderboard, settings, tree
from memeval_core.explore.front import OpenedFront, locomo_unjoined, run_counts
from memeval_core.export.space import md_code
from memeval_core.hub_location import HubLocation, HubResultsError
from memeval_core.judge import lineup
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import BENCHMARKS, Benchmark, PmbRun, RunIdentity
from memeval_core.pmb.runs_table import IDENTITY_COLUMNS
from memeval_core.pmb.snapshot import CaseReader, CasesReader, RunsReader
from memeval_core.qa.retrieval_metrics import RetrievalSummary, qa_summaries
from memeval_core.qa.snapshot import QaRunsReader
from memeval_core.results import open_front, open_results
from memeval_core.settings import hub_endpoint
from memeval_core.sync import SyncError, sync_catalogue
from memeval_core.unloaded import NotLoaded, not_loaded

LOCAL_COPY_EXAMPLE = "MEMEVAL_RESULTS=../shared/data make app"
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
    """The PMB runs of the results directory as the pages see them: headers in memory, whole runs on request.

    A page that shows a leaderboard reads :attr:`table` alone; one that shows cases asks :func:`whole_runs` for
    the runs it shows, so memory grows with the runs on screen, not with every case of every run.
    """

    results_dir: str
    """The results directory that was read."""
    table: pa.Table
    """The runs table's header columns (:mod:`memeval_core.pmb.runs_table`): every leaderboard row."""
    identities: tuple[RunIdentity, ...]
    """Every run's identity, in load order (single-turn first)."""
    ranked: Mapping[str, tuple[str, ...]]
    """Per suite, its run ids in leaderboard rank order (ranked once per load, not on every page run)."""
    errors: tuple[LoadProblem, ...]
    """Files that could not be loaded."""
    fixture: PmbFixture | None
    """The PMB fixture the runs were scored against."""
    skipped: tuple[str, ...]
    """JSON files that are neither PMB reports nor fixtures."""
    read_runs: RunsReader = field(compare=False, repr=False)
    """Whole runs by id (use :func:`whole_runs`, which caches them)."""
    read_cases: CasesReader = field(compare=False, repr=False)
    """Some case columns of many runs (see :class:`memeval_core.pmb.snapshot.PmbHeaders`)."""
    read_case: CaseReader = field(compare=False, repr=False)
    """One case of every run (use :func:`case_rows`, which caches it)."""
    key: str = ""
    """The fingerprint of the files the runs were loaded from."""


def results_root() -> Path | HubLocation:
    """The results root: ``$MEMEVAL_RESULTS`` (a folder or a results dataset on the Hub) or the project's
    ``results/`` (deliberately not the URL)."""
    return settings.results_root()


def results_folder() -> Path:
    """The results folder a write page writes into (call :func:`refuse_unless_writer` first: a Hub root has none)."""
    root = results_root()
    if isinstance(root, HubLocation):
        raise RuntimeError("a write page ran on a Hub results root")  # refuse_unless_writer stops it before
    return root


REFRESH_KEY = "memeval-refresh"
"""Key of the button that reads a results dataset on the Hub again."""


@st.cache_resource
def _refreshes() -> dict[str, int]:
    """How often each Hub results root was refreshed by hand, for every session (part of its fingerprint)."""
    return {}


def root_fingerprint(root: Path | HubLocation, fixtures: Path | None, datasets: Path | None) -> str:
    """What the cached load is keyed by. A folder: :func:`fingerprint` (files' sizes and times). A Hub dataset:
    its location, the "Refresh" clicks and the current ``MEMEVAL_REFRESH_MINUTES`` period, so that it is read
    again on a click or when the period ends, never on every rerun (which would cost a request per click)."""
    if isinstance(root, HubLocation):
        period = int(time.time() // settings.refresh_seconds())
        return f"{root}|{hub_endpoint()}|{_refreshes().get(str(root), 0)}|{period}"
    return _recent_fingerprint(root, fixtures, datasets)


FOLDER_CHECK_SECONDS = 5
"""How long a results folder's fingerprint is trusted before its files are listed again."""


# Listing the folder costs one stat per file (about half a second at 11,000 files), and every click reruns
# the page: a click within a few seconds of the last listing reuses it. A page that writes results calls
# files_changed(), so the app's own writes show at once; a file changed by hand shows within the period.
@st.cache_data(ttl=FOLDER_CHECK_SECONDS, show_spinner=False)
def _recent_fingerprint(root: Path, fixtures: Path | None, datasets: Path | None) -> str:
    return fingerprint(root, fixtures, datasets)


def files_changed() -> None:
    """Say that this app wrote into the results folder: the next run lists it again and reloads what changed."""
    _recent_fingerprint.clear()


@st.cache_resource
def _last_good() -> dict[tuple[str, str], Any]:
    """The last read of each kind (``everything``, ``front``) of each results root that worked: shown, under the
    error, when a later read fails."""
    return {}


def _or_last_good(root: Path | HubLocation, read: Callable[[], Everything]) -> Everything:
    """``read()``; when a results dataset on the Hub cannot be read (gone, 401/403/404, network), the page says so
    in one sentence and goes on with the last load that worked, or stops when there is none."""
    key = ("everything", str(root))
    try:
        value = read()
    except HubResultsError as exc:
        last: Everything | None = _last_good().get(key)
        _read_failed(exc, last is not None)
        if last is None:
            st.stop()
        value = last
    _last_good()[key] = value
    return value


def _read_failed(exc: HubResultsError, showing_last: bool) -> None:
    shown = "; showing the last view that was read." if showing_last else "."
    st.error(str(exc).rstrip(".") + shown, icon=":material/cloud_off:")


def _root_or_stop() -> Path | HubLocation:
    """The results root; a setting that does not parse is one sentence and the page stops."""
    try:
        return results_root()
    except HubResultsError as exc:
        st.error(str(exc), icon=":material/cloud_off:")
        st.stop()


def fingerprint(*dirs: Path | None) -> str:
    """See :func:`memeval_core.tree.fingerprint`: widget changes (which rerun the page) never re-read the JSON."""
    return tree.fingerprint(*dirs)


NAVIGATED = "memeval-navigated"
"""Session-state key app.py sets on every run, before it runs the chosen page."""


def ensure_navigation() -> None:
    """Rerun through app.py when a page was started without it.

    Streamlit treats an app with a ``pages/`` folder as a legacy multipage app until the first
    ``st.navigation`` call in the server process. So the first visit to a deep link (``/compare?a=…``)
    on a fresh server runs the page file directly: no page config, no navigation, the folder's file
    names as menu. Clearing the legacy flag and rerunning sends that run through app.py, which
    resolves the same URL path to the same page (the page hash is the hash of its URL path).
    """
    if NAVIGATED not in st.session_state:
        PagesManager.uses_pages_directory = False
        st.rerun()


def load_current() -> Loaded:
    """The PMB side of the results directory's load (see :func:`load_everything_current`)."""
    return load_everything_current().pmb


# --- Hosted mode: who may write, and what a remote viewer may see ---------------------------------

ADMIN_KEY = "memeval-admin-token"
"""Session-state key of the admin token a viewer typed (never in the URL)."""
_PROXY_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-Ip")


def viewer_is_local() -> bool:
    """True when the viewer connects from this machine itself and not through a proxy.

    A proxy on the same machine (as on a hosted Space) makes every visitor look local, so any forwarding
    header makes the viewer remote. AppTest has no connection: it counts as local.
    """
    ip = st.context.ip_address  # None for ::1 and 127.0.0.1; AppTest's is a stand-in object
    if isinstance(ip, str) and not _is_loopback(ip):
        return False
    headers = st.context.headers
    return not any(headers.get(h) for h in _PROXY_HEADERS)


def _is_loopback(ip: str) -> bool:
    """127.0.0.0/8 or ::1, also as an IPv4-mapped IPv6 address (``::ffff:127.0.0.1`` on a dual-stack server)."""
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def may_write() -> bool:
    """Whether this viewer may use Upload and Publish: always, unless the app is read-only
    (``MEMEVAL_READ_ONLY`` or an exported Space); then only after typing ``MEMEVAL_ADMIN_TOKEN``. Never when the
    results are a dataset on the Hub: no page writes to it."""
    if _on_hub():
        return False
    if not settings.read_only():
        return True
    token = settings.admin_token()
    typed = str(st.session_state.get(ADMIN_KEY) or "")
    return token is not None and hmac.compare_digest(typed.encode(), token.encode())


def admin_unlock() -> None:
    """Sidebar: in a read-only app with an admin token configured, a password field that unlocks the write pages."""
    if not settings.read_only() or settings.admin_token() is None:
        return
    with st.sidebar:
        st.text_input(
            "Admin token",
            type="password",
            key=ADMIN_KEY,
            help="This app is read-only. The administrator's token unlocks Upload and Publish for this session.",
        )


def _on_hub() -> bool:
    try:
        return isinstance(results_root(), HubLocation)
    except HubResultsError:
        return True  # an hf:// setting that does not parse is still no folder to write into


def refuse_unless_writer(what: str) -> None:
    """Stop the page (server-side) unless this viewer may write; says why."""
    if may_write():
        return
    if _on_hub():
        st.info(
            f"Results are read from a Hugging Face dataset, which no page writes to: {what} is not available here. "
            "Add runs with `python -m memeval_core push --dataset OWNER/NAME`.",
            icon=":material/lock:",
        )
        st.stop()
    st.info(
        f"This app is read-only: {what} is not available here. "
        "Run memeval from a checkout (`make app`) to add runs or publish.",
        icon=":material/lock:",
    )
    st.stop()


def shown_path(path: str | Path) -> str:
    """A server path as a page may show it: in full to a viewer on this machine, else only its last part. A results
    dataset on the Hub is public knowledge: shown in full."""
    if str(path).startswith("hf://"):
        return str(path)
    return str(path) if viewer_is_local() else Path(path).name or "."


def url_bound(param: str) -> dict[str, Any]:
    """Widget keyword arguments that mirror the widget's value in the URL as ``?param=value``.

    Use as ``st.selectbox("Sort by", options, **ui.url_bound("sort"))``. Streamlit then initialises
    the widget from the URL, writes changes back, drops the parameter when it equals the default
    and ignores values that are not an option. For selection widgets the URL holds the option's
    label, so keep ``format_func`` the identity for readable links.
    """
    return {"key": param, "bind": "query-params"}


SEED_MAX = 2**32 - 1
"""Largest seed a page accepts (numpy takes any non-negative integer; links stay short)."""


def number_param(label: str, param: str, default: int, low: int, high: int, **kwargs: Any) -> int:
    """A whole-number input mirrored in the URL as ``?param=``; a link's value that is not a finite whole
    number in [low, high] (``1e309``, ``inf``, ``-5``) is dropped with a visible note and the default used.

    Not a bound widget: Streamlit's own binding raises on ``inf`` before a page could catch it.
    """
    raw = st.query_params.get(param)
    start = default
    if raw is not None:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value == int(value) and low <= value <= high:
            start = int(value)
        else:
            drop_link_value(
                param,
                f"Ignored the link's {{value}}: it must be a whole number from {low:,} to {high:,}. "
                f"The default ({default:,}) is used instead.",
            )
    key = f"number-{param}"

    def to_url() -> None:
        set_url_value(param, int(st.session_state[key]), default)

    chosen = st.number_input(label, min_value=low, max_value=high, value=start, key=key, on_change=to_url, **kwargs)
    set_url_value(param, int(chosen), default)
    return int(chosen)


def drop_link_value(param: str, sentence: str) -> None:
    """Remove ``?param=`` from the URL and say so on the page: ``sentence`` with ``{value}`` standing for
    ``param=<the value the link gave>`` (shortened and escaped)."""
    raw = st.query_params.get(param, "")
    del st.query_params[param]
    st.warning(sentence.replace("{value}", f"{param}={shown_text(raw)}"), icon=":material/link_off:")


def shown_text(raw: str, limit: int = 40) -> str:
    """Text from a URL or a file for a sentence: at most ``limit`` characters, Markdown-escaped."""
    return md_escape(raw if len(raw) <= limit else raw[: limit - 1] + "…")


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
    return csvsafe.frame(df).to_csv(index=False, lineterminator="\n")


def frame_json(df: pd.DataFrame) -> str:
    """JSON text of exactly ``df``: a list of row objects in column order; missing values are ``null``."""
    text: str = df.to_json(orient="records", force_ascii=False, indent=2)
    return text + "\n"


DEFER_DOWNLOAD_CELLS = 10_000
"""Tables with more cells than this are serialised only when a download button is clicked, not on every rerun."""


def _text_of(table: pd.DataFrame | Callable[[], pd.DataFrame], writer: Callable[[pd.DataFrame], str]) -> str:
    return writer(table() if callable(table) else table)


def download_buttons(df: pd.DataFrame | Callable[[], pd.DataFrame], stem: str, key: str) -> None:
    """CSV and JSON download buttons of exactly the table shown (same rows, order and columns).

    ``on_click="ignore"``: downloading does not rerun the page. A table with more than
    :data:`DEFER_DOWNLOAD_CELLS` cells, or one given as a callable that builds it (for tables too large
    to build on every rerun), is serialised only when its button is clicked.
    """
    defer = callable(df) or df.size > DEFER_DOWNLOAD_CELLS
    row = st.container(horizontal=True)
    row.download_button(
        "Download CSV",
        data=partial(_text_of, df, frame_csv) if defer else frame_csv(df),
        file_name=f"{stem}.csv",
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
        icon=":material/download:",
    )
    row.download_button(
        "Download JSON",
        data=partial(_text_of, df, frame_json) if defer else frame_json(df),
        file_name=f"{stem}.json",
        mime="application/json",
        key=f"{key}-json",
        on_click="ignore",
        icon=":material/download:",
    )


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&])")


_AUTOLINK = re.compile(r"(?i)(://|www\.)")


def md_escape(text: str) -> str:
    """Escape report-derived text for a Markdown context (labels): every Markdown, emoji, LaTeX and HTML trigger.

    Bare web addresses are autolinked after escapes are undone, so ``://`` and ``www.`` get a zero-width
    space (invisible, and it keeps the text from becoming a link).
    """
    broken = _AUTOLINK.sub(lambda m: m.group(0)[0] + "\u200b" + m.group(0)[1:], text)
    return _MD_SPECIAL.sub(r"\\\1", broken).replace("\n", " ")


def code_span(text: str) -> str:
    """Text as an inert Markdown code span (no escapes inside: the fence is longer than any backtick run)."""
    return md_code(text)


def plain(text: str) -> None:
    """Show report-derived text verbatim (never interpreted as Markdown or HTML)."""
    st.text(text)


VERIFICATION_BADGE_HELP = (
    "✓ verified: every value the report states matches its re-derived value; "
    "✗ N mismatches: N stated values differ (listed under the table)."
)
"""Help text for a column of :func:`memeval_core.explore.home.verification_badge` values."""


def empty_state(loaded: Loaded) -> None:
    """Say exactly what to run when the results directory holds no runs, and offer a one-click download.

    Offline (:class:`SyncError`), says so and how to point ``$MEMEVAL_RESULTS`` at a local copy.
    After a successful download the page reruns and shows the new data.
    """
    if loaded.results_dir.startswith("hf://"):
        st.info(
            f"No runs yet in the results dataset {code_span(loaded.results_dir)}: add runs with "
            "`python -m memeval_core push --dataset OWNER/NAME`.",
            icon=":material/folder_off:",
        )
        return
    root = Path(loaded.results_dir)
    st.info(f"No runs yet in the results directory {code_span(shown_path(root))}.", icon=":material/folder_off:")
    if loaded.errors:
        st.warning("Some files there could not be loaded; the sidebar lists them.")
    st.markdown(
        "Three ways to fill it:\n"
        "1. **Download every public result** memeval's catalogue lists: PrecisionMemBench, LoCoMo and LongMemEval "
        "runs at pinned commits, checked by SHA-256 (the button below, or `python -m memeval_core sync`).\n"
        "2. **Add your own result files**: `python -m memeval_core add FILE…` (PMB reports, LoCoMo / LongMemEval "
        "runs of any supported format), or the Upload page.\n"
        f"3. **Point the app at a folder of results** and restart it: `{LOCAL_COPY_EXAMPLE}`."
    )
    if not may_write():
        st.caption("This app is read-only: its administrator adds results.")
    elif st.button("Download every public result", key="sync-pmb", type="primary", icon=":material/download:"):
        with st.spinner("Downloading the catalogue's files (PMB, LoCoMo, LongMemEval runs and datasets)…"):
            try:
                res = sync_catalogue(root)
            except (SyncError, OSError) as exc:
                files_changed()  # what arrived before the failure is kept: show it
                res = None
                st.error("The download failed, so nothing was changed:", icon=":material/cloud_off:")
                st.code(str(exc), language=None, wrap_lines=True)
        if res is not None and res.failures:
            st.error("Some sources could not be downloaded; what arrived is kept:", icon=":material/cloud_off:")
            st.code("\n".join(res.failures), language=None, wrap_lines=True)
        if res is None or res.failures:
            st.markdown("Offline? Point `MEMEVAL_RESULTS` at a local copy of the results and restart the app:")
            st.code(LOCAL_COPY_EXAMPLE, language="bash")
        if res is not None and res.fetched:
            files_changed()
            st.session_state["sync-done"] = f"Downloaded {len(res.fetched)} files from {res.origin}."
            st.rerun()


def flash_sync_result() -> None:
    """Show (once, in the sidebar, so the page title stays first) the message a successful download left."""
    msg = st.session_state.pop("sync-done", None)
    if msg:
        st.sidebar.success(str(msg), icon=":material/check_circle:")


# --- Tables: one component, headers and formats from memeval_core.labels --------------------------

RUN_PAGE = "run"
"""URL path of the run page (pages/run.py)."""
SESSION_SYSTEMS = 30
"""Session drift shows this many systems (leaders first) by default when the suite has more (``?top=N``)."""

STYLED_TABLE_CELLS = 3_000
"""Up to this many cells a table keeps its numbers (sortable by value) and formats them with a Styler; larger
tables show formatted text (pandas' Styler costs about 0.1 ms per cell on every rerun)."""


def run_url(run_id: str, name: str) -> str:
    """The link to a run's page; the system's name rides along after ``#`` so a link column can show it."""
    return f"{RUN_PAGE}?run={quote(run_id, safe='')}#{name}"


def table(
    df: pd.DataFrame,
    key: str,
    *,
    data_columns: Sequence[str] | Mapping[str, str] = (),
    hide: Sequence[str] = ("run_id",),
    link_runs: bool = True,
    height: int | Literal["auto", "content"] = "auto",
    widths: dict[str, int | Literal["small", "medium", "large"]] | None = None,
) -> None:
    """Show ``df`` (machine keys as columns) as people read it: registry headers with their definitions as
    column help, the app's number formats, ``—`` for missing values.

    ``data_columns`` are columns named by the data (a provider, a judge): their header is shown as it is. As a
    mapping (column → registry key), each such column takes the format and help of that key (a judge's accuracy).
    ``hide`` drops columns from the view (downloads keep them). With ``link_runs`` and both ``display_name``
    and ``run_id`` present, each system opens its run page.
    """
    shown = df.drop(columns=[c for c in hide if c in df.columns])
    config: dict[str, Any] = {}
    widths = widths or {}
    like = dict(data_columns) if isinstance(data_columns, Mapping) else {}
    for col in shown.columns:
        if col in like:
            config[col] = st.column_config.Column(str(col), help=labels.help_text(like[col]), width=widths.get(col))
        elif col in data_columns:
            config[col] = st.column_config.Column(str(col), width=widths.get(col))
        else:
            config[col] = st.column_config.Column(labels.label(col), help=labels.help_text(col), width=widths.get(col))
    linked = link_runs and "display_name" in shown.columns and "run_id" in df.columns
    if linked:
        shown = shown.copy()
        # A row without a run (a reference system) keeps its name behind a link to nowhere else.
        shown["display_name"] = [
            run_url(r, n) if isinstance(r, str) and r else f"#{n}"
            for r, n in zip(df["run_id"], df["display_name"], strict=True)
        ]
        config["display_name"] = st.column_config.LinkColumn(
            labels.label("display_name"), help=labels.help_text("display_name") + " Click to open the run.",
            display_text=r"#(.*)$", width=widths.get("display_name"),
        )  # fmt: skip
    plain_text = {*(c for c in data_columns if c not in like), *(["display_name"] if linked else [])}
    formatters = {c: partial(labels.formatted, like.get(c, c)) for c in shown.columns if c not in plain_text}
    data: Any
    if shown.size <= STYLED_TABLE_CELLS:
        data = shown.style.format(formatters, na_rep=labels.MISSING)
    else:
        data = shown.copy()
        for c, fmt in formatters.items():
            data[c] = [fmt(v) for v in data[c]]
    st.dataframe(data, hide_index=True, column_config=config, key=key, height=height, placeholder=labels.MISSING)


def choice(
    label: str,
    param: str,
    options: Sequence[str],
    default: str,
    names: dict[str, str] | None = None,
    *,
    radio: bool = False,
    help: str | None = None,
    width: int | Literal["stretch", "content"] = "content",
) -> str:
    """One of ``options`` (machine values), shown by ``names`` as plain text and mirrored in the URL ``?param=``.

    A link whose value is not an option shows a warning naming it and what is shown instead (never silently).
    """
    names = names or {}
    raw = st.query_params.get(param)
    start = default
    if raw is not None:
        if raw in options:
            start = raw
        else:
            instead = md_escape(names.get(default, default))
            drop_link_value(param, f"The link asks for {{value}}, which is not here; showing {instead} instead.")
    key = f"choice-{param}"

    def to_url() -> None:
        set_url_value(param, st.session_state[key], default)

    def shown(option: str) -> str:
        # Radio labels render Markdown; an option's text comes from result files and must stay inert.
        text = names.get(option, option)
        return md_escape(text) if radio else text

    kwargs: dict[str, Any] = {"index": list(options).index(start), "format_func": shown, "key": key,
                              "on_change": to_url, "help": help}  # fmt: skip
    value = (
        st.radio(label, options, horizontal=True, **kwargs)
        if radio
        else st.selectbox(label, options, width=width, **kwargs)
    )
    set_url_value(param, value, default)
    return str(value)


# --- Explorer building blocks: suites, run pickers, charts ----------------------------------------

BENCHMARK_TITLES: dict[Benchmark, str] = {"pmb-single-turn": "single-turn", "pmb-session": "session"}
"""Short names of the PMB suites for sentences."""


def present_benchmarks(loaded: Loaded) -> list[Benchmark]:
    """The PMB suites that have runs, single-turn first."""
    present = {i.benchmark for i in loaded.identities}
    return [b for b in BENCHMARKS if b in present]


def benchmark_picker(loaded: Loaded, key: str = "benchmark") -> Benchmark:
    """A horizontal radio of the PMB suites present (URL ``?benchmark=``, a warning for an unknown value);
    single-turn first."""
    present = present_benchmarks(loaded)
    chosen = choice("Suite", key, present, present[0], {b: labels.benchmark_name(b) for b in present}, radio=True)
    return next(b for b in BENCHMARKS if b == chosen)


def suite_identities(loaded: Loaded, benchmark: Benchmark) -> tuple[RunIdentity, ...]:
    """The runs of one suite in leaderboard rank order (the leader first), from the runs table alone."""
    by_id = {i.run_id: i for i in loaded.identities if i.benchmark == benchmark}
    return tuple(by_id[run_id] for run_id in loaded.ranked.get(benchmark, ()))


def suite_table(loaded: Loaded, benchmark: Benchmark) -> pa.Table:
    """The runs table's rows of one suite in leaderboard rank order (the leader first), built once per load."""
    return _suite_table(loaded, loaded.results_dir, loaded.key, benchmark)


@st.cache_resource(max_entries=8, show_spinner=False)
def _suite_table(_loaded: Loaded, results_dir: str, key: str, benchmark: Benchmark) -> pa.Table:
    del results_dir, key  # only part of the cache key
    index = pd.Index(_loaded.table.column("run_id").to_pylist())
    return _loaded.table.take(index.get_indexer([i.run_id for i in suite_identities(_loaded, benchmark)]))


def suite_runs(loaded: Loaded, benchmark: Benchmark) -> tuple[PmbRun, ...]:
    """The whole runs (cases included) of one suite in leaderboard rank order: for pages that show every run's
    cases."""
    return whole_runs(loaded, tuple(i.run_id for i in suite_identities(loaded, benchmark)))


# cache_resource: the runs are immutable and shared between sessions; a filter change on a page re-reads nothing.
@st.cache_resource(max_entries=16, show_spinner="Reading runs…")
def _read_runs(_loaded: Loaded, results_dir: str, key: str, run_ids: tuple[str, ...]) -> tuple[PmbRun, ...]:
    del results_dir, key  # only part of the cache key
    return _loaded.read_runs(run_ids)


@st.cache_resource(max_entries=8, show_spinner="Reading cases…")
def _read_suite_cases(
    _loaded: Loaded, results_dir: str, key: str, benchmark: Benchmark, columns: tuple[str, ...]
) -> pa.Table:
    del results_dir, key  # only part of the cache key
    return _loaded.read_cases(columns, [i.run_id for i in suite_identities(_loaded, benchmark)])


def suite_cases(loaded: Loaded, benchmark: Benchmark, columns: Sequence[str]) -> pa.Table:
    """``columns`` of every case of every run of one suite (read once per load, suite and columns: a widget
    change re-reads nothing)."""
    return _read_suite_cases(loaded, loaded.results_dir, loaded.key, benchmark, tuple(columns))


@st.cache_resource(max_entries=32, show_spinner="Reading the case…")
def _read_case(_loaded: Loaded, results_dir: str, key: str, case_id: str, turn_index: int | None) -> pa.Table:
    del results_dir, key  # only part of the cache key
    return _loaded.read_case(case_id, turn_index)


def case_rows(loaded: Loaded, case_id: str, turn_index: int | None) -> pa.Table:
    """Every run's row of one case in the cases table (read once per load and case: a widget change re-reads
    nothing)."""
    return _read_case(loaded, loaded.results_dir, loaded.key, case_id, turn_index)


def whole_runs(loaded: Loaded, run_ids: Sequence[str]) -> tuple[PmbRun, ...]:
    """The runs ``run_ids`` name, cases included, in that order (read once per load and set of ids)."""
    return _read_runs(loaded, loaded.results_dir, loaded.key, tuple(run_ids))


def resolve_run(runs: Sequence[RunIdentity], raw: str | None) -> RunIdentity | None:
    """The run ``raw`` names: by display name, else by run id, else by provider when exactly one run has it."""
    if not raw:
        return None
    for name in ("display_name", "run_id"):
        for r in runs:
            if getattr(r, name) == raw:
                return r
    by_provider = [r for r in runs if r.provider == raw]
    return by_provider[0] if len(by_provider) == 1 else None


PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#e7969c",
    "#637939", "#fdae6b", "#6baed6", "#843c39",
)  # fmt: skip
"""Provider colours: 16 distinct hues, so a suite's runs never share one (11 and 13 runs in the PMB data)."""


def colours(names: Sequence[str]) -> dict[str, str]:
    """A colour per provider name, by position (pass the suite in rank order so colours match across charts)."""
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def chart_text(text: str) -> str:
    """Report text for a plotly label: HTML-escaped, because plotly renders a subset of HTML in labels."""
    return html.escape(text, quote=False)


def top_title(text: str, pad_px: int = 12) -> dict[str, Any]:
    """A plotly title pinned to the top of the figure, ``pad_px`` below its edge, left-aligned: it stays clear of
    what a chart puts above its plot (axis labels on top, reference labels), however tall the plot is."""
    place = {"x": 0, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": pad_px}}
    return {"text": text, **place, "font": {"size": 15}}


def chart(fig: Any, key: str) -> None:
    """Show a plotly figure at full width, without the plotly logo."""
    st.plotly_chart(fig, key=key, config={"displaylogo": False})


def joined(df: pd.DataFrame, columns: Sequence[str], sep: str = ", ") -> pd.DataFrame:
    """``df`` with tuple/list cells of ``columns`` joined into strings, so the table and its CSV read the same."""
    out = df.copy()
    for col in columns:
        out[col] = [sep.join(v) if isinstance(v, tuple | list) else v for v in out[col]]
    return out


POINTS_LIMIT = 20_000
"""Up to this many cases in a suite a chart draws every case as a dot; above, it draws precomputed summaries."""

# --- QA benchmarks (LoCoMo, LongMemEval, ...): cached loading and the sidebar ----------------------

from memeval_core.qa.ingest import LoadedRun, QaRunHeader  # noqa: E402  (kept with the QA helpers below)

DATASETS_ENV = settings.DATASETS_ENV
"""Environment variable naming a folder with ``locomo10.json``; unset: it is looked for under the results."""


@dataclass(frozen=True)
class QaLoaded:
    """Every QA run loaded from the results directory, as the QA pages see it."""

    results_dir: str
    """The results directory that was read."""
    datasets_dir: str | None
    """The datasets directory (``$MEMEVAL_DATASETS``), when set."""
    runs: tuple[QaRunHeader, ...]
    """Every imported, joined and scored run's header (no question), by benchmark then display name."""
    errors: tuple[LoadProblem, ...]
    """Files that could not be loaded."""
    skipped: tuple[str, ...]
    """``file: reason`` for files that hold no QA run."""
    locomo_source: str | None
    """Where locomo10.json was read from, when found."""
    n_disputed: int
    """LoCoMo questions with a disputed gold answer (locomo-audit ``errors.json``), 0 when not found."""
    read_runs: QaRunsReader = field(compare=False, repr=False)
    """Whole runs by id (use :func:`whole_qa_runs`, which caches them)."""
    key: str = ""
    """The fingerprint of the files the runs were loaded from."""


@st.cache_resource(max_entries=16, show_spinner="Reading runs…")
def _read_qa_runs(_loaded: QaLoaded, results_dir: str, key: str, run_ids: tuple[str, ...]) -> tuple[LoadedRun, ...]:
    del results_dir, key  # only part of the cache key
    return _loaded.read_runs(run_ids)


def whole_qa_runs(loaded: QaLoaded, run_ids: Sequence[str] | None = None) -> tuple[LoadedRun, ...]:
    """The QA runs ``run_ids`` name (default: every run), questions included, in that order (read once per load
    and set of ids)."""
    ids = tuple(r.run_id for r in loaded.runs) if run_ids is None else tuple(run_ids)
    return _read_qa_runs(loaded, loaded.results_dir, loaded.key, ids)


def folded_qa_runs(loaded: QaLoaded, whole: Callable[[QaRunHeader], bool] | None = None) -> lineup.Folded:
    """The QA runs with judged files folded into the runs they re-judge (:func:`memeval_core.judge.lineup.fold`).

    Questions are read only for the runs a fold joins (:func:`memeval_core.judge.lineup.plan`) and those
    ``whole`` picks; every other run is its header, so a page of 1,000 runs reads what it shows.
    """
    planned = lineup.plan(loaded.runs)
    needed = {i for original, judged in planned.items() for i in (original, *judged)}
    ids = [h.run_id for h in loaded.runs if h.run_id in needed or (whole is not None and whole(h))]
    read = {r.run_id: r for r in whole_qa_runs(loaded, ids)}
    return lineup.fold([read.get(h.run_id, h) for h in loaded.runs])


RETRIEVAL_BATCH = 50
"""QA runs whose questions are read at a time to score retrieval (:func:`retrieval_summaries`)."""


@st.cache_resource(max_entries=8, show_spinner="Scoring retrieval…")
def _retrieval(_loaded: QaLoaded, results_dir: str, key: str, run_ids: tuple[str, ...]) -> dict[str, RetrievalSummary]:
    del results_dir, key  # only part of the cache key
    out: dict[str, RetrievalSummary] = {}
    for start in range(0, len(run_ids), RETRIEVAL_BATCH):
        out.update(qa_summaries(_loaded.read_runs(run_ids[start : start + RETRIEVAL_BATCH])))
    return out


def retrieval_summaries(loaded: QaLoaded, run_ids: Sequence[str]) -> dict[str, RetrievalSummary]:
    """Retrieval metric means of the runs ``run_ids`` that record retrieved ids (:func:`qa_summaries`), their
    questions read :data:`RETRIEVAL_BATCH` runs at a time and let go: a thousand runs never sit in memory
    together. Once per load and set of runs."""
    return _retrieval(loaded, loaded.results_dir, loaded.key, tuple(run_ids))


def datasets_root() -> Path | None:
    """The datasets directory from ``$MEMEVAL_DATASETS`` (never the URL), or None."""
    return settings.datasets_dir()


@dataclass(frozen=True)
class Everything:
    """One load of the results directory: PMB and QA runs and the one list of files not loaded."""

    pmb: Loaded
    """The PMB runs."""
    qa: QaLoaded
    """The QA runs."""
    not_loaded: tuple[NotLoaded, ...]
    """Every file neither loader took, with the reason and the fix (see :mod:`memeval_core.unloaded`)."""
    key: str = ""
    """The fingerprint of the files it was loaded from (a cache key for what pages derive from it)."""
    commit: str | None = None
    """For a results dataset on the Hub, the commit it was read at."""


def _problems(errors: Sequence[Any]) -> tuple[LoadProblem, ...]:
    # Plain copies: IngestError is a frozen dataclass exception, which pickle (the on-disk cache) cannot restore.
    return tuple(LoadProblem(e.file, e.path, e.message, e.hint) for e in errors)


# cache_resource, not cache_data: cache_data unpickles a fresh copy on every rerun, while the headers are
# immutable (frozen dataclasses, Arrow tables) and safe to share between sessions. One entry per results
# directory and fingerprint; a changed directory replaces it, so memory stays bounded.
@st.cache_resource(show_spinner="Loading and re-scoring results…", max_entries=2)
def load_everything(results_dir: str, fixtures_dir: str | None, datasets_dir: str | None, key: str) -> Everything:
    """Open every PMB and QA file under ``results_dir``: run headers now, whole runs when a page asks for them
    (cached per fingerprint ``key``).

    A directory holding a snapshot (an export) is read from it; raw reports are loaded, re-scored and verified
    once and then read from the cache entry (see :mod:`memeval_core.results`).
    """
    root = settings.results_root(results_dir)
    opened = open_results(root, Path(fixtures_dir) if fixtures_dir else None,
                          Path(datasets_dir) if datasets_dir else None)  # fmt: skip
    pmb, qa = opened.pmb, opened.qa
    identities = tuple(RunIdentity(**row) for row in pmb.table.select(list(IDENTITY_COLUMNS)).to_pylist())
    return Everything(
        pmb=Loaded(
            results_dir,
            pmb.table,
            identities,
            {b: tuple(r["run_id"] for r in leaderboard.table_rows(pmb.table, b)) for b in BENCHMARKS},
            _problems(pmb.errors),
            pmb.fixture,
            pmb.skipped,
            pmb.read_runs,
            pmb.read_cases,
            pmb.read_case,
            key,
        ),
        qa=QaLoaded(
            results_dir=results_dir,
            datasets_dir=datasets_dir,
            runs=qa.runs,
            errors=_problems(qa.errors),
            skipped=tuple(f"{s.file}: {s.reason}" for s in qa.skipped),
            locomo_source=qa.locomo_source,
            n_disputed=len(qa.disputed),
            read_runs=qa.read_runs,
            key=key,
        ),
        not_loaded=tuple(not_loaded(pmb, qa)),
        key=key,
        commit=opened.commit,
    )


def load_everything_current() -> Everything:
    """Load the configured results root (cached) and describe it in the sidebar; call it once per page run.

    When a results dataset on the Hub cannot be read (gone, 401/403/404, network), the page says so in one
    sentence and shows the last view that worked, if any.
    """
    ensure_navigation()
    root = _root_or_stop()
    fixtures = settings.fixtures_dir()
    datasets = datasets_root()

    def read() -> Everything:
        folders = (str(fixtures) if fixtures else None, str(datasets) if datasets else None)
        return load_everything(str(root), *folders, root_fingerprint(root, fixtures, datasets))

    everything = _or_last_good(root, read)
    sidebar(summary_of(everything))
    return everything


@st.cache_resource(show_spinner="Reading the results dataset…", max_entries=2)
def load_front(results_dir: str, key: str) -> OpenedFront | None:
    """The stored home page of the results dataset ``results_dir`` (cached per fingerprint ``key``)."""
    del key  # only part of the cache key
    return open_front(settings.results_root(results_dir))


def load_front_current() -> OpenedFront | None:
    """For a results dataset on the Hub, its stored home page, and the sidebar: all the home page reads (the
    manifest and one small file, however many runs the dataset holds). None for a folder or for a dataset
    without one: then call :func:`load_everything_current`."""
    ensure_navigation()
    root = _root_or_stop()
    if not isinstance(root, HubLocation):
        return None
    key = ("front", str(root))
    try:
        opened = load_front(str(root), root_fingerprint(root, None, None))
    except HubResultsError as exc:
        opened = _last_good().get(key)
        if opened is None:  # read the runs' headers instead: that read says what failed, or shows its last view
            return None
        _read_failed(exc, showing_last=True)
    _last_good()[key] = opened
    if opened is not None:
        front = opened.front
        sidebar(Summary(str(root), opened.commit, front.run_counts, front.locomo_unjoined))
    return opened


def load_qa_current() -> QaLoaded:
    """The QA side of the results directory's load (see :func:`load_everything_current`)."""
    return load_everything_current().qa


def refresh_button(root: str, commit: str) -> None:
    """Sidebar, for a results dataset: the commit shown and a button that reads the dataset again for everyone."""
    every = settings.refresh_seconds() // 60
    st.caption(f"Read at commit {commit[:8]}; read again every {every} minutes or on Refresh.")
    if st.button("Refresh", key=REFRESH_KEY, icon=":material/refresh:"):
        _refreshes()[root] = _refreshes().get(root, 0) + 1
        st.rerun()


@dataclass(frozen=True)
class Summary:
    """What the sidebar says about the results root."""

    results_dir: str
    """The results root that was read."""
    commit: str | None
    """For a results dataset on the Hub, the commit it was read at."""
    run_counts: Mapping[str, int]
    """Runs per benchmark id, in the order the sidebar lists them."""
    locomo_unjoined: bool
    """LoCoMo runs were scored without the LoCoMo dataset."""
    not_loaded: tuple[NotLoaded, ...] = ()
    """Every file neither loader took."""


def summary_of(everything: Everything) -> Summary:
    """The sidebar's summary of a load."""
    pmb, qa = everything.pmb, everything.qa
    counts = run_counts([r.benchmark for r in pmb.identities], qa.runs)
    unjoined = locomo_unjoined(qa.runs, qa.locomo_source)
    return Summary(pmb.results_dir, everything.commit, counts, unjoined, everything.not_loaded)


def sidebar(summary: Summary) -> None:
    """The one sidebar block: what was read, what was found, and every file that was not loaded and why."""
    with st.sidebar:
        st.caption(f"Results: {shown_path(summary.results_dir)}", help=f"Set with ${settings.RESULTS_ENV}.")
        if summary.commit is not None:
            refresh_button(summary.results_dir, summary.commit)
        counts = summary.run_counts
        lines = [f"{md_escape(labels.benchmark_name(b))}: {n:,} run{'s' if n != 1 else ''}" for b, n in counts.items()]
        st.caption("  \n".join(lines) if lines else "No runs yet.")
        if summary.locomo_unjoined:
            st.caption("LoCoMo dataset not found: LoCoMo runs are scored without categories and evidence.")
        missed = summary.not_loaded
        if missed:
            failed = sum(m.failed for m in missed)
            title = f"{len(missed)} file{'s' if len(missed) != 1 else ''} not loaded"
            icon = ":material/warning:" if failed else ":material/info:"
            with st.expander(title + (f" ({failed} with errors)" if failed else ""), icon=icon):
                for m in missed:
                    text = f"{m.file}\n{m.reason}"
                    st.code(f"{text}\nfix: {m.fix}" if m.fix else text, language=None, wrap_lines=True)


def qa_empty_state(loaded: QaLoaded) -> None:
    """Explain that the results directory holds no QA run and which formats are recognised."""
    st.info(
        "No QA benchmark results (LoCoMo, LongMemEval, ...) found in this results directory:",
        icon=":material/folder_off:",
    )
    st.code(shown_path(loaded.results_dir), language=None, wrap_lines=True)
    if loaded.errors:
        st.warning("Some files there could not be loaded; the sidebar lists them.")
    st.markdown(
        "memeval recognises QA result files by their content: the memeval run format (`docs/`), mem0 evaluation "
        "files, EverMemOS `eval_results.json`, MemoryBench `report_slim.json`, zep grades/responses pairs, "
        "cognitive-memory `per_question` files, M-flow LongMemEval files, and any table with a mapping file. "
        "Point `MEMEVAL_RESULTS` at a folder holding them and restart the app."
    )
