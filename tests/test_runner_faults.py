"""A wrapper that fails: 500, timeout, malformed JSON, unknown ids, a non-list; each gives one sentence naming the
case and the response. An interrupted run resumes without re-seeding and gives the same report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any, ClassVar

import pytest

from memeval_core.runner import checkpoint
from memeval_core.runner.client import WrapperError
from memeval_core.runner.run import StoppedError
from memeval_core.wrappers.sqlite_fts import SqliteFts
from tests._data import PROJECT
from tests._runner import FIXTURE_DIR, fixture, run, serving
from tests._runner_compare import compare_cases, compare_summary

FIRST_CASE = "happy-stack-repository-layer"


class _Faulty(BaseHTTPRequestHandler):
    """Answers /reset and /add correctly and every /search with the fault of the server's ``mode``."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    calls: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, raw: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _any(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = getattr(self.server, "mode", "")
        _Faulty.calls.append(f"{self.command} {self.path}")
        if not self.path.startswith("/search"):
            self._send(200, b"{}")
        elif mode == "500":
            self._send(500, b'{"error": "index offline"}')
        elif mode == "timeout":
            time.sleep(1.0)
            self._send(200, b'{"results": []}')
        elif mode == "malformed":
            self._send(200, b'{"results": [')
        elif mode == "unknown":
            self._send(200, json.dumps({"results": [{"id": "mem-42", "memory": "x"}]}).encode())
        elif mode == "not-a-list":
            self._send(200, b'{"results": {"id": "b-redis-code"}}')

    def do_POST(self) -> None:
        self._any()

    def do_DELETE(self) -> None:
        self._any()


def _fault(mode: str, tmp_path: Path, **kw: Any) -> str:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Faulty)
    srv.mode = mode  # type: ignore[attr-defined]
    Thread(target=srv.serve_forever, daemon=True).start()
    _Faulty.calls.clear()
    try:
        with pytest.raises(WrapperError) as info:
            run(f"http://127.0.0.1:{srv.server_address[1]}", tmp_path, ("single",), **kw)
    finally:
        srv.shutdown()
        srv.server_close()
    assert not (tmp_path / "retrieval-report-test.json").exists()  # never a partial report as if complete
    return str(info.value)


def test_500_is_retried_then_named(tmp_path: Path) -> None:
    msg = _fault("500", tmp_path, retries=2)
    assert msg.startswith(f"case {FIRST_CASE}: POST http://127.0.0.1:")
    assert '/search answered HTTP 500 with \'{"error": "index offline"}\' (3 attempts)' in msg
    assert _Faulty.calls.count("POST /search") == 3


def test_timeout(tmp_path: Path) -> None:
    msg = _fault("timeout", tmp_path, timeout_s=0.2, retries=0)
    assert msg.startswith(f"case {FIRST_CASE}: POST ") and msg.endswith("/search timed out after 0.2 s (1 attempt)")


def test_malformed_json(tmp_path: Path) -> None:
    msg = _fault("malformed", tmp_path)
    assert msg.startswith(f"case {FIRST_CASE}: POST ") and msg.endswith(
        "/search answered malformed JSON: '{\"results\": ['"
    )


def test_unknown_ids(tmp_path: Path) -> None:
    msg = _fault("unknown", tmp_path)
    assert msg.startswith(f"case {FIRST_CASE}: POST ")
    assert "returned ids the seed index does not know: 'mem-42' (return each memory's metadata.beliefId" in msg


def test_unknown_ids_can_be_dropped_as_upstream_does(tmp_path: Path) -> None:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Faulty)
    srv.mode = "unknown"  # type: ignore[attr-defined]
    Thread(target=srv.serve_forever, daemon=True).start()
    try:
        (path,) = run(f"http://127.0.0.1:{srv.server_address[1]}", tmp_path, ("single",), drop_unknown_ids=True)
    finally:
        srv.shutdown()
        srv.server_close()
    assert all(c["relevantBeliefs"] == [] for c in json.loads(path.read_text())["cases"])


def test_not_a_list(tmp_path: Path) -> None:
    msg = _fault("not-a-list", tmp_path)
    assert msg.startswith(f"case {FIRST_CASE}: POST ")
    assert msg.endswith(
        'answered \'{"results": {"id": "b-redis-code"}}\', which is neither {"results": [...]} nor a list'
    )


def test_unreachable_wrapper(tmp_path: Path) -> None:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Faulty)
    port = srv.server_address[1]
    srv.server_close()
    with pytest.raises(WrapperError, match=r"^reset before seeding: DELETE http://127.0.0.1:\d+/reset could not be"):
        run(f"http://127.0.0.1:{port}", tmp_path, ("single",), retries=1)


class _Counting(SqliteFts):
    adds = 0

    def add(self, body: dict[str, Any]) -> dict[str, Any]:
        type(self).adds += 1
        return super().add(body)


def _same(a: Path, b: Path) -> None:
    ours, theirs = json.loads(a.read_text()), json.loads(b.read_text())
    assert compare_cases(ours, theirs) == [] and compare_summary(ours, theirs) == []
    assert ours["ingestion"]["beliefCount"] == theirs["ingestion"]["beliefCount"] == len(fixture().beliefs)


def test_session_resume_mid_session_gives_the_same_report(tmp_path: Path) -> None:
    with serving(_Counting(tmp_path / "fts.db")) as srv:
        (whole,) = run(srv.url, tmp_path / "whole", ("session",))
        with pytest.raises(StoppedError):
            run(srv.url, tmp_path / "cut", ("session",), stop_after=7)  # after turn 4 created a belief
        report = tmp_path / "cut" / "session-retrieval-report-test.json"
        assert not report.exists() and checkpoint.partial_path(report).is_file()
        before = _Counting.adds
        (resumed,) = run(srv.url, tmp_path / "cut", ("session",), resume=True)
        assert _Counting.adds == before  # no re-seeding, and the created belief is not sent again
    assert not checkpoint.partial_path(report).exists()
    _same(resumed, whole)


def test_resume_after_sigkill_gives_the_same_report(tmp_path: Path) -> None:
    with serving(_Counting(tmp_path / "fts.db"), delay_ms=10) as srv:
        (whole,) = run(srv.url, tmp_path / "whole", ("single",))
        cmd = [sys.executable, "-m", "memeval_core", "run", "pmb", "--url", srv.url, "--provider", "test"]
        cmd += ["--out", str(tmp_path / "cut"), "--fixtures", str(FIXTURE_DIR), "--suite", "single", "--quiet"]
        proc = subprocess.Popen(cmd, cwd=PROJECT, env={**os.environ, "PYTHONPATH": str(PROJECT)})
        part = checkpoint.partial_path(tmp_path / "cut" / "retrieval-report-test.json")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not part.is_file() or part.read_text().count('"entry"') < 10):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        done = part.read_text().count('"entry"')
        assert 10 <= done < len(fixture().cases)
        assert not (tmp_path / "cut" / "retrieval-report-test.json").exists()
        before = _Counting.adds
        resume = subprocess.run([*cmd, "--resume"], cwd=PROJECT, capture_output=True, text=True, check=False)
        assert resume.returncode == 0, resume.stderr
        assert _Counting.adds == before
    _same(tmp_path / "cut" / "retrieval-report-test.json", whole)
