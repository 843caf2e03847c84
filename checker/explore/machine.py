"""The Hypothesis rule-based state machine: one example is one run of a policy.

``@initialize`` draws the plans and a swarm of enabled fault kinds, both fixed for the
example. The ``step`` rule drives ``txcheck.models.runner.Run``: it takes the default choice a few
times, then perhaps injects one fault: an enabled kind (weighted), at its next
opportunity or a few opportunities later. Every safety invariant is checked after every
step; ``teardown`` quiesces on the runner's default schedule and checks the liveness
invariants. A failure raises ``InvariantViolation`` (an ``AssertionError`` whose message
names the invariant), so Hypothesis shrinks it; the machine also records the failing
``Execution`` so callers can turn the shrunk example into a trace.

Why one rule and not a ``default`` rule beside a ``fault`` rule: Hypothesis runs its own
swarm testing over rules and switches a rule off for a whole example about half the
time, so a separate fault rule left half the examples without any fault. Inside one rule
txcheck decides (even odds, shrinking towards "no fault"), and the fault kinds get their
swarm from ``txcheck.explore.faults.swarms`` instead.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NoReturn

import attrs
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from txcheck.explore.engine import Target
from txcheck.explore.faults import deviations_by_kind, draw_deviation, draw_kind, swarms
from txcheck.explore.session import Execution, Failure, check_now
from txcheck.explore.strategies import PlanSpace, submissions
from txcheck.models.canonical import stable_hash
from txcheck.models.errors import PolicyError
from txcheck.models.proposal import Plan, plan_to_json
from txcheck.models.runner import Check, Choice, Run, Step, StepLimitExceeded
from txcheck.models.world import World

__all__ = [
    "BudgetExpired",
    "InvariantViolation",
    "MachineConfig",
    "Recorder",
    "ShrinkBudgetSpent",
    "Stats",
    "machine_class",
]


class BudgetExpired(KeyboardInterrupt):
    """The exploration's time budget ran out. Not a test failure: it stops the search.

    It subclasses ``KeyboardInterrupt`` because that is the one exception Hypothesis
    lets through untouched; any other would be saved to the example database and
    recorded as the end of that example, which a replay would then contradict."""


class InvariantViolation(AssertionError):
    """A property failed (or the policy raised); the message names the invariant."""

    def __init__(self, execution: Execution) -> None:
        self.execution = execution
        super().__init__(describe_failure(execution))


def describe_failure(execution: Execution) -> str:
    """One line naming what failed and where."""
    if execution.error is not None and not execution.failures:
        return f"policy_error: {execution.error}"
    first = execution.failures[0]
    where = f"after step {first.step}" if first.step is not None else "at quiescence"
    text = f"invariant {first.name!r} ({first.kind}) violated {where}: {first.messages[0]}"
    others = [f.name for f in execution.failures[1:]]
    return text + (f" (also: {', '.join(others)})" if others else "")


class ShrinkBudgetSpent(BudgetExpired):
    """``max_shrinks`` examples ran after the first failure: stop and report the smallest."""


@attrs.frozen(kw_only=True)
class MachineConfig:
    """Knobs of one exploration: the fault budget per example, the step limit, how a
    ``step`` rule draws (up to ``advance_max`` default steps, a fault with odds
    1/``inject_odds``, landing 0..``skip_max`` opportunities on), an optional wall-clock
    deadline (``time.monotonic()``), how many examples shrinking may run after the first
    failure (``max_shrinks``; None: until Hypothesis is done) and the world factory."""

    max_faults: int = 3
    max_steps: int = 2000
    advance_max: int = 8
    inject_odds: int = 2
    skip_max: int = 3
    deadline: float | None = None
    max_shrinks: int | None = None
    world_factory: Callable[..., World] = World


@attrs.define
class Stats:
    """Counters across all examples of one exploration (progress and coverage)."""

    examples: int = 0
    steps: int = 0
    safety_checks: int = 0
    liveness_checks: int = 0
    faults: Counter[str] = attrs.field(factory=Counter)
    outcomes: Counter[str] = attrs.field(factory=Counter)
    started: float = attrs.field(factory=time.monotonic)
    first_failure: float | None = None


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


def _outcome(run: Run) -> str:
    """How one run ended, for coverage: the last journal phase of each instance."""
    phases = []
    for instance in run.instances:
        entries = [e for e in run.world.journals.get(instance, []) if "phase" in e]
        last = entries[-1] if entries else {}
        phase = str(last.get("phase", "no-journal"))
        phases.append(f"{phase}:{last['outcome']}" if "outcome" in last else phase)
    return "+".join(phases)


def target_digest(target: Target, config: MachineConfig) -> str:
    """A stable id of what is explored: the example database key of this machine."""
    return stable_hash(
        {
            "policy": target.policy_name,
            "contract": dict(target.contract.document),
            "world": dict(target.fixture.document),
            "plans": [[plan_to_json(p) for p in plans] for plans in target.plans],
            "invariants": [c.name for c in target.invariants],
            "max_faults": config.max_faults,
        }
    )


def machine_class(
    target: Target,
    *,
    config: MachineConfig | None = None,
    stats: Stats | None = None,
    recorder: Recorder | None = None,
    explain: Callable[[Execution], str] | None = None,
) -> type[RuleBasedStateMachine]:
    """A state machine class exploring ``target``. ``stats`` and ``recorder`` are shared
    by every example; ``explain`` renders the final failing example as a note."""
    cfg = config or MachineConfig()
    counters = stats if stats is not None else Stats()
    found = recorder if recorder is not None else Recorder()
    safety: tuple[Check, ...] = tuple(
        c for c in target.invariants if getattr(c, "kind", "always") == "always"
    )
    liveness = tuple(c for c in target.invariants if c not in safety)
    advances = st.integers(min_value=0, max_value=cfg.advance_max)
    injects = st.integers(min_value=0, max_value=cfg.inject_odds - 1).map(lambda x: x == 1)
    skips = st.integers(min_value=0, max_value=cfg.skip_max)
    plan_strategy: st.SearchStrategy[tuple[Plan, ...]]
    if target.plans:
        plan_strategy = st.sampled_from(list(target.plans))
    else:
        plan_strategy = submissions(PlanSpace(target.contract, target.fixture))

    class TxcheckMachine(RuleBasedStateMachine):
        """Explores one policy: see ``txcheck.explore.machine``."""

        def __init__(self) -> None:
            super().__init__()
            self.run: Run | None = None
            self.enabled: frozenset[str] = frozenset()
            self.faults = 0
            self.done = False

        def _tick(self) -> None:
            if cfg.deadline is not None and time.monotonic() >= cfg.deadline:
                self.done = True
                raise BudgetExpired
            if (
                cfg.max_shrinks is not None
                and found.first_at is not None
                and counters.examples - found.first_at > cfg.max_shrinks
            ):
                self.done = True
                raise ShrinkBudgetSpent

        @initialize(plans=plan_strategy, swarm=swarms())
        def start(self, plans: tuple[Plan, ...], swarm: frozenset[str]) -> None:
            self._tick()
            counters.examples += 1
            self.enabled = swarm
            self.run = Run(
                policy=target.policy,
                contract=target.contract,
                plans=plans,
                fixture=target.fixture,
                world_factory=cfg.world_factory,
                max_steps=cfg.max_steps,
            )

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            """Take the default choice a few times, then perhaps inject one fault: an
            enabled kind (weighted), at its next opportunity or one a few further on."""
            self._tick()
            for _ in range(data.draw(advances)):
                options = self._options()
                if not options:
                    return
                self._apply(options[0], deviation=False)
            options = self._options()
            if not options:
                return
            if self.faults >= cfg.max_faults or not self.enabled or not data.draw(injects):
                self._apply(options[0], deviation=False)
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
                    counters.faults[wanted] += 1
                    self._apply(choice, deviation=True)
                    return
                self._apply(options[0], deviation=False)
                options = self._options()

        def _options(self) -> list[Choice]:
            if self.run is None or self.done:
                return []
            options = self.run.choices()
            if options and len(self.run.steps) >= cfg.max_steps:
                self._stuck(f"no quiescence within {cfg.max_steps} steps")
            return options

        def _stuck(self, message: str) -> NoReturn:
            assert self.run is not None
            steps = len(self.run.steps)
            self._fail(
                [Failure(name="quiescence", kind="eventually", step=steps, messages=(message,))]
            )

        def _apply(self, choice: Choice, *, deviation: bool) -> None:
            assert self.run is not None
            try:
                step = self.run.apply(choice, deviation=deviation)
            except PolicyError as error:
                self._fail((), error=str(error))
            self._check(step)

        def _check(self, step: Step) -> bool:
            assert self.run is not None
            counters.steps += 1
            counters.safety_checks += 1
            failures = check_now(self.run, safety, step.index)
            if failures:
                self._fail(failures)
            return False

        def _fail(
            self, failures: Sequence[Failure], *, error: str | None = None, quiesced: bool = False
        ) -> NoReturn:
            assert self.run is not None
            self.done = True
            if counters.first_failure is None:
                counters.first_failure = time.monotonic()
            execution = Execution(
                run=self.run, failures=tuple(failures), quiesced=quiesced, error=error
            )
            final = _is_final()
            found.record(execution, final=final, example=counters.examples)
            if final and explain is not None:
                note(explain(execution))
            raise InvariantViolation(execution)

        def teardown(self) -> None:
            if self.run is None or self.done or _abandoned():
                return
            self.done = True
            run = self.run
            try:
                run.quiesce(after_each=self._check)
            except StepLimitExceeded as error:
                self._stuck(str(error))
            except PolicyError as error:
                self._fail((), error=str(error))
            counters.liveness_checks += 1
            counters.outcomes[_outcome(run)] += 1
            failures = check_now(run, liveness, None)
            if failures:
                self._fail(failures, quiesced=True)

    TxcheckMachine._hypothesis_internal_add_digest = target_digest(target, cfg).encode()
    return TxcheckMachine
