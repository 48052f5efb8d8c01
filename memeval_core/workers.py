"""How many worker processes a load may use, and how they are started.

Result files are read, parsed and scored independently of each other, so large loads spread them over
processes (the GIL keeps threads from parsing in parallel). The PMB and QA loaders share the setting
and the start-method rule; each decides for itself from how many bytes parallel work pays off.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, Literal, TypeVar

WORKERS_ENV: Final = "MEMEVAL_WORKERS"
"""Environment variable: processes a load may use (default: the CPU count, at most :data:`MAX_WORKERS`; 1 = serial)."""
MAX_WORKERS: Final = 8
"""Upper bound of the default; more processes than this only add start-up and transfer costs."""

StartMethod = Literal["fork", "spawn"]
C = TypeVar("C")
S = TypeVar("S")
R = TypeVar("R")


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


_context: Any = None
"""In a worker process: the context its initializer received (inherited without pickling under fork)."""
_in_worker = False


def _set_context(context: Any) -> None:
    global _context, _in_worker
    _context = context
    _in_worker = True


def in_worker() -> bool:
    """Whether this process is a worker started by :func:`run_shares` (its results travel back pickled)."""
    return _in_worker


def _call_with_context(fn: Callable[[Any, Any], Any], share: Any) -> Any:
    return fn(_context, share)


def run_shares(fn: Callable[[C, S], R], context: C, shares: Sequence[S], method: StartMethod) -> list[R]:
    """``[fn(context, share) for share in shares]``, with ``shares[1:]`` in worker processes meanwhile.

    This process computes ``shares[0]`` itself while one worker per other share computes the rest, so no
    process sits idle waiting. ``fn`` must be a module-level function; ``context`` reaches each worker once
    (under fork without pickling), each share and result are pickled. A share whose worker fails (a broken
    pool, for example a spawned worker that cannot import the caller's script) is computed here instead;
    an exception raised by ``fn`` itself propagates as it would serially.
    """
    if len(shares) < 2:
        return [fn(context, share) for share in shares]
    try:
        executor = ProcessPoolExecutor(
            len(shares) - 1,
            mp_context=multiprocessing.get_context(method),
            initializer=_set_context,
            initargs=(context,),
        )
        futures = [executor.submit(_call_with_context, fn, share) for share in shares[1:]]
    except (BrokenProcessPool, OSError):  # no processes to be had: everything here
        return [fn(context, share) for share in shares]
    with executor:
        out = [fn(context, shares[0])]
        for future, share in zip(futures, shares[1:], strict=True):
            try:
                out.append(future.result())
            except (BrokenProcessPool, OSError):
                out.append(fn(context, share))
    return out
