"""``python -m memeval_core push``: upload an export to a Hugging Face Space (and its details to a dataset).

One push = ``create_repo(..., exist_ok=True)`` then at most one commit per repo, whose message
names the fingerprint. The remote ``leaderboard.json`` decides whether anything is committed:
when it carries the local fingerprint the push commits nothing and says so (``force`` overrides).
A dry run compares local files with the remote tree - git blob SHA-1 for regular files, SHA-256
for LFS files - and lists what a push would add, update and delete, without writing anything.

The token comes from the caller (the app's password field), else ``HF_TOKEN``, else the saved
login (:func:`huggingface_hub.get_token`); it is never printed, logged or put into an error
message. The Hub endpoint is read from ``HF_ENDPOINT`` at call time (huggingface_hub reads it
only at import). Every failure becomes one :class:`PushError` sentence; the export folder is only
ever read.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

from memeval_core import __version__, settings
from memeval_core.export.models import Leaderboard, loads
from memeval_core.export.space import DETAILS_DIR, SpaceOptions, dataset_card
from memeval_core.export.writer import LEADERBOARD_FILE

KEPT_REMOTE_FILES = frozenset({".gitattributes"})
"""Remote files a push never deletes (the Hub creates ``.gitattributes`` with every repo)."""
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")

RepoType = Literal["space", "dataset"]
Action = Literal["add", "update", "delete"]


class PushError(Exception):
    """A push failed; the message is one sentence that never contains the token."""


@dataclass(frozen=True)
class FileChange:
    """One file a push adds, updates or deletes."""

    path: str
    """Path in the repo."""
    action: Action
    """What happens to it."""


@dataclass(frozen=True)
class RepoPush:
    """What a push did (or, dry run, would do) to one repo."""

    repo_id: str
    """``owner/name``."""
    repo_type: RepoType
    """``space`` or ``dataset``."""
    status: Literal["committed", "unchanged", "dry-run"]
    """``committed``: one commit made; ``unchanged``: same fingerprint, nothing committed; ``dry-run``."""
    fingerprint: str
    """Fingerprint of the local export."""
    remote_fingerprint: str | None
    """Fingerprint of the repo's leaderboard.json before the push; None when it has none."""
    changes: tuple[FileChange, ...]
    """Files added/updated/deleted (dry run and unchanged: that would be)."""
    unchanged_files: int
    """Local files whose remote copy is already identical."""
    repo_exists: bool
    """The repo existed before the push."""
    commit_url: str | None = None
    """URL of the commit made; None when none was made."""
    commit_message: str | None = None
    """Message of the commit made (or that would be made)."""

    def describe(self) -> str:
        """One line saying what happened."""
        kind = "Space" if self.repo_type == "space" else "dataset"
        fp = self.fingerprint[:12]
        if self.status == "unchanged":
            extra = f" ({len(self.changes)} file(s) differ; use --force to push them anyway)" if self.changes else ""
            return f"{kind} {self.repo_id} already holds fingerprint {fp}; nothing committed{extra}."
        counts = {a: sum(c.action == a for c in self.changes) for a in ("add", "update", "delete")}
        what = f"{counts['add']} added, {counts['update']} updated, {counts['delete']} deleted"
        if self.status == "dry-run":
            if self.remote_fingerprint == self.fingerprint:
                return f"Dry run: {kind} {self.repo_id} already holds fingerprint {fp}; a push would commit nothing."
            create = "" if self.repo_exists else " (it would be created)"
            return f"Dry run: {kind} {self.repo_id}{create} would get fingerprint {fp}: {what}; nothing was committed."
        return f"Committed fingerprint {fp} to {kind} {self.repo_id}: {what} ({self.commit_url})."


@dataclass(frozen=True)
class PushResult:
    """The outcome of :func:`push_space`."""

    space: RepoPush
    """The Space."""
    dataset: RepoPush | None = None
    """The details dataset, when one was pushed."""
    lines: tuple[str, ...] = field(default=())
    """Human-readable report: the summary line of each repo, then the file changes."""


def resolve_token(token: str | None) -> str | None:
    """The token to use: the given one, else ``HF_TOKEN`` / the saved login; None when there is none."""
    if token:
        return token
    try:
        return get_token()
    except Exception:  # a broken OIDC/login setup means "no token", which the caller explains
        return None


