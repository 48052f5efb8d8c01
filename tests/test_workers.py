"""Worker processes: how many, how they start, and tasks shared between them and this process."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from memeval_core import workers
from memeval_core.errors import IngestError


def _square_plus(context: int, share: int) -> tuple[int, int]:
    return share * share + context, os.getpid()


def _dies_in_a_worker(context: int, share: int) -> int:
    if multiprocessing.parent_process() is not None:
        os._exit(3)  # a worker killed mid-task (out of memory, a signal)
    return share + context


def _raises_for_two(context: int, share: int) -> int:
    if share == 2:
        raise ValueError(f"share {share} is bad")
    return share


def test_wanted_workers_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(workers.WORKERS_ENV, raising=False)
    assert workers.wanted_workers() == min(os.cpu_count() or 1, workers.MAX_WORKERS)
    for value, expected in (("3", 3), ("1", 1), ("0", 1), ("-2", 1), ("many", 1), ("  2 ", 2)):
        monkeypatch.setenv(workers.WORKERS_ENV, value)
        assert workers.wanted_workers() == expected, value


def test_start_method_forks_only_a_single_threaded_process() -> None:
    if threading.active_count() == 1:
        assert workers.start_method() == "fork"
    release = threading.Event()
    t = threading.Thread(target=release.wait)
    t.start()
    try:
        assert workers.start_method() == "spawn"
    finally:
        release.set()
        t.join()


def _slow_square(context: float, task: int) -> tuple[int, int]:
    time.sleep(context)
    return task * task, os.getpid()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tasks_run_in_workers_and_here_in_order(method: workers.StartMethod) -> None:
    # Each task takes a while, so that the workers get some before this process has done them all
    # (a forked worker starts within milliseconds, a spawned one after its imports, about a second).
    pause, n = (0.1, 8) if method == "fork" else (0.4, 16)
    out = workers.run_tasks(_slow_square, pause, list(range(n)), 2, method, list)
    assert [v for v, _ in out] == [i * i for i in range(n)]
    pids = {pid for _, pid in out}
    assert os.getpid() in pids and len(pids) >= 2 and len(pids) <= 3


def test_few_tasks_need_no_worker() -> None:
    assert workers.run_tasks(_square_plus, 1, [4], 3, "fork", list) == [(17, os.getpid())]
    assert workers.run_tasks(_square_plus, 1, [], 3, "fork", list) == []
    assert workers.run_tasks(_square_plus, 1, [1, 2], 0, "fork", list) == [(2, os.getpid()), (5, os.getpid())]


def test_a_dead_worker_costs_only_time() -> None:
    assert workers.run_tasks(_dies_in_a_worker, 100, list(range(8)), 2, "fork", list) == list(range(100, 108))


def test_an_error_in_a_share_propagates() -> None:
    # Raised in the worker (share 2) or here (share 2 first): the caller sees the share's own exception.
    for shares in ([1, 2], [2, 1]):
        with pytest.raises(ValueError, match="share 2 is bad"):
            workers.run_tasks(_raises_for_two, 0, shares, 1, "fork", list)


def _where(context: float, task: int) -> bool:
    time.sleep(context)
    return workers.in_worker()


def test_a_task_knows_whether_it_runs_in_a_worker() -> None:
    where = workers.run_tasks(_where, 0.1, list(range(8)), 1, "fork", list)
    assert set(where) == {True, False}  # some tasks ran in the worker, the others here
    assert not workers.in_worker()


def _raises_in_a_worker(context: float, task: int) -> int:
    time.sleep(context)
    if workers.in_worker():
        raise ValueError(f"task {task} is bad in a worker")
    return task


def _unpicklable_from_a_worker(context: float, task: int) -> object:
    time.sleep(context)
    return (lambda: task) if workers.in_worker() else task


def test_a_workers_exception_carries_its_traceback_and_an_unpicklable_result_is_an_error() -> None:
    with pytest.raises(ValueError, match="bad in a worker") as info:
        workers.run_tasks(_raises_in_a_worker, 0.1, list(range(8)), 1, "fork", list)
    assert any("raised in a worker process" in note and "_raises_in_a_worker" in note for note in info.value.__notes__)
    with pytest.raises((AttributeError, pickle.PicklingError), match="pickle") as info:
        workers.run_tasks(_unpicklable_from_a_worker, 0.1, list(range(8)), 1, "fork", list)
    assert any("raised in a worker process" in note for note in info.value.__notes__)


def test_then_sees_every_result_in_task_order() -> None:
    got = workers.run_tasks(_slow_square, 0.02, [3, 1, 2, 5, 4], 1, "fork", lambda out: [v for v, _ in out])
    assert got == [9, 1, 4, 25, 16]


_HANG_CHECK = """
import os, sys, time
from memeval_core import workers
workers._new_spool = lambda files: None  # results through the pipe, as when no temporary file can be made

