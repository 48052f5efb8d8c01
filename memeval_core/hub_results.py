"""Results that live in a Hugging Face dataset: ``hf://datasets/OWNER/NAME[@REVISION]`` as a results root.

Layout of such a dataset (``memeval-manifest.json`` at the top, :class:`Manifest`):

- ``parts/<id>/``: one folder per push, a snapshot of the runs that push added, in the export's format
  (:mod:`memeval_core.pmb.snapshot`: ``pmb-runs.parquet``, ``pmb-cases.parquet``, ``pmb-fixture.json``,
  ``pmb-runs.json``; :mod:`memeval_core.qa.snapshot`: ``qa-load.json``, ``qa-runs.jsonl``,
  ``qa-questions.parquet``). A part is never rewritten; its id is derived from its run ids.
- ``memeval-manifest.json``: the layout version, the scoring code, and per part its folder, run counts and
  files (layout 1 listed every run id; it is read as layout 2).
- ``memeval-front.json``: the home page, the top of every board over all runs
  (:mod:`memeval_core.explore.front`), written by every push.

The app's first page (:func:`open_front`) reads the manifest and the stored home page: bytes that grow with the
number of pushes (the manifest's parts), not of runs. Reading the runs (:func:`open_dataset`) resolves the
revision to a commit with one request (none when the revision is a commit id), reads the manifest and each
part's headers (runs table, fixture, QA run lines), and fetches a part's cases or questions only when a page
asks for one of its runs. Files are fetched with ``hf_hub_download`` at the resolved commit, so they land in the
Hugging Face cache keyed by commit: a second start on an unchanged revision sends one metadata request and
downloads nothing, and after a push only the new parts' files are fetched (:meth:`_Fetcher.for_part`: the parts
already cached at an earlier commit, with the SHA-256s the manifest lists, are read there). (``HfFileSystem``
would read byte ranges, but it keeps no cache across starts.) Credentials come from the environment
(``HF_TOKEN`` or the saved login), never from the URL. An export reads every part whole instead
(:func:`read_dataset`), through the same cache, each file checked against the SHA-256 the manifest lists for it.

Contributing (:func:`push_runs`): the runs of a local results folder that the dataset does not hold yet (by
the run ids in its parts' headers) become one new part plus an updated manifest and home page, in one commit
whose parent is the commit the manifest was read at. When another push landed in between, the Hub refuses it
(412), and the push starts again from the new head."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal, ParamSpec, TypeVar

import httpx2
import pyarrow as pa
from huggingface_hub import (
    CommitOperationAdd,
    HfApi,
    constants,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
    try_to_load_from_cache,
)
from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.file_download import repo_folder_name  # the cache's documented folder name
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memeval_core import SCORING_VERSION, tree
from memeval_core.errors import first_problem
from memeval_core.explore.front import (
    FRONT_FILE,
    FrontError,
    FrontPage,
    OpenedFront,
    front_bytes,
    front_page,
    parse_front,
)
from memeval_core.export.hub import explain
from memeval_core.hub_location import HubLocation, HubResultsError, parse_location
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.ingest import PmbLoad
from memeval_core.pmb.run import PmbRun
from memeval_core.pmb.snapshot import (
    CASES_FILE,
    FIXTURE_FILE,
    RUNS_FILE,
    RUNS_TABLE_FILE,
    PmbHeaders,
    has_current_runs_table,
    headers_of,
    open_snapshot,
    read_snapshot,
)
from memeval_core.pmb.snapshot import write_snapshot as write_pmb_snapshot
from memeval_core.qa.ingest import LoadedRun, QaLoad
from memeval_core.qa.snapshot import (
    LOAD_FILE,
    QUESTIONS_FILE,
    QaHeaders,
    open_qa_snapshot,
    read_qa_snapshot,
    write_qa_snapshot,
)
from memeval_core.qa.snapshot import RUNS_FILE as QA_RUNS_FILE
from memeval_core.settings import hub_endpoint

MANIFEST = "memeval-manifest.json"
"""The manifest's path in the dataset."""
LAYOUT = 2
"""Layout version this code writes (it reads layout 1 too)."""
PUSH_ATTEMPTS = 5
"""Commits a push tries before it gives up (each retry starts from the new head)."""

HUB_FAILURES = (HfHubHTTPError, EntryNotFoundError, RepositoryNotFoundError, OSError, httpx2.TransportError)
"""What a call to the Hub raises when the Hub or the network fails (each becomes one sentence)."""
P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R", PmbRun, LoadedRun)
_PMB_HEADER_FILES = (RUNS_TABLE_FILE, FIXTURE_FILE)
_QA_HEADER_FILES = (LOAD_FILE, QA_RUNS_FILE)
_PMB_FILES = (FIXTURE_FILE, RUNS_FILE, CASES_FILE)
"""What :func:`memeval_core.pmb.snapshot.read_snapshot` reads of a part."""
_QA_FILES = (LOAD_FILE, QA_RUNS_FILE, QUESTIONS_FILE)
"""What :func:`memeval_core.qa.snapshot.read_qa_snapshot` reads of a part."""


