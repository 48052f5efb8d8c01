"""The progress line of a judge run, on stderr: done / total, calls made, cache hits, tokens, estimated cost.

On a terminal the line is redrawn in place (at most every :data:`INTERVAL` seconds); elsewhere (a log, a
pipe) a full line is printed every :data:`LOG_INTERVAL` seconds and once at the end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TextIO

from memeval_core.judge.pricing import money

INTERVAL = 0.2
LOG_INTERVAL = 10.0


@dataclass(frozen=True)
class Snapshot:
    """The counters at one instant."""

    done: int
    """Verdicts available (cached or called)."""
    total: int
    """Verdicts the run needs (distinct calls)."""
    calls: int
    """Calls made by this run."""
    hits: int
    """Verdicts found in the cache."""
    tokens_in: int
    """Prompt tokens of this run's calls."""
    tokens_out: int
    """Completion tokens of this run's calls."""
    cost: float | None
    """Estimated dollars of this run's calls; None when the model has no known price."""


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def line(label: str, s: Snapshot) -> str:
    """One progress line."""
    share = f" ({s.done / s.total:.0%})" if s.total else ""
    return (
        f"{label}: {s.done}/{s.total}{share} | calls {s.calls} | cache hits {s.hits} | "
        f"tokens {_tokens(s.tokens_in)} in / {_tokens(s.tokens_out)} out | {money(s.cost)}"
    )


class Progress:
    """Writes :func:`line` to ``stream`` as the counters change; thread-safe."""

    def __init__(self, stream: TextIO | None, label: str) -> None:
        self.stream = stream
        self.label = label
        self._tty = bool(stream is not None and stream.isatty())
        self._last = 0.0
        self._lock = threading.Lock()

    def update(self, s: Snapshot, *, final: bool = False) -> None:
        """Show ``s`` if enough time passed since the last line (always when ``final``)."""
        if self.stream is None:
            return
        now = time.monotonic()
        with self._lock:
            if not final and now - self._last < (INTERVAL if self._tty else LOG_INTERVAL):
                return
            self._last = now
            text = line(self.label, s)
            if self._tty:
                self.stream.write("\r\033[K" + text + ("\n" if final else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
