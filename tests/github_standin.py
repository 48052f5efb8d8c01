"""A local HTTP stand-in for GitHub: repositories at commits behind the raw host and the commits API
(:class:`GitHubStandIn`)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from memeval_core.catalogue import Catalogue

# --------------------------------------------------------------------------------------------------
# Repositories at commits: the raw host and the API endpoints `sync` and `sync --check` call.


@dataclass
class StandInCommit:
    """One commit of a stand-in repository: the files it adds or changes."""

    sha: str
    date: str
    message: str
    files: dict[str, bytes | Path]
    """Path in the repository -> content (bytes, or a local file read when served)."""

    def as_api(self) -> dict[str, Any]:
        """The commit as GitHub's API shows it."""
        return {"sha": self.sha, "commit": {"message": self.message, "committer": {"date": self.date}}}


@dataclass
class Faults:
    """Raw-file requests to misbehave on, by path in the repository."""

    corrupt: set[str] = field(default_factory=set)
    """Served with one byte changed (same size, wrong SHA-256)."""
    missing: set[str] = field(default_factory=set)
    """Answered 404."""
    dropped: set[str] = field(default_factory=set)
    """Half the bytes, then the connection closes (the header promised all of them)."""


class GitHubStandIn:
    """Serves repositories at commits on 127.0.0.1, like raw.githubusercontent.com and api.github.com.

    Raw: ``GET /{owner}/{name}/{commit}/{path}``. API: ``/repos/{repo}`` (default branch),
    ``/repos/{repo}/commits/{ref}``, ``/repos/{repo}/compare/{base}...{head}`` and
    ``/repos/{repo}/commits?sha=&path=&since=``. Every request path is recorded; :attr:`max_in_flight` is the
    most raw requests served at once (each waits :attr:`delay_s`).
    """

    BRANCH = "main"

    def __init__(self) -> None:
        self.history: dict[str, list[StandInCommit]] = {}
        self.faults = Faults()
        self.requests: list[str] = []
        self.delay_s = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @classmethod
    def serving(cls, catalogue: Catalogue, data: Path) -> GitHubStandIn:
        """Every GitHub entry of ``catalogue`` at its commit, its bytes read from ``data / target``."""
        standin = cls()
        for entry in catalogue.entries:
            if entry.host != "github":
                continue
            commits = standin.history.setdefault(entry.repository, [])
            if not commits or commits[-1].sha != entry.commit:
                commits.append(StandInCommit(entry.commit, "2026-01-01T00:00:00Z", "pinned snapshot", {}))
            commits[-1].files[entry.path] = data / entry.target
        return standin

    @property
    def url(self) -> str:
        """Base URL: point ``MEMEVAL_GITHUB_RAW`` and ``MEMEVAL_GITHUB_API`` at it."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def raw_requests(self) -> list[str]:
        """Requests for file bytes (not the API)."""
        return [r for r in self.requests if not r.startswith("/repos/")]

    def __enter__(self) -> GitHubStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_commit(self, repo: str, files: dict[str, bytes], message: str, date: str) -> str:
        """A newer commit on the default branch changing ``files``; returns its hash."""
        commits = self.history[repo]
        sha = hashlib.sha1(f"{repo}-{len(commits)}-{message}".encode()).hexdigest()
        commits.append(StandInCommit(sha, date, message, dict(files)))
        return sha

    def file_at(self, repo: str, commit: str, path: str) -> bytes | None:
        """The file as of ``commit`` (its latest version at or before it), or None."""
        commits = self.history.get(repo, [])
        shas = [c.sha for c in commits]
        if commit not in shas:
            return None
        for c in reversed(commits[: shas.index(commit) + 1]):
            if path in c.files:
                content = c.files[path]
                return content.read_bytes() if isinstance(content, Path) else content
        return None

    def _api(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if not m or m[1] not in self.history:
            return 404, {"message": "Not Found"}
        commits, rest = self.history[m[1]], m[2] or ""
        by_sha = {c.sha: c for c in commits}
        if rest == "":
            return 200, {"full_name": m[1], "default_branch": self.BRANCH}
        if rest.startswith("/commits/"):
            ref = rest.removeprefix("/commits/")
            found = commits[-1] if ref == self.BRANCH else by_sha.get(ref)
            return (200, found.as_api()) if found else (404, {"message": "No commit found"})
        if rest.startswith("/compare/"):
            base, _, head = rest.removeprefix("/compare/").partition("...")
            shas = [c.sha for c in commits]
            if base not in shas or head not in shas:
                return 404, {"message": "Not Found"}
            after = commits[shas.index(base) + 1 : shas.index(head) + 1]
            files = sorted({p for c in after for p in c.files})
            return 200, {
                "status": "ahead" if after else "identical",
                "ahead_by": len(after),
                "total_commits": len(after),
                "commits": [c.as_api() for c in after],
                "files": [{"filename": p, "status": "modified"} for p in files],
            }
        if rest == "/commits":
            wanted, since = query.get("path", [""])[0], query.get("since", [""])[0]
            hits = [c for c in reversed(commits) if wanted in c.files and c.date >= since]
            return 200, [c.as_api() for c in hits]
        return 404, {"message": "Not Found"}

    def _raw(self, path: str) -> tuple[int, bytes, str]:
        parts = path.lstrip("/").split("/", 3)
        if len(parts) < 4:
            return 404, b"404: Not Found", ""
        repo, commit, inner = f"{parts[0]}/{parts[1]}", parts[2], parts[3]
        data = self.file_at(repo, commit, inner)
        if data is None or inner in self.faults.missing:
            return 404, b"404: Not Found", inner
        if inner in self.faults.corrupt:
            data = bytes([data[0] ^ 0x01]) + data[1:]
        return 200, data, inner

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str, *, send: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body if send is None else body[:send])

            def do_GET(self) -> None:
                split = urlparse(self.path)
                path = unquote(split.path)
                with standin._lock:
                    standin.requests.append(path)
                if path.startswith("/repos/"):
                    status, payload = standin._api(path, parse_qs(split.query))
                    self._send(status, json.dumps(payload).encode(), "application/json")
                    return
                # In flight until the answer starts: once its last byte is sent the client may ask for the next
                # file before this thread runs again, so counting to the end of the send overcounts.
                with standin._lock:
                    standin.in_flight += 1
                    standin.max_in_flight = max(standin.max_in_flight, standin.in_flight)
                try:
                    time.sleep(standin.delay_s)
                    status, body, inner = standin._raw(path)
                finally:
                    with standin._lock:
                        standin.in_flight -= 1
                if inner in standin.faults.dropped:
                    self.close_connection = True
                    self._send(status, body, "text/plain", send=len(body) // 2)
                else:
                    self._send(status, body, "text/plain")

        return Handler
