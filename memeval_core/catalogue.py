"""The catalogue of public upstream files: where every public run and dataset memeval shows comes from, pinned.

``memeval_core/catalogue.json`` holds one :class:`CatalogueEntry` per upstream file: benchmark, system and
variant, repository, commit, path in the repository, size, SHA-256, licence, the importer that reads it and
where it goes under the results directory. It is the source of truth: ``python -m memeval_core sync``
downloads its entries (:mod:`memeval_core.sync`), the run page names each catalogued run's upstream file
(:func:`upstream_of`) and the export takes a catalogued file's licence from it (:mod:`memeval_core.licences`).
Adding a source is adding entries; no code changes. The layout is described in ``docs/CATALOGUE.md``.

``python -m memeval_core.catalogue build --from ../shared/data`` regenerates the entries from a local copy
whose folders each carry a ``PROVENANCE.md`` (repository, commit, original paths, licence): sizes and
SHA-256 come from the files, repository, commit and original path from ``PROVENANCE.md``, and which files to
list (and their importer) from memeval's own loaders (:func:`build`).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal
from urllib.parse import quote

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memeval_core import tree
from memeval_core.errors import json_path
from memeval_core.pmb.fixtures import CASES_FILE, FIXTURE_FILES, SESSION_CASES_FILE
from memeval_core.pmb.ingest import find_fixture_dir, load_pmb
from memeval_core.qa.ingest import load_qa
from memeval_core.qa.locomo import find_locomo
from memeval_core.qa.scoring import is_disputed_list
from memeval_core.spdx import UNKNOWN, spdx

CATALOGUE_FILE = Path(__file__).with_name("catalogue.json")
"""The catalogue memeval ships (the one ``sync`` reads unless told otherwise)."""
KINDS = ("pmb", "qa", "dataset")
"""The kinds of entry, as ``sync --only`` names them (``datasets`` on the command line)."""

Kind = Literal["pmb", "qa", "dataset"]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
GitCommit = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]
RepoId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$")]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")]


class CatalogueError(ValueError):
    """A catalogue (or a ``PROVENANCE.md`` it is built from) that cannot be used; the message names the file."""


def _relative(value: str, what: str, *, hidden_ok: bool) -> str:
    """``value`` when it is a relative POSIX path that stays inside its folder, else ValueError naming ``what``."""
    parts = value.split("/")
    if not value or value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{what} {value!r} must be a relative POSIX path without '.', '..' or empty parts")
    if not hidden_ok and any(p.startswith(".") for p in parts):
        raise ValueError(f"{what} {value!r} has a hidden part; memeval never reads hidden files or folders")
    return value


class CatalogueEntry(BaseModel):
    """One upstream file: where it comes from (pinned), what it is, and where it goes."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    target: str
    """Where the file goes, relative to the results directory (the layout of ``../shared/data``:
    ``<folder>/<path in the repository>``, e.g. ``memobase/docs/experiments/...``)."""
    kind: Kind
    """``pmb`` (PrecisionMemBench fixtures and reports), ``qa`` (QA runs and the configuration files beside
    them) or ``dataset`` (the LoCoMo dataset and its list of disputed answers); ``sync --only`` selects by it."""
    benchmark: str = Field(min_length=1)
    """Benchmark id of the runs the file holds or serves (``pmb-single-turn``, ``locomo``, ``longmemeval-s``, ...;
    ``pmb`` for a PMB fixture both suites use)."""
    system: str | None = None
    """Memory system whose run the file holds or serves; None for fixtures and datasets."""
    variant: str | None = None
    """What tells this run apart from the system's other runs (configuration, version), when anything does."""
    importer: Slug
    """What reads the file: ``pmb``, a QA importer's format name (``mem0-eval``, ``evermemos``, ``zep``, ...),
    ``locomo-dataset``, ``disputed-answers`` (locomo-audit's errors list) or ``sidecar`` (configuration beside
    a run that names its answer model, judge or top-k)."""
    host: Literal["github", "huggingface"] = "github"
    """Where the file is fetched from: a GitHub repository, or a Hugging Face Hub repository."""
    repo_type: Literal["dataset", "model", "space"] | None = None
    """Hugging Face repository type (``dataset``); only for ``host: huggingface``."""
    repository: RepoId
    """``owner/name`` of the GitHub repository or the Hugging Face repository id."""
    commit: GitCommit
    """The pinned commit (GitHub) or revision (Hugging Face): the full 40-digit hash, never a branch."""
    path: str
    """The file's path in the repository at that commit (the Hugging Face filename)."""
    size: int = Field(ge=0)
    """Bytes."""
    sha256: Sha256
    """SHA-256 of the file's bytes; a download with any other digest is refused."""
    licence: str = Field(min_length=1)
    """SPDX id of the licence the file is published under (``MIT``, ``Apache-2.0``, ``CC-BY-NC-4.0``, ...)."""
    licence_note: str = ""
    """Where the repository states that licence (from its ``PROVENANCE.md``)."""

    @field_validator("target")
    @classmethod
    def _target_inside(cls, value: str) -> str:
        return _relative(value, "target", hidden_ok=False)

    @field_validator("path")
    @classmethod
    def _path_inside(cls, value: str) -> str:
        return _relative(value, "path", hidden_ok=True)

    @model_validator(mode="after")
    def _host_fields(self) -> CatalogueEntry:
        if self.host == "huggingface" and self.repo_type is None:
            raise ValueError("a huggingface entry needs repo_type (dataset, model or space)")
        if self.host == "github" and self.repo_type is not None:
            raise ValueError("repo_type is only for huggingface entries")
        return self

    @property
    def source_key(self) -> tuple[str, str, str]:
        """(host, repository, commit): the entries fetched from one upstream snapshot."""
        return (self.host, self.repository, self.commit)

    @property
    def source_label(self) -> str:
        """``owner/name@abc1234`` (``hf:dataset/owner/name@abc1234`` for the Hub), for messages."""
        prefix = f"hf:{self.repo_type}/" if self.host == "huggingface" else ""
        return f"{prefix}{self.repository}@{self.commit[:7]}"

    @property
    def repository_url(self) -> str:
        """The repository's web page."""
        if self.host == "huggingface":
            return f"https://huggingface.co/{_hub_prefix(self.repo_type)}{self.repository}"
        return f"https://github.com/{self.repository}"

    @property
    def commit_url(self) -> str:
        """The pinned commit's web page."""
        return f"{self.repository_url}/commit/{self.commit}"

    @property
    def file_url(self) -> str:
        """The file's web page at the pinned commit."""
        return f"{self.repository_url}/blob/{self.commit}/{quote(self.path)}"

    def raw_url(self, raw_base: str) -> str:
        """The GitHub raw URL ``{raw}/{repo}/{commit}/{path}`` of the file's bytes."""
        return f"{raw_base.rstrip('/')}/{self.repository}/{self.commit}/{quote(self.path)}"


