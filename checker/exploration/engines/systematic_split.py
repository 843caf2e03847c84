"""The systematic engine over workers: every level's branches cut into chunks.

The search deepens level by level, as in one process. At each level every plan set's
branches are cut into at most ``Tuning.chunks`` contiguous chunks (a fixed number, so what is
searched does not depend on how many workers run it: ``--workers 1`` and ``--workers 4``
give the same report) and sent out in two waves: the first plan set's chunks, then every
other plan set's, which only look for counterexamples shorter than the first wave's
shortest (as in one process, where a plan set searched after a counterexample is cut by
its length). A chunk runs the in-process level search on its branches, against the
visited set as its wave began (sent once to each worker and shared by its chunks,
read-only) with the states the chunk reaches on top of it. When every chunk of a wave is
back, their new states are merged into the visited set (the lower ``(deviations, steps)``
kept), their branches become the next level's frontier in chunk order, and their
counterexamples are compared: fewest steps, then plan set, then chunk. A counterexample
is re-executed here, so its trace is the one an in-process search reports for the same
choices.

Why the verdict, the minimal counterexample length and the bound proved are the
in-process search's: a chunk prunes a state only when it, or an earlier level, explored it
with no more deviations and steps (the in-process rule, on what that chunk knows), so the
pruning stays sound; it is only weaker. What differs is **duplicate work**: two chunks of
one level that reach the same state both explore on from it, where one process explores it
once. The report counts distinct states (the merged visited set, so the count may differ a
little from in-process, which meets states in another order) and says how many states
were explored more than once.

Under ``max_states`` each chunk may reach its share of what is left at the level's start;
the chunks that ran out are run again with what the others left. A plan set whose level
still ran out stops below it, as in one process (where the share is taken branch by
branch, so the bound proved under a state budget may be lower here).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import attrs

from txcheck.exploration.engines.systematic import (
    _ROOT,
    _directed,
    _Node,
    _PlanSearch,
    _Prefixes,
    _Spent,
    _Stats,
    _Stop,
    plan_sets_of,
    systematic_report,
)
from txcheck.exploration.engines.visited import FingerprintTable, Overlay
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import (
    Counterexample,
    EngineReport,
    PlanBound,
    StopReason,
    Tally,
)
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.kernel.workers import InProcess, Job
from txcheck.exploration.plansets.exercise import expects_writes
from txcheck.exploration.spread.generated import Found
from txcheck.exploration.spread.shipping import TargetSpec, describe, rebuild
from txcheck.models.plan.proposal import Plan

__all__ = ["search_split"]


@attrs.frozen(kw_only=True)
class _Level:
    """What every chunk of one level shares: the target (as import paths on a cluster),
    the plan sets, each one's visited set as the level began, whether to prune, and
    whether to fork branches off a cursor (``Run.fork``) or replay them."""

    target: Target | TargetSpec
    plan_sets: tuple[tuple[Plan, ...], ...]
    visited: tuple[FingerprintTable, ...]
    prune: bool
    fork: bool


@attrs.frozen(kw_only=True)
class _Chunk:
    """Branches of one plan set's level, with the states they may reach (None: any) and
    the steps a counterexample must stay under (None: any)."""

    plan_set: int
    deviations: int
    nodes: tuple[_Node, ...]
    bound: int | None = None
    cap: int | None = None


@attrs.frozen(kw_only=True)
class _Done:
    """What a chunk sends back: its shortest counterexample (steps, choices), the
    branches it left for deeper levels, the states it reached and whether it stopped short
    (``spent``: its state share ran out; ``stop``: the time ran out)."""

    found: Found | None
    length: int
    harm: bool
    children: dict[int, list[_Node]]
    visited: FingerprintTable
    states: int
    prefixes: _Prefixes
    tally: Tally
    spent: bool
    """The chunk used its share of the state budget before its level was done."""
    stop: StopReason | None
    """The time ran out (or the search was interrupted) in the chunk."""
    runs: int
    writes: int
    faults: dict[str, int]
    safety_checks: int
    liveness_checks: int

    @property
    def stopped(self) -> bool:
        """Whether the chunk stopped before its level was done."""
        return self.spent or self.stop is not None


_built: list[tuple[object, Target]] = []


def _target(level: _Level) -> Target:
    """The level's target, rebuilt once per worker and level (not once per chunk)."""
    if isinstance(level.target, Target):
        return level.target
    if not _built or _built[0][0] is not level:
        _built[:] = [(level, rebuild(level.target))]
    return _built[0][1]