def git_blob_sha1(data: bytes) -> str:
    """Git's blob id of ``data``: ``SHA-1(b"blob <len>\\0" + data)``, what the Hub lists for a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _check_repo_id(repo_id: str, what: str) -> None:
    if not _REPO_ID.fullmatch(repo_id):
        raise PushError(f"{what} {repo_id!r} is not of the form OWNER/NAME.")


def local_files(export_dir: Path) -> dict[str, Path]:
    """Every file of an export, by POSIX path, sorted (the repository's ``.gitkeep`` marker is not part of it)."""
    return {
        p.relative_to(export_dir).as_posix(): p
        for p in sorted(export_dir.rglob("*"))
        if p.is_file() and p.relative_to(export_dir).as_posix() != ".gitkeep"
    }


def read_export(export_dir: Path) -> Leaderboard:
    """The export's leaderboard; :class:`PushError` when the folder is not a valid export."""
    p = export_dir / LEADERBOARD_FILE
    if not p.is_file():
        raise PushError(f"{export_dir} holds no {LEADERBOARD_FILE}; run `python -m memeval_core export` first.")
    try:
        return loads(p.read_bytes(), f"{export_dir.name}/{LEADERBOARD_FILE}")
    except ValueError as exc:
        raise PushError(f"{exc}; re-run the export.") from exc


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def explain(
    exc: BaseException, repo_id: str, repo_type: RepoType, endpoint: str, action: Literal["push", "read"] = "push"
) -> str:
    """One sentence for a failed Hub call (network, 401, 403, 404, other HTTP status) while pushing or reading."""
    kind = "Space" if repo_type == "space" else "dataset"
    after = "; nothing was committed" if action == "push" else ""
    for e in _causes(exc):
        if isinstance(e, HfHubHTTPError) and e.response is not None:
            status = e.response.status_code
            if status == 401:
                what = "a valid write token" if action == "push" else "a valid token, or unset it for a public dataset"
                return (
                    f"The Hugging Face Hub rejected the token (401 Unauthorized) for {kind} {repo_id}: "
                    f"set HF_TOKEN to {what} or run `hf auth login`."
                )
            if status == 403:
                verb = "write to" if action == "push" else "read"
                return f"The token may not {verb} {kind} {repo_id} (403 Forbidden): use a token with access to it."
            if isinstance(e, RevisionNotFoundError):
                return f"The revision asked for was not found in {kind} {repo_id} (it may have been deleted){after}."
            if status == 404 or isinstance(e, RepositoryNotFoundError):
                return (
                    f"The {kind} {repo_id} was not found (404 Not Found): check OWNER/NAME and that the owner exists."
                )
            return f"The Hugging Face Hub answered HTTP {status} for {kind} {repo_id}{after}."
        if isinstance(e, RepositoryNotFoundError):
            return f"The {kind} {repo_id} was not found: check OWNER/NAME and that the owner exists."
        if isinstance(e, (httpx2.TransportError, ConnectionError, TimeoutError)):
            return f"Network error: could not talk to the Hugging Face Hub at {endpoint} ({type(e).__name__}){after}."
    verb = "Pushing to" if action == "push" else "Reading"
    return f"{verb} {kind} {repo_id} failed ({type(exc).__name__}){after}."


@dataclass(frozen=True)
class _Remote:
    exists: bool
    files: Mapping[str, tuple[str, bool]]
    """path -> (oid, is_lfs): git blob SHA-1 for regular files, SHA-256 for LFS files."""
    fingerprint: str | None


def _remote_state(api: HfApi, repo_id: str, repo_type: RepoType, token: str | None, endpoint: str) -> _Remote:
    try:
        api.repo_info(repo_id, repo_type=repo_type, token=token)
    except RepositoryNotFoundError:
        return _Remote(False, {}, None)
    files: dict[str, tuple[str, bool]] = {}
    for entry in api.list_repo_tree(repo_id, repo_type=repo_type, recursive=True, token=token):
        blob_id = getattr(entry, "blob_id", None)
        if blob_id is None:
            continue  # a folder
        lfs = getattr(entry, "lfs", None)
        files[entry.path] = (lfs.sha256, True) if lfs is not None else (blob_id, False)
    remote_fp = None
    if LEADERBOARD_FILE in files:
        with tempfile.TemporaryDirectory(prefix="memeval-hub-") as cache:
            path = hf_hub_download(
                repo_id,
                LEADERBOARD_FILE,
                repo_type=repo_type,
                token=token,
                endpoint=endpoint,
                cache_dir=cache,
            )
            try:
                remote_fp = loads(Path(path).read_bytes(), f"{repo_id}/{LEADERBOARD_FILE}").fingerprint
            except ValueError:
                remote_fp = None  # not a memeval leaderboard (or a newer schema): it gets replaced
    return _Remote(True, files, remote_fp)


def _plan(local: Mapping[str, bytes | Path], remote: _Remote) -> tuple[list[FileChange], int]:
    changes: list[FileChange] = []
    same = 0
    for path, src in local.items():
        data = src if isinstance(src, bytes) else src.read_bytes()
        if path not in remote.files:
            changes.append(FileChange(path, "add"))
            continue
        oid, is_lfs = remote.files[path]
        local_oid = hashlib.sha256(data).hexdigest() if is_lfs else git_blob_sha1(data)
        if local_oid == oid:
            same += 1
        else:
            changes.append(FileChange(path, "update"))
    changes += [FileChange(p, "delete") for p in sorted(remote.files.keys() - local.keys() - KEPT_REMOTE_FILES)]
    return changes, same


def _push_repo(
    api: HfApi,
    repo_id: str,
    repo_type: RepoType,
    local: Mapping[str, bytes | Path],
    board: Leaderboard,
    *,
    token: str | None,
    endpoint: str,
    private: bool,
    dry_run: bool,
    force: bool,
) -> RepoPush:
    message = f"memeval leaderboard, fingerprint {board.fingerprint}"
    if not dry_run:
        sdk = "docker" if repo_type == "space" else None
        api.create_repo(repo_id, repo_type=repo_type, space_sdk=sdk, private=private, exist_ok=True, token=token)
    remote = _remote_state(api, repo_id, repo_type, token, endpoint)
    changes, same = _plan(local, remote)
    push = functools.partial(
        RepoPush, repo_id, repo_type, fingerprint=board.fingerprint, remote_fingerprint=remote.fingerprint,
        changes=tuple(changes), unchanged_files=same,
    )  # fmt: skip
    if dry_run:
        return push(status="dry-run", repo_exists=remote.exists)
    if remote.fingerprint == board.fingerprint and not force:
        return push(status="unchanged", repo_exists=True)
    operations: list[CommitOperationAdd | CommitOperationDelete] = [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=src if isinstance(src, bytes) else str(src))
        for path, src in local.items()
    ]
    operations += [CommitOperationDelete(path_in_repo=c.path) for c in changes if c.action == "delete"]
    with warnings.catch_warnings():
        # The Space ships its details Parquet on purpose; huggingface_hub warns about data files in non-dataset repos.
        warnings.filterwarnings("ignore", message="It seems that you are about to commit a data file")
        info = api.create_commit(
            repo_id,
            operations,
            commit_message=message,
            commit_description=f"Exported by memeval {__version__} (scoring {board.scoring_version}).",
            repo_type=repo_type,
            token=token,
        )
    return push(status="committed", repo_exists=True, commit_url=str(info.commit_url), commit_message=message)


