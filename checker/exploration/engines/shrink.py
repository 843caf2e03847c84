"""Shrinking a failing run: fewer deviations first, then fewer steps.

``delta_debug`` drops chunks of a failing run's deviations while the run still fails the
same way (each deviation is anchored to its n-th chance since the previous one, so it can
be replayed after earlier ones are gone). ``search_below`` then asks the systematic engine
whether the same plans fail with fewer deviations at all, within the time left.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import EngineReport, Tally
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.runner import Run

__all__ = ["Anchor", "delta_debug", "fewer_deviations", "search_below"]

_Context = tuple[str, str, str]
Anchor = tuple[Choice, _Context, int]
"""A deviation, what its actor was about to do, and which chance (since the previous
deviation) it took."""


def _context(run: Run, choice: Choice) -> _Context:
    now = run.current(choice.actor)
    return (str(now.get("kind", "")), str(now.get("tool", "")), str(now.get("call", "")))


class Replay:
    """A chooser that takes each anchored deviation at its n-th chance, in order."""

    def __init__(self, anchors: Sequence[Anchor]) -> None:
        self.queue = list(anchors)
        self.seen: dict[tuple[Choice, _Context], int] = {}

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice | None:
        if not self.queue:
            return None
        wanted = self.queue[0]
        for alt in options[1:]:
            key = (alt, _context(run, alt))
            count = self.seen[key] = self.seen.get(key, 0) + 1
            if key == (wanted[0], wanted[1]) and count == wanted[2]:
                self.queue.pop(0)
                self.seen.clear()
                return alt
        return options[0]


class Follow:
    """A chooser that replays recorded choices and anchors each deviation it passes."""

    def __init__(self, choices: Sequence[Choice]) -> None:
        self.choices = choices
        self.seen: dict[tuple[Choice, _Context], int] = {}
        self.anchors: list[Anchor] = []

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice | None:
        index = len(run.steps)
        if index >= len(self.choices):
            return None
        picked = self.choices[index]
        for alt in options[1:]:
            key = (alt, _context(run, alt))
            self.seen[key] = self.seen.get(key, 0) + 1
        if picked != options[0]:
            key = (picked, _context(run, picked))
            self.anchors.append((picked, key[1], self.seen[key]))
            self.seen.clear()
        return picked


def _anchors(target: Target, execution: Execution) -> list[Anchor]:
    follow = Follow([s.choice for s in execution.steps])
    execute(target, execution.plans, chooser=follow)
    return follow.anchors


def delta_debug(target: Target, failing: Execution, context: SearchContext) -> Execution:
    """Drop chunks of ``failing``'s deviations while the run still fails the same way;
    the failing execution with the fewest deviations (then steps) found."""
    name = failing.first
    plans = failing.plans
    anchors = _anchors(target, failing)
    best = failing
    chunks = 2
    while anchors and not context.stop:
        size = max(1, -(-len(anchors) // chunks))
        reduced = False
        for start in range(0, len(anchors), size):
            trial = anchors[:start] + anchors[start + size :]
            execution = execute(target, plans, chooser=Replay(trial))
            smaller = (execution.deviations, len(execution.steps)) < (
                best.deviations,
                len(best.steps),
            )
            if smaller and execution.first == name:
                best = execution
                anchors = _anchors(target, execution)
                chunks = max(chunks - 1, 2)
                reduced = True
                break
        if not reduced:
            if size == 1:
                break
            chunks = min(len(anchors), chunks * 2)
    return best


def fewer_deviations(target: Target, execution: Execution, context: SearchContext) -> Execution:
    """``delta_debug`` when there is more than one deviation to drop (else ``execution``):
    removing one deviation shifts where the later ones land, which can go further than
    Hypothesis' own shrinking of the choice sequence."""
    if execution.deviations <= 1 or execution.error is not None:
        return execution
    return delta_debug(target, execution, context)


def search_below(
    target: Target, plans: Sequence[Plan], deviations: int, context: SearchContext
) -> EngineReport | None:
    """A systematic search of ``plans`` with fewer than ``deviations`` deviations (any
    invariant; the engine returns the fewest deviations first), or None when there is
    nothing below to search."""
    if deviations <= 0:
        return None
    narrow = attrs.evolve(
        target,
        plans=(tuple(plans),),
        bounds=attrs.evolve(target.bounds, max_faults=deviations - 1),
    )
    return SystematicEngine().explore(narrow, context.counting(Tally()).alone())