def run_chunk(chunk: _Chunk, job: Job) -> _Done:
    """Search one chunk of a level (on a worker, or in this process)."""
    level: _Level = job.common
    target = _target(level)
    stats = _Stats(tally=job.tally)
    visited = Overlay(level.visited[chunk.plan_set])
    search = _PlanSearch(
        target,
        level.plan_sets[chunk.plan_set],
        prune=level.prune,
        fork=level.fork,
        stats=stats,
        visited=visited,
    )
    search.frontier = {chunk.deviations: list(chunk.nodes)}
    found, spent, stopped = None, False, None
    cap = chunk.cap if chunk.cap is not None else 1 << 62
    try:
        found = search.level(chunk.deviations, chunk.bound, job.context(), cap)
    except _Spent:
        spent = True
    except _Stop as stop:
        stopped = stop.reason
    data = None
    if found is not None:
        execution = found.execution()
        data = Found.of(
            Counterexample(found_by="systematic", plans=execution.plans, execution=execution)
        )
    return _Done(
        found=data,
        length=0 if found is None else found.length,
        harm=found is not None and found.harm,
        children={} if stopped else search.frontier,
        visited=visited.own,
        states=stats.states,
        prefixes=stats.prefixes,
        tally=job.tally,
        spent=spent,
        stop=stopped,
        runs=search.runs,
        writes=search.writes,
        faults=dict(search.faults),
        safety_checks=search.safety_checks,
        liveness_checks=search.liveness_checks,
    )


def _cut(nodes: Sequence[_Node], parts: int) -> list[tuple[_Node, ...]]:
    """``nodes`` in at most ``parts`` contiguous runs of near-equal length."""
    parts = max(1, min(parts, len(nodes)))
    size, extra = divmod(len(nodes), parts)
    runs, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        runs.append(tuple(nodes[start:end]))
        start = end
    return [run for run in runs if run]


@attrs.define
class _Plan:
    """One plan set's search: its frontier, visited set and what it proved."""

    label: str
    frontier: dict[int, list[_Node]]
    visited: FingerprintTable = attrs.field(factory=FingerprintTable)
    states: int = 0
    reached: int | None = None
    stopped: str = ""
    runs: int = 0
    writes: int = 0
    faults: Counter[str] = attrs.field(factory=Counter)
    safety_checks: int = 0
    liveness_checks: int = 0


