"""Download memeval's public data: the catalogue's pinned upstream files, checked, into the results directory.

:func:`sync_catalogue` (``python -m memeval_core sync``) fetches the entries of the catalogue
(:mod:`memeval_core.catalogue`) at their pinned commits: GitHub files from ``{raw}/{repo}/{commit}/{path}``,
Hugging Face files through ``huggingface_hub`` (``HF_ENDPOINT`` honoured). At most :data:`PARALLEL` files are
fetched at once, each into a hidden staging folder under the results directory, and each file's size and
SHA-256 are checked there. Only then are the files of every *source* (one repository at one commit) whose
files all arrived intact moved into place; a source with a missing, corrupt, truncated or unwritable file
leaves its files as they were and is reported in one sentence. Files already present with the right SHA-256
are not fetched again. ``from_dir`` copies from a local tree instead: laid out like the results directory
(``../shared/data``) or like one upstream repository. :func:`check_upstream` (``sync --check``) asks the
GitHub API which commits newer than each pin touch catalogued paths; it changes nothing.

Base URLs come from ``MEMEVAL_GITHUB_RAW`` (raw files) and ``MEMEVAL_GITHUB_API`` (the API), so tests point
them at a local stand-in.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO
from urllib.parse import quote

import requests

from memeval_core import settings, tree
from memeval_core.catalogue import Catalogue, CatalogueEntry, by_source, default_catalogue
from memeval_core.settings import MB

TIMEOUT_S = 30
PARALLEL = 4
"""Files fetched at once by default."""
CHUNK = 1 << 16
STAGING_PREFIX = ".sync-"
"""Staging folders are hidden (``.sync-<pid>-...``): loaders and fingerprints skip hidden folders."""
HEADERS = {"User-Agent": "memeval-sync"}


class SyncError(Exception):
    """A sync that could not complete; the results directory is unchanged."""


def human_bytes(n: int) -> str:
    """``2_805_274`` → ``2.7 MB``; under a megabyte in KB."""
    return f"{n / MB:.1f} MB" if n >= MB else f"{n / 1024:.1f} KB"


# ------------------------------------------------------------------ progress


class Reporter:
    """What a sync tells about its progress (called from the fetching threads); this base says nothing."""

    def start(self, files: int, nbytes: int) -> None:
        """The sync is about to fetch ``files`` files of ``nbytes`` bytes."""

    def advance(self, nbytes: int) -> None:
        """``nbytes`` more bytes arrived."""

    def finished(self, target: str, error: str | None) -> None:
        """One file is done: fetched and checked, or failed with ``error``."""


class ProgressBar(Reporter):
    """Bytes and files of a sync on ``stream``: a bar redrawn in place on a terminal, else one line per file."""

    WIDTH = 28
    REDRAW_S = 0.1

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._lock = threading.Lock()
        self.files = self.done = self.nbytes = self.received = 0
        self._drawn = 0.0

    def start(self, files: int, nbytes: int) -> None:
        """Remember the totals; without a terminal, say what is coming."""
        self.files, self.nbytes = files, nbytes
        if files and not self.tty:
            print(f"fetching {files} files ({human_bytes(nbytes)})", file=self.stream, flush=True)

    def advance(self, nbytes: int) -> None:
        """Count bytes; redraw the bar at most every :data:`REDRAW_S` seconds."""
        with self._lock:
            self.received += nbytes
            if self.tty and time.monotonic() - self._drawn >= self.REDRAW_S:
                self._draw()

    def finished(self, target: str, error: str | None) -> None:
        """Count a file; a plain line per file without a terminal, failures always on their own line."""
        with self._lock:
            self.done += 1
            if self.tty:
                if error:
                    self.stream.write("\r\x1b[K")
                    print(f"failed {error}", file=self.stream)
                self._draw()
                if self.done == self.files:
                    self.stream.write("\n")
            else:
                what = f"failed {error}" if error else f"fetched {target}"
                print(f"[{self._counts()}] {what}", file=self.stream)
            self.stream.flush()

    def _counts(self) -> str:
        return f"{self.done}/{self.files} files, {human_bytes(self.received)}/{human_bytes(self.nbytes)}"

    def _draw(self) -> None:
        share = min(1.0, self.received / self.nbytes) if self.nbytes else 1.0
        filled = int(share * self.WIDTH)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {share:4.0%} {self._counts()}")
        self.stream.flush()
        self._drawn = time.monotonic()


# ------------------------------------------------------------------ fetching one file


class FetchError(Exception):
    """One file that could not be fetched, checked or staged; the message names it and what failed."""

    def __init__(self, entry: CatalogueEntry, message: str) -> None:
        super().__init__(f"{entry.target}: {message}")
        self.entry = entry


class NotInCopyError(FetchError):
    """A file the local copy (``--from DIR``) does not hold."""


Fetch = Callable[[CatalogueEntry, Path, Callable[[int], None]], None]
"""Fetch one entry into a staging path, reporting bytes as they arrive; raise :class:`FetchError`."""


def _open_for_writing(path: Path) -> IO[bytes]:
    """The staging file (a seam: tests make it fail as a full disk would)."""
    return path.open("wb")


def _write_error(entry: CatalogueEntry, exc: OSError) -> FetchError:
    return FetchError(entry, f"could not be written to the staging folder: {exc.strerror or exc}")


def _write_checked(entry: CatalogueEntry, dest: Path, chunks: Iterable[bytes], advance: Callable[[int], None]) -> None:
    """Write ``chunks`` to ``dest``; :class:`FetchError` unless they are exactly the catalogued size and SHA-256."""
    digest, n = hashlib.sha256(), 0
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        out = _open_for_writing(dest)
    except OSError as exc:
        raise _write_error(entry, exc) from exc
    with out:
        for chunk in chunks:
            n += len(chunk)
            if n > entry.size:
                raise FetchError(entry, f"is larger than the catalogued {entry.size:,} bytes")
            digest.update(chunk)
            try:
                out.write(chunk)
            except OSError as exc:
                raise _write_error(entry, exc) from exc
            advance(len(chunk))
    if n != entry.size:
        raise FetchError(entry, f"arrived with {n:,} of its {entry.size:,} bytes")
    if (got := digest.hexdigest()) != entry.sha256:
        raise FetchError(entry, f"has SHA-256 {got}, not the catalogued {entry.sha256}")


def _file_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        yield from iter(lambda: fh.read(CHUNK), b"")


_SESSIONS = threading.local()


def _session() -> requests.Session:
    """One HTTP session per fetching thread (sessions are not shared between threads)."""
    session: requests.Session | None = getattr(_SESSIONS, "session", None)
    if session is None:
        session = requests.Session()
        session.headers.update(HEADERS)
        _SESSIONS.session = session
    return session


def _why(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return f"the connection dropped midway ({type(exc).__name__})"
    if isinstance(exc, requests.Timeout):
        return f"no answer within {TIMEOUT_S} s ({type(exc).__name__})"
    if isinstance(exc, requests.ConnectionError):
        return f"cannot connect ({type(exc).__name__})"
    return type(exc).__name__


def fetch_github(entry: CatalogueEntry, dest: Path, advance: Callable[[int], None]) -> None:
    """Fetch a GitHub entry from ``{MEMEVAL_GITHUB_RAW}/{repo}/{commit}/{path}`` into ``dest``, checked."""
    url = entry.raw_url(settings.github_raw())
    try:
        with _session().get(url, stream=True, timeout=TIMEOUT_S) as resp:
            if resp.status_code != 200:
                raise FetchError(entry, f"{url} answered HTTP {resp.status_code}")
            _write_checked(entry, dest, resp.iter_content(CHUNK), advance)
    except requests.RequestException as exc:
        raise FetchError(entry, f"could not fetch {url}: {_why(exc)}") from exc


def fetch_hub(entry: CatalogueEntry, dest: Path, advance: Callable[[int], None], cache_dir: Path) -> None:
    """Fetch a Hugging Face entry through ``huggingface_hub`` (into ``cache_dir``), then stage it, checked."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils.tqdm import disable_progress_bars

    disable_progress_bars("huggingface_hub.http_get")  # its download bar only: the sync draws its own

    endpoint = settings.hub_endpoint()
    try:
        local = hf_hub_download(
            entry.repository,
            entry.path,
            repo_type=entry.repo_type,
            revision=entry.commit,
            endpoint=endpoint,
            cache_dir=cache_dir,
        )
    except Exception as exc:  # huggingface_hub raises its own errors, httpx's and OSError alike
        why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
        raise FetchError(entry, f"the Hugging Face Hub at {endpoint} did not give it ({why})") from exc
    if not isinstance(local, str):
        raise FetchError(entry, "huggingface_hub returned no file")
    try:
        _write_checked(entry, dest, _file_chunks(Path(local)), advance)
    except OSError as exc:
        raise FetchError(entry, f"the downloaded copy {local} cannot be read: {exc.strerror or exc}") from exc


