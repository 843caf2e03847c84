"""A one-line progress counter on stderr, for batch commands, shown only on a terminal.

It is redrawn at most a few times a second and erased before anything else is printed,
so it never reaches stdout, a pipe or a file.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["LineProgress"]


class LineProgress:
    """``tick(done, bad)`` after each item; ``clear()`` before printing anything else."""

    def __init__(self, noun: str, stream: TextIO | None = None, interval: float = 0.25) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.noun = noun
        self.interval = interval
        self.started = time.monotonic()
        self._last = 0.0
        self._shown = False

    def tick(self, done: int, bad: int = 0) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        rate = done / max(now - self.started, 1e-9)
        extra = f", {bad} bad line(s)" if bad else ""
        self.stream.write(f"\r\x1b[K{done:,} {self.noun}{extra} · {rate:,.0f}/s")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
