"""The one module that lists and reads files under a results root; everything it returns stays inside the root.

Rules, the same for the CLI, the app, the store and the export:

- Files are listed in ``os.walk`` order: a folder's files, then its sub-folders, each sorted by name.
- Hidden files and folders (a name starting with ``.``) are skipped: they hold staging copies and caches.
- A linked folder is not followed. A linked file is read only when its target resolves to a regular file
  inside the root. FIFOs, devices and sockets are never opened.
- :class:`memeval_core.settings.Limits` caps the size of one file, of all files together and their number.

Every file that is not listed for one of these reasons is returned as a :class:`Refusal` with one sentence,
so that callers can say what was not loaded and why. :func:`confine` checks a path that a file *names*
(a mapping's data file): the refusal reads the same whether or not the target exists, so a result file
cannot probe the host.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from memeval_core.errors import is_text
from memeval_core.settings import MB, Limits

OUTSIDE = "names a file outside the results directory or one that is not a regular file; it was not read"
"""The one sentence for every refused path a file names (the same whether or not the target exists)."""


class RefusedPathError(ValueError):
    """A path a result file names that may not be read; the message is :data:`OUTSIDE` or says why."""


@dataclass(frozen=True)
class Entry:
    """One listed file."""

    rel: str
    """Path relative to the root, POSIX separators."""
    size: int
    """Bytes."""
    mtime_ns: int
    """Modification time in nanoseconds (part of cache keys)."""


@dataclass(frozen=True)
class Refusal:
    """One file under the root that was not listed."""

    rel: str
    """Path relative to the root, POSIX separators."""
    reason: str
    """One sentence: why it was not read."""
    fix: str
    """What to do about it."""


@dataclass(frozen=True)
class Listing:
    """What :func:`walk` found."""

    files: tuple[Entry, ...]
    """Readable files, in walk order."""
    refused: tuple[Refusal, ...]
    """Files that match the suffixes but were not listed, in walk order."""


def _inside(path: Path, root_real: Path) -> bool:
    return path == root_real or root_real in path.parents


def _vet(path: Path | os.DirEntry[str], rel: str, root_real: Path) -> os.stat_result | Refusal:
    """The file's stat when it may be read, else why not (a scanned ``DirEntry`` saves building a path)."""
    try:
        st = path.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            path = Path(path)
            if not _inside(path.resolve(), root_real):
                return Refusal(rel, "a link to a file outside the results directory", "copy the file in instead")
            st = path.stat()
    except OSError:
        return Refusal(rel, "cannot be read (a broken link or no permission)", "fix or remove the file")
    if not stat.S_ISREG(st.st_mode):
        return Refusal(rel, "not a regular file (a FIFO, device or socket)", "remove it from the results directory")
    return st


def walk(root: Path, suffixes: tuple[str, ...] = (), limits: Limits | None = None) -> Listing:
    """Every readable file under ``root`` whose name ends with one of ``suffixes`` (all files when empty).

    ``limits`` (none when omitted) refuses files above the per-file size, and every file after the count
    or total size is reached.
    """
    files: list[Entry] = []
    refused: list[Refusal] = []
    root_real = root.resolve()
    total = 0

    def visit(directory: str, prefix: str) -> None:
        nonlocal total
        try:
            with os.scandir(directory) as it:
                entries = sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
        except OSError:
            return
        folders = []
        for e in entries:
            rel = prefix + e.name
            if not is_text(e.name):  # os.scandir hands undecodable bytes on as lone surrogates
                if e.is_dir(follow_symlinks=False) or not suffixes or e.name.endswith(suffixes):
                    refused.append(Refusal(printable(rel), "its name is not UTF-8 text", "rename it"))
                continue
            if e.is_dir(follow_symlinks=False):
                folders.append(e)
                continue
            if suffixes and not e.name.endswith(suffixes):
                continue
            if e.is_symlink() and Path(e.path).is_dir():
                refused.append(Refusal(rel, "a link to a folder (not followed)", "copy the folder in instead"))
                continue
            found = _vet(e, rel, root_real)
            if isinstance(found, Refusal):
                refused.append(found)
            elif (why := _over_limit(found.st_size, len(files), total, limits)) is not None:
                refused.append(Refusal(rel, why, "raise the limit (see the README's Limits) or remove files"))
            else:
                files.append(Entry(rel, found.st_size, found.st_mtime_ns))
                total += found.st_size
        for e in folders:
            visit(e.path, prefix + e.name + "/")

    visit(str(root), "")
    return Listing(tuple(files), tuple(refused))


def printable(path: str) -> str:
    """A path as text whatever bytes its name holds: an undecodable byte is shown as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _over_limit(size: int, count: int, total: int, limits: Limits | None) -> str | None:
    if limits is None:
        return None
    if size > limits.max_file_bytes:
        return f"{size / MB:,.1f} MB is above the {limits.max_file_bytes / MB:,.0f} MB limit per file"
    if count >= limits.max_files:
        return f"the results directory holds more than {limits.max_files:,} files (the limit)"
    if total + size > limits.max_total_bytes:
        return f"the results directory holds more than {limits.max_total_bytes / MB:,.0f} MB (the limit)"
    return None


def relative_inside(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` as a POSIX path, or None when it lies outside. Lexically first: a file
    reached through a symlinked tree lies inside it even when its target does not."""
    for p, r in ((path.absolute(), root.absolute()), (path.resolve(), root.resolve())):
        try:
            return p.relative_to(r).as_posix()
        except ValueError:
            continue
    return None