class Part(BaseModel):
    """One push's runs: a snapshot folder in the dataset."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(pattern=r"^parts/[0-9a-f]{16}$")
    """The folder, ``parts/<id>``; the id is the first 16 hex digits of the SHA-256 of its sorted run ids."""
    pmb_runs: int = Field(0, ge=0, strict=True)
    """How many PMB runs the part holds (their ids are in its runs table; reading checks the count)."""
    qa_runs: int = Field(0, ge=0, strict=True)
    """How many QA runs the part holds (their ids are in its QA run lines; reading checks the count)."""
    files: dict[str, str]
    """File name in the folder -> SHA-256 of its bytes."""

    @model_validator(mode="after")
    def _counts_match_files(self) -> Part:
        """A part counts PMB runs exactly when it lists PMB files, and QA runs exactly when it lists QA files."""
        for field, count, name in (("pmb_runs", self.pmb_runs, FIXTURE_FILE), ("qa_runs", self.qa_runs, QA_RUNS_FILE)):
            if (count > 0) != (name in self.files):
                raise ValueError(
                    f"{field} is {count} but the part {'lists' if name in self.files else 'has no'} {name}"
                )
        return self


class Manifest(BaseModel):
    """``memeval-manifest.json``: what the dataset holds, part by part, in the order they were pushed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Literal[2]
    """Layout version (:data:`LAYOUT`)."""
    scoring_version: str
    """The scoring code the parts were scored with; another one is refused (push the runs again)."""
    fixture_sha256: dict[str, str] = {}
    """SHA-256 of each PMB fixture file every PMB part was scored against; empty before the first PMB push."""
    parts: tuple[Part, ...] = ()
    """Every part, oldest first."""
    front_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    """SHA-256 of ``memeval-front.json``; None when no push of this layout wrote one (the first page then reads
    every part's headers)."""

    @model_validator(mode="before")
    @classmethod
    def _from_layout_1(cls, data: object) -> object:
        """Layout 1 listed every run id of every part, so the manifest grew with the runs; layout 2 counts them
        (the ids are in the parts' headers) and names the stored home page."""
        if not isinstance(data, dict) or data.get("layout") != 1:
            return data
        if "front_sha256" in data:
            raise ValueError("layout 1 has no front_sha256")
        parts = data.get("parts", [])
        if isinstance(parts, list):
            parts = [_counted(p) for p in parts]
        return {**data, "layout": 2, "parts": parts}

    @model_validator(mode="after")
    def _parts_once(self) -> Manifest:
        """Each part is listed once."""
        twice = sorted(path for path, n in Counter(p.path for p in self.parts).items() if n > 1)
        if twice:
            raise ValueError(f"parts: {', '.join(twice)} is listed twice")
        return self


def _counted(part: object) -> object:
    """A layout-1 part with its lists of run ids as counts (anything else is left for validation to refuse)."""
    if not isinstance(part, dict):
        return part
    ids = {k: v for k, v in part.items() if k in ("pmb_runs", "qa_runs")}
    if all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in ids.values()):
        return {**part, **{k: len(v) for k, v in ids.items()}}
    return part


def empty_manifest() -> Manifest:
    """The manifest of a dataset no push has written to yet."""
    return Manifest(layout=LAYOUT, scoring_version=SCORING_VERSION)