class _Split:
    """The level-by-level search of every plan set, each level spread over the context's
    workers."""

    def __init__(self, target: Target, context: SearchContext, *, prune: bool, fork: bool) -> None:
        if context.workers is None:
            raise ValueError("the split search needs workers in its context")
        self.target = target
        self.context = context
        self.workers = context.workers
        self.prune = prune
        self.fork = fork
        self.tally = context.tally
        entries = plan_sets_of(target)
        self.plan_sets = tuple(entry.plans for entry in entries)
        self.meant_valid = tuple(entry.meant_valid for entry in entries)
        self.plans = [_Plan(entry.label, {0: [_Node(_ROOT, 0, None)]}) for entry in entries]
        self.shipped: Target | TargetSpec = (
            target if isinstance(self.workers, InProcess) else describe(target)
        )
        self.active = list(range(len(self.plans)))
        self.total = Tally.of(self.tally.snapshot())
        self.states = 0
        self.explored = 0
        self.prefixes = _Prefixes()
        self.notes: list[str] = []
        self.stopped: StopReason | None = None
        """Why the search stopped short of the bound, if it did."""
        self.failed: set[int] = set()
        """Plan sets that found a counterexample (none of their levels counts as proved)."""
        self.found: tuple[tuple[bool, int, int, int, int], Found] | None = None
        """(hygiene only, deviations, length, plan set, chunk) and the counterexample: the
        best so far (harm first, then as in one process)."""

    def run(self) -> None:
        last: int | None = None  # the deepest level searched, once something failed
        for deviations in range(self.target.bounds.max_faults + 1):
            if not self.active or (last is not None and deviations > last):
                return
            failed: set[int] = set()
            # two waves: the first plan set's chunks, then the others', bounded by the
            # shortest counterexample the first wave found (as in one process, where the
            # plan sets searched after a counterexample are cut by its length)
            for wave in (self.active[:1], self.active[1:]):
                left = self.target.bounds.max_states - self.states
                if left < 1:
                    for index in wave:  # a plan set the first wave finished keeps its level
                        self._spent(index, deviations)
                    continue
                harm = self.found is not None and not self.found[0][0]
                same = harm and self.found is not None and self.found[0][1] == deviations
                bound = self.found[0][2] if self.found is not None and same else None
                chunks = [
                    _Chunk(plan_set=index, deviations=deviations, bound=bound, nodes=nodes)
                    for index in wave
                    for nodes in _cut(
                        self.plans[index].frontier.pop(deviations, []),
                        self.context.tuning.chunks,
                    )
                ]
                done = self._level(chunks, left)
                if done is None:
                    return
                failed |= {chunks[i].plan_set for i, result in done.items() if result.found}
            for index in self.active:
                plan = self.plans[index]
                if not plan.stopped and index not in failed and index not in self.failed:
                    plan.reached = deviations
            self.active = [i for i in self.active if not self.plans[i].stopped]
            self.failed |= failed
            if self.found is not None:
                # harm: this level was the last; only hygiene: one more, for the harm
                last = deviations if not self.found[0][0] else deviations + 1

    def _level(self, chunks: list[_Chunk], left: int) -> dict[int, _Done] | None:
        """Search ``chunks`` (one wave of a level), then merge them; None when the time ran
        out or the search was interrupted. The chunks share the ``left`` states equally;
        those that ran out then run again, one plan set at a time in order, sharing what is
        left (so one plan set's level is finished rather than several half-searched, as in
        one process)."""
        done: dict[int, _Done] = {}
        if not self._round(chunks, list(range(len(chunks))), left, done):
            return None
        for plan_set in sorted({chunks[i].plan_set for i, d in done.items() if d.stopped}):
            left = self._left(done)
            pending = [i for i, d in done.items() if d.stopped and chunks[i].plan_set == plan_set]
            while pending:
                if not self._round(chunks, pending, left, done):
                    return None
                still = [i for i in pending if done[i].stopped]
                if len(still) == len(pending):
                    break  # nothing finished: this plan set's level does not fit
                left, pending = self._left(done), still
        for index, chunk in enumerate(chunks):
            if index in done:
                self._merge(chunk, index, done[index])
            else:  # never ran: not even one state each was left
                self._spent(chunk.plan_set, chunk.deviations)
        return done

    def _left(self, done: dict[int, _Done]) -> int:
        """States left once the finished chunks of this wave are counted."""
        used = sum(result.states for result in done.values() if not result.stopped)
        return self.target.bounds.max_states - self.states - used

    def _round(
        self,
        chunks: list[_Chunk],
        indexes: list[int],
        left: int,
        done: dict[int, _Done],
    ) -> bool:
        """Run the chunks ``indexes``, each capped at an equal share of ``left`` (none runs
        when the share is below one state); False when the search was stopped."""
        share = left // len(indexes) if indexes else 0
        if share < 1:
            return True
        batch = [attrs.evolve(chunks[index], cap=share) for index in indexes]
        results = self._spread(batch)
        if results is None:
            return False
        for index, result in zip(indexes, results.values(), strict=True):
            done[index] = result
        return True

    def _spread(self, chunks: list[_Chunk]) -> dict[int, _Done] | None:
        common = _Level(
            target=self.shipped,
            plan_sets=self.plan_sets,
            visited=tuple(plan.visited for plan in self.plans),
            prune=self.prune,
            fork=self.fork,
        )
        done: dict[int, _Done] = {}
        results = self.workers.map_unordered(run_chunk, chunks, self.context, common=common)
        for index, result in results:
            done[index] = result
            self.total.add(result.tally)
        self.tally.set_to(self.total)  # exact, whatever progress messages were late
        self.notes += self.workers.notes
        stops = {r.stop for r in done.values() if r.stop is not None}
        if len(done) < len(chunks) and not stops:
            stops = {StopReason.at_deadline(self.context.deadline)}
        if stops:
            self.stopped = min(stops, key=str)
            self.notes.append(self.stopped.note())
            self._stop(self.stopped.said)
            return None
        return dict(sorted(done.items()))

    def _merge(self, chunk: _Chunk, index: int, done: _Done) -> None:
        plan = self.plans[chunk.plan_set]
        self.prefixes.add(done.prefixes)
        self.explored += done.states
        plan.runs += done.runs
        plan.writes += done.writes
        plan.faults.update(done.faults)
        plan.safety_checks += done.safety_checks
        plan.liveness_checks += done.liveness_checks
        if done.spent:
            self._spent(chunk.plan_set, chunk.deviations)
            return
        added = plan.visited.merge(done.visited)
        plan.states += added
        self.states += added
        for deviations, nodes in sorted(done.children.items()):
            plan.frontier.setdefault(deviations, []).extend(nodes)
        if done.found is not None:
            rank = (not done.harm, chunk.deviations, done.length, chunk.plan_set, index)
            if self.found is None or rank < self.found[0]:
                self.found = (rank, done.found)

    def expectations(self, *, business: bool = True) -> list[tuple[bool, str]]:
        """Whether each plan set should commit writes, and its plans' first violation
        (``business``: judged by the world's rules too, which run the target's services)."""
        return [
            expects_writes(self.target, plans, meant, business=business)
            for plans, meant in zip(self.plan_sets, self.meant_valid, strict=True)
        ]

    def _spent(self, plan_set: int, deviations: int) -> None:
        """The plan set could not finish level ``deviations`` within the state budget."""
        plan = self.plans[plan_set]
        if not plan.stopped:
            plan.stopped = f"the state budget ran out at {deviations} deviations"

    def _stop(self, reason: str) -> None:
        """The plan sets still searching stop below the bound, for ``reason``."""
        for index in self.active:
            if not self.plans[index].stopped:
                self.plans[index].stopped = reason


