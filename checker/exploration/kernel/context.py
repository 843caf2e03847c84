"""The search context: everything a search needs besides its target.

A ``Target`` says what to check; a ``SearchContext`` says how this one search runs: when to
stop (``deadline``), where to count (``tally``, which progress displays read), where the
work runs (``workers``), who is told when each engine starts (``observe``) and the engines'
tuning constants (``Tuning``). Engines take the target and the context, nothing else, so a
new setting is one field here rather than a parameter threaded through every signature.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs

from txcheck.exploration.kernel.report import EngineReport, Tally
from txcheck.exploration.kernel.target import Deadline, Target
from txcheck.exploration.kernel.workers import Workers

__all__ = ["DEFAULT_TUNING", "Engine", "Observer", "SearchContext", "Tuning"]

Observer = Callable[[str, Tally], None]
"""Told when each search starts: its name and the counters it fills as it goes."""


@attrs.frozen(kw_only=True)
class Tuning:
    """The engines' tuning constants: what each trades, and why its default.

    None of them changes what a pass proves (the bounds and the budget do); they change
    how fast a search gets somewhere. Results for a given seed depend on them, so the
    defaults are part of what makes a run reproducible.
    """

    shorten_seconds: float = 10.0
    """``auto``: how long it may search for a shorter counterexample than a scenario
    seed's (seeds are hand-written, not minimal)."""
    chunks: int = 16
    """The systematic engine over workers: each level's branches are cut into at most this
    many chunks per plan set (a fixed number, so what is searched never depends on how many
    workers there are): enough for dynamic balance over a few workers (a chunk's branches
    can cost 100 times another's); each one more adds duplicate work."""
    directed_share: float = 0.75
    """The systematic engine, once its exhaustive search found nothing: the distinct
    states its directed search (ADR 013) may visit on the plan sets of two instances or
    more (the same plan submitted twice first), as a share of ``Bounds.max_states``, on
    top of them. With the default 200,000, 150,000 take the double click to its third
    level with ``guarded`` (about 107,000 states) and the next plan set past its first;
    0 turns it off."""
    walks_per_example: int = 10
    """The random engine: walks per unit of ``Budget.max_examples``. A walk costs about a
    tenth of a Hypothesis example (no strategy draws, no shrinking), and deep bugs need
    thousands of them."""
    burst: int = 6
    """The random engine: steps after a deviation during which faults are likelier..."""
    burst_odds: float = 0.4
    """...with these odds per step, so a policy's recovery meets faults of its own."""
    stubborn: float = 0.5
    """The random engine: the odds that a walk repeats its last fault when the call it hit
    is retried (free: ``txcheck.models.sim.deviation_cost``), so a call can keep failing
    until the policy gives up."""
    advance_max: int = 8
    """The Hypothesis engine: each step takes 0 to this many default choices first..."""
    inject_odds: int = 2
    """...and then injects one fault with odds 1 in this..."""
    skip_max: int = 3
    """...landing 0 to this many opportunities on."""


DEFAULT_TUNING = Tuning()
"""The defaults, the tuning every search has unless one is given."""


@attrs.frozen(kw_only=True)
class SearchContext:
    """How one search runs: its deadline, counters, workers, observer and tuning."""

    deadline: Deadline = attrs.field(factory=Deadline)
    """When to stop: the time budget left, or an interruption."""
    tally: Tally = attrs.field(factory=Tally)
    """The counters this search fills as it goes (progress displays read them)."""
    workers: Workers | None = None
    """Where the work runs; None: in this process, with no executor at all."""
    observe: Observer | None = None
    """Told when each engine's search starts (``for_engine``)."""
    tuning: Tuning = DEFAULT_TUNING

    @classmethod
    def of(
        cls,
        target: Target,
        *,
        deadline: Deadline | None = None,
        workers: Workers | None = None,
        observe: Observer | None = None,
        tuning: Tuning | None = None,
    ) -> SearchContext:
        """A context for searching ``target``: its time budget unless ``deadline`` is given."""
        return cls(
            deadline=deadline if deadline is not None else Deadline(target.budget.time_budget),
            workers=workers,
            observe=observe,
            tuning=tuning if tuning is not None else DEFAULT_TUNING,
        )

    def for_engine(self, name: str, *, share: int | None = None) -> SearchContext:
        """The context of one engine's search: fresh counters (shown to ``observe`` under
        ``name``) and, with ``share``, an equal share of the time left among that many
        searches."""
        tally = Tally()
        if self.observe is not None:
            self.observe(name, tally)
        deadline = self.deadline if share is None else self.deadline.share(share)
        return attrs.evolve(self, tally=tally, deadline=deadline)

    def within(self, seconds: float | None) -> SearchContext:
        """The same search for at most ``seconds`` more (None: the same deadline)."""
        return attrs.evolve(self, deadline=self.deadline.within(seconds))

    def alone(self) -> SearchContext:
        """The same search run in this process (no workers)."""
        return attrs.evolve(self, workers=None)

    def counting(self, tally: Tally) -> SearchContext:
        """The same search counting into ``tally``."""
        return attrs.evolve(self, tally=tally)

    @property
    def stop(self) -> bool:
        """Whether the search must stop now (time up or interrupted)."""
        return self.deadline.expired()


class Engine(Protocol):
    """An exploration engine: ``explore`` searches ``target`` until the context's deadline
    (or its own bounds) and reports. ``spreads``: it can spread its work over the
    context's workers (else it runs in this process, and ``auto`` says so)."""

    name: str
    spreads: bool

    def explore(self, target: Target, search: SearchContext) -> EngineReport: ...