def parse_manifest(data: bytes, where: str) -> Manifest:
    """The manifest in ``data``; ``HubResultsError`` naming ``where`` and the field when it is malformed."""
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HubResultsError(f"{where}: not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise HubResultsError(f"{where}: nested too deeply to be a manifest") from exc
    layout = doc.get("layout") if isinstance(doc, dict) else None
    if isinstance(doc, dict) and not (type(layout) is int and layout in (1, LAYOUT)):
        raise HubResultsError(f"{where}: layout {layout!r} is not one this memeval reads (1, {LAYOUT})")
    try:
        manifest = Manifest.model_validate(doc)
    except ValidationError as exc:
        raise HubResultsError(f"{where}: {first_problem(exc)}") from exc
    if manifest.scoring_version != SCORING_VERSION:
        raise HubResultsError(
            f"{where}: scored with scoring version {manifest.scoring_version}, this memeval scores with "
            f"{SCORING_VERSION}: push the runs again with this version"
        )
    return manifest


def manifest_bytes(manifest: Manifest) -> bytes:
    """The manifest as written: sorted keys, two-space indent, one trailing newline."""
    return (json.dumps(manifest.model_dump(mode="json"), sort_keys=True, indent=2) + "\n").encode()


# ------------------------------------------------------------------ reading


def _one_sentence(exc: BaseException, location: HubLocation) -> HubResultsError:
    return HubResultsError(explain(exc, location.repo_id, "dataset", hub_endpoint(), "read"))


@dataclass(frozen=True)
class _Fetcher:
    """Downloads files of one dataset at one commit into the Hugging Face cache (no request once cached)."""

    location: HubLocation
    commit: str
    token: str | None
    cache_dir: Path | None
    seen: dict[str, bool] = dataclasses.field(default_factory=dict, compare=False)
    """Commits asked about by :meth:`still_on_hub` (shared by the fetchers of one open)."""

    def __call__(self, path: str) -> Path:
        try:
            local = hf_hub_download(
                self.location.repo_id, path, repo_type="dataset", revision=self.commit, token=self.token,
                endpoint=hub_endpoint(), cache_dir=self.cache_dir,
            )  # fmt: skip
        except HUB_FAILURES as exc:
            raise _one_sentence(exc, self.location) from exc
        return Path(str(local))

    def cached_digest(self, path: str) -> str | None:
        """SHA-256 of the file at ``path`` as the cache holds it at this commit; None when it is not cached."""
        local = try_to_load_from_cache(
            self.location.repo_id, path, cache_dir=self.cache_dir, revision=self.commit, repo_type="dataset"
        )
        return tree.file_sha256(Path(local)) if isinstance(local, str) else None

    def cached_commits(self) -> list[str]:
        """Other commits of this dataset the cache holds files of, the most recently read first."""
        cache = self.cache_dir if self.cache_dir is not None else Path(constants.HF_HUB_CACHE)
        snapshots = Path(cache) / repo_folder_name(repo_id=self.location.repo_id, repo_type="dataset") / "snapshots"
        if not snapshots.is_dir():
            return []
        found = [p for p in snapshots.iterdir() if p.name != self.commit and re.fullmatch(r"[0-9a-f]{40}", p.name)]
        return [p.name for p in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)]

    def for_part(self, part: Part, names: Sequence[str]) -> _Fetcher:
        """The fetcher to read ``part`` with: at this commit when the cache holds its files ``names`` here;
        else at a commit this machine read it at before, when the cache holds them there with the SHA-256s the
        manifest lists (and any other file of the part it holds there matches too) and the Hub still has
        that commit; else at this commit. A part is never rewritten, so a new revision costs no download
        for the parts already read, and one metadata request per earlier commit used."""
        if all(self.cached_digest(f"{part.path}/{n}") is not None for n in names):
            return self
        for commit in self.cached_commits():
            earlier = dataclasses.replace(self, commit=commit)
            if earlier.holds(part, names) and earlier.still_on_hub():
                return earlier
        return self

    def holds(self, part: Part, names: Sequence[str]) -> bool:
        """The cache holds ``names`` of ``part`` at this commit, and every file of the part it holds here,
        with the SHA-256s the manifest lists."""
        if any(n not in part.files for n in names):
            return False
        digests = {n: self.cached_digest(f"{part.path}/{n}") for n in part.files}
        return all(digests[n] is not None for n in names) and all(
            d is None or d == part.files[n] for n, d in digests.items()
        )

    def still_on_hub(self) -> bool:
        """The Hub still has this commit (one metadata request, once per commit and open): a commit a
        force-push or a squash removed is not read from, though the cache holds it."""
        if self.commit not in self.seen:
            url = hf_hub_url(self.location.repo_id, MANIFEST, repo_type="dataset", revision=self.commit,
                             endpoint=hub_endpoint())  # fmt: skip
            try:
                get_hf_file_metadata(url, token=self.token, endpoint=hub_endpoint())
                self.seen[self.commit] = True
            except HUB_FAILURES:
                self.seen[self.commit] = False
        return self.seen[self.commit]


def resolve_commit(location: HubLocation, token: str | None = None) -> str:
    """The commit ``location``'s revision points at now: one metadata request, none for a commit id."""
    if location.revision is not None and re.fullmatch(r"[0-9a-f]{40}", location.revision):
        return location.revision
    url = hf_hub_url(location.repo_id, MANIFEST, repo_type="dataset", revision=location.revision,
                     endpoint=hub_endpoint())  # fmt: skip
    try:
        meta = get_hf_file_metadata(url, token=token, endpoint=hub_endpoint())
    except EntryNotFoundError as exc:
        raise HubResultsError(
            f"{location} holds no {MANIFEST}: add runs to it with `python -m memeval_core push --dataset "
            f"{location.repo_id}`"
        ) from exc
    except HUB_FAILURES as exc:
        raise _one_sentence(exc, location) from exc
    if meta.commit_hash is None:
        raise HubResultsError(f"{location}: the Hub named no commit for the revision; try again")
    return meta.commit_hash


@dataclass(frozen=True)
class OpenedDataset:
    """A results dataset opened at one commit: every run's header, whole runs fetched on request."""

    location: HubLocation
    """What was opened."""
    commit: str
    """The commit it was read at."""
    manifest: Manifest
    """Its manifest."""
    pmb: PmbHeaders
    """PMB runs of every part, in push order."""
    qa: QaHeaders
    """QA runs of every part, in push order."""


