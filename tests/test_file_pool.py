from __future__ import annotations

import os
from pathlib import Path

import pytest

from memeval_core import file_pool, settings


def _square(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


def _die(n: int) -> tuple[int, int]:
    os._exit(3)


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    paths = [tmp_path / f"{i}.json" for i in range(9)]
    for p in paths:
        p.write_text("[]")
    return paths


def test_workers_give_every_result_in_item_order(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    got = list(file_pool.in_order(_square, [(i,) for i in range(9)], files))
    assert [square for square, _ in got] == [i * i for i in range(9)]
    assert os.getpid() not in {pid for _, pid in got}


def test_small_loads_stay_in_this_process(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    assert file_pool.worker_count(files) == 1  # nine tiny files are far below PARALLEL_MIN_BYTES
    got = list(file_pool.in_order(_square, [(i,) for i in range(9)], files))
    assert got == [(i * i, os.getpid()) for i in range(9)]


def test_when_the_workers_die_this_process_does_the_rest(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    got = list(file_pool.in_order(_die, [(i,) for i in range(9)], files, serial=_square))
    assert got == [(i * i, os.getpid()) for i in range(9)]


def _workers_here(n: int) -> int:
    return file_pool.worker_count([Path(__file__)] * 4)


def test_a_worker_never_starts_workers_of_its_own(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    assert file_pool.worker_count(files) == 2
    assert list(file_pool.in_order(_workers_here, [(i,) for i in range(4)], files)) == [1, 1, 1, 1]
