"""How many worker processes a load may use, and how they are started.

Result files are read, parsed and scored independently of each other, so large loads spread them over
processes (the GIL keeps threads from parsing in parallel). The PMB and QA loaders share the setting
and the start-method rule; each decides for itself from how many bytes parallel work pays off.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.sharedctypes  # a load's shared task counter: imported here, not on its critical path
import multiprocessing.synchronize
import os
import pickle
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import reduction
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final, Literal, TypeVar

WORKERS_ENV: Final = "MEMEVAL_WORKERS"
"""Environment variable: processes a load may use (default: the CPU count, at most :data:`MAX_WORKERS`; 1 = serial)."""
MAX_WORKERS: Final = 8
"""Upper bound of the default; more processes than this only add start-up and transfer costs."""

StartMethod = Literal["fork", "spawn"]
C = TypeVar("C")
S = TypeVar("S")
R = TypeVar("R")
T = TypeVar("T")


def wanted_workers() -> int:
    """Processes to use as ``$MEMEVAL_WORKERS`` says (an unreadable value means 1), else the CPU count up to 8."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    try:
        wanted = int(raw) if raw else min(os.cpu_count() or 1, MAX_WORKERS)
    except ValueError:
        return 1
    return max(wanted, 1)


def start_method() -> StartMethod:
    """``fork`` when this process has a single thread, else ``spawn``.

    A fork starts in milliseconds, inherits what the parent already computed and never re-runs the caller's
    script; but forking a process whose other threads may hold locks (an app server) can deadlock the child.
    """
    return "fork" if threading.active_count() == 1 else "spawn"


_in_worker = False


def in_worker() -> bool:
    """Whether this process is a worker started by :func:`run_tasks` (its results travel back pickled)."""
    return _in_worker


def _taken(counter: Any, n: int) -> Iterator[int]:
    """Task numbers, each handed to exactly one of the processes sharing ``counter``, until all ``n`` are out."""
    while True:
        with counter.get_lock():
            i: int = counter.value
            counter.value = i + 1
        if i >= n:
            return
        yield i