def open_dataset(location: HubLocation, *, token: str | None = None, cache_dir: Path | None = None) -> OpenedDataset:
    """Open a results dataset: the manifest and every part's headers; cases and questions when a run is read."""
    commit = resolve_commit(location, token)
    fetch = _Fetcher(location, commit, token, cache_dir)
    manifest = parse_manifest(fetch(MANIFEST).read_bytes(), f"{location}/{MANIFEST}")
    return OpenedDataset(location, commit, manifest, *_open_parts(fetch, manifest, str(location)))


def _open_parts(fetch: _Fetcher, manifest: Manifest, where: str) -> tuple[PmbHeaders, QaHeaders]:
    """Every part's headers, combined; ``HubResultsError`` when two parts hold the same run."""
    pmb = _combined_pmb([_open_pmb_part(fetch, p) for p in manifest.parts if p.pmb_runs], where)
    qa = _combined_qa([_open_qa_part(fetch, p) for p in manifest.parts if p.qa_runs])
    _one_part_per_run([*pmb.table.column("run_id").to_pylist(), *(h.run_id for h in qa.runs)], where)
    return pmb, qa


def _one_part_per_run(run_ids: Sequence[str], where: str) -> None:
    if len(run_ids) != len(set(run_ids)):
        raise HubResultsError(f"{where}: a run id is held by two parts")


def open_front(location: HubLocation, *, token: str | None = None, cache_dir: Path | None = None) -> OpenedFront | None:
    """The dataset's stored home page: the manifest and ``memeval-front.json``, nothing else (a second start on an
    unchanged revision costs one metadata request). None when there is no usable one (:func:`usable_front`):
    then the first page reads every part's headers (:func:`open_dataset`), which is slower but as right."""
    commit = resolve_commit(location, token)
    fetch = _Fetcher(location, commit, token, cache_dir)
    manifest = parse_manifest(fetch(MANIFEST).read_bytes(), f"{location}/{MANIFEST}")
    if manifest.front_sha256 is None:
        return None
    try:
        data = fetch(FRONT_FILE).read_bytes()
    except HubResultsError as exc:
        if isinstance(exc.__cause__, EntryNotFoundError):  # named by the manifest, gone from the dataset
            return None
        raise
    front = usable_front(data, manifest, f"{HubLocation(location.repo_id, commit)}")
    return None if front is None else OpenedFront(commit, front)


def usable_front(data: bytes, manifest: Manifest, where: str) -> FrontPage | None:
    """The stored home page in ``data`` when it is the one ``manifest`` names (its SHA-256), was computed over the
    manifest's parts, and reads as this memeval's format and scoring version; None otherwise (a file written by
    another memeval, a manifest edited by hand, a damaged file)."""
    if hashlib.sha256(data).hexdigest() != manifest.front_sha256:
        return None
    try:
        front = parse_front(data, f"{where}/{FRONT_FILE}")
    except FrontError:
        return None
    return front if front.parts_sha256 == parts_digest(manifest.parts) else None


