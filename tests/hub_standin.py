"""A local HTTP stand-in of the Hugging Face Hub endpoints that huggingface_hub 2.4 calls for a push.

Implemented (paths as huggingface_hub builds them; ``{t}`` is ``spaces``/``datasets``/``models``,
``{p}`` the URL prefix ``spaces/``, ``datasets/`` or nothing):

- ``POST /api/repos/create``: creates the repo with a ``.gitattributes`` (as the Hub does); 409 when it exists;
  403 when the namespace is not the token owner's;
- ``GET /api/{t}/{owner}/{name}[/revision/{rev}]``: repo info (``sha``, ``private``, ``sdk``, ``siblings``);
- ``GET /api/{t}/{owner}/{name}/tree/{rev}[/{path}]?recursive=``: the tree (files with git blob ids and
  ``lfs`` pointers, folders);
- ``POST /api/validate-yaml``: parses README front matter (Spaces: ``sdk`` must be known);
- ``POST /api/{t}/{owner}/{name}/preupload/{rev}``: upload mode per file (``lfs`` for binary samples,
  ``*.parquet`` and files over 10 MB, else ``regular``) and the remote oid of an existing file;
- ``POST /{p}{owner}/{name}.git/info/lfs/objects/batch``, ``PUT /lfs-upload/{oid}``, ``POST /lfs-verify``:
  the basic LFS transfer (the upload's SHA-256 is checked);
- ``POST /api/{t}/{owner}/{name}/commit/{rev}``: the NDJSON commit (``header``, ``file`` base64,
  ``lfsFile``, ``deletedFile``, ``deletedFolder``), recorded in :attr:`HubStandIn.commits`;
- ``HEAD``/``GET /{p}{owner}/{name}/resolve/{rev}/{path}``: file download with ``X-Repo-Commit`` and ``ETag``;
- ``GET /api/whoami-v2``.

Authentication: a request with ``Authorization: Bearer <token>`` other than :attr:`HubStandIn.token`
gets 401 "Invalid credentials in Authorization header"; writes need the token; private repos are
invisible (404) without it. Every request is recorded (method, path, whether a valid token was sent;
never the header itself). Failure injection: :attr:`HubStandIn.fail_status` answers 401/403/404/...
to requests whose path contains :attr:`HubStandIn.fail_match`; :attr:`HubStandIn.drop_connections`
closes the connection without an answer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

HUB_TOKEN = "hf_" + "StandInToken" * 3
"""The token the stand-in accepts in tests (fake; the shape of a real one so leak scans would catch it)."""

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.bin filter=lfs diff=lfs merge=lfs -text\n"
"""What the stand-in puts into every new repo, like the Hub's default ``.gitattributes``."""
LFS_THRESHOLD = 10 * 1024 * 1024
_TYPES = {"spaces": "space", "datasets": "dataset", "models": "model"}
_PREFIX = {"space": "spaces/", "dataset": "datasets/", "model": ""}
_SDKS = {"gradio", "docker", "static", "streamlit"}


def git_blob_sha1(data: bytes) -> str:
    """Git's blob id."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    """The git LFS pointer file of ``data``."""
    oid = hashlib.sha256(data).hexdigest()
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {len(data)}\n".encode()


@dataclass
class StoredFile:
    """A file in a repo."""

    data: bytes
    lfs: bool

    @property
    def oid(self) -> str:
        """The git blob id (of the pointer, for LFS files)."""
        return git_blob_sha1(lfs_pointer(self.data) if self.lfs else self.data)


@dataclass
class Commit:
    """A recorded commit."""

    repo_type: str
    repo_id: str
    oid: str
    message: str
    description: str
    operations: list[tuple[str, str]]
    """``(key, path)`` per NDJSON line: ``file``, ``lfsFile``, ``deletedFile``, ``deletedFolder``."""


@dataclass
class Repo:
    """A repo held by the stand-in."""

    repo_type: str
    repo_id: str
    private: bool
    sdk: str | None
    sha: str
    files: dict[str, StoredFile] = field(default_factory=dict)
    history: dict[str, dict[str, StoredFile]] = field(default_factory=dict)
    """Every commit's files, by commit id (what ``resolve/<commit id>/...`` serves)."""

    def at(self, revision: str) -> dict[str, StoredFile]:
        """The files at ``revision`` (``main`` or a commit id); 404 RevisionNotFound otherwise."""
        if revision in ("main", self.sha):
            return self.files
        if revision in self.history:
            return self.history[revision]
        raise _HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")


