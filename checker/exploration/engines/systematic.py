"""The systematic engine: every run within a bound on deviations from the default schedule.

A checkout run takes about fifty scheduling steps, so bounding the depth is useless; like
CHESS bounding preemptions, this engine bounds *deviations*: any choice other than the
default (``choices()[0]``) — a fault outcome, a crash, a reordering, a duplicate, a lost
ACK, a clock jump, another instance moving first. It deepens the bound level by level
(0, 1, 2, ...), so the first counterexample has the fewest deviations. Within a level it
keeps the shortest counterexample (fewest steps) seen across the whole level, cutting any
branch that can no longer beat it.

A run with deviations at steps p1 < p2 < ... is a prefix of choices followed by the default
schedule to quiescence. A branch starts from its prefix unchecked (the parent already
checked those states): forked (``Run.fork``, ADR 009) off a cursor that walks the parent's
path once for all of its branches, or, for a policy that cannot be forked, replayed from a
fresh run; it checks every state from its deviation on: safety after every step, liveness
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
  one step later (``txcheck.exploration.engines.independence``).

Once the exhaustive search ends with nothing found, a directed search (``_directed``,
docs/decisions/013-directed-third-level.md) takes the plan sets of two instances or more
deeper, trying from two deviations on only those related to a run's earlier ones; it finds
bugs and proves no bound.
"""

from __future__ import annotations

import time
from collections import Counter

import attrs

from txcheck.exploration.engines.independence import Moment, step_footprint
from txcheck.exploration.engines.visited import FingerprintTable, Overlay, collision_odds
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import (
    Counterexample,
    EngineReport,
    PlanBound,
    StopKind,
    StopReason,
    Tally,
)
from txcheck.exploration.kernel.session import Execution, Session
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.exercise import expects_writes
from txcheck.exploration.plansets.representative import PlanSet, search_plans
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Action, Choice, FaultKind, Part, fault_kind, footprint
from txcheck.models.sim.digest import digest
from txcheck.models.sim.runner import Run, Unforkable

__all__ = ["SystematicEngine", "plan_sets_of", "systematic_report"]


@attrs.frozen
class _Path:
    """The choices of one explored run, sharing its parent's: the parent's first ``cut``
    choices, then ``choices`` (with the deviation kind of each, None on the default
    schedule). A run keeps only what it added, so the frontier holds a tree of choices,
    not a copy of every prefix."""

    parent: _Path | None
    cut: int
    choices: tuple[Choice, ...]
    kinds: tuple[FaultKind | None, ...]

    def moves(self, upto: int) -> list[tuple[Choice, FaultKind | None]]:
        """The run's first ``upto`` choices and kinds."""
        head = [] if self.parent is None else self.parent.moves(min(upto, self.cut))
        if upto > self.cut:
            count = upto - self.cut
            head.extend(zip(self.choices[:count], self.kinds[:count], strict=True))
        return head


_ROOT = _Path(parent=None, cut=0, choices=(), kinds=())


@attrs.frozen
class _Node:
    """A branch: the first ``cut`` choices of ``path``, then the deviation ``alt``;
    ``positions`` are the actors' input digests at ``cut`` (to fingerprint states without
    digesting the replayed prefix again)."""

    path: _Path
    cut: int
    alt: Choice | None
    positions: tuple[bytes, ...] = ()


@attrs.frozen(kw_only=True)
class _Found:
    """A failing branch: its session, deviations and length. A branch whose default
    schedule loops counts as ``max_steps`` long, as an unpruned search would see it.
    ``harm``: some failure is harm, not only hygiene (harm is reported first)."""

    session: Session
    deviations: int
    length: int
    harm: bool = True

    @property
    def rank(self) -> tuple[bool, int, int]:
        """Which counterexample a search keeps (lower is better): harm before hygiene,
        then the fewest deviations, then the fewest steps."""
        return (not self.harm, self.deviations, self.length)

    def execution(self) -> Execution:
        """The failing execution; a loop is run on (not again) to the step bound, so the
        report is the one an unpruned search gives."""
        if not self.session.failures and self.session.error is None:
            self.session.finish()
        return self.session.execution()


class _Unforked(Unforkable):
    """``Unforkable`` from a branch that had recorded ``states`` as visited on its way."""

    def __init__(self, states: frozenset[bytes]) -> None:
        super().__init__()
        self.states = states


