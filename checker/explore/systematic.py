"""The systematic engine: every run within a bound on deviations from the default schedule.

A checkout run takes about fifty scheduling steps, so bounding the depth is useless; like
CHESS bounding preemptions, this engine bounds *deviations*: any choice other than the
default (``choices()[0]``) — a fault outcome, a crash, a reordering, a duplicate, a lost
ACK, a clock jump, another instance moving first. It deepens the bound level by level
(0, 1, 2, ...), so the first counterexample has the fewest deviations. Within a level it
keeps the shortest counterexample (fewest steps) seen across the whole level, cutting any
branch that can no longer beat it.

A run with deviations at steps p1 < p2 < ... is a prefix of choices followed by the default
schedule to quiescence. Policies are generators, which cannot be copied, so a branch
replays its prefix from a fresh run (without checking: the parent already checked those
states) and checks every state from its deviation on: safety after every step, liveness
at quiescence. While a run follows the default schedule, every non-default choice it
passes becomes a branch of the next level.

Pruning (``prune=True``; docs/decisions/002-systematic-pruning.md says why no verdict and
no minimal length changes):

- a state already reached with fewer deviations, or as many and no more steps, is not
  explored again (``Run.fingerprint``: the world, the history, every actor's position);
- a state met twice on one default continuation is a loop: the run never quiesces;
- a crash of an orchestrator idle since it (re)started, or right after a read-only step
  of the same actor, is not branched on: it changes nothing, or lands where another
  branch does;
- sleep sets: a deviation that commutes with the default step is not branched on again
  one step later (``txcheck.explore.independence``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import attrs

from txcheck.explore.engine import Budget, Counterexample, EngineReport, Target
from txcheck.explore.faults import FAULT_KINDS, kind_of
from txcheck.explore.independence import READ_ONLY, Moment
from txcheck.explore.representative import representative_plans
from txcheck.explore.session import execute
from txcheck.models.errors import PolicyError
from txcheck.models.proposal import Plan
from txcheck.models.runner import Check, Choice, Run
from txcheck.models.world import World

__all__ = ["DEVIATION_KINDS", "SystematicEngine", "deviation_kind"]

DEVIATION_KINDS = FAULT_KINDS
"""Every kind of deviation (``txcheck.explore.faults`` names them)."""


def deviation_kind(choice: Choice, options: Sequence[Choice]) -> str:
    """The kind of a non-default ``choice`` among ``options`` (default first)."""
    return kind_of(choice, options) or "interleave"


@attrs.frozen
class _Node:
    """A branch: the parent's choices up to ``cut``, then the deviation ``alt``;
    ``positions`` are the actors' input digests at ``cut`` (to fingerprint states without
    digesting the replayed prefix again)."""

    base: tuple[Choice, ...]
    cut: int
    alt: Choice | None
    positions: tuple[bytes, ...] = ()


@attrs.frozen(kw_only=True)
class _Found:
    plans: tuple[Plan, ...]
    choices: tuple[Choice, ...]
    deviations: int
    length: int
    invariant: str


class _Stop(Exception):
    """The budget ran out (time or states) in the middle of a level."""


@attrs.define
class _Stats:
    runs: int = 0
    steps: int = 0
    replayed: int = 0
    states: int = 0
    faults: dict[str, int] = attrs.field(factory=dict)
    deviations: dict[str, int] = attrs.field(factory=dict)
    evaluated: dict[str, int] = attrs.field(factory=dict)


class _PlanSearch:
    """The level-by-level search over one set of plans (one instance per plan)."""

    def __init__(
        self,
        target: Target,
        plans: tuple[Plan, ...],
        *,
        limit: int,
        prune: bool,
        max_steps: int,
        stats: _Stats,
        world_factory: Callable[..., World],
    ) -> None:
        self.world_factory = world_factory
        self.target = target
        self.plans = plans
        self.limit = limit
        self.prune = prune
        self.max_steps = max_steps
        self.stats = stats
        self.safety = [c for c in target.invariants if _kind(c) == "always"]
        self.liveness = [c for c in target.invariants if _kind(c) != "always"]
        self.frontier: dict[int, list[_Node]] = {0: [_Node((), 0, None)]}
        self.visited: dict[bytes, tuple[int, int]] = {}

    def level(self, deviations: int, bound: int | None, budget: Budget) -> _Found | None:
        """Explore every branch with exactly ``deviations`` deviations; the shortest
        counterexample (shorter than ``bound`` steps), if any."""
        best: _Found | None = None
        nodes = self.frontier.pop(deviations, [])
        for node in nodes:
            if budget.expired():
                raise _Stop("time budget exhausted")
            if self.stats.states >= budget.max_states:
                raise _Stop(f"state budget exhausted ({budget.max_states} states)")
            limit = best.length if best is not None else bound
            if limit is not None and node.cut + 1 >= limit:
                continue
            found = self._branch(node, deviations, limit)
            if found is not None and (best is None or found.length < best.length):
                best = found
        return best

    def _branch(self, node: _Node, deviations: int, bound: int | None) -> _Found | None:
        target = self.target
        run = Run(
            policy=target.policy,
            contract=target.contract,
            plans=self.plans,
            fixture=target.fixture,
            world_factory=self.world_factory,
            max_steps=self.max_steps,
            track_positions=self.prune and node.alt is None,
        )
        self.stats.runs += 1
        children: list[tuple[int, Choice, tuple[bytes, ...]]] = []
        found = None
        try:
            for choice in node.base[: node.cut]:
                run.apply(choice)
            self.stats.replayed += node.cut
            if self.prune and node.alt is not None:
                run.track(node.positions)
            if node.alt is not None:
                kind = deviation_kind(node.alt, run.choices())
                self.stats.deviations[kind] = self.stats.deviations.get(kind, 0) + 1
                if node.alt.is_fault:
                    self.stats.faults[kind] = self.stats.faults.get(kind, 0) + 1
                run.apply(node.alt, deviation=True)
                self.stats.steps += 1
            found = self._follow(run, deviations, bound, children)
        except PolicyError:
            found = self._found(run, deviations, "policy_error")
        if children:
            base = tuple(step.choice for step in run.steps)
            queue = self.frontier.setdefault(deviations + 1, [])
            queue.extend(_Node(base, cut, alt, positions) for cut, alt, positions in children)
        return found

    def _follow(
        self,
        run: Run,
        deviations: int,
        bound: int | None,
        children: list[tuple[int, Choice, tuple[bytes, ...]]],
    ) -> _Found | None:
        """Follow the default schedule from here, checking every state, until a
        violation, quiescence, a state already covered or the bound."""
        asleep: set[Choice] = set()  # deviations another branch covers from here
        offered: set[Choice] = set()  # deviations branched (or covered) one step back
        absorbed: str | None = None  # whose crash lands where the one a step back did
        chain: set[bytes] = set()  # states of this default continuation
        while True:
            steps = len(run.steps)
            if self.prune:
                key = run.fingerprint()
                if key in chain:  # the default schedule loops: it never quiesces
                    return self._found(run, deviations, "quiescence", self.max_steps)
                chain.add(key)
                seen = self.visited.get(key)
                if seen is not None and seen <= (deviations, steps):
                    return None
                if seen is None:
                    self.stats.states += 1
                self.visited[key] = (deviations, steps)
            else:
                self.stats.states += 1
            if steps and (name := self._violated(run, self.safety)):
                return self._found(run, deviations, name)
            options = run.choices()
            if not options:
                name = self._violated(run, self.liveness)
                return self._found(run, deviations, name) if name else None
            if bound is not None and steps + 1 >= bound:
                return None
            if steps >= self.max_steps:
                return self._found(run, deviations, "quiescence")
            if deviations < self.limit:
                positions = run.positions() if self.prune else ()
                covered = offered
                offered = set()
                for alt in options[1:]:
                    if self.prune:
                        if alt.action == "crash" and run.fresh(alt.actor):
                            continue  # a restart where it stands: nothing changes
                        if alt in asleep or (
                            alt.action == "crash" and alt.actor == absorbed and alt in covered
                        ):
                            offered.add(alt)
                            continue
                    offered.add(alt)
                    children.append((steps, alt, positions))
                if self.prune:
                    asleep, absorbed = self._reduce(run, options, offered)
            run.apply(options[0])
            self.stats.steps += 1

    @staticmethod
    def _reduce(
        run: Run, options: list[Choice], offered: set[Choice]
    ) -> tuple[set[Choice], str | None]:
        """After the default step: which offered deviations commute with it (branching on
        them next is covered), and whose crash the step leaves where it was (a read-only
        step of that actor)."""
        moment = Moment(run, options)
        commuting = {alt for alt in offered if moment.commutes(alt)}
        read_only = moment.kind in READ_ONLY and moment.default.outcome == "ok"
        return commuting, moment.default.actor if read_only else None

    def _violated(self, run: Run, checks: Sequence[Check]) -> str | None:
        if not checks:
            return None
        view = run.view()
        evaluated = self.stats.evaluated
        for check in checks:
            evaluated[check.name] = evaluated.get(check.name, 0) + 1
            if next(iter(check(view)), None) is not None:
                return check.name
        return None

    def _found(self, run: Run, deviations: int, name: str, length: int | None = None) -> _Found:
        return _Found(
            plans=self.plans,
            choices=tuple(step.choice for step in run.steps),
            deviations=deviations,
            length=len(run.steps) if length is None else length,
            invariant=name,
        )


def _kind(check: Check) -> str:
    return str(getattr(check, "kind", "always"))


class SystematicEngine:
    """Every run with at most ``budget.max_faults`` deviations, fewest deviations first.

    ``prune=False`` turns every pruning off (to check that pruning changes no verdict, or
    for invariants that read what a state fingerprint leaves out, see ADR 002). Plans come
    from the target, else the representative plans; ``world_factory`` builds each run's
    world (a user's ``ServiceSet``).
    """

    name = "systematic"

    def __init__(
        self,
        *,
        prune: bool = True,
        max_steps: int = 2000,
        world_factory: Callable[..., World] = World,
    ) -> None:
        self.prune = prune
        self.max_steps = max_steps
        self.world_factory = world_factory

    def explore(self, target: Target, budget: Budget) -> EngineReport:
        started = time.monotonic()
        budget.start()
        plan_sets = target.plans or tuple(representative_plans(target.contract, target.fixture))
        stats = _Stats()
        searches = [
            _PlanSearch(
                target,
                tuple(plans),
                limit=budget.max_faults,
                prune=self.prune,
                max_steps=self.max_steps,
                stats=stats,
                world_factory=self.world_factory,
            )
            for plans in plan_sets
        ]
        exhaustive: int | None = None
        found: _Found | None = None
        notes: list[str] = []
        try:
            for deviations in range(budget.max_faults + 1):
                best: _Found | None = None
                for search in searches:
                    bound = best.length if best is not None else None
                    result = search.level(deviations, bound, budget)
                    if result is not None and (best is None or result.length < best.length):
                        best = result
                if best is not None:
                    found = best
                    break
                exhaustive = deviations
        except _Stop as stop:
            notes.append(f"stopped early: {stop}")
        counterexample = None
        if found is not None:
            counterexample = self._counterexample(target, found)
        complete = found is None and exhaustive == budget.max_faults
        notes.append(f"replayed {stats.replayed} prefix steps in {stats.runs} runs")
        return EngineReport(
            engine=self.name,
            runs=stats.runs,
            steps=stats.steps,
            counterexample=counterexample,
            states=stats.states,
            exhaustive_bound=exhaustive,
            complete=complete,
            coverage={
                "faults": dict(sorted(stats.faults.items())),
                "deviations": dict(sorted(stats.deviations.items())),
                "invariants": dict(sorted(stats.evaluated.items())),
            },
            seconds=time.monotonic() - started,
            notes=tuple(notes),
        )

    def _counterexample(self, target: Target, found: _Found) -> Counterexample:
        execution = execute(
            policy=target.policy,
            contract=target.contract,
            plans=found.plans,
            fixture=target.fixture,
            invariants=target.invariants,
            choices=found.choices,
            stop_at_first=True,
            max_steps=self.max_steps,
            world_factory=self.world_factory,
        )
        return Counterexample(
            engine=self.name,
            plans=found.plans,
            execution=execution,
            deviations=execution.deviations,
        )