def search_split(
    target: Target, context: SearchContext, *, prune: bool, fork: bool = True
) -> EngineReport:
    """The systematic search of ``target`` with each level spread over the context's
    workers."""
    started = time.monotonic()
    split = _Split(target, context, prune=prune, fork=fork)
    split.run()
    notes = [
        f"spread over {split.workers.where}: each level's branches in up to "
        f"{context.tuning.chunks} chunks per plan set, the visited set merged after every wave"
    ]
    notes += split.notes
    if split.explored > split.states:
        notes.append(
            f"{split.explored - split.states:,} of the states were explored by more than one "
            "chunk (duplicate work a single process avoids)"
        )
    counterexample = None if split.found is None else split.found[1].again(target)
    directed: list[int | None] = [None] * len(split.plans)
    if counterexample is None and split.stopped is None and prune:
        counterexample, directed = _directed_here(split, notes)
    # after user code hung, running it again to judge the plans would hang again
    business = counterexample is None or not counterexample.execution.hung
    return systematic_report(
        target,
        context,
        counterexample=counterexample,
        plans=[
            _with_directed(PlanBound.of(plan, expected), level)
            for plan, expected, level in zip(
                split.plans, split.expectations(business=business), directed, strict=True
            )
        ],
        states=split.states,
        prefixes=split.prefixes,
        held=sum(plan.visited.nbytes() for plan in split.plans) if prune else None,
        notes=notes,
        started=started,
        stopped=split.stopped,
    )


def _directed_here(
    split: _Split, notes: list[str]
) -> tuple[Counterexample | None, list[int | None]]:
    """The directed search (ADR 013) after a spread search that found nothing, run in this
    process on the plan sets as the spread search left them: its counterexample, if any,
    and how deep it went on each plan set (None: not searched)."""
    target, context = split.target, split.context
    searches = []
    for plans, valid, plan in zip(split.plan_sets, split.meant_valid, split.plans, strict=True):
        search = _PlanSearch(
            target,
            plans,
            prune=True,
            stats=_Stats(tally=split.tally),
            label=plan.label,
            fork=split.fork,
            meant_valid=valid,
        )
        search.reached = plan.reached
        searches.append(search)
    stats = _Stats(tally=split.tally)
    try:
        found = _directed(target, context, searches, stats, notes)
    except _Stop as stop:
        split.stopped = stop.reason
        notes.append(stop.reason.note())
        found = None
    split.prefixes.add(stats.prefixes)
    counterexample = None
    if found is not None:
        execution = found.execution()
        counterexample = Counterexample(
            found_by="systematic", plans=execution.plans, execution=execution
        )
    return counterexample, [search.directed for search in searches]


def _with_directed(bound: PlanBound, level: int | None) -> PlanBound:
    """``bound`` with the directed search's level when it went deeper than the bound."""
    deeper = level is not None and (bound.reached or 0) < level
    return attrs.evolve(bound, directed=level if deeper else None)