def fn(context, task):
    if workers.in_worker():
        if context == "worker fails" and task % 2:
            raise KeyError("worker fails")
        return b"x" * 2_000_000  # far more than a pipe buffer: the send blocks until someone reads
    time.sleep(0.3)
    if context == "here fails":
        raise ValueError("here fails")
    return b""

t = time.perf_counter()
try:
    workers.run_tasks(fn, sys.argv[1], list(range(6)), 2, "fork", list)
except (ValueError, KeyError) as exc:
    print(type(exc).__name__, round(time.perf_counter() - t, 1))
"""


@pytest.mark.parametrize("case", ["here fails", "worker fails"])
def test_a_failure_stops_the_workers_instead_of_waiting_for_them(case: str) -> None:
    # Workers blocked on sending a large result to a caller that has failed must not hang the caller.
    done = subprocess.run(
        [sys.executable, "-c", _HANG_CHECK, case], capture_output=True, text=True, timeout=60, check=True
    )
    name, seconds = done.stdout.split()
    assert name == ("ValueError" if case == "here fails" else "KeyError") and float(seconds) < 10, done.stderr


def _big_result(context: float, task: int) -> tuple[bytes, int]:
    time.sleep(context)
    return bytes([task]) * 300_000, os.getpid()


@pytest.mark.parametrize("how", ["spool", "full disk", "no spool"])
def test_results_arrive_through_the_spool_or_the_pipe(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    read_at = workers._read_at
    monkeypatch.setattr(workers, "_read_at", lambda fd, offset, size: reads.append(size) or read_at(fd, offset, size))
    if how == "no spool":
        monkeypatch.setattr(workers, "_new_spool", lambda files: None)
    if how == "full disk":  # the worker's second write fails: that result and the later ones take the pipe
        writes: list[int] = []
        write_at = workers._write_at

        def fails_second(fd: int, blob: bytes, offset: int) -> None:
            writes.append(offset)
            if len(writes) > 1:
                raise OSError(28, "No space left on device")
            write_at(fd, blob, offset)

        monkeypatch.setattr(workers, "_write_at", fails_second)
    out = workers.run_tasks(_big_result, 0.05, list(range(10)), 1, "fork", list)
    assert [blob == bytes([i]) * 300_000 for i, (blob, _) in enumerate(out)] == [True] * 10
    sizes = [len(pickle.dumps(r, pickle.HIGHEST_PROTOCOL)) for r in out if r[1] != os.getpid()]
    assert len(sizes) >= 2
    # The caller reads each result the worker wrote to its spool, up to the write that failed.
    assert reads == {"spool": sizes, "full disk": sizes[:1], "no spool": []}[how]


def test_the_caller_reads_results_while_tasks_remain(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not all at the end: unpickling a worker's results is part of this process's share of the work.
    events: list[str] = []
    read_at, taken = workers._read_at, workers._taken

    def logged_read(fd: int, offset: int, size: int) -> bytes:
        events.append("read")
        return read_at(fd, offset, size)

    def logged_taken(counter: Any, n: int) -> Iterator[int]:
        for i in taken(counter, n):
            events.append("task")  # in a forked worker this appends to the worker's copy
            yield i

    monkeypatch.setattr(workers, "_read_at", logged_read)
    monkeypatch.setattr(workers, "_taken", logged_taken)
    out = workers.run_tasks(_big_result, 0.05, list(range(12)), 1, "fork", list)
    assert [blob[0] for blob, _ in out] == list(range(12))
    assert events.count("read") == sum(pid != os.getpid() for _, pid in out) >= 2
    # Some result was read before this process took its last task.
    assert events.index("read") < max(i for i, e in enumerate(events) if e == "task")


def _in_a_daemon(n: int) -> list[tuple[int, int]]:
    return workers.run_tasks(_square_plus, 0, list(range(n)), 2, "fork", list)


def test_a_daemonic_process_runs_every_task_itself() -> None:
    # A multiprocessing.Pool worker may not start processes of its own.
    with multiprocessing.get_context("fork").Pool(1) as pool:
        out = pool.apply(_in_a_daemon, (5,))
    assert [v for v, _ in out] == [0, 1, 4, 9, 16] and len({pid for _, pid in out}) == 1


class _TwoArgsError(Exception):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(a)  # pickles as _TwoArgsError(a): it cannot be rebuilt on the other side


def _fails_oddly_in_a_worker(context: float, task: int) -> int:
    time.sleep(context)
    if workers.in_worker():
        if task % 2:
            raise IngestError("f.json", "$", "boom")  # a frozen dataclass: it takes no note
        raise _TwoArgsError("odd", "exception")
    return task


def test_worker_exceptions_that_take_no_note_or_cannot_be_rebuilt() -> None:
    with pytest.raises((IngestError, RuntimeError)) as info:
        workers.run_tasks(_fails_oddly_in_a_worker, 0.1, list(range(8)), 1, "fork", list)
    if isinstance(info.value, RuntimeError):
        assert "cannot be read back" in str(info.value) and "_TwoArgsError" in str(info.value)
    else:
        assert str(info.value) == "f.json: $: boom"