class _Spool:
    """An anonymous temporary file that one worker writes its pickled results to, at offsets it reports.

    Several megabytes through a pipe cost about 10 ms at the end of a load: 64 KiB at a time, each
    chunk waiting for the reader. A file takes each result as soon as it is pickled, without waiting for
    anybody; the pipe only tells the caller where it is, and the caller reads it from the page cache
    between its own tasks. Pickles (for a spawned worker) as a duplicate of the descriptor, as a
    ``Connection`` does.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Callable[[Any], _Spool], tuple[Any]]:
        return _spool_from, (reduction.DupFd(self.fd),)


def _spool_from(dup: Any) -> _Spool:
    return _Spool(dup.detach())


def _new_spool(files: contextlib.ExitStack) -> _Spool | None:
    """A spool on a new temporary file that ``files`` closes; None where there is none: the pipe then carries all."""
    if not hasattr(os, "pwrite"):
        return None
    try:
        # Closed by ``files`` (ruff does not see through a parameter's ExitStack).
        file = files.enter_context(tempfile.TemporaryFile(prefix="memeval-worker-", buffering=0))  # noqa: SIM115
    except OSError:
        return None
    return _Spool(file.fileno())


def _write_at(fd: int, blob: bytes, offset: int) -> None:
    view = memoryview(blob)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _read_at(fd: int, offset: int, size: int) -> bytes:
    chunks: list[bytes] = []
    end = offset + size
    while offset < end:
        chunk = os.pread(fd, end - offset, offset)
        if not chunk:
            raise EOFError(f"a worker's result ends {end - offset} bytes early")
        chunks.append(chunk)
        offset += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _worker_main(
    fn: Callable[[Any, Any], Any],
    context: Any,
    tasks: Sequence[Any],
    counter: Any,
    conn: Connection,
    spool: _Spool | None,
) -> None:
    global _in_worker
    _in_worker = True
    try:
        # Each result is pickled and written to the spool as soon as it is computed, so that the pickling
        # counts in this process's share of the tasks (the others take more meanwhile) instead of trailing
        # them all at the end, and the caller unpickles it while tasks remain. A result the spool cannot
        # take (a full disk) travels through the pipe at the end.
        kept: dict[int, bytes] = {}
        offset = 0
        for i in _taken(counter, len(tasks)):
            blob = pickle.dumps(fn(context, tasks[i]), pickle.HIGHEST_PROTOCOL)
            if spool is not None:
                try:
                    _write_at(spool.fd, blob, offset)
                except OSError:
                    spool = None
                else:
                    # A few bytes: the caller takes them after each of its own tasks; with the longest
                    # tasks first, that is long before they could fill the pipe's buffer.
                    conn.send(("part", i, offset, len(blob)))
                    offset += len(blob)
                    continue
            kept[i] = blob
        result: tuple[str, Any] = ("ok", kept)
    except BaseException as exc:  # every failure goes back to the caller, who re-raises it
        with contextlib.suppress(AttributeError, TypeError):  # a frozen dataclass exception takes no note
            exc.add_note(f"raised in a worker process:\n{traceback.format_exc()}")
        result = ("error", exc)
    try:
        try:
            conn.send(result)
        except OSError:
            return  # the caller is gone (it failed and closed its end): nobody to tell
        except Exception as exc:  # an unpicklable result or exception still reaches the caller, as text
            conn.send(("error", RuntimeError(f"a worker process could not send its result: {exc}")))
    finally:
        conn.close()


def run_tasks(
    fn: Callable[[C, S], R],
    context: C,
    tasks: Sequence[S],
    workers: int,
    method: StartMethod,
    then: Callable[[list[R]], T],
) -> T:
    """``then([fn(context, task) for task in tasks])``, the tasks spread over this process and ``workers`` more.

    Every process takes the next task in order as soon as it is free (put the longest first), so none sits
    idle while another has a backlog. Each worker writes each result (pickled) to a temporary file as soon as
    it has it, and this process unpickles it between its own tasks; a worker exits when no task is left.
    ``then`` runs on the results in task order while the workers' memory is released, and the workers are
    reaped afterwards. ``fn`` must be a module-level function; under fork ``context`` and the tasks reach the
    workers without pickling. Inside a daemonic process (a ``multiprocessing.Pool`` worker), which may not
    start processes, everything runs here.

    A worker that dies without sending (killed, out of memory, or a spawned worker that cannot import the
    caller's script) costs only time: its tasks are computed here. An exception raised by ``fn`` propagates,
    with a worker's traceback as a note; the remaining workers are stopped at once. When several tasks fail,
    which of their exceptions propagates is not defined (serially, the first task's would).
    """
    workers = min(workers, len(tasks) - 1)
    if workers < 1 or multiprocessing.current_process().daemon:
        return then([fn(context, task) for task in tasks])
    ctx = multiprocessing.get_context("fork") if method == "fork" else multiprocessing.get_context("spawn")
    counter = ctx.Value("q", 0)
    started: list[tuple[BaseProcess, Connection, _Spool | None]] = []
    files = contextlib.ExitStack()
    finished = False
    try:
        for _ in range(workers):
            receiver, sender = ctx.Pipe(duplex=False)
            spool = _new_spool(files)
            try:
                process = ctx.Process(
                    target=_worker_main, args=(fn, context, tasks, counter, sender, spool), daemon=True
                )
                process.start()
            except OSError:  # no more processes to be had: the others (and this one) take the tasks
                receiver.close()
                break
            finally:
                sender.close()  # the worker holds its own end; EOF on ours then means it died
            started.append((process, receiver, spool))
        results: dict[int, Any] = {}
        busy = started
        for i in _taken(counter, len(tasks)):
            results[i] = fn(context, tasks[i])
            busy = [w for w in busy if not _collect(w[1], w[2], results, wait=False)]
        for _, receiver, spool in busy:
            _collect(receiver, spool, results, wait=True)
        value = then([results[i] if i in results else fn(context, tasks[i]) for i in range(len(tasks))])
        finished = True
        return value
    finally:
        if not finished:
            # Something failed here or in a worker: the others must not wait to deliver results that nobody
            # will read (a blocked send never notices, as later workers share the read ends), so stop them.
            with counter.get_lock():
                counter.value = len(tasks)
            for child, _, _ in started:
                child.terminate()
        for child, pipe, _ in started:
            pipe.close()
            child.join()
        files.close()


def _collect(receiver: Connection, spool: _Spool | None, results: dict[int, Any], wait: bool) -> bool:
    """Add the worker's results that arrived (all of them when ``wait``) to ``results``; True once it is done.

    Done: it sent its last message, or died (its tasks without a result are computed here).
    """
    while wait or receiver.poll():
        try:
            message = receiver.recv()
        except (EOFError, OSError):
            return True
        except Exception as exc:  # sent, but not rebuildable here (an exception class with other arguments)
            raise RuntimeError(f"a worker process sent something that cannot be read back: {exc!r}") from exc
        if message[0] == "part":
            assert spool is not None  # a worker writes to a spool only when it was given one
            _, i, offset, size = message
            results[i] = pickle.loads(_read_at(spool.fd, offset, size))
            continue
        status, value = message
        if status == "error":
            raise value
        results.update((i, pickle.loads(blob)) for i, blob in value.items())
        return True
    return False
