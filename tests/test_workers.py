"""Worker processes: how many, how they start, and shares computed beside this process."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from memeval_core import workers


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


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_shares_run_in_workers_and_here_in_order(method: workers.StartMethod) -> None:
    out = workers.run_shares(_square_plus, 10, [1, 2, 3], method, list)
    assert [v for v, _ in out] == [11, 14, 19]
    pids = [pid for _, pid in out]
    assert pids[0] == os.getpid()  # the first share is computed here, meanwhile
    assert os.getpid() not in pids[1:] and len(set(pids)) == 3  # one worker process per other share


def test_one_share_needs_no_worker() -> None:
    assert workers.run_shares(_square_plus, 1, [4], "fork", list) == [(17, os.getpid())]
    assert workers.run_shares(_square_plus, 1, [], "fork", list) == []


def test_a_dead_worker_costs_only_time() -> None:
    assert workers.run_shares(_dies_in_a_worker, 100, [1, 2, 3], "fork", list) == [101, 102, 103]


def test_an_error_in_a_share_propagates() -> None:
    # Raised in the worker (share 2) or here (share 2 first): the caller sees the share's own exception.
    for shares in ([1, 2], [2, 1]):
        with pytest.raises(ValueError, match="share 2 is bad"):
            workers.run_shares(_raises_for_two, 0, shares, "fork", list)


def _where(context: None, share: int) -> bool:
    return workers.in_worker()


def test_a_share_knows_whether_it_runs_in_a_worker() -> None:
    assert workers.run_shares(_where, None, [1, 2, 3], "fork", list) == [False, True, True]
    assert not workers.in_worker()


def _unpicklable_from_a_worker(context: None, share: int) -> object:
    return (lambda: share) if workers.in_worker() else share


def test_a_workers_exception_carries_its_traceback_and_an_unpicklable_result_is_an_error() -> None:
    with pytest.raises(ValueError, match="share 2 is bad") as info:
        workers.run_shares(_raises_for_two, 0, [1, 2], "fork", list)
    assert any("raised in a worker process" in note and "_raises_for_two" in note for note in info.value.__notes__)
    with pytest.raises(RuntimeError, match="in a worker process"):
        workers.run_shares(_unpicklable_from_a_worker, None, [1, 2], "fork", list)


def test_then_sees_every_result_in_share_order() -> None:
    assert workers.run_shares(_square_plus, 0, [3, 1, 2], "fork", lambda out: [v for v, _ in out]) == [9, 1, 4]
