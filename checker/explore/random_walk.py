"""The fast random engine: seeded random walks through the one runner, like TLC's
simulation mode, for long deep runs without Hypothesis.

Each walk follows the default schedule, and at each step deviates with probability
``1 - p`` to a random enabled non-default choice, until it has used its deviation budget;
then the run quiesces on the default schedule. Walks use swarm testing: each enables a
random subset of the deviation kinds (crash, clock jump, each tool fault, duplicate, lost
ACK, reordering), so a fault that masks another is often switched off. All randomness
comes from ``random.Random(budget.seed)``; the same seed gives the same walks.

A failing walk is minimised: delta debugging drops deviations while the run still fails
the same invariant (each deviation is anchored to its n-th chance since the previous one,
so it can be replayed after earlier ones are gone), then the systematic engine searches
below the remaining deviation count, within the time left, for a shorter one.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

import attrs

from txcheck.explore.engine import Budget, Counterexample, EngineReport, Target
from txcheck.explore.representative import representative_plans
from txcheck.explore.session import Execution, execute
from txcheck.explore.systematic import DEVIATION_KINDS, SystematicEngine, deviation_kind
from txcheck.models.proposal import Plan
from txcheck.models.runner import Choice, Run
from txcheck.models.world import World

__all__ = ["RandomEngine", "shrink"]

_Context = tuple[str, str, str]
Anchor = tuple[Choice, _Context, int]
"""A deviation, what its actor was about to do, and which chance (since the previous
deviation) it took."""


def _context(run: Run, choice: Choice) -> _Context:
    now = run.current(choice.actor)
    return (str(now.get("kind", "")), str(now.get("tool", "")), str(now.get("call", "")))


class _Walk:
    """A chooser: the default with probability ``p``, else a random enabled deviation of
    an enabled kind, until ``cap`` deviations are used."""

    def __init__(self, rng: random.Random, kinds: frozenset[str], p: float, cap: int) -> None:
        self.rng = rng
        self.kinds = kinds
        self.p = p
        self.cap = cap
        self.kinds_taken: list[str] = []

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice | None:
        if len(self.kinds_taken) >= self.cap:
            return None
        if self.rng.random() < self.p:
            return options[0]
        allowed = [
            (c, kind) for c in options[1:] if (kind := deviation_kind(c, options)) in self.kinds
        ]
        if not allowed:
            return options[0]
        choice, kind = self.rng.choice(allowed)
        self.kinds_taken.append(kind)
        return choice


class _Replay:
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


class _Follow:
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


def _failure(execution: Execution) -> str | None:
    if execution.failures:
        return execution.failures[0].name
    return "policy_error" if execution.error else None


@attrs.frozen(kw_only=True)
class _Setup:
    target: Target
    plans: tuple[Plan, ...]
    max_steps: int
    world_factory: Callable[..., World] = World

    def run(self, chooser: _Walk | _Replay | _Follow) -> Execution:
        return execute(
            policy=self.target.policy,
            contract=self.target.contract,
            plans=self.plans,
            fixture=self.target.fixture,
            invariants=self.target.invariants,
            chooser=chooser,
            stop_at_first=True,
            max_steps=self.max_steps,
            world_factory=self.world_factory,
        )


def shrink(
    target: Target,
    plans: Sequence[Plan],
    failing: Execution,
    *,
    budget: Budget | None = None,
    max_steps: int = 2000,
    world_factory: Callable[..., World] = World,
) -> Execution:
    """Delta debugging over the deviations of ``failing`` (a run of ``target`` on
    ``plans``): drop chunks of them while the run still fails the same invariant; the
    failing execution with the fewest deviations (then steps) found."""
    setup = _Setup(
        target=target, plans=tuple(plans), max_steps=max_steps, world_factory=world_factory
    )
    return _minimise(setup, failing, budget or Budget())


def _minimise(setup: _Setup, failing: Execution, budget: Budget) -> Execution:
    name = _failure(failing)
    follow = _Follow([s.choice for s in failing.steps])
    setup.run(follow)
    anchors = follow.anchors
    best = failing
    chunks = 2
    while len(anchors) >= 1 and not budget.expired():
        size = max(1, -(-len(anchors) // chunks))
        reduced = False
        for start in range(0, len(anchors), size):
            trial = anchors[:start] + anchors[start + size :]
            execution = setup.run(_Replay(trial))
            smaller = (execution.deviations, len(execution.steps)) < (
                best.deviations,
                len(best.steps),
            )
            if smaller and _failure(execution) == name:
                best = execution
                follow = _Follow([s.choice for s in execution.steps])
                setup.run(follow)
                anchors = follow.anchors
                chunks = max(chunks - 1, 2)
                reduced = True
                break
        if not reduced:
            if size == 1:
                break
            chunks = min(len(anchors), chunks * 2)
    return best


class RandomEngine:
    """Seeded random walks (``budget.max_examples`` of them, or until the time budget),
    each with up to ``max_deviations`` deviations (default ``budget.max_faults``; more
    for deep runs). ``shrink=False`` reports the failing walk as found."""

    name = "random"

    def __init__(
        self,
        *,
        max_deviations: int | None = None,
        max_steps: int = 2000,
        shrink: bool = True,
        world_factory: Callable[..., World] = World,
    ) -> None:
        self.max_deviations = max_deviations
        self.max_steps = max_steps
        self.shrink = shrink
        self.world_factory = world_factory

    def explore(self, target: Target, budget: Budget) -> EngineReport:
        started = time.monotonic()
        budget.start()
        rng = random.Random(budget.seed)
        plan_sets = target.plans or tuple(representative_plans(target.contract, target.fixture))
        cap = self.max_deviations if self.max_deviations is not None else budget.max_faults
        safety = [c.name for c in target.invariants if getattr(c, "kind", "always") == "always"]
        liveness = [c.name for c in target.invariants if c.name not in safety]
        faults: dict[str, int] = {}
        deviations: dict[str, int] = {}
        evaluated: dict[str, int] = {}
        runs = steps = 0
        failing: tuple[_Setup, Execution] | None = None
        notes: list[str] = []
        for walk in range(budget.max_examples):
            if budget.expired() or not plan_sets:
                break
            plans = tuple(plan_sets[walk % len(plan_sets)])
            setup = _Setup(
                target=target,
                plans=plans,
                max_steps=self.max_steps,
                world_factory=self.world_factory,
            )
            kinds = frozenset(k for k in DEVIATION_KINDS if rng.random() < 0.5) or frozenset(
                {rng.choice(DEVIATION_KINDS)}
            )
            p = rng.choice((0.8, 0.9, 0.95, 0.98))
            walker = _Walk(random.Random(rng.getrandbits(64)), kinds, p, cap)
            execution = setup.run(walker)
            runs += 1
            steps += len(execution.steps)
            for kind in walker.kinds_taken:
                deviations[kind] = deviations.get(kind, 0) + 1
                if kind not in ("reorder", "interleave"):
                    faults[kind] = faults.get(kind, 0) + 1
            for name in safety:
                evaluated[name] = evaluated.get(name, 0) + len(execution.steps)
            if execution.quiesced:
                for name in liveness:
                    evaluated[name] = evaluated.get(name, 0) + 1
            if _failure(execution) is not None:
                failing = (setup, execution)
                notes.append(f"walk {walk + 1} failed with {execution.deviations} deviations")
                break
        counterexample = None
        if failing is not None:
            counterexample = self._shrink(failing[0], failing[1], budget, notes)
        return EngineReport(
            engine=self.name,
            runs=runs,
            steps=steps,
            counterexample=counterexample,
            coverage={
                "faults": dict(sorted(faults.items())),
                "deviations": dict(sorted(deviations.items())),
                "invariants": dict(sorted(evaluated.items())),
            },
            seconds=time.monotonic() - started,
            notes=tuple(notes),
        )

    def _shrink(
        self, setup: _Setup, failing: Execution, budget: Budget, notes: list[str]
    ) -> Counterexample:
        if not self.shrink:
            deviations = failing.deviations
            return Counterexample(
                engine=self.name, plans=setup.plans, execution=failing, deviations=deviations
            )
        best = _minimise(setup, failing, budget)
        notes.append(f"minimised to {best.deviations} deviations, {len(best.steps)} steps")
        if best.deviations > 0 and not budget.expired():
            below = Budget(
                max_faults=best.deviations - 1,
                max_states=budget.max_states,
                deadline=budget.deadline,
            )
            engine = SystematicEngine(max_steps=self.max_steps, world_factory=self.world_factory)
            report = engine.explore(attrs.evolve(setup.target, plans=(setup.plans,)), below)
            if report.counterexample is not None:
                best = report.counterexample.execution
                notes.append(f"systematic search found one with {best.deviations} deviations")
            elif report.complete:
                notes.append(f"none with fewer deviations (systematic, bound {below.max_faults})")
            else:
                notes.append("the search for a shorter one ran out of budget")
        return Counterexample(
            engine=self.name, plans=setup.plans, execution=best, deviations=best.deviations
        )