def fetch_upstream(cache_dir: Path) -> Fetch:
    """The fetcher of upstream files: GitHub raw URLs, or the Hub (its cache in ``cache_dir``)."""

    def fetch(entry: CatalogueEntry, dest: Path, advance: Callable[[int], None]) -> None:
        if entry.host == "huggingface":
            fetch_hub(entry, dest, advance, cache_dir)
        else:
            fetch_github(entry, dest, advance)

    return fetch


def fetch_local(copy: Path) -> Fetch:
    """The fetcher from a local copy laid out like the results directory or like the entry's repository."""

    def fetch(entry: CatalogueEntry, dest: Path, advance: Callable[[int], None]) -> None:
        candidates = [p for p in dict.fromkeys((copy / entry.target, copy / entry.path)) if p.is_file()]
        if not candidates:
            raise NotInCopyError(entry, f"is not in {copy} (neither as {entry.target} nor as {entry.path})")
        problem: FetchError | None = None
        for path in candidates:
            try:
                _write_checked(entry, dest, _file_chunks(path), advance)
                return
            except FetchError as exc:
                problem = exc
            except OSError as exc:
                problem = FetchError(entry, f"{path} cannot be read: {exc.strerror or exc}")
        assert problem is not None  # there was at least one candidate
        raise FetchError(entry, f"the copy in {copy} differs ({str(problem).split(': ', 1)[1]}); another commit?")

    return fetch