def _hub_prefix(repo_type: str | None) -> str:
    return {"dataset": "datasets/", "space": "spaces/"}.get(repo_type or "", "")


class Catalogue(BaseModel):
    """The whole catalogue file."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    version: Literal[1] = 1
    """Layout version of this file."""
    entries: tuple[CatalogueEntry, ...]
    """One entry per upstream file, sorted by target."""

    @model_validator(mode="after")
    def _unique_targets(self) -> Catalogue:
        seen: set[str] = set()
        for i, e in enumerate(self.entries):
            lowered = e.target.lower()
            if lowered in seen:
                raise ValueError(f"entries[{i}]: target {e.target!r} is listed twice")
            seen.add(lowered)
        return self

    def select(self, kinds: Iterable[str] | None = None) -> tuple[CatalogueEntry, ...]:
        """The entries of these kinds (all when None)."""
        wanted = set(KINDS if kinds is None else kinds)
        return tuple(e for e in self.entries if e.kind in wanted)

    def with_sha256(self, sha256: str) -> tuple[CatalogueEntry, ...]:
        """The entries whose file has this SHA-256 (usually one)."""
        return tuple(e for e in self.entries if e.sha256 == sha256)

    def at_path(self, rel: str) -> CatalogueEntry | None:
        """The entry whose target is ``rel``, or a suffix or extension of it at a folder boundary."""
        for e in self.entries:
            if _same_place(rel, e.target):
                return e
        return None


def _same_place(rel: str, target: str) -> bool:
    """True when ``rel`` (relative to some results directory) and ``target`` name the same file."""
    return rel == target or rel.endswith("/" + target) or target.endswith("/" + rel)


def by_source(entries: Iterable[CatalogueEntry]) -> dict[tuple[str, str, str], list[CatalogueEntry]]:
    """Entries grouped by upstream snapshot (:attr:`CatalogueEntry.source_key`), in first-seen order."""
    groups: dict[tuple[str, str, str], list[CatalogueEntry]] = {}
    for e in entries:
        groups.setdefault(e.source_key, []).append(e)
    return groups


def load_catalogue(path: Path = CATALOGUE_FILE) -> Catalogue:
    """Read and validate a catalogue file; :class:`CatalogueError` names the file, the entry and the problem."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot be read: {exc.strerror}") from exc
    try:
        data = orjson.loads(raw)  # refuses what JSON cannot carry as text: lone surrogates, NaN, invalid UTF-8
    except orjson.JSONDecodeError as exc:
        raise CatalogueError(f"{path}: not valid JSON: {exc}") from exc
    try:
        return Catalogue.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        more = f" ({len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise CatalogueError(f"{path}: {json_path(first['loc'])}: {first['msg']}{more}") from exc


