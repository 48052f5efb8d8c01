"""``run pmb`` and ``wrapper`` on the command line: arguments, exit codes, one-sentence errors, a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memeval_core.cli import build_parser, main
from memeval_core.runner.client import WrapperClient, WrapperError
from tests._data import PROJECT
from tests._runner import FIXTURE_DIR, fixture


def test_run_pmb_arguments() -> None:
    args = build_parser().parse_args(
        ["run", "pmb", "--url", "http://x", "--provider", "p", "--out", "o", "--no-reseed"]
    )
    assert (args.suite, args.reseed, args.resume, args.retries) == ("both", False, False, 2)


def test_unreachable_wrapper_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture()
    argv = ["run", "pmb", "--url", "http://u:pw@127.0.0.1:9", "--provider", "p", "--out", str(tmp_path)]
    code = main([*argv, "--fixtures", str(FIXTURE_DIR), "--retries", "0", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "pw" not in err
    assert err.startswith("error: reset before seeding: DELETE http://127.0.0.1:9/reset could not be reached")


def test_config_error_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture()
    bad = tmp_path / "providers.config.json"
    bad.write_text("{")
    argv = ["run", "pmb", "--url", "http://127.0.0.1:9", "--provider", "p", "--out", str(tmp_path)]
    assert main([*argv, "--fixtures", str(FIXTURE_DIR), "--config", str(bad)]) == 2
    assert "providers.config.json: $: cannot be read as JSON" in capsys.readouterr().err


def test_wrapper_command_serves_sqlite_fts(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    cmd = [sys.executable, "-m", "memeval_core", "wrapper", "sqlite-fts", "--port", "0", "--db", str(db)]
    proc = subprocess.Popen(
        cmd, cwd=PROJECT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(PROJECT)}
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" wrapper on ", 1)[1].split(" ", 1)[0]
        client = WrapperClient(url, retries=0)
        client.call("POST", "/add", {"text": "redis cache", "user_id": "u", "metadata": {"beliefId": "r"}}, what="t")
        hits = client.call("POST", "/search", {"query": "redis", "user_id": "u", "limit": 3}, what="t").body
        assert [h["id"] for h in hits["results"]] == ["r"] and db.is_file()
        client.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_replay_needs_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wrapper", "replay", "--port", "0"]) == 2
    assert "needs the report to replay" in capsys.readouterr().err


def test_client_refuses_a_non_http_url() -> None:
    with pytest.raises(WrapperError, match="not an http"):
        WrapperClient("ftp://x")