# ------------------------------------------------------------------ the catalogue sync


@dataclass(frozen=True)
class CatalogueSync:
    """What a catalogue sync did."""

    results: Path
    """The results directory."""
    origin: str
    """Where the files came from: the upstream hosts, or the local copy."""
    fetched: tuple[str, ...]
    """Targets fetched, checked and moved into place."""
    present: tuple[str, ...]
    """Targets already in place with the catalogued SHA-256 (not fetched again)."""
    failures: tuple[str, ...]
    """One sentence per source that failed; its files were left as they were."""
    notes: tuple[str, ...]
    """Sources a local copy does not hold (skipped), and similar remarks."""
    fetched_bytes: int
    """Bytes of the fetched files."""

    def summary(self) -> str:
        """One line: what was synced from where into where."""
        return (
            f"synced {len(self.fetched)} files ({human_bytes(self.fetched_bytes)}) from {self.origin} into "
            f"{self.results}; {len(self.present)} already present"
            + (f"; {len(self.failures)} source(s) failed" if self.failures else "")
        )


def is_present(results: Path, entry: CatalogueEntry) -> bool:
    """True when the entry's target is a regular file with the catalogued size and SHA-256."""
    path = results / entry.target
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != entry.size:
            return False
        return tree.file_sha256(path) == entry.sha256
    except OSError:
        return False


