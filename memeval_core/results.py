"""One entry point for loading whatever a results directory holds, with an on-disk cache for warm starts.

A directory with a snapshot (an export's ``data/snapshot/``, see :mod:`memeval_core.pmb.snapshot` and
:mod:`memeval_core.qa.snapshot`) is read from the snapshot; any other directory is scanned and re-scored
from raw reports.

Warm starts: a load of raw reports is cached on disk under ``$MEMEVAL_CACHE_DIR`` (default
``$XDG_CACHE_HOME/memeval`` or ``~/.cache/memeval``; set it to ``off`` or an empty string to disable).
An entry is a folder in the format an export ships (:mod:`memeval_core.pmb.snapshot`,
:mod:`memeval_core.qa.snapshot`: JSON and Parquet, nothing pickled) plus ``load.json``, the files the load
could not read or skipped. An entry is keyed by

    key = SHA-256( kind, SCORING_VERSION, code fingerprint, for each input folder: its absolute path and,
                   over its visible files sorted by relative path, (relative path, size, mtime_ns) )

where the code fingerprint is the same hash over memeval_core's own ``*.py`` files, so an entry written by
other scoring code is never read. A changed, added, removed or touched file changes the key, and the
cold path runs again. Files modified within :data:`RACY_WINDOW_NS` of the key computation bypass the
cache (neither read nor written): a file rewritten twice within one timestamp tick with the same size
would otherwise keep its old key (git's "racily clean" problem). A corrupt or unreadable entry is
ignored and rebuilt; an unwritable cache folder only costs the warm start.

Header-only loads (:func:`load_headers`, what the CLI and the app start from) write a cold load into its entry
as it is made and read the headers back from there, so the cases and questions of every run are never all in
memory. With the cache off (or an unwritable one, or inputs too fresh to key) the entry goes to a scratch
folder of the process instead, removed when it exits and never looked up by key.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import orjson
import pyarrow as pa

from memeval_core import SCORING_VERSION, file_pool, settings, tree
from memeval_core.errors import IngestError, SnapshotError
from memeval_core.hub_location import HubLocation
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import PmbLoad, load_pmb, scan_pmb
from memeval_core.pmb.snapshot import (
    PmbHeaders,
    has_snapshot,
    open_snapshot,
    read_snapshot,
    write_runs,
    write_snapshot,
)
from memeval_core.pmb.snapshot import headers_of as pmb_headers_of
from memeval_core.qa.ingest import QaLoad, Skipped, load_qa
from memeval_core.qa.locomo import load_locomo
from memeval_core.qa.snapshot import QaHeaders, has_qa_snapshot, open_qa_snapshot, read_qa_snapshot, write_qa_snapshot
from memeval_core.qa.snapshot import headers_of as qa_headers_of

if TYPE_CHECKING:  # it imports pandas, which a folder's load does not need
    from memeval_core.explore.front import OpenedFront

CACHE_FORMAT = 3
"""Layout version of a cache entry; part of the key."""
ENTRIES_KEPT = 3
"""Entries of one results folder kept in a cache folder, newest first: the app keeps two loads at a time
(``st.cache_resource``), and a page still drawing from an older one reads its files."""
RACY_WINDOW_NS = 2_000_000_000
"""Inputs modified this recently (nanoseconds) are too fresh for a (size, mtime) key to be trusted."""
_CODE_ROOT = Path(__file__).resolve().parent

DefaultCache = Literal["default"]
T = TypeVar("T")
H = TypeVar("H")
V = TypeVar("V")


def _hash_tree(h: Any, root: Path | None, suffix: str = "") -> int:
    """:func:`memeval_core.tree.hash_folder` of ``root`` under its resolved name (``none`` for no folder); the
    newest mtime."""
    if root is None:
        h.update(b"none\0")
        return 0
    return tree.hash_folder(h, root, root.resolve(), (suffix,) if suffix else (), settings.limits())


FolderDigests = dict[tuple[Path | None, str], tuple[str, int]]
"""Folders hashed during one load, by (absolute folder or None, suffix): (digest, newest mtime). The PMB and QA
loads of one results folder share it, so the folder is walked once. A file changed while the first load runs
is keyed with the digest taken before it; its new mtime changes the key of the next load."""


def _folder_digest(root: Path | None, suffix: str, done: FolderDigests) -> tuple[str, int]:
    """(digest of :func:`_hash_tree` of ``root``, newest mtime), from ``done`` when this load already hashed it."""
    key = (None if root is None else root.absolute(), suffix)
    if key not in done:
        h = hashlib.sha256()
        newest = _hash_tree(h, root, suffix)
        done[key] = (h.hexdigest(), newest)
    return done[key]


def input_fingerprint(
    kind: str, *dirs: Path | None, now_ns: int | None = None, digests: FolderDigests | None = None
) -> str | None:
    """The cache key of loading ``dirs`` as ``kind`` (see the module docstring); None when a file is too fresh.

    ``digests``: folders already hashed by this load (filled in here), so two loads of one folder walk it once.
    """
    done: FolderDigests = {} if digests is None else digests
    h = hashlib.sha256(f"memeval-cache\0{CACHE_FORMAT}\0{kind}\0{SCORING_VERSION}\0".encode())
    h.update(_folder_digest(_CODE_ROOT, ".py", done)[0].encode())
    newest = 0
    for d in dirs:
        digest, latest = _folder_digest(d, "", done)
        h.update(digest.encode())
        newest = max(newest, latest)
    now = time.time_ns() if now_ns is None else now_ns
    if newest > now - RACY_WINDOW_NS:
        return None
    return h.hexdigest()


def _entry_prefix(kind: str, results: Path) -> str:
    return f"{kind}-{hashlib.sha256(os.fsencode(results.resolve())).hexdigest()[:16]}-"


@dataclass(frozen=True)
class Format(Generic[T, H]):
    """How one kind of load is kept in a cache entry (a folder), and how its headers are read alone."""

    write: Callable[[T, Path], None]
    """Write the value into the (empty) folder."""
    read: Callable[[Path], T]
    """Rebuild the value from the folder; any exception means the entry is unreadable (then it is rebuilt)."""
    read_headers: Callable[[Path], H]
    """The value's headers from the folder, reading no case or question (same failure rule as ``read``)."""
    headers_of: Callable[[T], H]
    """The headers of a value in memory (after a cold load)."""