def parts_digest(parts: Sequence[Part]) -> str:
    """SHA-256 of a manifest's parts (folders, run counts, files' digests) in order: what a stored home page was
    computed over."""
    text = json.dumps([p.model_dump(mode="json") for p in parts], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _fetched_first(fetch: Callable[[], Path], read: Callable[P, T]) -> Callable[P, T]:
    """``read``, after ``fetch`` has brought the file it needs into the cache."""

    def reader(*args: P.args, **kwargs: P.kwargs) -> T:
        fetch()
        return read(*args, **kwargs)

    return reader


def _open_pmb_part(fetch: _Fetcher, part: Part) -> PmbHeaders:
    fetch = fetch.for_part(part, _PMB_HEADER_FILES)
    fetched = [fetch(f"{part.path}/{name}") for name in _PMB_HEADER_FILES]
    folder = fetched[0].parent
    if not has_current_runs_table(folder):  # another layout: the part is read whole
        for name in (RUNS_FILE, CASES_FILE):
            fetch(f"{part.path}/{name}")
    opened = _readable(fetch, part, folder, open_snapshot)
    _counts_agree(fetch, part, "pmb_runs", opened.table.num_rows)
    cases = partial(fetch, f"{part.path}/{CASES_FILE}")
    return dataclasses.replace(
        opened,
        read_runs=_fetched_first(cases, opened.read_runs),
        read_cases=_fetched_first(cases, opened.read_cases),
        read_case=_fetched_first(cases, opened.read_case),
    )


def _open_qa_part(fetch: _Fetcher, part: Part) -> QaHeaders:
    fetch = fetch.for_part(part, _QA_HEADER_FILES)
    fetched = [fetch(f"{part.path}/{name}") for name in _QA_HEADER_FILES]
    folder = fetched[0].parent
    opened = _readable(fetch, part, folder, open_qa_snapshot)
    _counts_agree(fetch, part, "qa_runs", len(opened.runs))
    questions = partial(fetch, f"{part.path}/{QUESTIONS_FILE}")
    return dataclasses.replace(opened, read_runs=_fetched_first(questions, opened.read_runs))


def _readable(fetch: _Fetcher, part: Part, folder: Path, read: Callable[[Path], T]) -> T:
    """``read(folder)``; ``HubResultsError`` naming the part when its files are not a snapshot this memeval reads."""
    try:
        return read(folder)
    except (ValueError, OSError, KeyError, TypeError, RecursionError, pa.ArrowException) as exc:
        reason = str(exc).replace(str(folder), part.path)  # the cache's local path says nothing to the reader
        where = HubLocation(fetch.location.repo_id, fetch.commit)
        raise HubResultsError(f"{where}: {part.path} is not a snapshot this memeval reads ({reason})") from exc


def _counts_agree(fetch: _Fetcher, part: Part, field: Literal["pmb_runs", "qa_runs"], held: int) -> None:
    """``HubResultsError`` when the part holds another number of runs than its manifest entry says."""
    if getattr(part, field) != held:
        where = HubLocation(fetch.location.repo_id, fetch.commit)
        raise HubResultsError(
            f"{where}/{MANIFEST}: field {field} of {part.path} says {getattr(part, field)}, the part holds {held}"
        )


def _owners(
    parts: Sequence[tuple[list[str], Callable[[Sequence[str]], tuple[R, ...]]]],
) -> Callable[[Sequence[str]], tuple[R, ...]]:
    """One reader over several parts' readers: each id read from the part that holds it, in the order asked."""
    owner = {run_id: n for n, (ids, _) in enumerate(parts) for run_id in ids}

    def read(run_ids: Sequence[str]) -> tuple[R, ...]:
        wanted: dict[int, list[str]] = {}
        for run_id in run_ids:
            wanted.setdefault(owner[run_id], []).append(run_id)
        got = {run_id: run for n, ids in wanted.items() for run_id, run in zip(ids, parts[n][1](ids), strict=True)}
        return tuple(got[run_id] for run_id in run_ids)

    return read


def _combined_pmb(parts: Sequence[PmbHeaders], where: str) -> PmbHeaders:
    """The PMB runs of several parts as one (all parts must share the fixture)."""
    if not parts:
        return headers_of(PmbLoad((), (), None, ()))
    fixture = _one_fixture([p.fixture for p in parts], where)
    ids = [p.table.column("run_id").to_pylist() for p in parts]
    read_runs = _owners([(i, p.read_runs) for i, p in zip(ids, parts, strict=True)])
    owner = {run_id: p for i, p in zip(ids, parts, strict=True) for run_id in i}

    def read_cases(columns: Sequence[str], run_ids: Sequence[str]) -> pa.Table:
        chosen = [p for p in parts if any(owner[i] is p for i in run_ids)]
        tables = [p.read_cases(columns, [i for i in run_ids if owner[i] is p]) for p in chosen]
        return pa.concat_tables(tables) if tables else parts[0].read_cases(columns, [])

    def read_case(case_id: str, turn_index: int | None) -> pa.Table:
        return pa.concat_tables([p.read_case(case_id, turn_index) for p in parts])

    table = pa.concat_tables([p.table for p in parts])
    return PmbHeaders(table, fixture, read_runs, read_cases, read_case)


def _one_fixture(fixtures: Sequence[PmbFixture | None], where: str) -> PmbFixture | None:
    """The fixture every PMB part was scored against; ``HubResultsError`` when two parts name different ones."""
    found = [f for f in fixtures if f is not None]
    if len({json.dumps(dict(f.sha256), sort_keys=True) for f in found}) > 1:
        raise HubResultsError(f"{where}: its parts were scored against different PMB fixtures")
    return found[0] if found else None


def _combined_qa(parts: Sequence[QaHeaders]) -> QaHeaders:
    """The QA runs of several parts as one."""
    runs = tuple(h for p in parts for h in p.runs)
    read_runs = _owners([([h.run_id for h in p.runs], p.read_runs) for p in parts])
    source = next((p.locomo_source for p in parts if p.locomo_source is not None), None)
    disputed = frozenset(d for p in parts for d in p.disputed)
    return QaHeaders(runs, source, disputed, read_runs)


@dataclass(frozen=True)
class DatasetContents:
    """A results dataset read whole at one commit, cases and questions included (what an export needs)."""

    location: HubLocation
    """What was read."""
    commit: str
    """The commit it was read at."""
    manifest: Manifest
    """Its manifest."""
    pmb: PmbLoad
    """PMB runs of every part, in push order, and the fixture they were scored against."""
    qa: QaLoad
    """QA runs of every part, in push order."""
    files: dict[str, str]
    """Every file read, by its path in the dataset: the SHA-256 of its bytes (the one the manifest lists)."""
    part_runs: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]
    """Each part's folder: the ids of its PMB runs and of its QA runs."""
    cache: Path
    """The Hugging Face cache folder the files were downloaded into."""


