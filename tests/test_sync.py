"""sync: the catalogue's files against a local GitHub stand-in (and the Hub stand-in), checked, resumable,
nothing half-written on failure; --list, --only, --check, --from DIR."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from memeval_core import cli
from memeval_core import sync as sync_mod
from memeval_core.catalogue import Catalogue, CatalogueEntry, by_source, default_catalogue
from memeval_core.pmb.ingest import load_pmb
from memeval_core.sync import (
    ProgressBar,
    SyncError,
    check_upstream,
    has_results,
    is_present,
    listing,
    sync_catalogue,
)
from tests._data import PMB_DIR, require
from tests.apptest import run_page
from tests.github_standin import GitHubStandIn

MEMOBASE = "memodb-io/memobase"
LOCOMO = "snap-research/LoCoMo"
BROKEN = "docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0710_3000.json"


@pytest.fixture
def standin(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubStandIn]:
    """The catalogue's GitHub files at their pinned commits, served from ../shared/data on 127.0.0.1."""
    with GitHubStandIn.serving(default_catalogue(), shared_data) as server:
        monkeypatch.setenv("MEMEVAL_GITHUB_RAW", server.url)
        monkeypatch.setenv("MEMEVAL_GITHUB_API", server.url)
        yield server


@pytest.fixture
def small() -> Catalogue:
    """Two sources: memobase (two runs) and the LoCoMo dataset (one file)."""
    return Catalogue(entries=tuple(e for e in default_catalogue().entries if e.repository in (MEMOBASE, LOCOMO)))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``python -m memeval_core ARGV`` in this process: (exit code, stdout, stderr)."""
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones included) with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- a full sync ----------------------------------------------------------------------------------


def test_full_sync_gives_the_leaderboard_of_the_shared_data(
    tmp_path: Path, standin: GitHubStandIn, shared_data: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", "off")
    monkeypatch.setenv("MEMEVAL_WORKERS", "1")
    results = tmp_path / "results"
    standin.delay_s = 0.01  # long enough for the fetches to overlap
    started = time.perf_counter()
    code, out, err = run_cli(capsys, "sync", "--results", str(results))
    seconds = time.perf_counter() - started
    cat = default_catalogue()
    assert code == 0, err
    assert f"synced {len(cat.entries)} files" in out and "0 already present" in out
    assert err.splitlines()[0] == f"fetching {len(cat.entries)} files (44.5 MB)"
    assert err.splitlines()[-1].startswith(f"[{len(cat.entries)}/{len(cat.entries)} files, 44.5 MB/44.5 MB] fetched ")
    assert 2 <= standin.max_in_flight <= sync_mod.PARALLEL, "parallel, within the bound"
    pinned = {f"/{e.repository}/{e.commit}/{e.path}" for e in cat.entries}
    assert sorted(standin.raw_requests) == sorted(pinned), "each file once, at its pinned commit"
    assert seconds < 30
    assert not [p for p in results.iterdir() if p.name.startswith(".")], "no staging folder left"

    code, synced, _ = run_cli(capsys, "leaderboard", "--results", str(results), "--format", "json")
    assert code == 0
    code, direct, _ = run_cli(capsys, "leaderboard", "--results", str(shared_data), "--format", "json")
    assert code == 0
    assert len(json.loads(direct)) == 52
    assert synced == direct


def test_a_second_sync_fetches_nothing(
    tmp_path: Path, standin: GitHubStandIn, small: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    first = sync_catalogue(tmp_path, catalogue=small)
    assert len(first.fetched) == 3 and first.present == () and first.failures == ()
    standin.requests.clear()
    again = sync_catalogue(tmp_path, catalogue=small)
    assert standin.requests == []
    assert again.fetched == () and len(again.present) == 3
    # A file changed locally is fetched again, and only that one.
    (tmp_path / small.entries[0].target).write_bytes(b"edited")
    third = sync_catalogue(tmp_path, catalogue=small)
    assert third.fetched == (small.entries[0].target,) and len(standin.raw_requests) == 1


# --- failures leave the previous data untouched ---------------------------------------------------


class FullDisk(io.BytesIO):
    """A staging file on a full disk: every write fails."""

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("corrupt", "has SHA-256 "),
        ("missing", "answered HTTP 404"),
        ("dropped", "dropped midway"),
        ("disk", "could not be written to the staging folder: No space left on device"),
    ],
)
def test_a_failed_file_leaves_its_source_as_it_was(
    tmp_path: Path, standin: GitHubStandIn, small: Catalogue, monkeypatch: pytest.MonkeyPatch, fault: str, said: str
) -> None:
    memobase = [e for e in small.entries if e.repository == MEMOBASE]
    for e in memobase:  # an older sync's files
        (tmp_path / e.target).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / e.target).write_bytes(b'{"0": []}')
    before = files_under(tmp_path)
    if fault == "disk":
        real = sync_mod._open_for_writing

        def opener(path: Path) -> IO[bytes]:
            return FullDisk() if path.name == Path(BROKEN).name else real(path)

        monkeypatch.setattr(sync_mod, "_open_for_writing", opener)
    else:
        getattr(standin.faults, {"corrupt": "corrupt", "missing": "missing", "dropped": "dropped"}[fault]).add(BROKEN)
    res = sync_catalogue(tmp_path, catalogue=small)
    (failure,) = res.failures
    target = next(e.target for e in memobase if e.path == BROKEN)
    assert failure.startswith(f"{MEMOBASE}@358c16b: {target}: ")
    assert said in failure and failure.endswith("(1 of its 2 files failed); its files were left as they were.")
    after = files_under(tmp_path)
    assert {k: after[k] for k in before} == before, "both memobase files are the older ones"
    assert res.fetched == ("locomo/data/locomo10.json",), "the other source still arrives"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_failure_on_the_command_line(
    tmp_path: Path, standin: GitHubStandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    standin.faults.missing.add(BROKEN)
    code, out, err = run_cli(capsys, "sync", "--results", str(tmp_path), "--only", "qa")
    assert code == 1
    assert f"error: {MEMOBASE}@358c16b: memobase/{BROKEN}: " in err and "HTTP 404" in err
    assert "synced " in out and "1 source(s) failed" in out
    assert not (tmp_path / "memobase").exists()


def test_offline_names_each_source_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMEVAL_GITHUB_RAW", "http://127.0.0.1:9")  # nothing listens on the discard port
    code, out, err = run_cli(capsys, "sync", "--results", str(tmp_path / "results"))
    assert code == 1 and "synced 0 files" in out
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    sources = by_source(default_catalogue().entries)
    assert len(errors) == len(sources)
    for (_, repo, commit), line in zip(sources, errors, strict=True):
        assert line.startswith(f"error: {repo}@{commit[:7]}: ") and "cannot connect" in line
    assert not has_results(tmp_path / "results")


def test_the_app_starts_with_what_arrived(
    tmp_path: Path, standin: GitHubStandIn, small: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.faults.missing.add("data/locomo10.json")
    res = sync_catalogue(tmp_path, catalogue=small)
    assert len(res.failures) == 1 and res.failures[0].startswith(f"{LOCOMO}@3eb6f2c: ")
    assert len(res.fetched) == 2
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    monkeypatch.setenv("MEMEVAL_CACHE_DIR", str(tmp_path / ".cache"))
    at = run_page("pages/home.py")
    boards = [d.value for d in at.dataframe if "display_name" in d.value.columns]
    names = sorted(str(link).split("#", 1)[1] for link in boards[0]["display_name"])  # run-page links
    assert names == ["memobase (memobase_eval_0503_3000)", "memobase (memobase_eval_0710_3000)"]


def test_links_inside_the_results_are_not_written_through(
    tmp_path: Path, standin: GitHubStandIn, small: Catalogue
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    results = tmp_path / "results"
    results.mkdir()
    (results / "memobase").symlink_to(outside)
    res = sync_catalogue(results, catalogue=small)
    assert len(res.failures) == 1 and "is a link; memeval does not write through links" in res.failures[0]
    assert list(outside.iterdir()) == []


# --- --list, --only, --check -----------------------------------------------------------------------


def test_list_says_what_would_be_fetched_and_fetches_nothing(
    tmp_path: Path, standin: GitHubStandIn, small: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    sync_catalogue(tmp_path, catalogue=Catalogue(entries=small.entries[:1]))
    standin.requests.clear()
    lines = listing(tmp_path, small)
    assert lines[0].split() == ["status", "size", "licence", "source", "target"]
    rows = {line.split()[-1]: line.split() for line in lines[1:-1]}
    dataset, run_0503, run_0710 = small.entries
    assert rows[dataset.target][:4] == ["present", "2.7", "MB", "CC-BY-NC-4.0"]
    assert rows[run_0503.target][:4] == ["fetch", "510.0", "KB", "Apache-2.0"]
    assert rows[run_0503.target][4] == f"{MEMOBASE}@358c16b" and rows[run_0710.target][0] == "fetch"
    assert lines[-1] == (
        "3 files (3.7 MB) in the catalogue; to fetch: 2 files (1019.5 KB): Apache-2.0 2 files (1019.5 KB)"
    )
    code, out, _ = run_cli(capsys, "sync", "--results", str(tmp_path / "new"), "--list", "--only", "datasets")
    assert code == 0 and "locomo/data/locomo10.json" in out and "locomo-audit/errors.json" in out
    assert "memobase" not in out and "2 files (2.8 MB) in the catalogue" in out
    assert standin.requests == [] and not (tmp_path / "new").exists()


@pytest.mark.parametrize(("only", "count"), [("datasets", 2), ("pmb", 27)])
def test_only_fetches_one_kind(
    tmp_path: Path, standin: GitHubStandIn, capsys: pytest.CaptureFixture[str], only: str, count: int
) -> None:
    code, out, _ = run_cli(capsys, "sync", "--results", str(tmp_path), "--only", only)
    assert code == 0 and f"synced {count} files" in out
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == count
    if only == "pmb":
        assert len(load_pmb(tmp_path).runs) == 24
    else:
        assert (tmp_path / "locomo/data/locomo10.json").is_file() and (tmp_path / "locomo-audit/errors.json").is_file()


def test_check_lists_newer_commits_touching_catalogued_paths(
    tmp_path: Path, standin: GitHubStandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "sync", "--check", "--only", "qa")
    assert code == 0, out
    assert f"{MEMOBASE}@358c16b: no newer commit touches its catalogued files (main is at 358c16b)." in out
    rescored = standin.add_commit(MEMOBASE, {BROKEN: b"{}"}, "Re-score the 0710 run", "2026-02-01T10:00:00Z")
    standin.add_commit(MEMOBASE, {"README.md": b"# docs"}, "Docs only", "2026-02-02T10:00:00Z")
    standin.requests.clear()
    code, out, _ = run_cli(capsys, "sync", "--check", "--results", str(tmp_path / "r"))
    assert code == 1
    lines = out.splitlines()
    at = lines.index(
        f"{MEMOBASE}@358c16b: 1 newer commit(s) on main (at {standin.history[MEMOBASE][-1].sha[:7]}, "
        "2 after the pin) touch catalogued files:"
    )
    assert lines[at + 1] == f"  {rescored[:7]} 2026-02-01 Re-score the 0710 run — {BROKEN}"
    assert "Docs only" not in out
    assert sum("no newer commit touches" in line for line in lines) == len(by_source(default_catalogue().entries)) - 1
    assert standin.raw_requests == [] and not (tmp_path / "r").exists(), "--check changes nothing"
    (memobase,) = [c for c in check_upstream(kinds=["qa"]) if c.label.startswith(MEMOBASE)]
    assert memobase.ahead == 2 and [c.paths for c in memobase.newer] == [(BROKEN,)]


def test_check_names_a_source_it_cannot_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_GITHUB_API", "http://127.0.0.1:9")
    checks = check_upstream(kinds=["dataset"])
    assert [c.lines()[0].split(": not checked: cannot reach ")[0] for c in checks] == [
        "dial481/locomo-audit@9493fb4",
        "snap-research/LoCoMo@3eb6f2c",
    ]


# --- --from DIR --------------------------------------------------------------------------------------


def test_from_a_copy_like_the_shared_data(tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_GITHUB_RAW", "http://127.0.0.1:9")  # never used
    res = sync_catalogue(tmp_path, from_dir=shared_data)
    assert len(res.fetched) == len(default_catalogue().entries) and res.failures == () and res.notes == ()
    assert all(is_present(tmp_path, e) for e in default_catalogue().entries)
    assert not (tmp_path / "memobase" / "PROVENANCE.md").exists(), "only catalogued files"


def test_from_a_copy_of_one_repository(tmp_path: Path) -> None:
    res = sync_catalogue(tmp_path, from_dir=require(PMB_DIR))
    assert len(res.fetched) == 27 and res.failures == ()
    assert len(res.notes) == len(by_source(default_catalogue().entries)) - 1
    assert res.notes[0].startswith("planetaryescape/cognitive-memory-benchmarks@4ffeae9: not in ")
    assert len(load_pmb(tmp_path).runs) == 24
    again = sync_catalogue(tmp_path, from_dir=PMB_DIR)
    assert again.fetched == () and len(again.present) == 27 and again.failures == ()


def test_from_a_copy_at_another_commit(tmp_path: Path, shared_data: Path, small: Catalogue) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(shared_data / "memobase", copy / "memobase")
    (copy / "memobase" / BROKEN).write_bytes(b"{}")
    res = sync_catalogue(tmp_path / "results", catalogue=small, from_dir=copy)
    (failure,) = res.failures
    assert failure.startswith(f"{MEMOBASE}@358c16b: memobase/{BROKEN}: the copy in {copy} differs (arrived with 2")
    assert res.notes == (f"{LOCOMO}@3eb6f2c: not in {copy}; skipped its 1 file(s).",)
    assert not (tmp_path / "results" / "memobase").exists()
    with pytest.raises(SyncError, match="holds none of the catalogue's files"):
        sync_catalogue(tmp_path / "results", catalogue=small, from_dir=tmp_path / "results")
    with pytest.raises(SyncError, match="is not a folder"):
        sync_catalogue(tmp_path / "results", from_dir=tmp_path / "absent")


# --- a Hugging Face dataset file ---------------------------------------------------------------------


def test_a_hub_dataset_entry(tmp_path: Path, hub: Any, standin: GitHubStandIn, shared_data: Path) -> None:
    from tests.hub_standin import StoredFile

    github = next(e for e in default_catalogue().entries if e.path == BROKEN)
    data = (shared_data / github.target).read_bytes()
    repo = hub.add_repo("dataset", "memeval-org/public-runs")
    repo.files["locomo/memobase_eval_0710_3000.json"] = StoredFile(data, False)
    entry = CatalogueEntry.model_validate(
        {
            **github.model_dump(),
            "target": "hub/memobase/memobase_eval_0710_3000.json",
            "host": "huggingface",
            "repo_type": "dataset",
            "repository": "memeval-org/public-runs",
            "commit": repo.sha,
            "path": "locomo/memobase_eval_0710_3000.json",
        }
    )
    res = sync_catalogue(tmp_path / "results", catalogue=Catalogue(entries=(entry,)))
    assert res.failures == () and res.fetched == (entry.target,)
    assert (tmp_path / "results" / entry.target).read_bytes() == data
    assert any(r.path.endswith("/resolve/" + repo.sha + "/locomo/memobase_eval_0710_3000.json") for r in hub.requests)
    assert not any((tmp_path / "hf_home").rglob("*.json")), "the Hub's cache stays in the staging folder"
    wrong = entry.model_copy(update={"sha256": hashlib.sha256(b"other").hexdigest(), "target": "hub/x.json"})
    res = sync_catalogue(tmp_path / "results", catalogue=Catalogue(entries=(wrong,)))
    assert res.failures[0].startswith(f"hf:dataset/memeval-org/public-runs@{repo.sha[:7]}: hub/x.json: has SHA-256 ")
    (check,) = check_upstream(Catalogue(entries=(entry,)))
    assert check.error is None and check.lines() == [
        f"hf:dataset/memeval-org/public-runs@{repo.sha[:7]}: not checked: --check reads GitHub only; "
        "Hub revisions stay pinned"
    ]
    hub.fail_status, hub.fail_match = 404, "/resolve/"
    res = sync_catalogue(tmp_path / "other", catalogue=Catalogue(entries=(entry,)))
    assert "the Hugging Face Hub at http://127.0.0.1:" in res.failures[0] and "did not give it" in res.failures[0]


# --- progress, staging, has_results -------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_and_in_a_log() -> None:
    log = io.StringIO()
    bar = ProgressBar(log)
    bar.start(2, 3 * 1024 * 1024)
    bar.advance(1024 * 1024)
    bar.finished("a.json", None)
    bar.advance(2 * 1024 * 1024)
    bar.finished("b.json", "b.json: answered HTTP 404")
    assert log.getvalue().splitlines() == [
        "fetching 2 files (3.0 MB)",
        "[1/2 files, 1.0 MB/3.0 MB] fetched a.json",
        "[2/2 files, 3.0 MB/3.0 MB] failed b.json: answered HTTP 404",
    ]
    term = Terminal()
    bar = ProgressBar(term)
    bar.start(1, 100)
    bar.advance(100)
    bar.finished("a.json", None)
    assert term.getvalue().startswith("\r[") and "100% 1/1 files" in term.getvalue() and term.getvalue().endswith("\n")


def test_stale_staging_of_a_dead_sync_is_removed(tmp_path: Path, standin: GitHubStandIn, small: Catalogue) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".sync-{int(dead.stdout)}-abc"
    live = tmp_path / f".sync-{os.getpid()}-other"
    for folder in (stale, live):
        (folder / "x").mkdir(parents=True)
        (folder / "x" / "run.json").write_text("[]")
    assert not has_results(tmp_path), "staging folders are not results"
    sync_catalogue(tmp_path, catalogue=small)
    assert not stale.exists() and live.exists()
    assert has_results(tmp_path)


def test_a_broken_catalogue_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cat.json"
    bad.write_text('{"version": 1, "entries": [{"target": "../x.json"}]}')
    code, _, err = run_cli(capsys, "sync", "--catalogue", str(bad), "--list")
    assert code == 2 and err.startswith(f"error: {bad}: $.entries[0].target: Value error, target '../x.json' must be")
    bad.write_text('{"version": 1, "entries": [{"target": "x\\ud83d.json"}]}')  # half a surrogate pair: no text
    code, _, err = run_cli(capsys, "sync", "--catalogue", str(bad), "--list")
    assert code == 2 and err.startswith(f"error: {bad}: not valid JSON: ")
