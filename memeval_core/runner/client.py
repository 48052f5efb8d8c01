"""A small HTTP client for a provider wrapper: stdlib ``http.client``, one kept-alive connection, a per-call
timeout and bounded retries on connection errors, timeouts and 5xx answers.

Every failure is a :class:`WrapperError` whose text is one sentence naming the call, the wrapper (its URL
without credentials) and what came back.
"""

from __future__ import annotations

import base64
import http.client
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from memeval_core.judge.client import public_url

RETRY_PAUSE_S = 0.2
"""First pause before a retry; it doubles with each further retry."""


class WrapperError(Exception):
    """The wrapper failed, timed out or answered something the harness cannot use."""


def snippet(raw: bytes | str, limit: int = 200) -> str:
    """The start of a response body, for a message."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "…")


@dataclass(frozen=True)
class Reply:
    """A decoded JSON answer and the wall-clock time of the call that gave it."""

    body: Any
    """The parsed JSON body (None for an empty body)."""
    elapsed_ms: float
    """Time from sending the request to having read the whole answer (the last attempt)."""


class WrapperClient:
    """Calls one wrapper; not thread-safe (the harness calls its wrapper one request at a time)."""

    def __init__(self, url: str, *, timeout_s: float = 30.0, retries: int = 2) -> None:
        parts = urlsplit(url)
        try:
            self.url = public_url(url)
            port = parts.port
        except ValueError:
            raise WrapperError(
                f"the wrapper URL {parts.scheme}://{parts.hostname}… has a port that is not a number"
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise WrapperError(f"the wrapper URL {self.url!r} is not an http(s) URL with a host")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = port
        self._prefix = parts.path.rstrip("/")
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if parts.username is not None:
            creds = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(creds).decode()
        self.timeout_s = timeout_s
        self.retries = retries
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        """Close the kept-alive connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self.timeout_s)
        return self._conn

    def call(self, method: str, path: str, body: Any = None, *, what: str) -> Reply:
        """``method path`` with a JSON body; the parsed answer. ``what`` names the call in messages."""
        data = None if body is None else json.dumps(body).encode()
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(RETRY_PAUSE_S * 2 ** (attempt - 1))
            start = time.perf_counter()
            try:
                conn = self._connection()
                conn.request(method, self._prefix + path, body=data, headers=self._headers)
                resp = conn.getresponse()
                raw = resp.read()
            except TimeoutError:
                self.close()
                last = f"timed out after {self.timeout_s:g} s"
                continue
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                last = f"could not be reached ({type(exc).__name__}: {exc})"
                continue
            elapsed = (time.perf_counter() - start) * 1000
            if resp.status >= 500:
                last = f"answered HTTP {resp.status} with {snippet(raw)}"
                continue
            if resp.status >= 400:
                raise WrapperError(f"{what}: {method} {self.url}{path} answered HTTP {resp.status} with {snippet(raw)}")
            return Reply(self._decode(raw, method, path, what), elapsed)
        tries = f"{self.retries + 1} attempt{'s' if self.retries else ''}"
        raise WrapperError(f"{what}: {method} {self.url}{path} {last} ({tries})")

    def _decode(self, raw: bytes, method: str, path: str, what: str) -> Any:
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise WrapperError(f"{what}: {method} {self.url}{path} answered malformed JSON: {snippet(raw)}") from None