def read_dataset(location: HubLocation, *, token: str | None = None, cache_dir: Path | None = None) -> DatasetContents:
    """Every part of a results dataset read whole, at the commit its revision names now.

    Files come through the same cache as :func:`open_dataset`'s; each must match the SHA-256 the manifest lists for
    it. ``HubResultsError`` in one sentence when the dataset cannot be read.
    """
    commit = resolve_commit(location, token)
    fetch = _Fetcher(location, commit, token, cache_dir)
    where = str(HubLocation(location.repo_id, commit))
    manifest = parse_manifest(fetch(MANIFEST).read_bytes(), f"{location}/{MANIFEST}")
    pmb_parts = [p for p in manifest.parts if p.pmb_runs]
    qa_parts = [p for p in manifest.parts if p.qa_runs]
    pmb = [_read_part(fetch, p, _PMB_FILES, read_snapshot, where) for p in pmb_parts]
    qa = [_read_part(fetch, p, _QA_FILES, read_qa_snapshot, where) for p in qa_parts]
    pmb_ids = {p.path: tuple(r.identity.run_id for r in load.runs) for p, (load, _) in zip(pmb_parts, pmb, strict=True)}
    qa_ids = {p.path: tuple(r.run_id for r in load.runs) for p, (load, _) in zip(qa_parts, qa, strict=True)}
    for p in manifest.parts:
        _counts_agree(fetch, p, "pmb_runs", len(pmb_ids.get(p.path, ())))
        _counts_agree(fetch, p, "qa_runs", len(qa_ids.get(p.path, ())))
    part_runs = {p.path: (pmb_ids.get(p.path, ()), qa_ids.get(p.path, ())) for p in manifest.parts}
    _one_part_per_run([i for ids in (*pmb_ids.values(), *qa_ids.values()) for i in ids], where)
    fixture = _one_fixture([load.fixture for load, _ in pmb], where)
    pmb_load = PmbLoad(tuple(r for load, _ in pmb for r in load.runs), (), fixture, ())
    locomo = next((load.locomo for load, _ in qa if load.locomo is not None), None)
    disputed = frozenset(d for load, _ in qa for d in load.disputed)
    qa_load = QaLoad(tuple(r for load, _ in qa for r in load.runs), (), (), locomo, disputed)
    files = {path: digest for _, digests in (*pmb, *qa) for path, digest in digests.items()}
    cache = cache_dir if cache_dir is not None else Path(constants.HF_HUB_CACHE)
    return DatasetContents(location, commit, manifest, pmb_load, qa_load, files, part_runs, cache)


def _read_part(
    fetch: _Fetcher, part: Part, names: Sequence[str], read: Callable[[Path], T], where: str
) -> tuple[T, dict[str, str]]:
    """``read`` of a part's folder once ``names`` are fetched and checked against the manifest, and their digests."""
    for name in names:
        if name not in part.files:
            raise HubResultsError(f"{where}: the manifest lists no {name} in {part.path}")
    fetch = fetch.for_part(part, names)
    fetched = [fetch(f"{part.path}/{name}") for name in names]
    digests: dict[str, str] = {}
    for name, local in zip(names, fetched, strict=True):
        try:
            digests[f"{part.path}/{name}"] = digest = tree.file_sha256(local)
        except OSError as exc:  # the cache's copy went missing or unreadable: name the file, not the cache
            raise HubResultsError(f"{where}: {part.path}/{name} could not be read from the local cache") from exc
        if digest != part.files[name]:
            raise HubResultsError(f"{where}: {part.path}/{name} differs from the SHA-256 the manifest lists for it")
    return _readable(fetch, part, fetched[0].parent, read), digests


# ------------------------------------------------------------------ pushing


@dataclass(frozen=True)
class PushOutcome:
    """What :func:`push_runs` did."""

    repo_id: str
    """The dataset."""
    status: Literal["committed", "home page stored", "unchanged"]
    """``committed``: one commit added a part; ``home page stored``: the dataset held every run but no stored home
    page (it was last pushed to by a memeval of layout 1), and one commit added it; ``unchanged``: the dataset
    already held every run and its home page."""
    pmb_runs: int
    """PMB runs added."""
    qa_runs: int
    """QA runs added."""
    part: str | None
    """The folder of the part added."""
    commit: str | None
    """The commit made."""
    attempts: int
    """Commits tried (more than one when another push landed first)."""

    def describe(self) -> str:
        """One line saying what happened."""
        if self.status == "unchanged":
            return f"Dataset {self.repo_id} already holds every run; nothing committed."
        if self.status == "home page stored":
            return f"Dataset {self.repo_id} already holds every run; committed its home page (commit {self.commit})."
        retried = f" after {self.attempts - 1} concurrent push(es)" if self.attempts > 1 else ""
        return (
            f"Committed {self.pmb_runs} PMB and {self.qa_runs} QA run(s) to dataset {self.repo_id} as "
            f"{self.part}{retried} (commit {self.commit})."
        )