@dataclass(frozen=True)
class Request:
    """One request as the stand-in saw it."""

    method: str
    path: str
    query: str
    auth_sent: bool
    """An Authorization header was sent."""
    authorized: bool
    """It carried the stand-in's token."""
    sent: int = 0
    """Bytes of the response body sent."""


class _HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}


class HubStandIn:
    """The stand-in server; ``with HubStandIn(token) as hub: ... hub.url ...``."""

    def __init__(self, token: str, user: str = "standin-user", orgs: tuple[str, ...] = ("memeval-org",)) -> None:
        self.token = token
        self.user = user
        self.namespaces = {user, *orgs}
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.commits: list[Commit] = []
        self.requests: list[Request] = []
        self.fail_status: int | None = None
        self.fail_match = ""
        self.drop_connections = False
        self.drop_midway = False
        """Send half of every response body, then close the connection (a transfer cut off midway)."""
        self._lock = threading.Lock()
        self._counter = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL (use as ``HF_ENDPOINT``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> HubStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def repo(self, repo_type: str, repo_id: str) -> Repo:
        """A repo the stand-in holds (KeyError when absent)."""
        return self.repos[(repo_type, repo_id)]

    def add_repo(self, repo_type: str, repo_id: str, private: bool = False, sdk: str | None = None) -> Repo:
        """Create a repo directly (as if made earlier on the Hub)."""
        with self._lock:
            return self._create(repo_type, repo_id, private, sdk)

    # ----------------------------------------------------------------------------------------

    def _next_sha(self) -> str:
        self._counter += 1
        return hashlib.sha1(f"standin-commit-{self._counter}".encode()).hexdigest()

    def _create(self, repo_type: str, repo_id: str, private: bool, sdk: str | None) -> Repo:
        repo = Repo(repo_type, repo_id, private, sdk, self._next_sha())
        repo.files[".gitattributes"] = StoredFile(GITATTRIBUTES, False)
        repo.history[repo.sha] = repo.files
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def forget(self, repo_type: str, repo_id: str, commit: str) -> None:
        """Drop a commit from the repo's history (as a force-push or a squash does): it no longer resolves."""
        with self._lock:
            del self.repos[(repo_type, repo_id)].history[commit]

    def bytes_sent(self, since: int = 0) -> int:
        """Response body bytes sent for the requests from number ``since`` on."""
        with self._lock:
            return sum(r.sent for r in self.requests[since:])

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return out
                        out += self.rfile.read(size)
                        self.rfile.readline()
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                hdrs = {"Content-Type": "application/json", **(headers or {})}
                for k, v in hdrs.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    if hub.drop_midway and len(body) > 1:
                        self.wfile.write(body[: len(body) // 2])  # half the body, then the connection drops
                        self.close_connection = True
                        return
                    self.wfile.write(body)
                    with hub._lock:
                        req = hub.requests[self.index]
                        hub.requests[self.index] = replace(req, sent=len(body))

            def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                self._send(status, json.dumps(obj).encode(), headers)

            def _dispatch(self) -> None:
                split = urlsplit(self.path)
                path = unquote(split.path)
                body = self._body() if self.command in ("POST", "PUT") else b""
                auth = self.headers.get("Authorization")
                authorized = auth == f"Bearer {hub.token}"
                with hub._lock:
                    hub.requests.append(Request(self.command, path, split.query, auth is not None, authorized))
                    self.index = len(hub.requests) - 1
                if hub.drop_connections:
                    self.close_connection = True
                    return
                try:
                    if hub.fail_status is not None and hub.fail_match in path:
                        raise _forced(hub.fail_status)
                    if auth is not None and not authorized and not path.startswith("/lfs-upload/"):
                        raise _HubError(401, "Invalid credentials in Authorization header")
                    with hub._lock:
                        status, payload, headers = hub._route(
                            self.command, path, parse_qs(split.query), body, authorized
                        )
                except _HubError as f:
                    headers = {"X-Error-Message": f.message, **f.headers}
                    if f.code:
                        headers["X-Error-Code"] = f.code
                    self._json(f.status, {"error": f.message}, headers)
                    return
                if isinstance(payload, bytes):
                    self._send(status, payload, headers)
                else:
                    self._json(status, payload, headers)

            def do_GET(self) -> None:
                self._dispatch()

            def do_HEAD(self) -> None:
                self._dispatch()

            def do_POST(self) -> None:
                self._dispatch()

            def do_PUT(self) -> None:
                self._dispatch()

        return Handler

    # ----------------------------------------------------------------------------------------

    def _visible(self, repo_type: str, repo_id: str, authorized: bool) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not authorized):
            raise _HubError(404, "Repository not found", "RepoNotFound")
        return repo

    def _writable(self, repo_type: str, repo_id: str, authorized: bool) -> Repo:
        if not authorized:
            raise _HubError(401, "You must be authenticated to write")
        repo = self._visible(repo_type, repo_id, authorized)
        if repo_id.split("/")[0] not in self.namespaces:
            raise _HubError(403, f"You don't have the rights to write to {repo_id}")
        return repo

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: bytes, authorized: bool
    ) -> tuple[int, Any, dict[str, str]]:
        if method == "POST" and path == "/api/repos/create":
            return self._create_repo(json.loads(body), authorized)
        if method == "POST" and path == "/api/validate-yaml":
            return self._validate_yaml(json.loads(body))
        if method == "GET" and path == "/api/whoami-v2":
            if not authorized:
                raise _HubError(401, "Invalid credentials in Authorization header")
            return 200, {"type": "user", "name": self.user, "orgs": [{"name": n} for n in sorted(self.namespaces)]}, {}
        if method == "PUT" and path.startswith("/lfs-upload/"):
            oid = path.rsplit("/", 1)[1]
            if hashlib.sha256(body).hexdigest() != oid:
                raise _HubError(400, "uploaded content does not match its oid")
            self.lfs[oid] = body
            return 200, b"", {}
        if method == "POST" and path == "/lfs-verify":
            obj = json.loads(body)
            if obj.get("oid") not in self.lfs:
                raise _HubError(404, "object not uploaded")
            return 200, {}, {}
        m = re.fullmatch(r"/api/(spaces|datasets|models)/([^/]+/[^/]+)(/.*)?", path)
        if m:
            return self._api(method, _TYPES[m[1]], m[2], m[3] or "", query, body, authorized)
        m = re.fullmatch(r"/(spaces/|datasets/)?([^/]+/[^/]+?)\.git/info/lfs/objects/batch", path)
        if m and method == "POST":
            return self._lfs_batch(_repo_type(m[1]), m[2], json.loads(body), authorized)
        m = re.fullmatch(r"/(spaces/|datasets/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if m and method in ("GET", "HEAD"):
            return self._resolve(_repo_type(m[1]), m[2], unquote(m[3]), m[4], authorized)
        raise _HubError(404, f"no such endpoint: {method} {path}")

    def _create_repo(self, payload: dict[str, Any], authorized: bool) -> tuple[int, Any, dict[str, str]]:
        if not authorized:
            raise _HubError(401, "You must be authenticated to create a repo")
        repo_type = payload.get("type") or "model"
        owner = payload.get("organization") or self.user
        repo_id = f"{owner}/{payload['name']}"
        if owner not in self.namespaces:
            raise _HubError(403, f"You don't have the rights to create a {repo_type} under the namespace {owner!r}")
        if repo_type == "space" and payload.get("sdk") not in _SDKS:
            raise _HubError(400, "Invalid sdk")
        url = f"{self.url}/{_PREFIX[repo_type]}{repo_id}"
        if (repo_type, repo_id) in self.repos:
            # The Hub's 409 body carries the URL; huggingface_hub reads it when exist_ok=True.
            return 409, {"error": "You already created this repo", "url": url}, {}
        private = payload.get("visibility") == "private" or bool(payload.get("private"))
        self._create(repo_type, repo_id, private, payload.get("sdk"))
        return 200, {"url": url, "name": repo_id, "id": repo_id}, {}

    def _validate_yaml(self, payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        content = str(payload.get("content", ""))
        m = re.match(r"^---\n(.*?)\n---\n", content, re.S)
        errors = []
        if m:
            try:
                meta = yaml.safe_load(m[1]) or {}
            except yaml.YAMLError as exc:
                errors.append({"message": f"invalid YAML: {exc}"})
                meta = {}
            if payload.get("repoType") == "space" and meta.get("sdk") not in _SDKS:
                errors.append({"message": f"sdk must be one of {sorted(_SDKS)}"})
        if errors:
            return 400, {"errors": errors, "warnings": []}, {}
        return 200, {"errors": [], "warnings": []}, {}

    def _tree(self, repo: Repo, sub: str, recursive: bool) -> list[dict[str, Any]]:
        prefix = f"{sub.strip('/')}/" if sub.strip("/") else ""
        entries: dict[str, dict[str, Any]] = {}
        for p, f in sorted(repo.files.items()):
            if not p.startswith(prefix):
                continue
            rest = p[len(prefix) :]
            parts = rest.split("/")
            for i in range(1, len(parts)):
                d = prefix + "/".join(parts[:i])
                if recursive or i == 1:
                    entries.setdefault(d, {"type": "directory", "oid": git_blob_sha1(d.encode()), "size": 0, "path": d})
            if recursive or len(parts) == 1:
                entry: dict[str, Any] = {"type": "file", "oid": f.oid, "size": len(f.data), "path": p}
                if f.lfs:
                    entry["lfs"] = {
                        "oid": hashlib.sha256(f.data).hexdigest(),
                        "size": len(f.data),
                        "pointerSize": len(lfs_pointer(f.data)),
                    }
                entries[p] = entry
        return [entries[k] for k in sorted(entries)]

    def _api(
        self, method: str, repo_type: str, repo_id: str, rest: str, query: dict[str, list[str]], body: bytes, auth: bool
    ) -> tuple[int, Any, dict[str, str]]:
        if method == "GET" and (rest == "" or rest.startswith("/revision/")):
            repo = self._visible(repo_type, repo_id, auth)
            info = {
                "id": repo_id,
                "author": repo_id.split("/")[0],
                "sha": repo.sha,
                "private": repo.private,
                "siblings": [{"rfilename": p} for p in sorted(repo.files)],
                "lastModified": "2026-01-01T00:00:00.000Z",
            }
            if repo.sdk:
                info["sdk"] = repo.sdk
            return 200, info, {}
        m = re.fullmatch(r"/tree/([^/]+)(/.*)?", rest)
        if method == "GET" and m:
            repo = self._visible(repo_type, repo_id, auth)
            recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
            return 200, self._tree(repo, m[2] or "", recursive), {}
        if method == "POST" and rest.startswith("/preupload/"):
            repo = self._writable(repo_type, repo_id, auth)
            files = []
            for f in json.loads(body)["files"]:
                sample = base64.b64decode(f["sample"])
                lfs = f["size"] > LFS_THRESHOLD or b"\0" in sample or f["path"].endswith((".parquet", ".bin"))
                existing = repo.files.get(f["path"])
                oid = None
                if existing is not None:
                    oid = hashlib.sha256(existing.data).hexdigest() if existing.lfs else git_blob_sha1(existing.data)
                files.append(
                    {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid}
                )
            return 200, {"files": files, "commitOid": repo.sha}, {}
        if method == "POST" and rest.startswith("/commit/"):
            return self._commit(repo_type, repo_id, body, auth)
        raise _HubError(404, f"no such endpoint: {method} {rest}")

    def _lfs_batch(
        self, repo_type: str, repo_id: str, payload: dict[str, Any], auth: bool
    ) -> tuple[int, Any, dict[str, str]]:
        self._writable(repo_type, repo_id, auth)
        objects = []
        for o in payload["objects"]:
            obj: dict[str, Any] = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.lfs:
                obj["actions"] = {
                    "upload": {"href": f"{self.url}/lfs-upload/{o['oid']}"},
                    "verify": {"href": f"{self.url}/lfs-verify"},
                }
            objects.append(obj)
        return 200, {"transfer": "basic", "objects": objects}, {"Content-Type": "application/vnd.git-lfs+json"}

    def _commit(self, repo_type: str, repo_id: str, body: bytes, auth: bool) -> tuple[int, Any, dict[str, str]]:
        repo = self._writable(repo_type, repo_id, auth)
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = lines[0]
        if header.get("key") != "header":
            raise _HubError(400, "the first line must be the header")
        parent = header["value"].get("parentCommit")
        if parent is not None and parent != repo.sha:
            raise _HubError(412, "A commit has happened since. Please refresh and try again.")
        files = dict(repo.files)
        ops: list[tuple[str, str]] = []
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            p = value["path"]
            ops.append((key, p))
            if key == "file":
                files[p] = StoredFile(base64.b64decode(value["content"]), False)
            elif key == "lfsFile":
                data = self.lfs.get(value["oid"])
                if data is None:
                    raise _HubError(400, f"LFS object {value['oid']} of {p} was not uploaded")
                files[p] = StoredFile(data, True)
            elif key == "deletedFile":
                if p not in files:
                    raise _HubError(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[p]
            elif key == "deletedFolder":
                files = {k: v for k, v in files.items() if not k.startswith(p.rstrip("/") + "/")}
            else:
                raise _HubError(400, f"unknown operation {key!r}")
        repo.files = files
        repo.sha = self._next_sha()
        repo.history[repo.sha] = files
        summary = header["value"]
        self.commits.append(
            Commit(repo_type, repo_id, repo.sha, summary["summary"], summary.get("description", ""), ops)
        )
        url = f"{self.url}/{_PREFIX[repo_type]}{repo_id}/commit/{repo.sha}"
        return 200, {"commitUrl": url, "commitOid": repo.sha, "success": True, "pullRequestUrl": None}, {}

    def _resolve(
        self, repo_type: str, repo_id: str, revision: str, path: str, auth: bool
    ) -> tuple[int, Any, dict[str, str]]:
        repo = self._visible(repo_type, repo_id, auth)
        files = repo.at(revision)
        commit = revision if revision in repo.history and revision != "main" else repo.sha
        f = files.get(path)
        if f is None:
            raise _HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit})
        etag = hashlib.sha256(f.data).hexdigest() if f.lfs else git_blob_sha1(f.data)
        return 200, f.data, {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "Content-Type": "application/octet-stream"}


def _repo_type(prefix: str | None) -> str:
    return {"spaces/": "space", "datasets/": "dataset"}.get(prefix or "", "model")


def _forced(status: int) -> _HubError:
    if status == 401:
        return _HubError(401, "Invalid credentials in Authorization header")
    if status == 403:
        return _HubError(403, "You don't have the rights to perform this action")
    if status == 404:
        return _HubError(404, "Repository not found", "RepoNotFound")
    return _HubError(status, f"forced status {status}")
