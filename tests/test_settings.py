"""Every MEMEVAL_* variable is read in one place, and a bad value names its variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval_core import settings


def test_defaults_and_units() -> None:
    limits = settings.limits({})
    assert limits == settings.Limits()
    set_ = settings.limits({"MEMEVAL_MAX_FILE_MB": "2", "MEMEVAL_MAX_CSV_FIELD_KB": "8", "MEMEVAL_MAX_FILES": "10"})
    assert set_.max_file_bytes == 2 * settings.MB
    assert set_.max_csv_field_bytes == 8 * 1024
    assert set_.max_files == 10


@pytest.mark.parametrize("value", ["lots", "inf", "nan", "-1", "0", "1e309"])
def test_a_bad_value_names_its_variable(value: str) -> None:
    with pytest.raises(settings.SettingsError, match="MEMEVAL_MAX_JSON_DEPTH"):
        settings.limits({"MEMEVAL_MAX_JSON_DEPTH": value})


def test_read_only_from_the_environment_or_the_space_marker(tmp_path: Path) -> None:
    assert not settings.read_only({}, tmp_path)
    assert settings.read_only({"MEMEVAL_READ_ONLY": "1"}, tmp_path)
    assert settings.read_only({"MEMEVAL_READ_ONLY": "true"}, tmp_path)
    (tmp_path / settings.SPACE_MARKER).write_text("read-only")
    assert settings.read_only({"MEMEVAL_READ_ONLY": "0"}, tmp_path), "a Space is read-only whatever its environment"


def test_admin_token_must_be_long_enough() -> None:
    assert settings.admin_token({}) is None
    assert settings.admin_token({"MEMEVAL_ADMIN_TOKEN": "x" * 16}) == "x" * 16
    with pytest.raises(settings.SettingsError, match="MEMEVAL_ADMIN_TOKEN"):
        settings.admin_token({"MEMEVAL_ADMIN_TOKEN": "short"})


def test_directories(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", str(tmp_path))
    monkeypatch.setenv("MEMEVAL_DATASETS", str(tmp_path / "d"))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    assert settings.results_dir() == tmp_path
    assert settings.results_dir("elsewhere") == Path("elsewhere")
    assert settings.datasets_dir() == tmp_path / "d"
    assert settings.fixtures_dir() is None


def test_workers_cache_and_upstream_urls_come_from_one_module(tmp_path: Path) -> None:
    assert settings.workers({"MEMEVAL_WORKERS": "3"}) == 3
    assert 1 <= settings.workers({}) <= settings.MAX_WORKERS
    with pytest.raises(settings.SettingsError, match="MEMEVAL_WORKERS"):
        settings.workers({"MEMEVAL_WORKERS": "none"})
    assert settings.cache_dir({"MEMEVAL_CACHE_DIR": str(tmp_path / "c")}) == tmp_path / "c"
    for off in ("", "off", "0", "no"):
        assert settings.cache_dir({"MEMEVAL_CACHE_DIR": off}) is None
    assert settings.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "memeval"
    assert settings.github_api({"MEMEVAL_GITHUB_API": "http://127.0.0.1:9/"}) == "http://127.0.0.1:9"
    assert settings.github_raw({}) == "https://raw.githubusercontent.com"
    assert settings.hub_endpoint({"HF_ENDPOINT": "http://127.0.0.1:9/"}) == "http://127.0.0.1:9"
    assert settings.hub_endpoint({"HF_ENDPOINT": ""}) == settings.hub_endpoint({}) == "https://huggingface.co"


def test_the_refresh_interval_is_in_minutes() -> None:
    assert settings.refresh_seconds({}) == 15 * 60
    assert settings.refresh_seconds({"MEMEVAL_REFRESH_MINUTES": "2"}) == 120
    with pytest.raises(settings.SettingsError, match="MEMEVAL_REFRESH_MINUTES"):
        settings.refresh_seconds({"MEMEVAL_REFRESH_MINUTES": "soon"})


def test_a_results_dataset_is_a_hub_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_RESULTS", "hf://datasets/owner/name@v2")
    root = settings.results_root()
    assert str(root) == "hf://datasets/owner/name@v2"
    assert settings.results_root(str(tmp_path)) == tmp_path