def part_path(run_ids: Sequence[str]) -> str:
    """The folder of the part holding ``run_ids``: derived from them, so the same runs give the same folder."""
    return "parts/" + hashlib.sha256("\n".join(sorted(run_ids)).encode()).hexdigest()[:16]


def _write_part(folder: Path, pmb: PmbLoad, qa: QaLoad, results: Path | None) -> Part:
    """Write the snapshot of ``pmb``'s and ``qa``'s runs into ``folder`` and describe it."""
    if pmb.runs:
        write_pmb_snapshot(pmb, folder)
    if qa.runs:
        write_qa_snapshot(qa, folder, results=results)
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}
    ids = [*(r.identity.run_id for r in pmb.runs), *(r.run_id for r in qa.runs)]
    return Part(path=part_path(ids), pmb_runs=len(pmb.runs), qa_runs=len(qa.runs), files=files)


def _manifest_at(api: HfApi, repo_id: str, commit: str, token: str | None) -> Manifest:
    """The manifest at ``commit``; empty when the dataset has none yet."""
    with tempfile.TemporaryDirectory(prefix="memeval-hub-") as cache:
        try:
            local = hf_hub_download(repo_id, MANIFEST, repo_type="dataset", revision=commit, token=token,
                                    endpoint=hub_endpoint(), cache_dir=cache)  # fmt: skip
        except EntryNotFoundError:
            return empty_manifest()
        return parse_manifest(Path(str(local)).read_bytes(), f"hf://datasets/{repo_id}@{commit}/{MANIFEST}")


Held = tuple[PmbHeaders, QaHeaders]
"""The headers of every run a dataset holds at one commit."""


def _new_runs(pmb: PmbLoad, qa: QaLoad, held: Held, manifest: Manifest) -> tuple[PmbLoad, QaLoad]:
    known = {*held[0].table.column("run_id").to_pylist(), *(h.run_id for h in held[1].runs)}
    new_pmb = tuple(r for r in pmb.runs if r.identity.run_id not in known)
    new_qa = tuple(r for r in qa.runs if r.run_id not in known)
    if new_pmb and pmb.fixture is not None and manifest.fixture_sha256 not in ({}, dict(pmb.fixture.sha256)):
        raise HubResultsError("the dataset's PMB runs were scored against another fixture than these runs")
    return dataclasses.replace(pmb, runs=new_pmb), dataclasses.replace(qa, runs=new_qa)


def _held_at(repo_id: str, head: str, manifest: Manifest, token: str | None) -> Held:
    """The headers of every run the dataset holds at ``head`` (through the Hugging Face cache)."""
    location = HubLocation(repo_id, head)
    return _open_parts(_Fetcher(location, head, token, None), manifest, str(location))