def remove_stale_staging(results: Path) -> None:
    """Remove staging folders left by syncs whose process is gone (killed midway)."""
    for folder in results.glob(f"{STAGING_PREFIX}*"):
        m = re.fullmatch(re.escape(STAGING_PREFIX) + r"(\d+)-\w+", folder.name)
        if m and folder.is_dir() and not folder.is_symlink() and not tree.process_alive(int(m.group(1))):
            shutil.rmtree(folder, ignore_errors=True)


def _fetch_all(
    entries: Sequence[CatalogueEntry], staging: Path, fetch: Fetch, reporter: Reporter, parallel: int
) -> dict[str, FetchError]:
    """Fetch every entry into ``staging`` (``parallel`` at a time); the failures by target."""
    reporter.start(len(entries), sum(e.size for e in entries))
    errors: dict[str, FetchError] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="memeval-sync")
    try:
        futures: dict[Future[None], CatalogueEntry] = {
            pool.submit(fetch, e, staging / e.target, reporter.advance): e for e in entries
        }
        for done in as_completed(futures):
            entry = futures[done]
            try:
                done.result()
            except FetchError as exc:
                errors[entry.target] = exc
            reporter.finished(entry.target, str(errors[entry.target]) if entry.target in errors else None)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return errors


def _move_into_place(results: Path, staging: Path, entry: CatalogueEntry) -> None:
    """Replace ``results/target`` by its staged copy; never through a link that leads elsewhere."""
    dest = results / entry.target
    parent = results
    for part in Path(entry.target).parts[:-1]:
        parent = parent / part
        if parent.is_symlink():
            raise OSError(f"{parent} is a link; memeval does not write through links")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_dir() and not dest.is_symlink():
        raise OSError(f"{dest} is a folder")
    (staging / entry.target).replace(dest)


def _failure(group: Sequence[CatalogueEntry], errors: Sequence[FetchError]) -> str:
    """One sentence for a source whose files did not all arrive."""
    first = group[0]
    more = f" ({len(errors)} of its {len(group)} files failed)" if len(group) > 1 else ""
    return f"{first.source_label}: {errors[0]}{more}; its files were left as they were."


def _install(
    results: Path, staging: Path, wanted: Sequence[CatalogueEntry], errors: dict[str, FetchError], copy: Path | None
) -> tuple[list[CatalogueEntry], list[str], list[str]]:
    """Move every source whose files all arrived into place: (installed entries, failures, notes)."""
    installed: list[CatalogueEntry] = []
    failures: list[str] = []
    notes: list[str] = []
    for group in by_source(wanted).values():
        bad = [errors[e.target] for e in group if e.target in errors]
        if copy is not None and bad and all(isinstance(b, NotInCopyError) for b in bad) and len(bad) == len(group):
            notes.append(f"{group[0].source_label}: not in {copy}; skipped its {len(group)} file(s).")
            continue
        if bad:
            failures.append(_failure(group, bad))
            continue
        moved = 0
        try:
            for e in group:
                _move_into_place(results, staging, e)
                installed.append(e)
                moved += 1
        except OSError as exc:
            failures.append(
                f"{group[0].source_label}: {group[moved].target} could not be moved into place ({exc}); "
                f"{moved} of its {len(group)} files were replaced, run sync again to finish."
            )
    return installed, failures, notes