def _read_entry(entry: Path, read: Callable[[Path], V]) -> V | None:
    """The cached value, or None when the entry is missing or unreadable (then it is rebuilt)."""
    if not entry.is_dir():
        return None
    try:
        return read(entry)
    except Exception:
        # Any failure to read a cache entry (truncated, garbage, another layout) only means a cold load.
        shutil.rmtree(entry, ignore_errors=True)
        return None


def _write_entry(cache: Path, prefix: str, entry: Path, write: Callable[[Path], None]) -> bool:
    """Write atomically (``write`` into a temp folder renamed into place); drop all but the newest
    :data:`ENTRIES_KEPT` entries of the same inputs.

    False when the folder cannot take an entry (``write`` was not called). What ``write`` raises propagates,
    and the folder keeps no half-written entry.
    """
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tree.sweep_stale(cache)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
    except OSError:
        return False  # an unwritable cache costs only the next warm start
    try:
        write(tmp)
        tmp.replace(entry)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _drop_old_entries(cache, prefix)
    return True


def _drop_old_entries(cache: Path, prefix: str) -> None:
    try:
        entries = sorted(cache.glob(prefix + "*"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for old in entries[ENTRIES_KEPT:]:
        shutil.rmtree(old, ignore_errors=True)


@dataclass(frozen=True)
class _Slot:
    """Where the cached result of one load lives: keyed before the cold path runs, written after it."""

    cache: Path
    prefix: str
    entry: Path


def _slot(
    kind: str,
    results: Path,
    extra_dirs: tuple[Path | None, ...],
    cache_dir: Path | DefaultCache | None,
    digests: FolderDigests | None = None,
) -> _Slot | None:
    """The cache slot of this load, or None when there is no cache or a file is too fresh to key."""
    cache = settings.cache_dir() if cache_dir == "default" else cache_dir
    if cache is None:
        return None
    key = input_fingerprint(kind, results, *extra_dirs, digests=digests)
    if key is None:
        return None
    prefix = _entry_prefix(kind, results)
    return _Slot(cache, prefix, cache / f"{prefix}{key[:32]}")


def cached_load(
    kind: str,
    results: Path,
    extra_dirs: tuple[Path | None, ...],
    cold: Callable[[], T],
    fmt: Format[T, Any],
    cache_dir: Path | DefaultCache | None = "default",
    digests: FolderDigests | None = None,
) -> T:
    """``cold()``, or its cached result when the inputs and the scoring code are unchanged since it was cached."""
    slot = _slot(kind, results, extra_dirs, cache_dir, digests)
    if slot is None:
        return cold()
    value = _read_entry(slot.entry, fmt.read)
    if value is None:
        value = cold()
        # Whatever the writer or the disk raises, the load keeps its result (and the cache no half-written entry).
        with contextlib.suppress(Exception):
            _write_entry(slot.cache, slot.prefix, slot.entry, partial(fmt.write, value))
    return value


def cached_headers(
    kind: str,
    results: Path,
    extra_dirs: tuple[Path | None, ...],
    cold: Callable[[], T],
    fmt: Format[T, H],
    cache_dir: Path | DefaultCache | None = "default",
    digests: FolderDigests | None = None,
    write_cold: Callable[[Path], None] | None = None,
) -> H:
    """The headers of :func:`cached_load`'s value, read alone from its cache entry (``fmt.read_headers``).

    A cold load is written into the entry and its headers read from there, so that its cases and questions
    do not stay in memory. With no cache (or a file too fresh to key, or an unwritable cache) it is written
    into this process's scratch folder instead (:func:`_scratch_slot`). ``write_cold``: writes the cold load
    into a folder as it is made (default: ``fmt.write(cold(), folder)``). Only when no folder can be written
    are the headers kept in memory. A process that can start no workers writes a large load from a process of
    its own (:func:`memeval_core.file_pool.loads_apart`).
    """
    write = partial(_write_here_or_apart, results, write_cold or partial(_write_value, cold, fmt.write))
    slot = _slot(kind, results, extra_dirs, cache_dir, digests)
    value = None if slot is None else _read_entry(slot.entry, fmt.read_headers)
    if value is not None:
        return value
    try:
        written = _written_slot(slot, partial(_scratch_slot, kind, results), write)
    except OSError:
        written = None  # the disk failed while the load was written: it is loaded again, in memory
    if written is not None:
        # The cold load's Arrow buffers are free now, but Arrow's allocator keeps them for reuse: hand them
        # back, so that the next load (and the pages) do not start above them.
        pa.default_memory_pool().release_unused()
        value = _read_entry(written.entry, fmt.read_headers)
    return fmt.headers_of(cold()) if value is None else value


def _write_value(cold: Callable[[], T], write: Callable[[T, Path], None], folder: Path) -> None:
    write(cold(), folder)


def _write_here_or_apart(results: Path, write: Callable[[Path], None], folder: Path) -> None:
    """``write(folder)``: in a process of its own when this one can start no workers and the load of ``results``
    is large (:func:`memeval_core.file_pool.loads_apart`); here when that process fails, into the emptied folder."""
    if not file_pool.loads_apart(results):
        write(folder)
        return
    try:
        file_pool.run_apart(partial(write, folder))
    except OSError as exc:  # ChildProcessError (it failed, or was killed), or it could not be started
        logging.getLogger(__name__).warning("loading %s in this process instead: %s", results, exc)
        shutil.rmtree(folder)
        folder.mkdir(mode=0o700)
        write(folder)


def _written_slot(
    slot: _Slot | None, scratch: Callable[[], _Slot | None], write: Callable[[Path], None]
) -> _Slot | None:
    """The slot the cold load was written into: ``slot``, or a scratch slot when there is none or its folder
    cannot take an entry (before anything was loaded); None when neither can. The load runs once at most."""
    if slot is not None and _write_entry(slot.cache, slot.prefix, slot.entry, write):
        return slot
    fallback = scratch()
    if fallback is not None and _write_entry(fallback.cache, fallback.prefix, fallback.entry, write):
        return fallback
    return None


_SCRATCH_PREFIX = "memeval-scratch-"


@functools.cache
def _scratch_dir() -> Path | None:
    """A folder of this process's own in the system's temporary folder, its name holding the process id; removed
    when the process exits, or (when it was killed) once a later process sees it has gone. None when none can be
    made."""
    _sweep_orphaned_scratch()
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-"))
    except OSError:
        return None
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _sweep_orphaned_scratch() -> None:
    """Remove the scratch folders of processes that no longer run."""
    for folder in Path(tempfile.gettempdir()).glob(_SCRATCH_PREFIX + "*"):
        pid = folder.name.removeprefix(_SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not folder.is_symlink() and not tree.process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _scratch_slot(kind: str, results: Path) -> _Slot | None:
    """A new entry in the scratch folder, never read by key; like a cache entry, it replaces older ones of the
    same inputs beyond :data:`ENTRIES_KEPT`."""
    scratch = _scratch_dir()
    if scratch is None:
        return None
    prefix = _entry_prefix(kind, results)
    return _Slot(scratch, prefix, scratch / f"{prefix}{uuid.uuid4().hex}")


# ------------------------------------------------------------------ the two formats

_LOAD_FILE = "load.json"
"""Beside the snapshot files: what a snapshot leaves out (files not read or skipped, where inputs lay)."""


def _errors_doc(errors: Sequence[IngestError]) -> list[dict[str, str]]:
    return [{"file": e.file, "path": e.path, "message": e.message, "hint": e.hint} for e in errors]


def _load_doc(folder: Path) -> dict[str, Any]:
    """``load.json``, its errors as :class:`IngestError` again (the inverse of :func:`_errors_doc`)."""
    doc: dict[str, Any] = orjson.loads((folder / _LOAD_FILE).read_bytes())
    doc["errors"] = tuple(IngestError(**e) for e in doc["errors"])
    return doc


def _write_load_doc(folder: Path, doc: dict[str, Any]) -> None:
    (folder / _LOAD_FILE).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _pmb_doc(errors: Sequence[IngestError], skipped: Sequence[str], fixture: PmbFixture | None) -> dict[str, Any]:
    return {
        "errors": _errors_doc(errors),
        "skipped": list(skipped),
        "fixture": None if fixture is None else fixture.source,
    }


def _write_pmb(load: PmbLoad, folder: Path) -> None:
    """The load as a snapshot (none without a fixture: then there is no run) and its ``load.json``."""
    if load.fixture is not None:
        write_snapshot(load, folder)
    _write_load_doc(folder, _pmb_doc(load.errors, load.skipped, load.fixture))


def _stream_pmb(results: Path, fixtures: Path | None, folder: Path) -> None:
    """:func:`_write_pmb` of :func:`load_pmb`, each run written as it is scored instead of kept in memory."""
    scan = scan_pmb(results, fixtures)
    if scan.fixture is None:
        list(scan.runs)  # no report is scored without a fixture, but each file is read for its errors
    else:
        write_runs(scan.fixture, scan.runs, folder, arrange=True)
    _write_load_doc(folder, _pmb_doc(scan.errors, scan.skipped, scan.fixture))


def _fixture_less(folder: Path) -> PmbLoad | None:
    """The load an entry without a snapshot holds (no fixture, so no run); None when it has a snapshot.
    ``SnapshotError`` when the snapshot of a load with a fixture is missing (then the entry is rebuilt)."""
    if has_snapshot(folder):
        return None
    doc = _load_doc(folder)
    if doc["fixture"] is not None:
        raise SnapshotError(f"{folder}: the snapshot of a load with a fixture is missing")
    return PmbLoad((), doc["errors"], None, tuple(doc["skipped"]))


def _read_pmb(folder: Path) -> PmbLoad:
    empty = _fixture_less(folder)
    if empty is not None:
        return empty
    doc = _load_doc(folder)
    snap = read_snapshot(folder)
    fixture = None if snap.fixture is None else dataclasses.replace(snap.fixture, source=doc["fixture"])
    return dataclasses.replace(snap, errors=doc["errors"], skipped=tuple(doc["skipped"]), fixture=fixture)


def _write_qa(load: QaLoad, folder: Path) -> None:
    write_qa_snapshot(load, folder)
    doc = {
        "errors": _errors_doc(load.errors),
        "skipped": [dataclasses.asdict(s) for s in load.skipped],
        "locomo": None if load.locomo is None else load.locomo.source,
    }
    _write_load_doc(folder, doc)


def _read_qa(folder: Path) -> QaLoad:
    doc = _load_doc(folder)
    snap = read_qa_snapshot(folder)
    # The dataset is an input of the load (its folder is part of the key): read again, it is the one joined.
    ds = None if doc["locomo"] is None else load_locomo(Path(doc["locomo"]), doc["locomo"])
    skipped = tuple(Skipped(**s) for s in doc["skipped"])
    return dataclasses.replace(snap, errors=doc["errors"], skipped=skipped, locomo=ds)


def _open_pmb(folder: Path) -> PmbHeaders:
    empty = _fixture_less(folder)
    if empty is not None:
        return pmb_headers_of(empty)
    doc = _load_doc(folder)
    opened = open_snapshot(folder)
    fixture = None if opened.fixture is None else dataclasses.replace(opened.fixture, source=doc["fixture"])
    return dataclasses.replace(opened, fixture=fixture, errors=doc["errors"], skipped=tuple(doc["skipped"]))


def _open_qa(folder: Path) -> QaHeaders:
    doc = _load_doc(folder)
    skipped = tuple(Skipped(**s) for s in doc["skipped"])
    opened = open_qa_snapshot(folder)
    return dataclasses.replace(opened, locomo_source=doc["locomo"], errors=doc["errors"], skipped=skipped)


PMB_FORMAT: Format[PmbLoad, PmbHeaders] = Format(_write_pmb, _read_pmb, _open_pmb, pmb_headers_of)
"""A PMB load as the export's PMB snapshot."""
QA_FORMAT: Format[QaLoad, QaHeaders] = Format(_write_qa, _read_qa, _open_qa, qa_headers_of)
"""A QA load as the export's QA snapshot."""


def load_pmb_results(
    results: Path,
    fixtures: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
    digests: FolderDigests | None = None,
) -> PmbLoad:
    """PMB runs of a results directory: from its snapshot if it has one, else from the raw reports (cached).

    ``cache_dir``: ``"default"`` for :func:`memeval_core.settings.cache_dir`, a folder, or None for no cache.
    """
    if fixtures is None and has_snapshot(results):
        return read_snapshot(results)
    cold = partial(load_pmb, results, fixtures)
    return cached_load("pmb", results, (fixtures,), cold, PMB_FORMAT, cache_dir, digests)


def load_qa_results(
    results: Path,
    datasets: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
    digests: FolderDigests | None = None,
) -> QaLoad:
    """QA runs of a results directory: from its QA snapshot if it has one (see :mod:`memeval_core.qa.snapshot`),
    else imported and scored from the raw files (see :func:`memeval_core.qa.ingest.load_qa`), cached like PMB loads.
    """
    if datasets is None and has_qa_snapshot(results):
        return read_qa_snapshot(results)
    cold = partial(load_qa, results, datasets)
    return cached_load("qa", results, (datasets,), cold, QA_FORMAT, cache_dir, digests)


def load_all_results(
    pmb_results: Path,
    qa_results: Path,
    fixtures: Path | None = None,
    datasets: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
) -> tuple[PmbLoad, QaLoad]:
    """``(load_pmb_results(pmb_results, fixtures), load_qa_results(qa_results, datasets))``, each cached (the
    folders hashed once for both keys)."""
    digests: FolderDigests = {}
    pmb = load_pmb_results(pmb_results, fixtures, cache_dir=cache_dir, digests=digests)
    return pmb, load_qa_results(qa_results, datasets, cache_dir=cache_dir, digests=digests)


def load_pmb_headers(
    results: Path,
    fixtures: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
    digests: FolderDigests | None = None,
) -> PmbHeaders:
    """:func:`load_pmb_results` without cases: from a snapshot or a warm cache entry only the runs table is read."""
    if fixtures is None and has_snapshot(results):
        return open_snapshot(results)
    cold = partial(load_pmb, results, fixtures)
    stream = partial(_stream_pmb, results, fixtures)
    return cached_headers("pmb", results, (fixtures,), cold, PMB_FORMAT, cache_dir, digests, stream)


def load_qa_headers(
    results: Path,
    datasets: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
    digests: FolderDigests | None = None,
) -> QaHeaders:
    """:func:`load_qa_results` without questions: from a snapshot or a warm cache entry only the run lines are read."""
    if datasets is None and has_qa_snapshot(results):
        return open_qa_snapshot(results)
    cold = partial(load_qa, results, datasets)
    return cached_headers("qa", results, (datasets,), cold, QA_FORMAT, cache_dir, digests)


def load_headers(
    pmb_results: Path,
    qa_results: Path,
    fixtures: Path | None = None,
    datasets: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
) -> tuple[PmbHeaders, QaHeaders]:
    """:func:`load_all_results` header-only: what a leaderboard needs, without cases or questions.

    From a snapshot or a warm cache entry the time and memory do not grow with the cases and questions;
    a cold load scores everything (and caches it).
    """
    digests: FolderDigests = {}
    pmb = load_pmb_headers(pmb_results, fixtures, cache_dir=cache_dir, digests=digests)
    return pmb, load_qa_headers(qa_results, datasets, cache_dir=cache_dir, digests=digests)


@dataclass(frozen=True)
class OpenedResults:
    """A results root opened for reading (:func:`open_results`)."""

    pmb: PmbHeaders
    """Every PMB run's header; whole runs through its readers."""
    qa: QaHeaders
    """Every QA run's header; whole runs through its reader."""
    commit: str | None = None
    """For a Hub dataset, the commit it was read at; None for a folder."""


def open_results(
    root: Path | HubLocation,
    fixtures: Path | None = None,
    datasets: Path | None = None,
    *,
    cache_dir: Path | DefaultCache | None = "default",
) -> OpenedResults:
    """A results root opened for reading: every run's header now, whole runs through the headers' readers.

    A folder is :func:`load_headers`; a Hub dataset (:class:`HubLocation`) is read in place
    (:func:`memeval_core.hub_results.open_dataset`: its runs were scored when they were pushed, so ``fixtures``
    and ``datasets`` do not apply).
    """
    if isinstance(root, HubLocation):
        from memeval_core import hub_results  # importing huggingface_hub costs 0.6 s: only a Hub root pays it

        opened = hub_results.open_dataset(root)
        return OpenedResults(opened.pmb, opened.qa, opened.commit)
    return OpenedResults(*load_headers(root, root, fixtures, datasets, cache_dir=cache_dir))


def open_front(root: Path | HubLocation) -> OpenedFront | None:
    """The stored home page of a results dataset on the Hub (:func:`memeval_core.hub_results.open_front`: the
    manifest and one small file); None for a folder, or a dataset without one (then use :func:`open_results`)."""
    if not isinstance(root, HubLocation):
        return None
    from memeval_core import hub_results  # as in open_results: only a Hub root pays for huggingface_hub

    return hub_results.open_front(root)
