"""A live progress line for ``txcheck explore`` on stderr, shown only on a terminal.

It reads the running search's counters (a ``txcheck.exploration.kernel.report.Tally``) a few times a
second: runs, steps per second, distinct deviation kinds taken, elapsed time. A search
spread over workers keeps one ``Tally`` equal to the sum of every worker's, so the line
counts runs across all of them. Nothing here ever reaches stdout or a result file.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from txcheck.exploration.kernel.report import Tally
from txcheck.models.sim.choices import FaultKind

__all__ = ["ExploreProgress"]


class ExploreProgress:
    """``with ExploreProgress(console):`` shows the line; ``observe`` (an
    ``explore`` observer) tells it which search runs and hands it its counters."""

    def __init__(self, console: Console, *, kinds: int = len(FaultKind)) -> None:
        self.console = console
        self.kinds = kinds
        """How many deviation kinds the target's runs can take (``Target.fault_kinds``)."""
        self.started = time.monotonic()
        self.current = "starting"
        self.since = self.started
        self.tally: Tally | None = None
        self.where: str | None = None
        """Where the search runs when not only in this process (``2 local worker
        processes``): its counters are then the sum over every worker."""
        self._live: Live | None = None

    def observe(self, name: str, tally: Tally) -> None:
        self.current = name
        self.since = time.monotonic()
        self.tally = tally

    def __rich__(self) -> Text:
        elapsed = time.monotonic() - self.started
        parts = [f"exploring ({self.current})"]
        if self.where is not None:
            parts.append(f"on {self.where}")
        tally = self.tally
        if tally is not None:
            running = max(time.monotonic() - self.since, 1e-9)
            parts += [
                f"{tally.runs} runs",
                f"{tally.steps / running:,.0f} steps/s",
                f"{len(tally.deviations)}/{self.kinds} deviation kinds",
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
