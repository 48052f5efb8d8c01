"""The HTTP side of every reference wrapper: a threading stdlib server bound to 127.0.0.1, JSON in and out."""

from __future__ import annotations

import json
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
MAX_BODY = 16 * 1024 * 1024
"""Largest request body accepted."""


class BadRequestError(ValueError):
    """The request body is not what the protocol says; answered with HTTP 400 and this text."""


class Provider:
    """A memory system behind the wrapper protocol. Subclasses override what they support."""

    name = "provider"

    def reset(self) -> None:
        """Forget everything."""

    def add(self, body: dict[str, Any]) -> dict[str, Any]:
        """Store one memory; the answer may carry ``db_overhead_ms``."""
        return {}

    def search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The memories for a query, best first, as ``{id, memory, metadata}``."""
        return []

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        """Change a stored memory (the harness never calls this)."""
        return {}

    def wait(self) -> None:
        """Return once everything added is searchable."""


def require(body: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """``body[key]`` when it has the right type; else :class:`BadRequestError` naming the field."""
    value = body.get(key)
    if not isinstance(value, kind):
        raise BadRequestError(f"field {key!r} is missing or not of the right type")
    return value


def scopes_of(value: Any) -> list[str] | None:
    """A request's or a memory's scope as a list (None: not given)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return value
    raise BadRequestError("field 'scope' must be a string or a list of strings")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle on, the client's delayed ACK adds ~40 ms to each call.
    disable_nagle_algorithm = True
    server: WrapperServer

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _reply(self, status: int, doc: Any) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise BadRequestError(f"body of {n} bytes is above the limit of {MAX_BODY}")
        raw = self.rfile.read(n) if n else b""
        try:
            doc = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise BadRequestError(f"body is not JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise BadRequestError("body must be a JSON object")
        return doc

    def _dispatch(self) -> None:
        method, p, srv = self.command, self.server.provider, self.server
        try:
            body = self._body()
            route = (method, self.path.split("?", 1)[0].rstrip("/"))
            if route == ("DELETE", "/reset"):
                with srv.lock:
                    p.reset()
                self._reply(200, {"ok": True})
            elif route == ("POST", "/add"):
                with srv.lock:
                    out = p.add(body)
                self._reply(200, out)
            elif route == ("POST", "/search"):
                if srv.delay_s:
                    time.sleep(srv.delay_s)
                with srv.lock:
                    results = p.search(body)
                self._reply(200, {"results": results})
            elif route == ("PUT", "/update"):
                with srv.lock:
                    self._reply(200, p.update(body))
            elif route == ("POST", "/wait"):
                p.wait()
                self._reply(200, {"ok": True})
            else:
                self._reply(404, {"error": f"no route {method} {self.path}"})
        except BadRequestError as exc:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": str(exc)})

    # http.server calls ``do_<command>``; ``_dispatch`` reads the command.
    do_DELETE = do_POST = do_PUT = _dispatch  # noqa: N815


class WrapperServer(ThreadingHTTPServer):
    """Serves one provider on 127.0.0.1; requests that touch the store run one at a time."""

    daemon_threads = True

    def __init__(self, provider: Provider, port: int = 0, *, delay_ms: float = 0, verbose: bool = False) -> None:
        super().__init__((HOST, port), _Handler)
        self.provider = provider
        self.delay_s = delay_ms / 1000
        self.verbose = verbose
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{HOST}:{self.server_address[1]}"
