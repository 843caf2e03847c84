"""The fast random engine: seeded random walks through the kernel, like TLC's simulation
mode, for long deep runs without Hypothesis.

Each walk follows the default schedule, and at each step deviates with probability
``1 - p`` to a random enabled non-default choice, until it has used its deviation budget;
then the run quiesces on the default schedule. Walks use swarm testing: each enables a
random subset of the deviation kinds (crash, clock jump, each tool fault, duplicate, lost
ACK, reordering), so a fault that masks another is often switched off. All randomness
comes from ``random.Random(seed)``; the same seed gives the same walks.

A failing walk is minimised (``txcheck.exploration.engines.shrink``): delta debugging drops
deviations while the run still fails the same way, then the systematic engine searches
below the remaining deviation count, within the time left, for a shorter one.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from txcheck.exploration.engines.shrink import delta_debug, search_below
from txcheck.exploration.engines.systematic import plan_sets_of
from txcheck.exploration.kernel.context import DEFAULT_TUNING, SearchContext, Tuning
from txcheck.exploration.kernel.report import Counterexample, EngineReport
from txcheck.exploration.kernel.session import Execution, Session
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.spread.generated import spread
from txcheck.models.sim.choices import Choice, FaultKind, fault_kind
from txcheck.models.sim.deviation_cost import deviation_count
from txcheck.models.sim.runner import Run

__all__ = ["RandomEngine"]


class _Walk:
    """A chooser: the default with probability ``p``, else a random enabled deviation of
    an enabled kind, until ``cap`` deviations are used. Faults come in bursts: for
    ``tuning.burst`` steps after a deviation, the next deviates with odds
    ``tuning.burst_odds``, so a policy's recovery (a lookup after a lost response, a backoff
    before a retry) meets faults of its own, as recoveries do."""

    def __init__(
        self,
        rng: random.Random,
        kinds: frozenset[FaultKind],
        p: float,
        cap: int,
        tuning: Tuning = DEFAULT_TUNING,
    ) -> None:
        self.rng = rng
        self.tuning = tuning
        self.kinds = kinds
        self.p = p
        self.cap = cap
        self.kinds_taken: list[FaultKind] = []
        self.burst = 0

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice | None:
        again = [c for c in options[1:] if run.free_repeat(c)]
        if again and self.rng.random() < self.tuning.stubborn:
            # the same fault on the retried call: free, and how retry budgets are found
            choice = again[0]
            kind = fault_kind(choice, options)
            if kind is not None:
                self.kinds_taken.append(kind)
            return choice
        if len(self.kinds_taken) >= self.cap and deviation_count(run.steps) >= self.cap:
            return None
        odds = self.tuning.burst_odds if self.burst else 1 - self.p
        self.burst = max(0, self.burst - 1)
        if self.rng.random() >= odds:
            return options[0]
        allowed = [
            (c, kind)
            for c in options[1:]
            if (kind := fault_kind(c, options)) is not None and kind in self.kinds
        ]
        if not allowed:
            return options[0]
        choice, kind = self.rng.choice(allowed)
        self.kinds_taken.append(kind)
        self.burst = self.tuning.burst
        return choice


class RandomEngine:
    """Seeded random walks (``budget.max_examples * tuning.walks_per_example`` of them, or until
    the deadline; each walk's plans drawn with weights by their number of calls), each
    with up to ``max_deviations`` deviations (default: the target's ``max_faults``; more
    for deep runs). ``shrink=False`` reports the failing walk as found."""

    name = "random"
    spreads = True

    def __init__(self, *, max_deviations: int | None = None, shrink: bool = True) -> None:
        self.max_deviations = max_deviations
        self.shrink = shrink

    def explore(self, target: Target, context: SearchContext) -> EngineReport:
        """Walk ``target``; with the context's workers, the walks are spread over them
        (``txcheck.exploration.spread.generated``)."""
        if context.workers is not None:
            options = {"max_deviations": self.max_deviations, "shrink": self.shrink}
            return spread(self, target, context, options=options)
        started = time.monotonic()
        counters = context.tally
        tuning = context.tuning
        rng = random.Random(target.budget.seed or 0)
        plan_sets = tuple(entry.plans for entry in plan_sets_of(target))
        # longer runs offer more places to fail: weigh each plan set by its calls
        weights = [sum(len(plan.calls) for plan in plans) for plans in plan_sets]
        cap = self.max_deviations
        if cap is None:
            cap = target.bounds.max_faults
        kinds_all = target.fault_kinds
        failing: Execution | None = None
        notes: list[str] = []
        for walk in range(target.budget.max_examples * tuning.walks_per_example):
            if context.stop or not plan_sets:
                break
            plans = rng.choices(plan_sets, weights)[0]
            kinds = frozenset(k for k in kinds_all if rng.random() < 0.5) or frozenset(
                {rng.choice(kinds_all)}
            )
            p = rng.choice((0.8, 0.9, 0.95, 0.98))
            walker = _Walk(random.Random(rng.getrandbits(64)), kinds, p, cap, tuning)
            session = Session(target, plans)
            session.drive(walker)
            execution = session.finish()
            counters.runs += 1
            counters.session(session)
            for kind in walker.kinds_taken:
                counters.deviation(kind)
            if not execution.ok:
                failing = execution
                notes.append(f"walk {walk + 1} failed with {execution.deviations} deviations")
                break
        counterexample = None
        if failing is not None:
            counterexample = Counterexample(
                found_by=self.name, plans=failing.plans, execution=failing
            )
            if self.shrink and failing.error is None:  # a policy error is kept as it was
                counterexample = self._shrink(target, counterexample, context, notes)
        return EngineReport.tallied(
            self.name, counters, started=started, counterexample=counterexample, notes=notes
        )

    def _shrink(
        self, target: Target, found: Counterexample, context: SearchContext, notes: list[str]
    ) -> Counterexample:
        best = delta_debug(target, found.execution, context)
        if best is not found.execution:
            found = found.shortened("delta-debugging", best)
        notes.append(f"minimised to {best.deviations} deviations, {len(best.steps)} steps")
        if best.deviations > 0 and not context.stop:
            report = search_below(target, found.plans, best.deviations, context.alone())
            if report is not None and report.counterexample is not None:
                found = found.shortened("systematic", report.counterexample.execution)
                notes.append(f"systematic search found one with {found.deviations} deviations")
            elif report is not None and report.complete:
                bound = best.deviations - 1
                notes.append(f"none with fewer deviations (systematic, bound {bound})")
            else:
                notes.append("the search for a shorter one ran out of budget")
        return found
