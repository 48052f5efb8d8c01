"""A local HTTP stand-in for GitHub's contents API and raw file host, serving a local PMB tree."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

REPO = "tenurehq/precisionMemBench"


@contextmanager
def github_standin(tree: Path, *, fail_with: int | None = None) -> Iterator[str]:
    """Serve ``tree`` (laid out like the upstream repo) on 127.0.0.1; yields the base URL.

    Point ``MEMEVAL_GITHUB_API`` and ``MEMEVAL_GITHUB_RAW`` at it. ``fail_with`` answers every
    request with that HTTP status instead.
    """

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if fail_with is not None:
                self._send(fail_with, b'{"message": "nope"}')
                return
            path = urlparse(self.path).path
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            listing_prefix = f"/repos/{REPO}/contents/"
            if path.startswith(listing_prefix):
                folder = tree / path.removeprefix(listing_prefix)
                items = [
                    {
                        "name": p.name,
                        "type": "file" if p.is_file() else "dir",
                        "download_url": f"{base}/{REPO}/main/{p.relative_to(tree).as_posix()}" if p.is_file() else None,
                    }
                    for p in sorted(folder.iterdir())
                ]
                self._send(200, json.dumps(items).encode())
                return
            raw_prefix = f"/{REPO}/main/"
            target = tree / path.removeprefix(raw_prefix)
            if path.startswith(raw_prefix) and target.is_file():
                self._send(200, target.read_bytes(), "text/plain")
            else:
                self._send(404, b"404: Not Found", "text/plain")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