def dataset_files(export_dir: Path, board: Leaderboard, space: str | None) -> dict[str, bytes | Path]:
    """What the details dataset holds: a card, ``leaderboard.json`` and ``data/<benchmark>.parquet``."""
    details = sorted((export_dir / DETAILS_DIR).glob("*.parquet"))
    if not details:
        raise PushError(f"{export_dir} holds no {DETAILS_DIR}/*.parquet to push as a dataset; re-run the export.")
    files: dict[str, bytes | Path] = {"README.md": dataset_card(board, space, SpaceOptions()).encode()}
    files[LEADERBOARD_FILE] = export_dir / LEADERBOARD_FILE
    for p in details:
        files[f"data/{p.name}"] = p
    return files


def _report(push: RepoPush) -> list[str]:
    lines = [push.describe()]
    lines += [f"  {c.action:<6} {c.path}" for c in push.changes]
    return lines


def push_space(
    export_dir: Path,
    space: str,
    token: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    dataset: str | None = None,
    *,
    force: bool = False,
) -> PushResult:
    """Push an export to the Space ``space`` (and its details to the dataset ``dataset``).

    Same behaviour as ``python -m memeval_core push``; raise :class:`PushError` with one sentence on
    failure. ``export_dir`` is never written.
    """
    _check_repo_id(space, "Space")
    if dataset is not None:
        _check_repo_id(dataset, "Dataset")
    board = read_export(export_dir)
    tok = resolve_token(token)
    if tok is None and not dry_run:
        raise PushError("No Hugging Face token found: set HF_TOKEN or run `hf auth login` (a token with write access).")
    endpoint = settings.hub_endpoint()
    api = HfApi(endpoint=endpoint, token=tok or False, library_name="memeval", library_version=__version__)
    targets: list[tuple[str, RepoType, Mapping[str, bytes | Path]]] = [(space, "space", local_files(export_dir))]
    if dataset is not None:
        targets.append((dataset, "dataset", dataset_files(export_dir, board, space)))
    pushes: list[RepoPush] = []
    for repo_id, repo_type, files in targets:
        try:
            pushes.append(
                _push_repo(
                    api,
                    repo_id,
                    repo_type,
                    files,
                    board,
                    token=tok,
                    endpoint=endpoint,
                    private=private,
                    dry_run=dry_run,
                    force=force,
                )
            )
        except PushError:
            raise
        except Exception as exc:
            message = explain(exc, repo_id, repo_type, endpoint)
            if tok:
                message = message.replace(tok, "***")
            # Chained tracebacks could carry request details; the sentence is the whole story.
            raise PushError(message) from None
    lines = [line for p in pushes for line in _report(p)]
    return PushResult(pushes[0], pushes[1] if len(pushes) > 1 else None, tuple(lines))
