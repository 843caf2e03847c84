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
  one step later (``txcheck.exploration.independence``).
"""

from __future__ import annotations

import time

import attrs

from txcheck.exploration.independence import Moment
from txcheck.exploration.report import Counterexample, EngineReport, Tally
from txcheck.exploration.representative import representative_plans
from txcheck.exploration.session import Execution, Session
from txcheck.exploration.target import Deadline, Target
from txcheck.models.choices import Action, Choice, FaultKind, fault_kind
from txcheck.models.proposal import Plan
from txcheck.models.runner import Step

__all__ = ["SystematicEngine"]


@attrs.frozen
class _Node:
    """A branch: the parent's steps up to ``cut``, then the deviation ``alt``;
    ``positions`` are the actors' input digests at ``cut`` (to fingerprint states without
    digesting the replayed prefix again)."""

    base: tuple[Step, ...]
    cut: int
    alt: Choice | None
    positions: tuple[bytes, ...] = ()


@attrs.frozen(kw_only=True)
class _Found:
    """A failing branch: its session, deviations and length. A branch whose default
    schedule loops counts as ``max_steps`` long, as an unpruned search would see it."""

    session: Session
    deviations: int
    length: int

    def execution(self) -> Execution:
        """The failing execution; a loop is run on (not again) to the step bound, so the
        report is the one an unpruned search gives."""
        if not self.session.failures and self.session.error is None:
            self.session.finish()
        return self.session.execution()


class _Stop(Exception):
    """The budget ran out (time or states) in the middle of a level."""


@attrs.define
class _Stats:
    states: int = 0
    replayed: int = 0
    tally: Tally = attrs.field(factory=Tally)


class _PlanSearch:
    """The level-by-level search over one set of plans (one instance per plan)."""

    def __init__(
        self,
        target: Target,
        plans: tuple[Plan, ...],
        *,
        prune: bool,
        stats: _Stats,
    ) -> None:
        self.target = target
        self.plans = plans
        self.limit = target.bounds.max_faults
        self.max_steps = target.bounds.max_steps
        self.prune = prune
        self.stats = stats
        self.frontier: dict[int, list[_Node]] = {0: [_Node((), 0, None)]}
        self.visited: dict[bytes, tuple[int, int]] = {}

    def level(self, deviations: int, bound: int | None, deadline: Deadline) -> _Found | None:
        """Explore every branch with exactly ``deviations`` deviations; the shortest
        counterexample (shorter than ``bound`` steps), if any."""
        best: _Found | None = None
        nodes = self.frontier.pop(deviations, [])
        max_states = self.target.bounds.max_states
        for node in nodes:
            if deadline.expired():
                raise _Stop("interrupted" if deadline.interrupted else "time budget exhausted")
            if self.stats.states >= max_states:
                raise _Stop(f"state budget exhausted ({max_states} states)")
            limit = best.length if best is not None else bound
            if limit is not None and node.cut + 1 >= limit:
                continue
            found = self._branch(node, deviations, limit)
            if found is not None and (best is None or found.length < best.length):
                best = found
        return best

    def _branch(self, node: _Node, deviations: int, bound: int | None) -> _Found | None:
        session = Session(self.target, self.plans, track_positions=self.prune and node.alt is None)
        tally = self.stats.tally
        tally.runs += 1
        children: list[tuple[int, Choice, tuple[bytes, ...]]] = []
        session.replay_checked(node.base[: node.cut])
        self.stats.replayed += node.cut
        if self.prune and node.alt is not None:
            session.run.track(node.positions)
        found = None
        if node.alt is not None:
            kind = fault_kind(node.alt, session.run.choices())
            tally.deviation(kind or FaultKind.INTERLEAVE)
            session.apply(node.alt, check=False)
        if session.error is not None:
            found = self._found(session, deviations)
        else:
            found = self._follow(session, deviations, bound, children)
        tally.session(session)
        tally.steps -= node.cut  # the replayed prefix was counted by the parent
        if children:
            base = tuple(session.steps)
            queue = self.frontier.setdefault(deviations + 1, [])
            queue.extend(_Node(base, cut, alt, positions) for cut, alt, positions in children)
        return found

    def _follow(
        self,
        session: Session,
        deviations: int,
        bound: int | None,
        children: list[tuple[int, Choice, tuple[bytes, ...]]],
    ) -> _Found | None:
        """Follow the default schedule from here, checking every state, until a
        violation, quiescence, a state already covered or the bound."""
        run = session.run
        asleep: set[Choice] = set()  # deviations another branch covers from here
        offered: set[Choice] = set()  # deviations branched (or covered) one step back
        absorbed: str | None = None  # whose crash lands where the one a step back did
        chain: set[bytes] = set()  # states of this default continuation
        while True:
            steps = len(run.steps)
            if self.prune:
                key = run.fingerprint()
                if key in chain:  # the default schedule loops: it never quiesces
                    return _Found(session=session, deviations=deviations, length=self.max_steps)
                chain.add(key)
                seen = self.visited.get(key)
                if seen is not None and seen <= (deviations, steps):
                    return None
                if seen is None:
                    self.stats.states += 1
                self.visited[key] = (deviations, steps)
            else:
                self.stats.states += 1
            if steps and session.check(steps - 1):
                return self._found(session, deviations)
            options = run.choices()
            if not options:
                execution = session.finish()
                return None if execution.ok else self._found(session, deviations)
            if bound is not None and steps + 1 >= bound:
                return None
            if session.over_limit():
                return self._found(session, deviations)
            if deviations < self.limit:
                positions = run.positions() if self.prune else ()
                covered = offered
                offered = set()
                for alt in options[1:]:
                    if self.prune:
                        if alt.action is Action.CRASH and run.fresh(alt.actor):
                            continue  # a restart where it stands: nothing changes
                        if alt in asleep or (
                            alt.action is Action.CRASH and alt.actor == absorbed and alt in covered
                        ):
                            offered.add(alt)
                            continue
                    offered.add(alt)
                    children.append((steps, alt, positions))
                if self.prune:
                    asleep, absorbed = self._reduce(session, options, offered)
            if session.apply(options[0], check=False) is None:
                return self._found(session, deviations)

    @staticmethod
    def _reduce(
        session: Session, options: list[Choice], offered: set[Choice]
    ) -> tuple[set[Choice], str | None]:
        """After the default step: which offered deviations commute with it (branching on
        them next is covered), and whose crash the step leaves where it was (a read-only
        step of that actor)."""
        moment = Moment(session.run, options)
        commuting = {alt for alt in offered if moment.commutes(alt)}
        read_only = moment.read_only and moment.default.outcome == "ok"
        return commuting, moment.default.actor if read_only else None

    @staticmethod
    def _found(session: Session, deviations: int) -> _Found:
        return _Found(session=session, deviations=deviations, length=len(session.steps))


class SystematicEngine:
    """Every run with at most ``bounds.max_faults`` deviations, fewest deviations first.

    ``prune=False`` turns every pruning off (to check that pruning changes no verdict, or
    for invariants that read what a state fingerprint leaves out, see ADR 002). Plans come
    from the target, else the representative plans.
    """

    name = "systematic"

    def __init__(self, *, prune: bool = True) -> None:
        self.prune = prune

    def explore(
        self, target: Target, deadline: Deadline, tally: Tally | None = None
    ) -> EngineReport:
        started = time.monotonic()
        plan_sets = target.plans or tuple(representative_plans(target.contract, target.fixture))
        stats = _Stats(tally=tally if tally is not None else Tally())
        searches = [
            _PlanSearch(target, tuple(plans), prune=self.prune, stats=stats) for plans in plan_sets
        ]
        exhaustive: int | None = None
        found: _Found | None = None
        notes: list[str] = []
        max_faults = target.bounds.max_faults
        try:
            for deviations in range(max_faults + 1):
                best: _Found | None = None
                for search in searches:
                    bound = best.length if best is not None else None
                    result = search.level(deviations, bound, deadline)
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
            execution = found.execution()
            counterexample = Counterexample(
                found_by=self.name, plans=execution.plans, execution=execution
            )
        complete = found is None and exhaustive == max_faults
        tally_ = stats.tally
        notes.append(f"replayed {stats.replayed} prefix steps in {tally_.runs} runs")
        return EngineReport(
            engine=self.name,
            runs=tally_.runs,
            steps=tally_.steps,
            counterexample=counterexample,
            states=stats.states,
            exhaustive_bound=exhaustive,
            complete=complete,
            coverage=tally_.coverage(),
            writes=tally_.writes,
            bound=max_faults,
            seconds=time.monotonic() - started,
            notes=tuple(notes),
        )
