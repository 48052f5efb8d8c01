"""Work on many result files in worker processes and take the results in file order: the loads' one pool.

A PMB load scores each report, and a QA load reads and imports each result file, on its own; both hand
their files to :func:`in_order`. It starts :func:`worker_count` processes when the files are large enough
to pay for them (a process costs about a second to start) and yields each file's result as it comes, so the
caller can keep the compact result and let the file's parsed JSON go.

A process that can start no workers (:func:`start_method`: the app server during a script run, or AppTest)
hands a large load to a new interpreter of its own instead (:func:`loads_apart`, :func:`run_apart`), which has
one thread and so forks its workers as the CLI does.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from memeval_core import settings, tree

R = TypeVar("R")

PARALLEL_MIN_BYTES = 64 * 2**20
"""Below this many bytes of input, starting worker processes costs more than it saves."""

_in_worker = False
"""True in a worker process of this pool: a worker never starts workers of its own."""


def worker_count(paths: Sequence[Path]) -> int:
    """How many processes to read ``paths`` with: 1 for small loads, in a daemonic process, or when
    ``$MEMEVAL_WORKERS`` says so."""
    wanted = settings.workers()
    if wanted <= 1 or len(paths) < 2 or _in_worker or multiprocessing.current_process().daemon:
        return 1
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            continue
    return min(wanted, len(paths)) if total >= PARALLEL_MIN_BYTES else 1


def in_order(
    work: Callable[..., R],
    items: Sequence[tuple[Any, ...]],
    paths: Sequence[Path],
    *,
    serial: Callable[..., R] | None = None,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[R]:
    """``work(*item)`` for every item, in item order; in worker processes when ``paths`` (the items' files)
    are large enough.

    ``work`` must be a module-level function (workers receive it by name); ``initializer(*initargs)`` runs
    once in each worker. Workers start as :func:`start_method` says. If the workers die, the remaining items
    run here, through ``serial`` (default ``work``).
    """
    n_workers = worker_count(paths)
    method = start_method()
    done = 0
    if n_workers > 1 and method is not None:
        ctx = multiprocessing.get_context(method)
        try:
            with ProcessPoolExecutor(
                n_workers, mp_context=ctx, initializer=_start_worker, initargs=(initializer, initargs)
            ) as pool:
                for result in pool.map(work, *zip(*items, strict=True), chunksize=4):
                    done += 1
                    yield result
        except (BrokenProcessPool, OSError):
            pass
    for item in items[done:]:
        yield (serial or work)(*item)


def start_method() -> str | None:
    """How workers start: ``fork`` when this process has one thread; ``spawn`` when it has more (forking a
    threaded server can deadlock the child); None, meaning no workers, when spawning would run the caller's main
    script in every worker. multiprocessing re-runs a ``__main__`` that is a script file in each spawned
    process, and under Streamlit (the server, or AppTest) that script is the app itself: the worker would die
    early, and with a payload larger than a pipe holds the parent would wait on it for ever."""
    if threading.active_count() == 1:
        return "fork"
    main = sys.modules.get("__main__")
    runs_a_script = getattr(main, "__spec__", None) is None and getattr(main, "__file__", None) is not None
    return None if runs_a_script else "spawn"


def loads_apart(root: Path) -> bool:
    """Whether a load of the files under ``root`` should run in a process of its own (:func:`run_apart`): this
    process can start no workers (:func:`start_method` is None) but the load is large enough to pay for them."""
    if start_method() is not None or _in_worker or settings.workers() <= 1:
        return False
    return sum(entry.size for entry in tree.walk(root, limits=settings.limits()).files) >= PARALLEL_MIN_BYTES


_APART = "import pickle,sys; sys.path[:] = pickle.load(sys.stdin.buffer); import memeval_core.file_pool as p; p.apart()"
"""What the process of :func:`run_apart` runs (its first argument: the pid of the process that started it): take
that process's module path, then :func:`apart`."""

ORPHAN_CHECK_S = 1.0
"""How often the process of :func:`run_apart` checks that the process that started it is still there."""


def apart() -> None:
    """The process of :func:`run_apart`: run the call on stdin, and end (workers too) if its caller dies first.

    The caller waits for the call to finish; when the caller is gone (an app server killed during a first
    load), the rest of the load is for no one. Once every :data:`ORPHAN_CHECK_S` a timer signal checks whether
    this process has a new parent (it is adopted when its parent dies) and then kills its process group. The
    handler runs between two Python steps, so a long C call (parsing one large file) finishes first. A timer,
    not a thread, so this process keeps one thread and its loads fork their workers (:func:`start_method`).
    """
    parent = int(sys.argv[1])  # not os.getppid(): the parent may already be gone

    def end_if_orphaned(signum: int, frame: object) -> None:
        if os.getppid() != parent:
            os.killpg(0, signal.SIGKILL)

    signal.signal(signal.SIGALRM, end_if_orphaned)
    signal.setitimer(signal.ITIMER_REAL, ORPHAN_CHECK_S, ORPHAN_CHECK_S)
    try:
        pickle.load(sys.stdin.buffer)()
    finally:
        # The interpreter's exit sets SIGALRM back to its default, which ends the process: a tick while it
        # frees memory would turn a load that succeeded into a failure.
        signal.setitimer(signal.ITIMER_REAL, 0)


def run_apart(call: Callable[[], object]) -> None:
    """``call()`` in a new interpreter started for it; raise :class:`ChildProcessError` (an ``OSError``) when that
    process fails, ending with the last line it wrote to stderr.

    ``call`` travels pickled, so it must be a module-level function (or a ``functools.partial`` of one) with
    arguments that pickle. The new process inherits the environment (the ``MEMEVAL_*`` settings) and this
    process's module path (``-I``: nothing from its working folder or ``PYTHON*`` variables), and has one thread,
    so the loads it runs fork their workers (:func:`start_method`); its result is what it writes. It leads a
    process group of its own: when it dies before its workers (killed for memory, say), they are killed too; when
    this process dies first, it ends within :data:`ORPHAN_CHECK_S`, its workers with it (:func:`apart`).
    """
    payload = pickle.dumps(sys.path) + pickle.dumps(call)
    with tempfile.TemporaryFile() as said:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _APART, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=said,
            start_new_session=True,
        )
        try:
            proc.communicate(payload)
        finally:
            if proc.returncode != 0:  # failed, or this process was interrupted: no worker of its may stay behind
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 0:
            said.seek(max(0, os.fstat(said.fileno()).st_size - 4096))  # its last line is enough
            last = said.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            raise ChildProcessError(f"the load's own process ended with code {proc.returncode}: {''.join(last)}")


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """Mark this process as a worker, then run the caller's initializer."""
    global _in_worker
    _in_worker = True
    # A worker gets no timer of the load process (:func:`apart`); should a SIGALRM reach it, the orphan check is
    # not its to run.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    if initializer is not None:
        initializer(*initargs)