def sync_catalogue(
    results: Path,
    *,
    catalogue: Catalogue | None = None,
    kinds: Iterable[str] | None = None,
    from_dir: Path | None = None,
    reporter: Reporter | None = None,
    parallel: int = PARALLEL,
) -> CatalogueSync:
    """Fetch the catalogue's entries (of ``kinds``) that ``results`` lacks, check them, move them into place.

    Raises :class:`SyncError` only when nothing can be tried (no entries, no such ``from_dir``, results not
    writable, a local copy holding none of the files); a source that fails is a sentence in ``failures``.
    """
    cat = default_catalogue() if catalogue is None else catalogue
    chosen = None if kinds is None else tuple(kinds)
    entries = cat.select(chosen)
    if not entries:
        raise SyncError(f"the catalogue lists no files of kind {', '.join(chosen or ('any',))}")
    if from_dir is not None and not from_dir.is_dir():
        raise SyncError(f"{from_dir} is not a folder; point --from at a copy laid out like ../shared/data")
    try:
        results.mkdir(parents=True, exist_ok=True)
        remove_stale_staging(results)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=results))
    except OSError as exc:
        raise SyncError(f"cannot write into the results directory {results}: {exc.strerror or exc}") from exc
    present = {e.target for e in entries if is_present(results, e)}
    wanted = [e for e in entries if e.target not in present]
    try:
        fetch = fetch_local(from_dir) if from_dir is not None else fetch_upstream(staging / ".hub-cache")
        errors = _fetch_all(wanted, staging, fetch, reporter or Reporter(), parallel)
        installed, failures, notes = _install(results, staging, wanted, errors, from_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if from_dir is not None and wanted and not installed and not failures and not present:
        raise SyncError(f"{from_dir} holds none of the catalogue's files (as in ../shared/data or a repository)")
    return CatalogueSync(
        results=results,
        origin=str(from_dir) if from_dir is not None else "the catalogue's pinned upstream commits",
        fetched=tuple(e.target for e in installed),
        present=tuple(e.target for e in entries if e.target in present),
        failures=tuple(failures),
        notes=tuple(notes),
        fetched_bytes=sum(e.size for e in installed),
    )


def listing(results: Path, catalogue: Catalogue | None = None, kinds: Iterable[str] | None = None) -> list[str]:
    """What a sync would fetch: one line per file (status, size, licence, source, target), then totals."""
    cat = default_catalogue() if catalogue is None else catalogue
    entries = cat.select(kinds)
    lines = [f"{'status':<8} {'size':>9}  {'licence':<13} {'source':<52} target"]
    to_fetch: list[CatalogueEntry] = []
    for e in entries:
        here = is_present(results, e)
        if not here:
            to_fetch.append(e)
        status = "present" if here else "fetch"
        lines.append(f"{status:<8} {human_bytes(e.size):>9}  {e.licence:<13} {e.source_label:<52} {e.target}")
    by_licence: dict[str, list[int]] = {}
    for e in to_fetch:
        by_licence.setdefault(e.licence, []).append(e.size)
    parts = [f"{lic} {len(s)} files ({human_bytes(sum(s))})" for lic, s in sorted(by_licence.items())]
    lines.append(
        f"{len(entries)} files ({human_bytes(sum(e.size for e in entries))}) in the catalogue; "
        f"to fetch: {len(to_fetch)} files ({human_bytes(sum(e.size for e in to_fetch))})"
        + (f": {', '.join(parts)}" if parts else "")
    )
    return lines


def has_results(results: Path) -> bool:
    """True when the results directory holds at least one JSON file outside hidden folders (staging, caches)."""
    return results.is_dir() and bool(tree.walk(results, (".json",)).files)


# ------------------------------------------------------------------ sync --check


@dataclass(frozen=True)
class NewerCommit:
    """A commit after the pinned one that touches catalogued paths."""

    sha: str
    """Its hash."""
    date: str
    """Its committer date (ISO 8601)."""
    message: str
    """The first line of its message."""
    paths: tuple[str, ...]
    """The catalogued paths it touches."""


@dataclass(frozen=True)
class SourceCheck:
    """How one source's pin compares with its repository's default branch."""

    label: str
    """``owner/name@abc1234``."""
    branch: str | None = None
    """The default branch."""
    head: str | None = None
    """The branch's head commit."""
    ahead: int = 0
    """Commits on the branch after the pin."""
    newer: tuple[NewerCommit, ...] = ()
    """Those that touch catalogued paths, newest first."""
    error: str | None = None
    """Why the source could not be checked."""
    skipped: str | None = None
    """Why the source is not checked (a pinned Hugging Face revision)."""

    def lines(self) -> list[str]:
        """What ``sync --check`` prints about the source."""
        if self.error is not None or self.skipped is not None:
            return [f"{self.label}: not checked: {self.error or self.skipped}"]
        head = (self.head or "")[:7]
        if not self.newer:
            return [f"{self.label}: no newer commit touches its catalogued files ({self.branch} is at {head})."]
        out = [
            f"{self.label}: {len(self.newer)} newer commit(s) on {self.branch} (at {head}, {self.ahead} after the pin)"
            " touch catalogued files:"
        ]
        out += [f"  {c.sha[:7]} {c.date[:10]} {c.message} — {', '.join(c.paths)}" for c in self.newer]
        return out


def _api_json(url: str, params: dict[str, str] | None = None) -> Any:
    try:
        resp = _session().get(url, params=params, timeout=TIMEOUT_S, headers={"Accept": "application/vnd.github+json"})
    except requests.RequestException as exc:
        raise SyncError(f"cannot reach {url}: {_why(exc)}") from exc
    if resp.status_code != 200:
        remaining = resp.headers.get("X-RateLimit-Remaining")
        hint = "; GitHub's API rate limit is used up, try again in an hour" if remaining == "0" else ""
        raise SyncError(f"{url} answered HTTP {resp.status_code}{hint}")
    try:
        return resp.json()
    except ValueError as exc:
        raise SyncError(f"{url} did not answer JSON") from exc


def _check_github(repo: str, commit: str, paths: Sequence[str]) -> SourceCheck:
    """Compare one pin with the default branch: newer commits, and those touching ``paths`` (since the pin)."""
    api = f"{settings.github_api()}/repos/{repo}"
    label = f"{repo}@{commit[:7]}"
    branch = str(_api_json(api)["default_branch"])
    head = str(_api_json(f"{api}/commits/{quote(branch, safe='')}")["sha"])
    if head == commit:
        return SourceCheck(label, branch, head)
    compare = _api_json(f"{api}/compare/{commit}...{head}")
    newer_shas = {str(c["sha"]) for c in compare.get("commits", [])}
    complete = int(compare.get("total_commits", 0)) <= len(newer_shas)
    files = compare.get("files", [])
    changed = {str(f.get(k)) for f in files for k in ("filename", "previous_filename") if f.get(k)}
    asked = [p for p in paths if p in changed] if complete and len(files) < 300 else list(paths)
    since = str(_api_json(f"{api}/commits/{commit}")["commit"]["committer"]["date"])
    touching: dict[str, tuple[str, str, list[str]]] = {}
    for path in asked:
        for c in _api_json(f"{api}/commits", {"sha": branch, "path": path, "since": since, "per_page": "100"}):
            sha = str(c["sha"])
            if sha == commit or (complete and sha not in newer_shas):
                continue
            info = c["commit"]
            found = touching.setdefault(sha, (str(info["committer"]["date"]), str(info["message"]).split("\n")[0], []))
            found[2].append(path)
    newer = sorted((NewerCommit(s, d, m, tuple(p)) for s, (d, m, p) in touching.items()), key=lambda c: c.date)
    return SourceCheck(label, branch, head, int(compare.get("ahead_by", len(newer_shas))), tuple(reversed(newer)))


def check_upstream(catalogue: Catalogue | None = None, kinds: Iterable[str] | None = None) -> list[SourceCheck]:
    """For each GitHub source of the catalogue: its default branch's head, and newer commits touching its files."""
    cat = default_catalogue() if catalogue is None else catalogue
    out = []
    for (host, repo, commit), group in by_source(cat.select(kinds)).items():
        if host != "github":
            out.append(
                SourceCheck(group[0].source_label, skipped="--check reads GitHub only; Hub revisions stay pinned")
            )
            continue
        try:
            out.append(_check_github(repo, commit, [e.path for e in group]))
        except (SyncError, KeyError, TypeError, ValueError) as exc:
            out.append(SourceCheck(group[0].source_label, error=str(exc) or type(exc).__name__))
    return out
