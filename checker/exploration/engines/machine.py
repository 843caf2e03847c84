"""The Hypothesis rule-based state machine: one example is one run of a policy.

``@initialize`` draws the plans and a swarm of enabled fault kinds, both fixed for the
example. The ``step`` rule drives ``txcheck.models.sim.runner.Run``: it takes the default
choice a few times, then perhaps injects one fault: an enabled kind (weighted), at its next
opportunity or a few opportunities later. Every safety invariant is checked after every
step; ``teardown`` quiesces on the runner's default schedule and checks the liveness
invariants. A failure raises ``InvariantViolation`` (an ``AssertionError`` whose message
names the invariant), so Hypothesis shrinks it; the machine also records the failing
``Execution`` so callers can turn the shrunk example into a trace.

Why one rule and not a ``default`` rule beside a ``fault`` rule: Hypothesis runs its own
swarm testing over rules and switches a rule off for a whole example about half the
time, so a separate fault rule left half the examples without any fault. Inside one rule
txcheck decides (even odds, shrinking towards "no fault"), and the fault kinds get their
swarm from ``txcheck.exploration.engines.faults.swarms`` instead.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from txcheck.exploration.engines.faults import deviations_by_kind, draw_deviation, draw_kind, swarms
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.session import Execution, Session
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.strategies import PlanSpace, submissions
from txcheck.models.canonical import stable_hash
from txcheck.models.errors import ControlFlow
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.sim.choices import Choice, FaultKind, fault_kind

__all__ = [
    "BudgetExpired",
    "InvariantViolation",
    "PolicyHung",
    "Recorder",
    "ShrinkBudgetSpent",
    "machine_class",
    "target_digest",
]


class BudgetExpired(KeyboardInterrupt, ControlFlow):
    """The exploration's time budget ran out. Not a test failure: it stops the search.

    It subclasses ``KeyboardInterrupt`` because that is the one exception Hypothesis
    lets through untouched; any other would be saved to the example database and
    recorded as the end of that example, which a replay would then contradict. It is
    ``ControlFlow`` too, so no containment of user code takes it for the user's own."""


class InvariantViolation(AssertionError):
    """A property failed (or the policy raised); the message names the invariant."""

    def __init__(self, execution: Execution) -> None:
        self.execution = execution
        super().__init__(describe_failure(execution))


def describe_failure(execution: Execution) -> str:
    """One line naming what failed and where."""
    if execution.raised:
        return f"policy_error: {execution.error}"
    first = execution.failures[0]
    where = f"after step {first.step}" if first.step is not None else "at quiescence"
    text = f"invariant {first.name!r} ({first.kind}) violated {where}: {first.messages[0]}"
    others = [f.name for f in execution.failures[1:]]
    return text + (f" (also: {', '.join(others)})" if others else "")


class ShrinkBudgetSpent(BudgetExpired):
    """``max_shrinks`` examples ran after the first failure: stop and report the smallest."""


class PolicyHung(BudgetExpired):
    """The policy ran past its time limit: stop at once and report that run (shrinking
    would run it again, and hang again, once per attempt)."""


@attrs.define
class Recorder:
    """The failing executions seen: the last one, the final (shrunk) one Hypothesis
    replays when it reports, and the smallest one (for a search cut short)."""

    last: Execution | None = None
    final: Execution | None = None
    smallest: Execution | None = None
    first_at: int | None = None

    def record(self, execution: Execution, *, final: bool, example: int = 0) -> None:
        self.last = execution
        if self.first_at is None:
            self.first_at = example
        if final:
            self.final = execution
        size = (execution.deviations, len(execution.steps))
        if self.smallest is None or size <= (self.smallest.deviations, len(self.smallest.steps)):
            self.smallest = execution

    @property
    def best(self) -> Execution | None:
        return self.final or self.last


def _is_final() -> bool:
    try:
        return bool(current_build_context().is_final)
    except InvalidArgument:  # not inside a Hypothesis test
        return False


def _abandoned() -> bool:
    """Whether Hypothesis is discarding this example (it ran out of data): teardown must
    not run the rest of the run, or a failure would be reported for a discarded example."""
    try:
        return bool(current_build_context().data.frozen)
    except InvalidArgument:
        return False


def target_digest(target: Target) -> str:
    """A stable id of what is explored: the example database key of this machine."""
    return stable_hash(
        {
            "policy": target.policy_name,
            "contract": dict(target.contract.document),
            "world": dict(target.fixture.document),
            "services": [s.name for s in target.services],
            "plans": [[plan_to_json(p) for p in plans] for plans in target.plans],
            "invariants": [c.name for c in target.invariants],
            "max_faults": target.bounds.max_faults,
        }
    )


