"""Where a search's work items run: in this process, or spread over Dask workers.

An engine that can split its work hands ``Workers.map_unordered`` a picklable function, a
list of picklable items and its search context; it gets ``(index, result)`` pairs back as
items complete, in no particular order, and may ``cancel()`` the rest at any time. Each
call of the function gets its item and a ``Job``: the item's index, a deadline (the
context's time left; interrupted when the context's deadline is interrupted or the items
are cancelled), a ``Tally`` whose counters the executor adds to the context's as progress
while the item runs, and the call's ``common`` data (sent to each worker once, however
many items it runs; items must not change it). ``Job.context()`` is the item's own search
context, for code that searches inside it.

``InProcess`` runs the items one after another in this process (no Dask at all); the Dask
executor (``txcheck.exploration.spread.cluster``) has the same interface. ``notes`` says what went
wrong on the way and was repaired (a worker that died, its item run again), for the
engine's report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from txcheck.exploration.kernel.report import Tally
from txcheck.exploration.kernel.target import Deadline

if TYPE_CHECKING:
    from txcheck.exploration.kernel.context import SearchContext

__all__ = ["InProcess", "Job", "Task", "Workers"]

Item = TypeVar("Item")
Result = TypeVar("Result")


@attrs.define
class Job:
    """What a task gets besides its item: which item it is, when to stop and the counters
    that are shown as progress while it runs."""

    index: int
    deadline: Deadline
    tally: Tally = attrs.field(factory=Tally)
    common: Any = None
    """The data every item of the call shares (read-only)."""

    def context(self) -> SearchContext:
        """The item's own search context: its deadline and counters."""
        from txcheck.exploration.kernel.context import SearchContext  # noqa: PLC0415

        return SearchContext(deadline=self.deadline, tally=self.tally)


Task = Callable[[Item, Job], Result]
"""A work function: module-level (it is pickled by name), ``(item, job) -> result``."""


class Workers(Protocol):
    """Runs work items somewhere; see the module docstring."""

    @property
    def count(self) -> int:
        """How many items run at once (how many shares to split work into)."""
        ...

    @property
    def where(self) -> str:
        """Where the items run, for humans: ``in-process``, ``2 local workers``, ..."""
        ...

    @property
    def notes(self) -> list[str]:
        """What went wrong and was repaired during the last ``map_unordered``, in order
        (e.g. a worker died and its items ran again)."""
        ...

    def map_unordered(
        self,
        fn: Callable[[Item, Job], Result],
        items: Sequence[Item],
        context: SearchContext,
        *,
        common: Any = None,
    ) -> Iterator[tuple[int, Result]]:
        """Run ``fn(item, job)`` for every item; yield ``(index, result)`` as each
        completes. The context's tally is kept equal to its counts at the start plus the
        sum of the items' counters; every job's ``common`` is ``common``. An exception
        raised by ``fn`` is raised here. When the context's deadline is interrupted the
        running items are asked to stop (their deadlines are interrupted too) and what
        they return is still yielded."""
        ...

    def cancel(self) -> None:
        """Stop the items of the current ``map_unordered``: running ones are asked to stop,
        queued ones never start, and the iterator yields nothing more."""
        ...


class InProcess:
    """Items one after another in this process, each with the caller's deadline."""

    def __init__(self) -> None:
        self._cancelled = False
        self._notes: list[str] = []

    @property
    def count(self) -> int:
        return 1

    @property
    def where(self) -> str:
        return "in-process"

    @property
    def notes(self) -> list[str]:
        return self._notes

    def map_unordered(
        self,
        fn: Callable[[Item, Job], Result],
        items: Sequence[Item],
        context: SearchContext,
        *,
        common: Any = None,
    ) -> Iterator[tuple[int, Result]]:
        self._cancelled = False
        self._notes = []
        for index, item in enumerate(items):
            if self._cancelled:
                return
            job = Job(index=index, deadline=context.deadline.within(None), common=common)
            result = fn(item, job)
            context.tally.add(job.tally)
            yield index, result

    def cancel(self) -> None:
        self._cancelled = True