def push_runs(
    pmb: PmbLoad,
    qa: QaLoad,
    repo_id: str,
    *,
    token: str | None,
    private: bool = False,
    results: Path | None = None,
    attempts: int = PUSH_ATTEMPTS,
) -> PushOutcome:
    """Add the runs of ``pmb`` and ``qa`` that the dataset does not hold as one new part, in one commit.

    The commit's parent is the commit the manifest was read at: when another push landed in between, the Hub
    refuses it and this push starts again from the new head (up to ``attempts`` commits). Runs the dataset
    already holds (by the ids in its parts' headers) are left out, so pushing the same runs twice commits
    nothing the second time. The commit also rewrites the stored home page (:mod:`memeval_core.explore.front`),
    computed over every run the dataset holds with this push. A dataset that holds every run but no stored home
    page (last pushed to by a memeval of layout 1) gets one, in a commit of its own.
    """
    parse_location(f"hf://datasets/{repo_id}")
    api = HfApi(endpoint=hub_endpoint(), token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
        for attempt in range(1, attempts + 1):
            outcome = _push_once(api, repo_id, pmb, qa, token, results, attempt)
            if outcome is not None:
                return outcome
    except HUB_FAILURES as exc:
        raise HubResultsError(explain(exc, repo_id, "dataset", hub_endpoint())) from exc
    raise HubResultsError(
        f"dataset {repo_id} changed {attempts} times while pushing; nothing was committed: push again"
    )


def _push_once(
    api: HfApi, repo_id: str, pmb: PmbLoad, qa: QaLoad, token: str | None, results: Path | None, attempt: int
) -> PushOutcome | None:
    """Attempt ``attempt`` of :func:`push_runs`, on the dataset's head now; None when another push landed first."""
    head = api.repo_info(repo_id, repo_type="dataset").sha
    if head is None:
        raise HubResultsError(f"dataset {repo_id}: the Hub named no head commit; try again")
    manifest = _manifest_at(api, repo_id, head, token)
    held = _held_at(repo_id, head, manifest, token)
    new_pmb, new_qa = _new_runs(pmb, qa, held, manifest)
    if new_pmb.runs or new_qa.runs:
        landed = _commit_part(api, repo_id, head, manifest, held, new_pmb, new_qa, results)
        if landed is None:
            return None
        commit, part = landed
        counts = (len(new_pmb.runs), len(new_qa.runs))
        return PushOutcome(repo_id, "committed", *counts, part, commit, attempt)
    if manifest.front_sha256 is not None or not manifest.parts:
        return PushOutcome(repo_id, "unchanged", 0, 0, None, None, attempt)
    stored = _commit_front(api, repo_id, head, manifest, held)
    return None if stored is None else PushOutcome(repo_id, "home page stored", 0, 0, None, stored, attempt)


def _with_part(held: Held, folder: Path, where: str) -> Held:
    """The runs ``held`` and those of the new part written in ``folder``, as the app will read them after the push
    (the new part's headers are read back from its files)."""
    pmb = [held[0]] if held[0].table.num_rows else []
    if (folder / RUNS_TABLE_FILE).is_file():
        pmb.append(open_snapshot(folder))
    qa = [held[1]]
    if (folder / QA_RUNS_FILE).is_file():
        qa.append(open_qa_snapshot(folder))
    return _combined_pmb(pmb, where), _combined_qa(qa)


def _front_of(runs: Held, parts: Sequence[Part], where: str) -> bytes:
    """The stored home page of ``runs`` (those of the manifest's ``parts``), as written and checked."""
    all_pmb, all_qa = runs
    try:
        front = front_page(all_pmb.table, all_pmb.fixture, all_qa.runs, all_qa.locomo_source, parts_digest(parts))
        written = front_bytes(front)
        parse_front(written, FRONT_FILE)  # what the app will read, read back as strictly as the app reads it
    except ValidationError as exc:  # a value outside the stored page's bounds: name it, commit nothing
        raise HubResultsError(f"{where}: the home page of these runs cannot be stored ({first_problem(exc)})") from exc
    except FrontError as exc:
        raise HubResultsError(f"{where}: the home page of these runs cannot be stored ({exc})") from exc
    return written


def _commit_part(
    api: HfApi, repo_id: str, head: str, manifest: Manifest, held: Held, pmb: PmbLoad, qa: QaLoad, results: Path | None
) -> tuple[str, str] | None:
    """Commit a new part, the home page and the manifest listing both on top of ``head``: (commit, the part's
    path); None when ``head`` is no longer the head."""
    with tempfile.TemporaryDirectory(prefix="memeval-part-") as tmp:
        part = _write_part(Path(tmp), pmb, qa, results)
        where = f"hf://datasets/{repo_id}"
        front = _front_of(_with_part(held, Path(tmp), where), (*manifest.parts, part), where)
        fixture = dict(pmb.fixture.sha256) if pmb.runs and pmb.fixture is not None else manifest.fixture_sha256
        updated = manifest.model_copy(
            update={
                "parts": (*manifest.parts, part),
                "fixture_sha256": fixture,
                "front_sha256": hashlib.sha256(front).hexdigest(),
            }
        )
        ops = [CommitOperationAdd(f"{part.path}/{name}", str(Path(tmp) / name)) for name in sorted(part.files)]
        ops.append(CommitOperationAdd(FRONT_FILE, front))
        ops.append(CommitOperationAdd(MANIFEST, manifest_bytes(updated)))
        message = f"Add {len(pmb.runs)} PMB and {len(qa.runs)} QA run(s) as {part.path}"
        commit = _commit_on(api, repo_id, head, ops, message)
        return None if commit is None else (commit, part.path)


def _commit_front(api: HfApi, repo_id: str, head: str, manifest: Manifest, held: Held) -> str | None:
    """Commit the stored home page of the runs ``held`` and the manifest naming it on top of ``head``; None when
    ``head`` is no longer the head."""
    front = _front_of(held, manifest.parts, f"hf://datasets/{repo_id}")
    updated = manifest.model_copy(update={"front_sha256": hashlib.sha256(front).hexdigest()})
    ops = [CommitOperationAdd(FRONT_FILE, front), CommitOperationAdd(MANIFEST, manifest_bytes(updated))]
    return _commit_on(api, repo_id, head, ops, "Store the home page of every run")


def _commit_on(api: HfApi, repo_id: str, head: str, ops: list[CommitOperationAdd], message: str) -> str | None:
    """One commit of ``ops`` whose parent is ``head``; None when another push landed first (read the new head and
    try again)."""
    try:
        info = api.create_commit(repo_id, ops, commit_message=message, repo_type="dataset", parent_commit=head)
    except HfHubHTTPError as exc:
        if exc.response is not None and exc.response.status_code in (409, 412):
            return None
        raise
    return str(info.oid)
