"""Push against a local stand-in of the Hugging Face Hub: repo creation, one commit per fingerprint, dry run,
the details dataset, and one clear sentence (never the token) for 401, 403, 404 and network failures."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memeval_core.cli import build_parser
from memeval_core.cli import main as publish_main
from memeval_core.cli_publish import register
from memeval_core.export import space
from memeval_core.export.hub import PushError, git_blob_sha1, push_space
from memeval_core.export.models import Leaderboard, dumps, fingerprint
from tests.hub_standin import GITATTRIBUTES, HUB_TOKEN, HubStandIn
from tests.test_export_models import doc, pmb_row

# huggingface_hub's LFS upload passes raw bytes as `data=`, which httpx2 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

ROOT = Path(__file__).resolve().parents[1]
TOKEN = HUB_TOKEN
SPACE = "standin-user/memeval-board"
DATASET = "standin-user/memeval-details"


def make_export(directory: Path, report_sha: str = "b" * 64, names: tuple[str, ...] = ("tenure", "mem0")) -> Path:
    """A small export: leaderboard.json, README, Dockerfile, app.py and one details Parquet file."""
    d = doc()
    d["inputs"][1]["sha256"] = report_sha
    d["fingerprint"] = fingerprint([d["inputs"][0]["sha256"], report_sha], "pmb-1")
    d["tables"][0]["rows"] = [pmb_row(rank=i, display_name=n, run_id=f"r{i}") for i, n in enumerate(names, 1)]
    board = Leaderboard.model_validate(d)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "leaderboard.json").write_text(dumps(board), encoding="utf-8")
    (directory / "README.md").write_text(space.readme(board, space.SpaceOptions(), space.export_date({})))
    (directory / "Dockerfile").write_text(space.dockerfile())
    (directory / "app.py").write_text("import streamlit as st\n")
    details = directory / "data" / "details"
    details.mkdir(parents=True, exist_ok=True)
    table = pa.table({"run_id": [f"r{i}" for i in range(len(names))], "display_name": list(names)})
    pq.write_table(table, details / "pmb-single-turn.parquet", compression="zstd")
    return directory


def digest(directory: Path) -> dict[str, str]:
    """SHA-256 and mtime of every file: a push must not even touch the export."""
    return {
        p.relative_to(directory).as_posix(): f"{hashlib.sha256(p.read_bytes()).hexdigest()}:{p.stat().st_mtime_ns}"
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def export_dir(tmp_path: Path) -> Path:
    return make_export(tmp_path / "hf_export")


def writes(hub: HubStandIn) -> list[str]:
    return [f"{r.method} {r.path}" for r in hub.requests if r.method in ("POST", "PUT")]


def test_first_push_creates_the_space_and_makes_one_commit(hub: HubStandIn, export_dir: Path) -> None:
    result = push_space(export_dir, SPACE, token=None)
    repo = hub.repo("space", SPACE)
    assert (repo.sdk, repo.private) == ("docker", False)
    (commit,) = hub.commits
    fp = Leaderboard.model_validate_json((export_dir / "leaderboard.json").read_bytes()).fingerprint
    assert fp in commit.message
    assert result.space.status == "committed"
    assert result.space.commit_url == f"{hub.url}/spaces/{SPACE}/commit/{commit.oid}"
    local = {p.relative_to(export_dir).as_posix(): p.read_bytes() for p in export_dir.rglob("*") if p.is_file()}
    assert {p: f.data for p, f in repo.files.items()} == {**local, ".gitattributes": GITATTRIBUTES}
    assert repo.files["data/details/pmb-single-turn.parquet"].lfs
    assert not repo.files["leaderboard.json"].lfs
    assert sorted(commit.operations) == sorted(
        [("lfsFile", "data/details/pmb-single-turn.parquet")]
        + [("file", p) for p in local if not p.endswith(".parquet")]
    )
    write_requests = [r for r in hub.requests if r.method in ("POST", "PUT") and not r.path.startswith("/lfs-upload/")]
    assert write_requests and all(r.authorized for r in write_requests)
    assert "POST /api/repos/create" in writes(hub)
    assert f"POST /api/spaces/{SPACE}/commit/main" in writes(hub)
    assert result.lines[0].startswith(
        f"Committed fingerprint {fp[:12]} to Space {SPACE}: 5 added, 0 updated, 0 deleted"
    )


def test_second_push_with_the_same_fingerprint_commits_nothing(
    hub: HubStandIn, export_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert publish_main(["push", "--space", SPACE, "--from", str(export_dir)]) == 0
    capsys.readouterr()
    before = hub.repo("space", SPACE).sha
    assert publish_main(["push", "--space", SPACE, "--from", str(export_dir)]) == 0
    out = capsys.readouterr().out
    assert len(hub.commits) == 1
    assert hub.repo("space", SPACE).sha == before
    fp = Leaderboard.model_validate_json((export_dir / "leaderboard.json").read_bytes()).fingerprint
    assert out == f"Space {SPACE} already holds fingerprint {fp[:12]}; nothing committed.\n"


def test_new_fingerprint_updates_and_deletes_stale_files(hub: HubStandIn, tmp_path: Path) -> None:
    first = make_export(tmp_path / "one")
    push_space(first, SPACE, token=TOKEN)
    (first / "Dockerfile").unlink()
    second = make_export(tmp_path / "two", report_sha="c" * 64, names=("tenure",))
    (second / "Dockerfile").unlink()
    result = push_space(second, SPACE, token=TOKEN)
    assert len(hub.commits) == 2
    changes = {c.path: c.action for c in result.space.changes}
    assert changes == {
        "leaderboard.json": "update",
        "README.md": "update",
        "data/details/pmb-single-turn.parquet": "update",
        "Dockerfile": "delete",
    }
    assert result.space.unchanged_files == 1  # app.py
    repo = hub.repo("space", SPACE)
    assert "Dockerfile" not in repo.files and ".gitattributes" in repo.files
    assert ("deletedFile", "Dockerfile") in hub.commits[1].operations


def test_force_commits_even_with_the_same_fingerprint(hub: HubStandIn, export_dir: Path) -> None:
    push_space(export_dir, SPACE, token=TOKEN)
    (export_dir / "app.py").write_text("import streamlit as st  # newer app\n")
    unchanged = push_space(export_dir, SPACE, token=TOKEN)
    assert unchanged.space.status == "unchanged"
    assert "1 file(s) differ; use --force" in unchanged.lines[0]
    forced = push_space(export_dir, SPACE, token=TOKEN, force=True)
    assert forced.space.status == "committed" and len(hub.commits) == 2
    assert hub.commits[1].operations == [("file", "app.py")]


def test_dry_run_lists_changes_and_commits_nothing(hub: HubStandIn, tmp_path: Path) -> None:
    first = make_export(tmp_path / "one")
    fresh = push_space(first, SPACE, token=TOKEN, dry_run=True)
    assert fresh.space.status == "dry-run" and not fresh.space.repo_exists
    assert {c.action for c in fresh.space.changes} == {"add"} and len(fresh.space.changes) == 5
    assert "(it would be created)" in fresh.lines[0]
    assert not hub.repos and not hub.commits
    assert writes(hub) == []
    push_space(first, SPACE, token=TOKEN)
    second = make_export(tmp_path / "two", report_sha="d" * 64)
    (second / "NOTES.md").write_text("new\n")
    (second / "app.py").unlink()
    requests_before = len(hub.requests)
    plan = push_space(second, SPACE, token=TOKEN, dry_run=True)
    assert {c.path: c.action for c in plan.space.changes} == {
        "NOTES.md": "add",
        "README.md": "update",
        "leaderboard.json": "update",
        "app.py": "delete",
    }
    assert plan.space.unchanged_files == 2  # Dockerfile and the Parquet file (compared by LFS SHA-256)
    assert len(hub.commits) == 1
    assert not [r for r in hub.requests[requests_before:] if r.method in ("POST", "PUT")]
    assert "  add    NOTES.md" in plan.lines and "  delete app.py" in plan.lines
    same = push_space(first, SPACE, token=TOKEN, dry_run=True)
    assert "a push would commit nothing" in same.lines[0]


def test_private_space(hub: HubStandIn, export_dir: Path) -> None:
    push_space(export_dir, SPACE, token=TOKEN, private=True)
    assert hub.repo("space", SPACE).private


def test_dataset_gets_the_details(hub: HubStandIn, export_dir: Path) -> None:
    result = push_space(export_dir, SPACE, token=TOKEN, dataset=DATASET)
    assert result.dataset is not None and result.dataset.status == "committed"
    repo = hub.repo("dataset", DATASET)
    assert sorted(repo.files) == [".gitattributes", "README.md", "data/pmb-single-turn.parquet", "leaderboard.json"]
    assert (
        repo.files["data/pmb-single-turn.parquet"].data
        == (export_dir / "data/details/pmb-single-turn.parquet").read_bytes()
    )
    assert b'config_name: "pmb-single-turn"' in repo.files["README.md"].data
    assert [c.repo_type for c in hub.commits] == ["space", "dataset"]
    again = push_space(export_dir, SPACE, token=TOKEN, dataset=DATASET)
    assert again.dataset is not None and again.dataset.status == "unchanged" and len(hub.commits) == 2


def test_git_blob_sha1_matches_git() -> None:
    # `printf 'Hello, World!' | git hash-object --stdin`
    assert git_blob_sha1(b"Hello, World!") == "b45ef6fec89518d314f546fd6c3025367b721684"
    assert git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def run_failing_push(
    export_dir: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, *extra: str
) -> str:
    """Run the push CLI expecting failure; return its one error line after checking the export and the token."""
    before = digest(export_dir)
    with caplog.at_level(logging.DEBUG):
        code = publish_main(["push", "--space", SPACE, "--from", str(export_dir), *extra])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    for text in (out, err, caplog.text):
        assert TOKEN not in text and "StandInToken" not in text
    assert digest(export_dir) == before
    return err


def test_401_bad_token(
    hub: HubStandIn,
    export_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_" + "WrongToken" * 4)
    err = run_failing_push(export_dir, capsys, caplog)
    assert err.startswith("error: The Hugging Face Hub rejected the token (401 Unauthorized)")
    assert "WrongToken" not in err and "WrongToken" not in caplog.text
    assert not hub.commits and not hub.repos


def test_403_namespace_not_writable(
    hub: HubStandIn, export_dir: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    before = digest(export_dir)
    with pytest.raises(PushError, match=r"^The token may not write to Space someone-else/board \(403 Forbidden\)"):
        push_space(export_dir, "someone-else/board", token=TOKEN)
    assert digest(export_dir) == before
    hub.fail_status = 403
    err = run_failing_push(export_dir, capsys, caplog)
    assert "(403 Forbidden)" in err
    assert not hub.commits


def test_404_missing_repo(
    hub: HubStandIn, export_dir: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    hub.fail_status, hub.fail_match = 404, "/datasets/"
    err = run_failing_push(export_dir, capsys, caplog, "--dataset", DATASET)
    assert err == (
        f"error: The dataset {DATASET} was not found (404 Not Found): check OWNER/NAME and that the owner exists.\n"
    )
    assert [c.repo_type for c in hub.commits] == ["space"]


def test_dropped_connection(
    hub: HubStandIn, export_dir: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    hub.drop_connections = True
    err = run_failing_push(export_dir, capsys, caplog)
    assert err == (
        f"error: Network error: could not talk to the Hugging Face Hub at {hub.url} (RemoteProtocolError); "
        "nothing was committed.\n"
    )
    assert hub.requests and not hub.commits


def test_connection_refused(
    hub: HubStandIn,
    export_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    err = run_failing_push(export_dir, capsys, caplog)
    assert err == (
        f"error: Network error: could not talk to the Hugging Face Hub at http://127.0.0.1:{port} (ConnectError); "
        "nothing was committed.\n"
    )


def test_missing_token_and_bad_arguments(
    hub: HubStandIn, export_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(PushError, match=r"^No Hugging Face token found: set HF_TOKEN or run `hf auth login`"):
        push_space(export_dir, SPACE)
    with pytest.raises(PushError, match="is not of the form OWNER/NAME"):
        push_space(export_dir, "no-owner", token=TOKEN)
    with pytest.raises(PushError, match=r"holds no leaderboard\.json; run `python -m memeval_core export` first"):
        push_space(tmp_path / "empty", SPACE, token=TOKEN)
    assert not hub.requests


def test_token_stays_out_of_exceptions_and_logs(
    hub: HubStandIn, export_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hub.fail_status = 401
    with caplog.at_level(logging.DEBUG), pytest.raises(PushError) as info:
        push_space(export_dir, SPACE, token=TOKEN)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)
    assert TOKEN not in caplog.text
    hub.fail_status = None
    with caplog.at_level(logging.DEBUG):
        result = push_space(export_dir, SPACE, token=TOKEN)
    assert TOKEN not in "\n".join(result.lines) and TOKEN not in caplog.text
    assert all(TOKEN.encode() not in f.data for f in hub.repo("space", SPACE).files.values())


def test_register_adds_export_and_push_without_a_token_flag(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="memeval")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["push", "--space", SPACE, "--dry-run", "--dataset", DATASET])
    assert (args.space, args.dry_run, args.dataset, args.from_dir, args.private) == (
        SPACE,
        True,
        DATASET,
        "hf_export",
        False,
    )
    args = parser.parse_args(["export", "--results", "r", "--out", "o"])
    assert (args.results, args.out, args.fixtures) == ("r", "o", None)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["push", "--space", SPACE, "--token", "x"])
    capsys.readouterr()


def test_cli_in_a_fresh_interpreter_reads_hf_endpoint(hub: HubStandIn, export_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_DISABLE_XET": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "memeval_core", "push", "--space", SPACE, "--from", str(export_dir)]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Committed fingerprint ")
    assert TOKEN not in proc.stdout + proc.stderr
    assert len(hub.commits) == 1
    dry = subprocess.run([*cmd, "--dry-run"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert dry.returncode == 0 and "a push would commit nothing" in dry.stdout
