"""How many worker processes a load may use, and how they are started.

Result files are read, parsed and scored independently of each other, so large loads spread them over
processes (the GIL keeps threads from parsing in parallel). The PMB and QA loaders share the setting
and the start-method rule; each decides for itself from how many bytes parallel work pays off.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import traceback
from collections.abc import Callable, Sequence
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
    """Whether this process is a worker started by :func:`run_shares` (its results travel back pickled)."""
    return _in_worker


def _worker_main(fn: Callable[[Any, Any], Any], context: Any, share: Any, conn: Connection) -> None:
    global _in_worker
    _in_worker = True
    try:
        result: tuple[str, Any] = ("ok", fn(context, share))
    except BaseException as exc:  # every failure goes back to the caller, who re-raises it
        exc.add_note(f"raised in a worker process:\n{traceback.format_exc()}")
        result = ("error", exc)
    try:
        try:
            conn.send(result)
        except OSError:
            return  # the caller is gone (it failed and closed its end): nobody to tell
        except Exception as exc:  # an unpicklable exception still reaches the caller, as text
            conn.send(("error", RuntimeError(f"{type(result[1]).__name__} in a worker process: {exc}")))
    finally:
        conn.close()


def run_shares(
    fn: Callable[[C, S], R], context: C, shares: Sequence[S], method: StartMethod, then: Callable[[list[R]], T]
) -> T:
    """``then([fn(context, share) for share in shares])``, with ``shares[1:]`` in worker processes meanwhile.

    One worker process per share but the first, which this process computes itself meanwhile, so no
    process sits idle. Each worker sends its result back (pickled) and exits; ``then`` runs on all results
    while the workers' memory is released, and the workers are reaped afterwards. ``fn`` must be a
    module-level function; under fork ``context`` and the share reach the worker without pickling. A worker
    that dies without a result (killed, out of memory, or a spawned worker that cannot import the caller's
    script) costs only time: its share is computed here. An exception raised by ``fn`` propagates, as it
    would serially, with the worker's traceback as a note.
    """
    if len(shares) < 2:
        return then([fn(context, share) for share in shares])
    ctx = multiprocessing.get_context("fork") if method == "fork" else multiprocessing.get_context("spawn")
    started: list[tuple[BaseProcess, Connection] | None] = []
    for share in shares[1:]:
        receiver, sender = ctx.Pipe(duplex=False)
        try:
            process = ctx.Process(target=_worker_main, args=(fn, context, share, sender), daemon=True)
            process.start()
        except OSError:  # no process to be had: this share is computed here
            receiver.close()
            started.append(None)
            continue
        finally:
            sender.close()  # the worker holds its own end; EOF on ours then means it died
        started.append((process, receiver))
    try:
        out = [fn(context, shares[0])]
        for worker, share in zip(started, shares[1:], strict=True):
            result = _NOTHING if worker is None else _received(worker[1])
            out.append(fn(context, share) if result is _NOTHING else result)
        return then(out)
    finally:
        for worker in started:
            if worker is not None:
                worker[1].close()
                worker[0].join()


_NOTHING: Any = object()


def _received(receiver: Connection) -> Any:
    """The worker's result, or :data:`_NOTHING` when it died without sending one."""
    try:
        status, value = receiver.recv()
    except (EOFError, OSError):
        return _NOTHING
    if status == "error":
        raise value
    return value