def confine(root: Path, name: str, relative_to: str = "") -> tuple[Path, str]:
    """(path, relative POSIX path) of a file that a result file names, ``relative_to`` its own folder.

    Raise :class:`RefusedPathError` unless ``name`` is a relative path that resolves, links included, to a
    regular file inside ``root``. Every refusal of an existing or missing target reads :data:`OUTSIDE`.
    """
    if not name or "\0" in name or "\\" in name or PurePosixPath(name).is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise RefusedPathError("names its file with an absolute or malformed path; give a path relative to itself")
    rel = posixpath.normpath(posixpath.join(relative_to, name))
    path = root / rel
    root_real = root.resolve()
    if rel == ".." or rel.startswith("../") or not _inside(path.resolve(), root_real):
        raise RefusedPathError(OUTSIDE)
    if any(part.startswith(".") for part in rel.split("/")) or isinstance(_vet(path, rel, root_real), Refusal):
        raise RefusedPathError(OUTSIDE)
    return path, rel


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text (``[]`` is 1, ``{"a": [1]}`` is 2, ``1`` is 0).

    Linear, vectorised and safe however deep the text goes (nothing recurses):

    1. A quote is a string delimiter unless a run of an odd number of backslashes ends right before it.
    2. A bracket lies outside every string when an even number of delimiters precede it.
    3. The depth at each such bracket is the running sum of +1 for ``[`` / ``{`` and -1 for ``]`` / ``}``;
       the answer is its maximum.
    """
    text = np.frombuffer(raw, dtype=np.uint8)
    quotes = np.flatnonzero(text == ord('"'))
    backslashes = np.flatnonzero(text == ord("\\"))
    if backslashes.size:
        run_starts = np.flatnonzero(np.diff(backslashes, prepend=-2) != 1)
        run_ends = np.append(run_starts[1:], backslashes.size) - 1
        odd = (run_ends - run_starts) % 2 == 0
        quotes = np.setdiff1d(quotes, backslashes[run_ends[odd]] + 1, assume_unique=True)
    folded = text | 0x20  # "[" becomes "{" and "]" becomes "}" (they differ by that one bit)
    opens = folded == ord("{")
    brackets = np.flatnonzero(opens | (folded == ord("}")))
    brackets = brackets[np.searchsorted(quotes, brackets) % 2 == 0]
    return int(np.cumsum(np.where(opens[brackets], 1, -1)).max(initial=0))


def too_deep(raw: bytes, limits: Limits) -> str | None:
    """One sentence when the JSON text nests deeper than the limit, else None."""
    depth = json_depth(raw)
    if depth <= limits.max_json_depth:
        return None
    return f"JSON nested {depth} levels deep, above the limit of {limits.max_json_depth} (MEMEVAL_MAX_JSON_DEPTH)"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def fingerprint(*dirs: Path | None) -> str:
    """A cheap identity of the files under ``dirs``: SHA-256 over (path, size, mtime_ns) of every file
    :func:`walk` lists (and the refusals), one ``stat`` per file and nothing read.

    Changes when a file is added, removed, rewritten or touched; the app keys its cached loads on it.
    """
    h = hashlib.sha256()
    for d in dirs:
        if d is not None:
            hash_folder(h, d, d)
    return h.hexdigest()


def hash_folder(h: Any, folder: Path, named: Path, suffixes: tuple[str, ...] = (), limits: Limits | None = None) -> int:
    """Add ``folder`` to the hash ``h``: the bytes of the path ``named``, then "missing" when it is no folder, else
    (path, size, mtime_ns) of every file :func:`walk` lists and every refusal. Returns the newest mtime (0: none)."""
    h.update(b"dir\0" + os.fsencode(named) + b"\0")  # the name's bytes, whatever they are
    if not folder.is_dir():
        h.update(b"missing\0")
        return 0
    listing = walk(folder, suffixes, limits)
    for e in listing.files:
        h.update(f"{e.rel}\0{e.size}\0{e.mtime_ns}\0".encode())
    for r in listing.refused:
        h.update(f"refused\0{r.rel}\0{r.reason}\0".encode())
    return max((e.mtime_ns for e in listing.files), default=0)


STALE_AFTER_S = 3600.0
"""A ``.tmp-*`` leftover untouched this long belongs to a save that died (a live one finishes in seconds)."""


def sweep_stale(directory: Path, prefix: str = ".tmp-", now: float | None = None) -> int:
    """Remove ``prefix*`` files and folders in ``directory`` (not below) untouched for :data:`STALE_AFTER_S`.

    Returns how many were removed. Leftovers of killed saves and cache writes; never follows links.
    """
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for e in entries:
        if not e.name.startswith(prefix):
            continue
        try:
            if now - e.stat(follow_symlinks=False).st_mtime < STALE_AFTER_S:
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                Path(e.path).unlink()
            removed += 1
        except OSError:
            continue
    return removed


def process_alive(pid: int) -> bool:
    """True while process ``pid`` runs (the owner of a staging or scratch folder named after it)."""
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, run by someone else
    return True
