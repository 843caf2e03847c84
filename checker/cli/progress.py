"""A live progress line for ``txcheck explore`` on stderr, shown only on a terminal.

It reads the running engine's counters (``txcheck.explore.machine.Stats``) a few times a second:
examples run, steps per second, distinct fault kinds covered, elapsed time. Nothing here
ever reaches stdout or a result file.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from txcheck.explore.faults import FAULT_KINDS
from txcheck.explore.machine import Stats

__all__ = ["ExploreProgress"]


class ExploreProgress:
    """``with ExploreProgress(console):`` shows the line; ``engine()`` and ``track()``
    tell it what is running."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.started = time.monotonic()
        self.current = "starting"
        self.stats: Stats | None = None
        self._live: Live | None = None

    def engine(self, name: str) -> None:
        self.current = name
        self.stats = None

    def track(self, stats: Stats) -> None:
        self.stats = stats

    def __rich__(self) -> Text:
        elapsed = time.monotonic() - self.started
        parts = [f"exploring ({self.current})"]
        stats = self.stats
        if stats is not None:
            running = max(time.monotonic() - stats.started, 1e-9)
            kinds = len(set(stats.faults) & set(FAULT_KINDS))
            parts += [
                f"{stats.examples} examples",
                f"{stats.steps / running:,.0f} steps/s",
                f"{kinds}/{len(FAULT_KINDS)} fault kinds",
            ]
        parts.append(f"{elapsed:.1f}s")
        return Text(" · ".join(parts))

    def __enter__(self) -> ExploreProgress:
        if self.console.is_terminal:
            self._live = Live(self, console=self.console, refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(kind, error, trace)
            self._live = None