class _Stop(Exception):
    """The time ran out (or the search was interrupted) in the middle of a level."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason.said)
        self.reason = reason


class _Spent(Exception):
    """One plan set used its share of the state budget in the middle of a level."""


@attrs.define
class _Prefixes:
    """How branches reached their deviation: prefix steps replayed (by cursors or alone),
    runs forked off a cursor, and whether a policy refused to be forked."""

    replayed: int = 0
    forked: int = 0
    unforkable: bool = False

    def add(self, other: _Prefixes) -> None:
        self.replayed += other.replayed
        self.forked += other.forked
        self.unforkable |= other.unforkable


@attrs.define
class _Stats:
    states: int = 0
    prefixes: _Prefixes = attrs.field(factory=_Prefixes)
    tally: Tally = attrs.field(factory=Tally)


@attrs.define
class _Cursor:
    """A run walking one path without checking, from which the branches off that path
    are forked (``Run.fork``); ``at`` is how many of its ``moves`` it has taken."""

    path: _Path
    moves: list[tuple[Choice, FaultKind | None]]
    session: Session
    at: int = 0


class _PlanSearch:
    """The level-by-level search over one set of plans (one instance per plan)."""

    def __init__(
        self,
        target: Target,
        plans: tuple[Plan, ...],
        *,
        prune: bool,
        stats: _Stats,
        label: str = "",
        visited: FingerprintTable | Overlay | None = None,
        fork: bool = True,
        meant_valid: bool | None = None,
        directed_from: int | None = None,
    ) -> None:
        self.target = target
        self.directed_from = directed_from
        """From this level on, branch only on deviations related to the run's earlier ones
        (``_related``): a directed search, not an exhaustive one (None: exhaustive)."""
        self._touched: frozenset[str] = frozenset()
        """The actors the branch being followed deviated (directed searches only)."""
        self._salt = b""
        """``_touched`` as bytes, in every state's key: which deviations a directed search
        tries from a state depends on them, so a state is covered only by a visit with the
        same ones (ADR 013)."""
        self.meant_valid = meant_valid
        """Whether the plans were made to be valid (None: given, judge them)."""
        self.fork = fork
        """Fork branches off a cursor instead of replaying each one from the start."""
        self._cursor: _Cursor | None = None
        self.plans = plans
        self.label = label
        self.states = 0
        """Distinct states this plan set's search reached."""
        self.reached: int | None = None
        """The last level it finished without a counterexample."""
        self.stopped = ""
        """Why it stopped before the bound asked for (empty: it did not)."""
        self.directed: int | None = None
        """The last level a directed search of these plans finished without a
        counterexample (``_directed``; None: none ran or finished a level)."""
        self.runs = 0
        self.writes = 0
        self.faults: Counter[str] = Counter()
        """What this plan set's runs exercised: runs, writes (summed) and faults by kind."""
        self.safety_checks = 0
        self.liveness_checks = 0
        """States at which its runs checked every safety invariant, ends every liveness one."""
        self.limit = target.bounds.max_faults
        self.max_steps = target.bounds.max_steps
        self.prune = prune
        self.time_blind = target.time_blind
        self.stats = stats
        self.frontier: dict[int, list[_Node]] = {0: [_Node(_ROOT, 0, None)]}
        self.visited = FingerprintTable() if visited is None else visited
        self._resume_level: int | None = None
        self._resume: tuple[_Found | None, int] = (None, 0)
        self._level_base = 0
        """``states`` when the level in progress began."""
        self._per_branch: float | None = None
        """New states a branch found, on average, at the last level searched past the
        first (the first has one branch: the whole default run), None before."""

    def bound(self, *, business: bool = True) -> PlanBound:
        """What this plan set's search proved and exercised (``business``: whether the
        plans may be judged by the world's rules, which run the target's services)."""
        bound = PlanBound.of(
            self, expects_writes(self.target, self.plans, self.meant_valid, business=business)
        )
        deeper = self.directed is not None and (self.reached or 0) < self.directed
        return attrs.evolve(bound, directed=self.directed if deeper else None)

    def pending(self) -> int:
        """Branches of the level in progress not yet explored (a measure of what finishing
        it still costs)."""
        if self._resume_level is None:
            return 0
        return len(self.frontier.get(self._resume_level, ())) - self._resume[1]

    def cost_left(self, deviations: int) -> float:
        """An estimate of the states finishing level ``deviations`` still takes: its
        unexplored branches times the new states a branch found at the last level
        searched (only for sharing out the budget: no bound depends on it)."""
        if self._per_branch is None:
            return 0.0  # nothing measured yet: taken as finishable until measured
        queued = len(self.frontier.get(deviations, ()))
        done = self._resume[1] if self._resume_level == deviations else 0
        return (queued - done) * self._per_branch

    def level(
        self, deviations: int, bound: int | None, context: SearchContext, cap: int
    ) -> _Found | None:
        """Explore every branch with exactly ``deviations`` deviations, reaching at most
        ``cap`` distinct states in all (``_Spent`` past it; calling again with a larger
        cap resumes where it stopped); the shortest counterexample (shorter than
        ``bound`` steps), if any."""
        nodes = self.frontier.setdefault(deviations, [])  # free repeats join it as it runs
        best, index = self._resume if self._resume_level == deviations else (None, 0)
        if self._resume_level != deviations:
            self._level_base = self.states
        while index < len(nodes):
            if context.stop:
                raise _Stop(StopReason.at_deadline(context.deadline))
            if self.states >= cap:
                self._resume_level, self._resume = deviations, (best, index)
                if deviations and index:
                    self._per_branch = (self.states - self._level_base) / index
                raise _Spent(f"the state budget ran out at {deviations} deviations")
            node = nodes[index]
            index += 1
            limit = best.length if best is not None and best.harm else bound
            if limit is not None and node.cut + 1 >= limit:
                continue
            found = self._branch(node, deviations, limit)
            if found is not None and found.session.hung:
                # user code ran past its time limit: every other branch would hang again
                self._resume_level, self._resume = None, (None, 0)
                return found
            if found is not None and (best is None or found.rank < best.rank):
                best = found
        self._resume_level, self._resume = None, (None, 0)
        if deviations and nodes:
            self._per_branch = (self.states - self._level_base) / len(nodes)
        del self.frontier[deviations]
        return best

    def _prefix(self, node: _Node) -> Session:
        """A session standing at ``node.cut`` steps of its path, unchecked (its parent
        checked those states): forked from a cursor walking the path, so the children of
        one run replay their common prefix once between them, else replayed alone."""
        cursor = self._cursor
        if node.alt is None or not self.fork:
            return self._replay(node)
        if cursor is None or cursor.path is not node.path or cursor.at > node.cut:
            session = Session(self.target, self.plans)
            if session.error is not None:
                return self._replay(node)
            length = node.path.cut + len(node.path.choices)
            cursor = self._cursor = _Cursor(node.path, node.path.moves(length), session)
        walking = cursor.session
        for choice, kind in cursor.moves[cursor.at : node.cut]:
            walking.retake(choice, kind=kind)
        self.stats.prefixes.replayed += node.cut - cursor.at
        cursor.at = node.cut
        forked = walking.fork()
        if forked is None:  # not a function of its inputs: replay alone from now on
            self.fork, self._cursor = False, None
            self.stats.prefixes.unforkable = True
            return self._replay(node)
        self.stats.prefixes.forked += 1
        return forked

    def _replay(self, node: _Node) -> Session:
        session = Session(self.target, self.plans, track_positions=self.prune and node.alt is None)
        for choice, kind in node.path.moves(node.cut):
            session.retake(choice, kind=kind)
        self.stats.prefixes.replayed += node.cut
        return session

    def _branch(self, node: _Node, deviations: int, bound: int | None) -> _Found | None:
        if self.directed_from is not None:
            self._touched = _deviated(node)
            self._salt = "\0".join(sorted(self._touched)).encode()
        children: list[tuple[int, Choice, tuple[bytes, ...], int]] = []
        session = self._prefix(node)
        try:
            kind = self._deviate(node, session)
            found = self._settle(session, deviations, bound, children, frozenset())
        except Unforkable as unforked:  # an actor fed again went another way: replay alone
            self.fork, self._cursor = False, None
            self.stats.prefixes.unforkable = True
            children.clear()
            session = self._replay(node)
            kind = self._deviate(node, session)
            visited = unforked.states if isinstance(unforked, _Unforked) else frozenset()
            found = self._settle(session, deviations, bound, children, visited)
        tally = self.stats.tally
        tally.runs += 1
        self.runs += 1
        if kind is not None:
            tally.deviation(kind)
            if kind.is_fault:
                self.faults[str(kind)] += 1
        tally.session(session)
        self.writes += len(session.run.world.operations)
        self.safety_checks += session.safety_checks
        self.liveness_checks += session.liveness_checks
        tally.steps -= node.cut  # the replayed prefix was counted by the parent
        if children:
            taken = session.steps[node.cut :]
            path = _Path(
                parent=node.path,
                cut=node.cut,
                choices=tuple(step.choice for step in taken),
                kinds=tuple(step.kind if step.deviation else None for step in taken),
            )
            for cut, alt, positions, cost in children:
                queue = self.frontier.setdefault(deviations + cost, [])
                queue.append(_Node(path, cut, alt, positions))
        return found

    def _deviate(self, node: _Node, session: Session) -> FaultKind | None:
        """Take the branch's deviation (none for a root); its kind."""
        if self.prune and node.alt is not None:
            session.run.track(node.positions)
        if node.alt is None:
            return None
        kind = fault_kind(node.alt, session.run.choices()) or FaultKind.INTERLEAVE
        session.apply(node.alt, check=False)
        return kind

    def _settle(
        self,
        session: Session,
        deviations: int,
        bound: int | None,
        children: list[tuple[int, Choice, tuple[bytes, ...], int]],
        revisit: frozenset[bytes],
    ) -> _Found | None:
        """What the branch comes to after its deviation: the policy's error, or where
        following the default schedule leads; ``_Unforked`` (with the states it recorded
        as visited) when a forked actor goes another way than its original."""
        if session.error is not None:
            return self._found(session, deviations)
        chain: set[bytes] = set()  # states of this default continuation
        try:
            return self._follow(session, deviations, bound, children, chain, revisit=revisit)
        except Unforkable:
            raise _Unforked(frozenset(chain)) from None

    def _follow(
        self,
        session: Session,
        deviations: int,
        bound: int | None,
        children: list[tuple[int, Choice, tuple[bytes, ...], int]],
        chain: set[bytes],
        *,
        revisit: frozenset[bytes],
    ) -> _Found | None:
        """Follow the default schedule from here, checking every state, until a
        violation, quiescence, a state already covered or the bound. ``chain`` collects
        the states of this default continuation; states in ``revisit`` were recorded by an
        attempt at this branch that could not go on (``_Unforked``), and are not taken as
        covered."""
        run = session.run
        asleep: set[Choice] = set()  # deviations another branch covers from here
        offered: set[Choice] = set()  # deviations branched (or covered) one step back
        absorbed: str | None = None  # whose crash lands where the one a step back did
        while True:
            steps = len(run.steps)
            if self.prune:
                key = run.fingerprint()
                if self.directed_from is not None:
                    key = digest(key + self._salt)
                if key in chain:  # the default schedule loops: it never quiesces
                    return _Found(session=session, deviations=deviations, length=self.max_steps)
                chain.add(key)
                seen = self.visited.get(key)
                if seen is not None and seen <= (deviations, steps) and key not in revisit:
                    return None
                if seen is None:
                    self.stats.states += 1
                    self.states += 1
                self.visited.put(key, deviations, steps)
            else:
                self.stats.states += 1
                self.states += 1
            if steps and (session.check(steps - 1) or session.error is not None):
                if session.settling:  # only hygiene so far: does harm follow?
                    session.finish()
                return self._found(session, deviations)
            options = run.choices()
            if not options:
                execution = session.finish()
                return None if execution.ok else self._found(session, deviations)
            if bound is not None and steps + 1 >= bound:
                return None
            if session.over_limit():
                return self._found(session, deviations)
            if deviations < self.limit or any(run.free_repeat(alt) for alt in options[1:]):
                positions = run.positions() if self.prune else ()
                covered = offered
                offered = set()
                for alt in options[1:]:
                    cost = 0 if run.free_repeat(alt) else 1
                    if deviations + cost > self.limit:
                        continue
                    level = deviations + cost
                    if (
                        self.directed_from is not None
                        and level >= self.directed_from
                        and not self._related(run, options, alt, last=level == self.limit)
                    ):
                        continue  # a directed search: unrelated to the earlier deviations
                    if self.prune:
                        if run.idle_crash(alt):
                            continue  # a restart where it stands: nothing changes
                        if alt.action is Action.JUMP and self.time_blind and not run.time_matters():
                            continue  # a shift in time and nothing else
                        if alt in asleep or (
                            alt.action is Action.CRASH and alt.actor == absorbed and alt in covered
                        ):
                            offered.add(alt)
                            continue
                    offered.add(alt)
                    children.append((steps, alt, positions, cost))
                if self.prune:
                    asleep, absorbed = self._reduce(session, options, offered)
            if session.apply(options[0], check=False) is None:
                return self._found(session, deviations)

    def _related(self, run: Run, options: list[Choice], alt: Choice, *, last: bool) -> bool:
        """Whether a directed search combines deviation ``alt`` with the branch's earlier
        ones, by footprint (ADR 013): a fault or crash of an actor that deviated before
        (what it holds in flight, its journal and its position are what they changed),
        unless ``alt`` is the last deviation the bound allows; a clock jump right before a
        default step, of any actor, that reads or changes the clock or the idempotency
        records (the jump moves the lifetime of every key the earlier deviations left
        live, and that step is the first to see it: another instance's send of the same
        key, say)."""
        if alt.action is Action.JUMP:
            moved, _ = step_footprint(run, options[0], run.sleeping())
            return moved.conflicts(_LIFETIMES)
        return not last and alt.is_fault and alt.actor in self._touched

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
        session.run.build_forked()  # kept, and maybe run on: no actor left to build
        harm = session.harmful or not session.failures  # a policy error or a loop is harm
        return _Found(session=session, deviations=deviations, length=len(session.steps), harm=harm)