@functools.cache
def default_catalogue() -> Catalogue:
    """The catalogue memeval ships, read once per process."""
    return load_catalogue(CATALOGUE_FILE)


def write_catalogue(catalogue: Catalogue, path: Path) -> None:
    """Write ``catalogue`` as indented JSON (fields in model order, unset optional fields left out)."""
    text = json.dumps(catalogue.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


# ------------------------------------------------------------------ runs -> upstream files


@dataclass(frozen=True)
class Upstream:
    """One file of a run, matched to its catalogue entry."""

    source: str
    """The file as the run names it (relative to the results directory)."""
    entry: CatalogueEntry
    """Its catalogue entry."""


def upstream_of(source: str | None, sha256: str | None, catalogue: Catalogue | None = None) -> tuple[Upstream, ...]:
    """The catalogue entries of a run's file(s); empty unless every file of the run is catalogued.

    A single file matches by its SHA-256 (an entry at the same place wins over an identical copy elsewhere).
    A run merged from shards (``a.json + b.json``, see :func:`memeval_core.qa.ingest.merge_shards`) matches
    when each shard's path is catalogued and the run's SHA-256 is the digest of their catalogued SHA-256s.
    """
    if not source or not sha256:
        return ()
    cat = default_catalogue() if catalogue is None else catalogue
    parts = [p for p in source.split(" + ") if p]
    if len(parts) == 1:
        hits = cat.with_sha256(sha256)
        if not hits:
            return ()
        best = next((e for e in hits if _same_place(parts[0], e.target)), hits[0])
        return (Upstream(parts[0], best),)
    entries = [cat.at_path(p) for p in parts]
    found = [e for e in entries if e is not None]
    if len(found) != len(parts):
        return ()
    combined = hashlib.sha256("".join(e.sha256 for e in found).encode()).hexdigest()
    return tuple(Upstream(p, e) for p, e in zip(parts, found, strict=True)) if combined == sha256 else ()


def upstream_record(upstream: Sequence[Upstream]) -> dict[str, str | None]:
    """Repository, commit, path(s) and licence of a run's upstream files, as flat columns (None when not catalogued).

    For rows that leave the app (downloads): several files of one run are joined with `` + ``.
    """
    if not upstream:
        return {"upstream_repository": None, "upstream_commit": None, "upstream_path": None, "licence": None}
    return {
        "upstream_repository": " + ".join(dict.fromkeys(u.entry.repository_url for u in upstream)),
        "upstream_commit": " + ".join(dict.fromkeys(u.entry.commit for u in upstream)),
        "upstream_path": " + ".join(u.entry.path for u in upstream),
        "licence": " + ".join(dict.fromkeys(u.entry.licence for u in upstream)),
    }


def licence_of(sha256: str, catalogue: Catalogue | None = None) -> str | None:
    """The catalogued licence of the file with this SHA-256, or None when it is not catalogued."""
    cat = default_catalogue() if catalogue is None else catalogue
    hits = cat.with_sha256(sha256)
    return hits[0].licence if hits else None


# ------------------------------------------------------------------ building from a local copy


_REPOSITORY = re.compile(r"^- Repository: https://github\.com/([A-Za-z0-9][\w.-]*/[\w.-]+?)(?:\.git)?[\s/(]", re.M)
_COMMIT = re.compile(r"^- Commit[^:\n]*: `([0-9a-f]{40})`", re.M)
_LICENSE = re.compile(r"^- License: (.+)$", re.M)
_KEEPS_PATHS = re.compile(r"original relative paths (?:are )?kept|with the same relative paths", re.I)
_ORIGINALS = re.compile(r"^- Original paths?\b.*(?:\n[ \t]+-.*)*", re.M)
_PATH_TOKEN = re.compile(r"`([^`\s]+/[^`\s]+)`(?:\s*\((?:git blob `([0-9a-f]{40})`, )?([\d,]+) (?:B|bytes)\b)?")


@dataclass(frozen=True)
class Provenance:
    """What a folder's ``PROVENANCE.md`` says about where its files come from."""

    file: Path
    """The ``PROVENANCE.md`` read."""
    repository: str
    """``owner/name`` on GitHub."""
    commit: str
    """The snapshot's commit."""
    licence: str
    """SPDX id of the licence its ``License:`` line names."""
    licence_note: str
    """That line without its Markdown."""
    keeps_paths: bool
    """The copy keeps the repository's relative paths."""
    originals: dict[str, tuple[str, int | None, str | None]] = field(default_factory=dict)
    """Listed original paths by file name: (path in the repository, stated size, stated git blob id)."""

    def repo_path(self, rel: str) -> str:
        """The path in the repository of the copy's file ``rel`` (relative to the folder)."""
        name = PurePosixPath(rel).name
        if name in self.originals:
            return self.originals[name][0]
        if self.keeps_paths:
            return rel
        raise CatalogueError(f"{self.file}: names no original path for {rel} (and does not say paths are kept)")


def parse_provenance(path: Path) -> Provenance:
    """Read a ``PROVENANCE.md``; :class:`CatalogueError` names the file and the line it lacks."""

    text = path.read_text(encoding="utf-8")
    repo, commit, lic = _REPOSITORY.search(text), _COMMIT.search(text), _LICENSE.search(text)
    for what, found in (("Repository: https://github.com/OWNER/NAME", repo), ("Commit: `<40 hex>`", commit)):
        if found is None:
            raise CatalogueError(f"{path}: has no '- {what}' line")
    if lic is None or spdx(lic.group(1)) == UNKNOWN:
        raise CatalogueError(f"{path}: has no '- License:' line naming a licence memeval knows")
    assert repo is not None and commit is not None  # checked above
    originals: dict[str, tuple[str, int | None, str | None]] = {}
    block = _ORIGINALS.search(text)
    for m in _PATH_TOKEN.finditer(block.group(0) if block else ""):
        name = PurePosixPath(m.group(1)).name
        if name in originals and originals[name][0] != m.group(1):
            raise CatalogueError(f"{path}: lists two original paths named {name}; map them by hand")
        originals[name] = (m.group(1), int(m.group(3).replace(",", "")) if m.group(3) else None, m.group(2))
    note = re.sub(r"[*`]", "", lic.group(1)).strip()
    return Provenance(
        path, repo.group(1), commit.group(1), spdx(lic.group(1)), note, bool(_KEEPS_PATHS.search(text)), originals
    )


@dataclass(frozen=True)
class Role:
    """What memeval makes of one file of the copy."""

    kind: Kind
    benchmark: str
    system: str | None
    variant: str | None
    importer: str


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def roles(shared: Path) -> tuple[dict[str, Role], dict[str, str]]:
    """Every file memeval reads from ``shared`` with its role, and every other file with the reason it is left out.

    Read: PMB fixtures and reports, QA runs (shards, pair partners and exact duplicates included), the
    configuration files runs take their answer model, judge or top-k from, the LoCoMo dataset and
    locomo-audit's disputed answers. Summaries, unjudged answer files and working files are left out.
    """

    found: dict[str, Role] = {}
    fixture_dir = find_fixture_dir(shared)
    if fixture_dir is not None:
        for name in FIXTURE_FILES:
            rel = (fixture_dir / name).relative_to(shared).as_posix()
            suite = {CASES_FILE: "pmb-single-turn", SESSION_CASES_FILE: "pmb-session"}.get(name, "pmb")
            found[rel] = Role("pmb", suite, None, None, "pmb")
    for run in load_pmb(shared).runs:
        ident = run.identity
        variant = ident.display_name.removeprefix(f"{ident.provider} (").removesuffix(")")
        found[ident.source] = Role(
            "pmb", ident.benchmark, ident.provider, None if variant == ident.provider else variant, "pmb"
        )
    qa = load_qa(shared)
    for r in qa.runs:
        meta = r.meta
        files = [s for s in (meta.source_file or "").split(" + ") if s]
        for rel in files:
            found[rel] = Role("qa", meta.benchmark, meta.system, meta.variant, meta.format or "generic")
        for rel in r.duplicates:
            found[rel] = Role("qa", meta.benchmark, meta.system, PurePosixPath(rel).stem, meta.format or "generic")
        for rel in meta.metadata_sources:
            found.setdefault(rel, Role("qa", meta.benchmark, meta.system, None, "sidecar"))
    dataset = find_locomo(shared)
    if dataset is not None:
        found[dataset.relative_to(shared).as_posix()] = Role("dataset", "locomo", None, None, "locomo-dataset")
    skipped = {s.file: s.reason for s in qa.skipped}
    left_out: dict[str, str] = {}
    for entry in tree.walk(shared, (".json",)).files:
        rel, path = entry.rel, shared / entry.rel
        if rel in found:
            continue
        if rel not in skipped and is_disputed_list(json.loads(path.read_bytes())):
            found[rel] = Role("dataset", "locomo", None, None, "disputed-answers")
        else:
            left_out[rel] = skipped.get(rel, "not read by memeval")
    return found, left_out


def _entry(shared: Path, rel: str, role: Role, prov: Provenance) -> CatalogueEntry:
    """The catalogue entry of the copy's file ``rel``, checked against what ``PROVENANCE.md`` states about it."""
    data = (shared / rel).read_bytes()
    inner = rel.partition("/")[2]
    path = prov.repo_path(inner)
    _, stated_size, stated_blob = prov.originals.get(PurePosixPath(inner).name, (path, None, None))
    if stated_size is not None and stated_size != len(data):
        raise CatalogueError(f"{prov.file}: states {stated_size} bytes for {path}, but {rel} has {len(data)}")
    if stated_blob is not None and stated_blob != _git_blob(data):
        raise CatalogueError(f"{prov.file}: states git blob {stated_blob} for {path}, but {rel} is another blob")
    return CatalogueEntry(
        target=rel,
        **asdict(role),
        repository=prov.repository,
        commit=prov.commit,
        path=path,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        licence=prov.licence,
        licence_note=prov.licence_note,
    )


def build(shared: Path) -> tuple[Catalogue, dict[str, str]]:
    """The catalogue of every file memeval reads from ``shared``, and the files left out with their reasons.

    Each top-level folder holding catalogued files must have a ``PROVENANCE.md``.
    """
    found, left_out = roles(shared)
    provenance: dict[str, Provenance] = {}
    entries = []
    for rel in sorted(found):
        folder = rel.partition("/")[0]
        if folder not in provenance:
            prov_file = shared / folder / "PROVENANCE.md"
            if "/" not in rel or not prov_file.is_file():
                raise CatalogueError(f"{rel}: its folder has no PROVENANCE.md naming the repository it comes from")
            provenance[folder] = parse_provenance(prov_file)
        entries.append(_entry(shared, rel, found[rel], provenance[folder]))
    return Catalogue(entries=tuple(entries)), left_out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memeval_core.catalogue build --from DIR [--out FILE] [--check]``."""
    parser = argparse.ArgumentParser(
        prog="python -m memeval_core.catalogue", description="memeval's catalogue of pinned upstream files"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="regenerate the catalogue from a local copy with PROVENANCE.md files")
    p.add_argument("--from", dest="from_dir", required=True, metavar="DIR", help="e.g. ../shared/data")
    p.add_argument("--out", metavar="FILE", default=str(CATALOGUE_FILE), help="default: the shipped catalogue.json")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when FILE differs from the build")
    args = parser.parse_args(argv)
    try:
        catalogue, left_out = build(Path(args.from_dir))
    except CatalogueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for rel, reason in sorted(left_out.items()):
        print(f"left out {rel}: {reason}", file=sys.stderr)
    out = Path(args.out)
    total = sum(e.size for e in catalogue.entries)
    if args.check:
        same = out.is_file() and load_catalogue(out) == catalogue
        print(f"{out}: {'matches' if same else 'differs from'} the build ({len(catalogue.entries)} entries)")
        return 0 if same else 1
    write_catalogue(catalogue, out)
    print(f"wrote {out}: {len(catalogue.entries)} entries, {total:,} bytes of upstream files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
