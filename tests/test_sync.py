"""sync: real HTTP code against a local stand-in, --from DIR, and nothing half-written on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval_core.pmb.ingest import load_pmb
from memeval_core.sync import SyncError, has_results, sync
from tests._data import PMB_DIR, require
from tests.github_standin import github_standin


def test_sync_from_local_tree(tmp_path: Path) -> None:
    res = sync(tmp_path / "results", require(PMB_DIR))
    assert res.target == tmp_path / "results" / "precisionmembench"
    assert len(res.files) == 3 + 24
    load = load_pmb(tmp_path / "results")
    assert load.errors == () and len(load.runs) == 24
    meta = json.loads((res.target / "SOURCE.json").read_text())
    assert meta["source"] == str(PMB_DIR)


def test_sync_over_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with github_standin(require(PMB_DIR)) as base:
        monkeypatch.setenv("MEMEVAL_GITHUB_API", base)
        monkeypatch.setenv("MEMEVAL_GITHUB_RAW", base)
        res = sync(tmp_path)
    assert res.source == "https://github.com/tenurehq/precisionMemBench/tree/main"
    # providers.config.json and LICENSE are not results: only fixtures and baseline reports.
    assert sorted(p.name for p in (res.target / "test-results/baseline").iterdir())[:2] == [
        "nomic-retrieval-report-vector.json",
        "qwen3-retrieval-report-vector.json",
    ]
    assert len(load_pmb(tmp_path).runs) == 24
    # Downloaded bytes are identical to the source.
    for rel in res.files:
        assert (res.target / rel).read_bytes() == (PMB_DIR / rel).read_bytes()


def test_failed_sync_leaves_previous_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sync(tmp_path, require(PMB_DIR))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with github_standin(PMB_DIR, fail_with=403) as base:
        monkeypatch.setenv("MEMEVAL_GITHUB_API", base)
        monkeypatch.setenv("MEMEVAL_GITHUB_RAW", base)
        with pytest.raises(SyncError, match="HTTP 403"):
            sync(tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_unreachable_host_is_one_clear_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_GITHUB_API", "http://127.0.0.1:9")
    with pytest.raises(SyncError, match=r"cannot reach http://127\.0\.0\.1:9/.*use --from DIR"):
        sync(tmp_path)
    assert not has_results(tmp_path)


def test_corrupt_download_changes_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "fixtures").mkdir(parents=True)
    for f in (require(PMB_DIR) / "fixtures").iterdir():
        (tree / "fixtures" / f.name).write_bytes(f.read_bytes())
    (tree / "test-results/baseline").mkdir(parents=True)
    (tree / "test-results/baseline/retrieval-report-x.json").write_text('{"provider": ')
    with pytest.raises(SyncError, match=r"retrieval-report-x\.json is not valid JSON"):
        sync(tmp_path / "results", tree)
    # Checked before anything is written: the results directory is not even created.
    assert not (tmp_path / "results").exists()


def test_from_dir_without_fixtures(tmp_path: Path) -> None:
    with pytest.raises(SyncError, match="no fixtures/ folder"):
        sync(tmp_path / "r", tmp_path)
