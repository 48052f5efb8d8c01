"""A one-line progress bar on stderr: cases done and the wrapper's median search latency so far."""

from __future__ import annotations

import statistics
import time
from typing import TextIO

WIDTH = 24
"""Characters of the bar itself."""
EVERY_S = 0.1
"""Least time between two redraws on a terminal."""


class Progress:
    """Redraws in place on a terminal; elsewhere (a log, a pipe) writes one line when a suite ends."""

    def __init__(self, stream: TextIO | None, label: str, total: int, unit: str = "cases") -> None:
        self.stream, self.label, self.total, self.unit = stream, label, total, unit
        self.tty = bool(stream is not None and stream.isatty())
        self._last = 0.0

    def line(self, done: int, search_ms: list[float]) -> str:
        """The text of the bar for ``done`` cases and the search latencies so far."""
        filled = WIDTH * done // self.total if self.total else WIDTH
        p50 = f"{statistics.median(search_ms):.1f} ms" if search_ms else "–"
        bar = "#" * filled + "." * (WIDTH - filled)
        return f"{self.label} [{bar}] {done}/{self.total} {self.unit} · wrapper p50 {p50}"

    def update(self, done: int, search_ms: list[float]) -> None:
        """Show ``done`` of the total (a terminal only, at most every :data:`EVERY_S`)."""
        if not self.tty or self.stream is None:
            return
        now = time.monotonic()
        if done < self.total and now - self._last < EVERY_S:
            return
        self._last = now
        self.stream.write("\r" + self.line(done, search_ms))
        self.stream.flush()

    def finish(self, done: int, search_ms: list[float]) -> None:
        """The final state, on a line of its own."""
        if self.stream is None:
            return
        self.stream.write(("\r" if self.tty else "") + self.line(done, search_ms) + "\n")
        self.stream.flush()
