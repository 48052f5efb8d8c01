"""Adding new result files to the results directory, safely.

A file is validated before anything is written, stored under ``uploads/`` with a sanitised name,
written to a temporary file in the same directory, flushed and fsynced, then *linked* into place:
``os.link`` never replaces an existing file, so two writers can never overwrite each other, and a
crash at any point leaves either no file or the complete one (plus, at worst, a stray ``.tmp-*``
that every reader ignores because it starts with a dot). A file whose bytes are already stored
(same SHA-256) is not stored twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memeval_core import settings, tree
from memeval_core.errors import IngestError

UPLOADS = "uploads"
LOCK_FILE = ".memeval-add.lock"
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
ALLOWED_SUFFIXES = (".json", ".jsonl", ".csv")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitize_name(name: str) -> str:
    """A safe file name from a user-supplied one: no directories, no hidden files, no odd characters.

    ``../../etc/passwd`` -> ``passwd.json``; ``.hidden.json`` -> ``hidden.json``; at most 100 characters.
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("-", base).strip(".-_") or "run"
    stem, dot, suffix = base.rpartition(".")
    if not dot or f".{suffix.lower()}" not in ALLOWED_SUFFIXES:
        stem, suffix = base, "json"
    stem = stem.strip(".-_")[:90] or "run"
    return f"{stem}.{suffix.lower()}"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def existing_hashes(results: Path) -> dict[str, Path]:
    """SHA-256 of every stored result file under ``results`` (the files :func:`memeval_core.tree.walk` lists)."""
    out: dict[str, Path] = {}
    if not results.is_dir():
        return out
    for entry in tree.walk(results, ALLOWED_SUFFIXES).files:
        p = results / entry.rel
        with contextlib.suppress(OSError):
            out.setdefault(sha256_bytes(p.read_bytes()), p)
    return out


def uploads_dir(results: Path) -> Path:
    """``results/uploads``, refused (:class:`IngestError`) when it is a link or not a folder inside ``results``."""
    target = results / UPLOADS
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise IngestError(
            UPLOADS, "$", "the uploads folder is a link or not a folder; nothing is written through it", "remove it"
        )
    return target


def _uploaded_bytes(uploads: Path) -> int:
    return sum(e.size for e in tree.walk(uploads).files) if uploads.is_dir() else 0


@dataclass(frozen=True)
class AddResult:
    """What happened to one added file."""

    name: str
    """The name the user gave."""
    status: str
    """``stored``, ``duplicate`` or ``rejected``."""
    path: Path | None
    """Where it is stored (for duplicates: the existing copy)."""
    sha256: str
    """SHA-256 of the bytes ('' when rejected before hashing)."""
    error: IngestError | None = None
    """Why it was rejected."""


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new(directory: Path, name: str, data: bytes) -> Path:
    """Write ``data`` as ``directory/name`` (``stem-2.ext``... if taken): atomic, never overwriting."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        stem, _, suffix = name.rpartition(".")
        for n in range(1, 10_000):
            final = directory / (name if n == 1 else f"{stem}-{n}.{suffix}")
            try:
                os.link(tmp, final)
            except FileExistsError:
                continue
            _fsync_dir(directory)
            return final
        raise IngestError(name, "$", "too many files with this name", "rename the file")
    finally:
        tmp.unlink(missing_ok=True)


Validator = Callable[[str, bytes], None]
"""Raises :class:`IngestError` when the bytes are not a loadable run."""


def add_files(
    results: Path,
    files: Iterable[tuple[str, bytes]],
    validate: Validator,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[AddResult]:
    """Validate and store each (name, bytes); invalid files are rejected, duplicates skipped.

    Concurrent adders (two browser sessions, two CLI runs) take turns on a lock file, so the
    duplicate check and the write are one step: the same bytes added twice at once are stored once.
    """
    target = results / UPLOADS
    if not target.is_symlink():
        # The results folder and its uploads folder in one step: a reader never sees the first without the second.
        target.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    with _locked(results / LOCK_FILE):
        return _add_files_locked(results, files, validate, max_bytes)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    # flock is released by the kernel when the holder dies, so a crash never leaves a stale lock.
    with path.open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _add_files_locked(
    results: Path, files: Iterable[tuple[str, bytes]], validate: Validator, max_bytes: int
) -> list[AddResult]:
    known = existing_hashes(results)
    out: list[AddResult] = []
    try:
        uploads = uploads_dir(results)
    except IngestError as exc:
        return [AddResult(name, "rejected", None, "", exc) for name, _ in files]
    tree.sweep_stale(uploads)
    quota = settings.limits().upload_quota_bytes
    used = _uploaded_bytes(uploads)
    for name, data in files:
        safe = sanitize_name(name)
        if used + len(data) > quota:
            err = IngestError(name, "$", f"the uploads folder would pass its quota of {quota / settings.MB:,.0f} MB",
                              "remove old uploads or raise MEMEVAL_UPLOAD_QUOTA_MB")  # fmt: skip
            out.append(AddResult(name, "rejected", None, "", err))
            continue
        if len(data) > max_bytes:
            mb = max_bytes / (1024 * 1024)
            err = IngestError(name, "$", f"file is {len(data):,} bytes, above the {max_bytes:,}-byte limit ({mb:g} MB)",
                              "split the run or raise the limit with --max-size / MEMEVAL_MAX_UPLOAD_MB")  # fmt: skip
            out.append(AddResult(name, "rejected", None, "", err))
            continue
        digest = sha256_bytes(data)
        if digest in known:
            out.append(AddResult(name, "duplicate", known[digest], digest))
            continue
        try:
            validate(safe, data)
        except IngestError as exc:
            out.append(AddResult(name, "rejected", None, digest, exc))
            continue
        path = write_new(uploads, safe, data)
        used += len(data)
        known[digest] = path
        out.append(AddResult(name, "stored", path, digest))
    return out