def _deviated(node: _Node) -> frozenset[str]:
    """The actors of a branch's deviations: its prefix's and its own."""
    actors = {choice.actor for choice, kind in node.path.moves(node.cut) if kind is not None}
    if node.alt is not None:
        actors.add(node.alt.actor)
    return frozenset(actors)


_LIFETIMES = footprint(changes=(Part.CLOCK, Part.STORE))
"""What a clock jump changes: the time, and so how long every idempotency record lives."""


class SystematicEngine:
    """Every run with at most ``bounds.max_faults`` deviations, fewest deviations first.

    ``prune=False`` turns every pruning off (to check that pruning changes no verdict, or
    for invariants that read what a state fingerprint leaves out, see ADR 002).
    ``fork=False`` replays every branch from the start instead of forking it off a run
    that walks its parent's path (``Run.fork``; to check that forking changes nothing).
    Plans come from the target, else the representative plans.
    """

    name = "systematic"
    spreads = True

    def __init__(self, *, prune: bool = True, fork: bool = True) -> None:
        self.prune = prune
        self.fork = fork

    def explore(self, target: Target, context: SearchContext) -> EngineReport:
        """The search; with the context's workers, each level is spread over them
        (``txcheck.exploration.engines.systematic_split``)."""
        if context.workers is not None:
            from txcheck.exploration.engines.systematic_split import search_split  # noqa: PLC0415

            return search_split(target, context, prune=self.prune, fork=self.fork)
        started = time.monotonic()
        stats = _Stats(tally=context.tally)
        searches = [
            _PlanSearch(
                target,
                entry.plans,
                prune=self.prune,
                stats=stats,
                label=entry.label,
                fork=self.fork,
                meant_valid=entry.meant_valid,
            )
            for entry in plan_sets_of(target)
        ]
        found: _Found | None = None
        notes: list[str] = []
        stopped: StopReason | None = None
        max_faults = target.bounds.max_faults
        max_states = target.bounds.max_states
        active = list(searches)  # with a level still to search
        level_of = {id(search): 0 for search in searches}
        waiting: set[int] = set()  # used their share: resume once every other one has
        favoured = 0  # the one given all that is left
        last_level: int | None = None  # the deepest level still searched, once one failed
        failed: set[int] = set()  # searches that found a counterexample

        def need(level: int) -> float:
            """What finishing ``level`` on every plan set at it looks like it still takes."""
            return sum(s.cost_left(level) for s in active if level_of[id(s)] == level)

        try:
            while active:
                left = max_states - stats.states
                # when what is left looks enough to finish the lowest level on every plan
                # set at it, only those run, and deeper ones that look able to finish their
                # own level with the rest (the bounds proved rise); otherwise every plan set
                # runs, deeper levels too (bugs beyond the bound proved for all)
                lowest = min(level_of[id(s)] for s in active)
                needed = need(lowest)
                focus = needed <= left
                running = [
                    s
                    for s in active
                    if not focus
                    or level_of[id(s)] == lowest
                    or s.cost_left(level_of[id(s)]) <= left - needed  # finishes its own too
                ]
                ready = [s for s in running if id(s) not in waiting]
                if not ready:
                    # every one used its share: what is left goes to the one closest to
                    # finishing a level (the lowest level, the fewest branches left), so that
                    # one bound is proved rather than several half-searched
                    if left < 1:
                        for search in active:
                            level = level_of[id(search)]
                            search.stopped = f"the state budget ran out at {level} deviations"
                        break
                    chosen = min(running, key=lambda s: (level_of[id(s)], s.pending()))
                    waiting.discard(id(chosen))
                    favoured = id(chosen)
                    continue
                # the lowest level first (no plan set runs ahead of another's shallower
                # level, so the first counterexample has the fewest deviations), the
                # cheapest so far among equals
                search = min(ready, key=lambda s: (level_of[id(s)], s.states))
                deviations = level_of[id(search)]
                if last_level is not None and deviations > last_level:
                    active.remove(search)
                    continue
                share = left if id(search) == favoured else max(1, left // len(running))
                same = found is not None and found.harm and found.deviations == deviations
                bound = found.length if found is not None and same else None
                try:
                    result = search.level(deviations, bound, context, search.states + share)
                except _Spent:
                    waiting.add(id(search))
                    continue
                if id(search) == favoured:
                    # it finished the level it was given all that was left for: the others
                    # get their shares again when the lowest level looks finishable
                    # everywhere, else it goes on deeper with what is left
                    # (its own level is done: need() counts nothing for it)
                    others = any(level_of[id(s)] == lowest for s in active if s is not search)
                    if focus or (others and need(lowest) <= max_states - stats.states):
                        favoured = 0
                        waiting.clear()
                if result is not None and result.session.hung:
                    found = result  # it would hang again in every other plan set: stop
                    break
                if result is not None:
                    failed.add(id(search))
                    if found is None or result.rank < found.rank:
                        found = result
                    if found.harm:  # finish this level (the shortest), go no deeper
                        last_level = found.deviations
                        active.remove(search)
                        continue
                    # only hygiene so far: look one level deeper for the harm it leads to
                    last_level = min(max_faults, found.deviations + 1)
                    if deviations >= last_level:
                        active.remove(search)
                    else:
                        level_of[id(search)] = deviations + 1
                    continue
                if id(search) not in failed:
                    search.reached = deviations
                if deviations == max_faults:
                    active.remove(search)
                else:
                    level_of[id(search)] = deviations + 1
        except _Stop as stop:
            stopped = stop.reason
            notes.append(stopped.note())
            for search in active:
                if not search.stopped:
                    search.stopped = stopped.said
        if found is None and stopped is None and self.prune:
            try:
                found = _directed(target, context, searches, stats, notes)
            except _Stop as stop:
                stopped = stop.reason
                notes.append(stopped.note())
        counterexample = None
        if found is not None:
            execution = found.execution()
            counterexample = Counterexample(
                found_by=self.name, plans=execution.plans, execution=execution
            )
        return systematic_report(
            target,
            context,
            counterexample=counterexample,
            # after user code hung, running it again to judge the plans would hang again
            plans=[
                search.bound(business=found is None or not found.session.hung)
                for search in searches
            ],
            states=stats.states,
            prefixes=stats.prefixes,
            held=sum(search.visited.nbytes() for search in searches) if self.prune else None,
            notes=notes,
            started=started,
            stopped=stopped,
        )


def _directed(
    target: Target,
    context: SearchContext,
    searches: list[_PlanSearch],
    stats: _Stats,
    notes: list[str],
) -> _Found | None:
    """After the exhaustive search found nothing: on each plan set of two orchestrator
    instances or more whose exhaustive bound stayed below ``max_faults``, a directed
    search (ADR 013), the same plan submitted twice first, within
    ``Tuning.directed_share`` of the state budget more, in all. Levels 0 and 1 are searched
    whole; from level 2 on only deviations related by footprint to a branch's earlier ones
    (``_PlanSearch._related``). Proves no bound: each plan set's ``directed`` says how deep
    it went. The shortest counterexample of the first plan set that fails, if any."""
    max_faults = target.bounds.max_faults
    left = int(context.tuning.directed_share * target.bounds.max_states)
    concurrent = [
        s
        for s in searches
        if len(s.plans) > 1 and (s.reached is None or s.reached < max_faults) and max_faults > 1
    ]
    concurrent.sort(key=lambda s: any(p != s.plans[0] for p in s.plans))  # the double click first
    spent = _Stats(tally=stats.tally)
    tried: list[str] = []
    try:
        for main in concurrent:
            if left < 1:
                break
            search = _PlanSearch(
                target,
                main.plans,
                prune=True,
                stats=spent,
                label=main.label,
                fork=main.fork,
                meant_valid=main.meant_valid,
                directed_from=2,
            )
            tried.append(main.label)
            try:
                for deviations in range(max_faults + 1):
                    found = search.level(deviations, None, context, left)
                    if found is not None:
                        return found
                    main.directed = deviations
            except _Spent:
                break
            finally:
                left -= search.states
    finally:
        stats.prefixes.add(spent.prefixes)
        reached = ", ".join(
            f"{s.label} {'none' if s.directed is None else s.directed}"
            for s in concurrent
            if s.label in tried
        )
        if tried:
            notes.append(
                f"directed search (not exhaustive: from 2 deviations on, only those related "
                f"to a run's earlier ones, ADR 013), {spent.states} states: {reached}"
            )
    return None


def systematic_report(
    target: Target,
    context: SearchContext,
    *,
    counterexample: Counterexample | None,
    plans: list[PlanBound],
    states: int,
    prefixes: _Prefixes,
    held: int | None,
    notes: list[str],
    started: float,
    stopped: StopReason | None,
) -> EngineReport:
    """The systematic engine's report, in one process or spread: the bound proved on every
    plan set, and notes on a state budget that ran out, how prefixes were made and (``held``
    bytes of fingerprints, None without pruning) the odds of a collision."""
    tally = context.tally
    max_faults = target.bounds.max_faults
    proved = [plan.reached for plan in plans if plan.reached is not None]
    short = [plan for plan in plans if plan.stopped]
    if short and counterexample is None and stopped is None:
        stopped = StopReason(
            StopKind.STATES,
            f"the state budget ({target.bounds.max_states:,} states) ran out "
            f"on {len(short)} of {len(plans)} plan sets",
        )
        notes.append(stopped.note())
    notes.append(
        f"replayed {prefixes.replayed} prefix steps for {tally.runs} runs ({prefixes.forked} "
        "forked from a run walking the prefix they share)"
    )
    if prefixes.unforkable:
        notes.append(
            "the policy, fed the same responses again, asked for something else: each "
            "branch from then on was replayed from the start (slower, same result)"
        )
    if held is not None and states > 1:
        notes.append(
            f"states told apart by 64-bit fingerprints ({held / 2**20:.1f} MiB): the odds "
            f"that two of them collided are below {collision_odds(states):.0e}"
        )
    return EngineReport.tallied(
        SystematicEngine.name,
        tally,
        started=started,
        counterexample=counterexample,
        notes=notes,
        states=states,
        exhaustive_bound=min(proved) if proved and len(proved) == len(plans) else None,
        complete=bool(plans)
        and counterexample is None
        and all(p.reached == max_faults for p in plans),
        bound=max_faults,
        plans=tuple(plans),
        stopped=stopped,
    )


def plan_sets_of(target: Target) -> list[PlanSet]:
    """The plan sets a search covers: the target's, labelled by position, or else
    ``search_plans`` of its contract and world."""
    if target.plans:
        return [
            PlanSet(f"plans {index}" if len(target.plans) > 1 else "the plans", tuple(plans))
            for index, plans in enumerate(target.plans, start=1)
        ]
    return search_plans(target.contract, target.fixture)