def machine_class(
    target: Target,
    *,
    context: SearchContext | None = None,
    recorder: Recorder | None = None,
    explain: Callable[[Execution], str] | None = None,
) -> type[RuleBasedStateMachine]:
    """A state machine class exploring ``target`` (until the context's deadline, counting
    into its tally; no context: no deadline). The tally and ``recorder`` are shared by
    every example; ``explain`` renders the final failing example as a note."""
    context = context if context is not None else SearchContext()
    stop = context.deadline
    counters = context.tally
    tuning = context.tuning
    found = recorder if recorder is not None else Recorder()
    max_faults = target.bounds.max_faults
    max_shrinks = target.budget.max_shrinks
    advances = st.integers(min_value=0, max_value=tuning.advance_max)
    injects = st.integers(min_value=0, max_value=tuning.inject_odds - 1).map(lambda x: x == 1)
    skips = st.integers(min_value=0, max_value=tuning.skip_max)
    repeats = st.booleans()
    plan_strategy: st.SearchStrategy[tuple[Plan, ...]]
    if target.plans:
        plan_strategy = st.sampled_from(list(target.plans))
    else:
        plan_strategy = submissions(PlanSpace(target.contract, target.fixture))

    kinds = target.fault_kinds

    class TxcheckMachine(RuleBasedStateMachine):
        """Explores one policy: see ``txcheck.exploration.engines.machine``."""

        def __init__(self) -> None:
            super().__init__()
            self.session: Session | None = None
            self.enabled: frozenset[FaultKind] = frozenset()
            self.faults = 0
            self.done = False

        def _tick(self) -> None:
            if stop.expired():
                self._abandon()
                raise BudgetExpired
            if (
                max_shrinks is not None
                and found.first_at is not None
                and counters.runs - found.first_at > max_shrinks
            ):
                self._abandon()
                raise ShrinkBudgetSpent

        def _abandon(self) -> None:
            """End this example without a verdict (the search stops, or Hypothesis
            discards it); its steps and checks still count."""
            if self.session is not None and not self.done:
                counters.session(self.session)
            self.done = True

        @initialize(plans=plan_strategy, swarm=swarms(kinds))
        def start(self, plans: tuple[Plan, ...], swarm: frozenset[FaultKind]) -> None:
            self._tick()
            counters.runs += 1
            self.enabled = swarm
            self.session = Session(target, plans)

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            """Take the default choice a few times, then perhaps inject one fault: an
            enabled kind (weighted), at its next opportunity or one a few further on."""
            self._tick()
            for _ in range(data.draw(advances)):
                options = self._options()
                if not options:
                    return
                self._default_or_repeat(data, options)
            options = self._options()
            if not options:
                return
            if self.faults >= max_faults or not self.enabled or not data.draw(injects):
                self._apply(options[0])
                return
            wanted = draw_kind(data, sorted(self.enabled))
            skip = data.draw(skips)
            while options:
                grouped = deviations_by_kind(options, frozenset((wanted,)))
                if grouped and skip:
                    skip -= 1
                elif grouped:
                    _, choice = draw_deviation(data, grouped)
                    self.faults += 1
                    counters.deviation(wanted)
                    self._apply(choice)
                    return
                self._default_or_repeat(data, options)
                options = self._options()

        def _default_or_repeat(self, data: st.DataObject, options: list[Choice]) -> None:
            """The default; or, where the call a fault hit is retried, perhaps that fault
            again (a free repeat: it costs no deviation, ``txcheck.models.sim.deviation_cost``)."""
            session = self.session
            assert session is not None
            again = [c for c in options[1:] if session.run.free_repeat(c)]
            repeat: bool = bool(again) and data.draw(repeats)
            if repeat:
                kind = fault_kind(again[0], options)
                if kind is not None:
                    counters.deviation(kind)
                self._apply(again[0])
                return
            self._apply(options[0])

        def _options(self) -> list[Choice]:
            session = self.session
            if session is None or self.done:
                return []
            if session.over_limit():
                self._fail()
            return session.choices()

        def _apply(self, choice: Choice) -> None:
            session = self.session
            assert session is not None
            session.apply(choice)
            if session.done:
                self._fail()

        def _fail(self) -> None:
            session = self.session
            assert session is not None
            self.done = True
            counters.session(session)
            execution = session.execution()
            final = _is_final()
            found.record(execution, final=final, example=counters.runs)
            if final and explain is not None:
                note(explain(execution))
            if execution.hung:
                raise PolicyHung
            raise InvariantViolation(execution)

        def teardown(self) -> None:
            session = self.session
            if session is None or self.done:
                return
            if _abandoned():
                self._abandon()
                return
            if not session.finish().ok:
                self._fail()
            self.done = True
            counters.session(session, outcome=True)

    TxcheckMachine._hypothesis_internal_add_digest = target_digest(target).encode()
    return TxcheckMachine
