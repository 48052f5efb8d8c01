from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import types
from concurrent.futures import ProcessPoolExecutor
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


@pytest.fixture
def plain_main(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``__main__`` that is no script (``python -c``), whatever an earlier test (AppTest) left there: workers
    can start in any process state."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))


@pytest.mark.usefixtures("plain_main")
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


@pytest.mark.usefixtures("plain_main")
def test_when_the_workers_die_this_process_does_the_rest(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    got = list(file_pool.in_order(_die, [(i,) for i in range(9)], files, serial=_square))
    assert got == [(i * i, os.getpid()) for i in range(9)]


def _workers_here(n: int) -> int:
    return file_pool.worker_count([Path(__file__)] * 4)


@pytest.mark.usefixtures("plain_main")
def test_a_worker_never_starts_workers_of_its_own(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    assert file_pool.worker_count(files) == 2
    assert list(file_pool.in_order(_workers_here, [(i,) for i in range(4)], files)) == [1, 1, 1, 1]


def _keep(payload: bytes) -> None:
    """A worker initializer with a large argument (as a load's fixture or dataset is)."""


@pytest.mark.usefixtures("script_main_with_a_thread")
def test_a_threaded_process_whose_main_is_a_script_loads_here(
    files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under Streamlit (the server, or AppTest) __main__ is the app script: a spawned worker would run it and die,
    # and with a payload larger than a pipe holds the parent used to wait on that worker for ever.
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the load waited on a dead worker"))
    signal.alarm(120)
    try:
        assert file_pool.start_method() is None
        items = [(i,) for i in range(4)]
        got = list(file_pool.in_order(_square, items, files[:4], initializer=_keep, initargs=(b"x" * 200_000,)))
    finally:
        signal.alarm(0)
    assert got == [(i * i, os.getpid()) for i in range(4)]


def test_workers_start_as_the_process_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    assert threading.active_count() > 1 or file_pool.start_method() == "fork"
    other.start()
    try:
        monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # python -c, or a REPL
        assert file_pool.start_method() == "spawn"
    finally:
        stop.set()
        other.join()


def _report_process(out: Path) -> None:
    """Write what process this runs in (a call for :func:`file_pool.run_apart`)."""
    out.write_text(f"{os.getpid()} {threading.active_count()} {file_pool.start_method()}")


def _fail(message: str) -> None:
    raise ValueError(message)


@pytest.mark.usefixtures("script_main_with_a_thread")
def test_a_call_apart_runs_in_a_new_single_threaded_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pickle.py").write_text("raise SystemExit(3)\n")  # its working folder is not on its module path
    out = tmp_path / "out.txt"
    file_pool.run_apart(functools.partial(_report_process, out))
    pid, threads, method = out.read_text().split()
    assert int(pid) != os.getpid() and (threads, method) == ("1", "fork")


def test_a_call_apart_that_fails_says_why() -> None:
    with pytest.raises(ChildProcessError, match="ended with code 1: ValueError: the disk is on fire"):
        file_pool.run_apart(functools.partial(_fail, "the disk is on fire"))


@pytest.mark.usefixtures("script_main_with_a_thread")
def test_a_process_that_can_start_no_workers_loads_large_folders_apart(
    files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = files[0].parent
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 18)  # nine files of two bytes
    assert file_pool.loads_apart(root)
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 19)
    assert not file_pool.loads_apart(root)  # too small to pay for workers
    monkeypatch.setattr(file_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(settings.WORKERS_ENV, "1")
    assert not file_pool.loads_apart(root)  # no workers wanted
    monkeypatch.setenv(settings.WORKERS_ENV, "2")
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    assert not file_pool.loads_apart(root)  # this process can spawn workers itself


def _sleep_in_worker(pid_file: Path) -> None:
    pid_file.write_text(str(os.getpid()))
    time.sleep(120)


def _die_with_workers_running(folder: Path) -> None:
    """Start two forked workers that sleep, then die as the out-of-memory killer would kill this process."""
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
    for i in range(2):
        pool.submit(_sleep_in_worker, folder / f"worker{i}.pid")
    while len(list(folder.glob("*.pid"))) < 2:
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_a_call_apart_killed_before_its_workers_ends_with_them(tmp_path: Path) -> None:
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("waited on the workers of a dead process"))
    signal.alarm(60)
    try:
        with pytest.raises(ChildProcessError, match="ended with code -9"):
            file_pool.run_apart(functools.partial(_die_with_workers_running, tmp_path))
    finally:
        signal.alarm(0)
    workers = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(workers) == 2 and not any(_running(pid) for pid in workers)


def _sleep_with_workers(folder: Path) -> None:
    """Write this process's pid, start two forked workers that sleep, and sleep (a load that takes long)."""
    (folder / "apart.pid").write_text(str(os.getpid()))
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
    for i in range(2):
        pool.submit(_sleep_in_worker, folder / f"worker{i}.pid")
    time.sleep(120)


_CALLER = """
import functools, importlib, sys
from pathlib import Path
from memeval_core import file_pool
call = getattr(importlib.import_module(sys.argv[1]), "_sleep_with_workers")
file_pool.run_apart(functools.partial(call, Path(sys.argv[2])))
"""


def test_a_call_apart_ends_with_its_workers_when_its_caller_is_killed(tmp_path: Path) -> None:
    """An app server killed during a first load leaves no load running for no one."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    caller = subprocess.Popen([sys.executable, "-c", _CALLER, __name__, str(tmp_path)], env=env)
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("*.pid"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        caller.kill()
        caller.wait()
        pids = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
        deadline = time.monotonic() + 10 * file_pool.ORPHAN_CHECK_S
        while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(pids) == 3 and not any(_running(pid) for pid in pids)
    finally:
        caller.kill()
        for p in tmp_path.glob("*.pid"):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(p.read_text()), signal.SIGKILL)


class _SlowToFree:
    def __del__(self) -> None:
        time.sleep(1.5 * file_pool.ORPHAN_CHECK_S)


def _leave_something_slow_to_free() -> None:
    global _lingering
    _lingering = _SlowToFree()  # freed when the interpreter exits


_lingering: _SlowToFree | None = None


def test_a_call_apart_that_takes_long_to_exit_still_succeeds() -> None:
    """The orphan check's timer is off once the call returns: a tick while the process exits would kill it."""
    file_pool.run_apart(_leave_something_slow_to_free)
