"""What to check, and how hard: one ``Target`` that every engine takes whole.

A target carries the policy, the contract, the world fixture, the services that give tools
their behaviour, the invariants, the plans, the bounds of the search (``Bounds``: part of
what a pass proves) and its budget (``Budget``: how much effort it may spend). An engine
cannot drop a part of it: runs are built by ``Target.run``, so a user's services reach
every engine, every confirmation and every shrink.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import attrs

from txcheck.invariants import DEFAULT_INVARIANTS, Invariant, Kind
from txcheck.models.errors import (
    ControlFlow,
    InputError,
    InvariantError,
    UserCodeError,
    raised,
)
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.choices import FaultKind, Part, fault_kinds
from txcheck.models.sim.fixture import WorldFixture, default_fixture
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.runner import Run
from txcheck.models.sim.services import ServiceSet
from txcheck.models.sim.stored import Stores
from txcheck.models.sim.world import World

__all__ = ["DEFAULT_DATABASE", "Bounds", "Budget", "Deadline", "Suite", "Target"]

DEFAULT_DATABASE = ".txcheck/examples"
"""Where failures are kept between runs, relative to the current directory."""


def _at_least(low: int) -> Callable[[Any, attrs.Attribute[int], int], None]:
    def check(instance: Any, attribute: attrs.Attribute[int], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(f"'{attribute.name}' must be an integer >= {low} (got {value!r})")

    return check


def _seconds(instance: object, attribute: attrs.Attribute[float | None], value: object) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(
            f"'{attribute.name}' must be a finite number of seconds > 0 (got {value!r})"
        )


@attrs.frozen(kw_only=True)
class Bounds:
    """How far a search goes. ``max_faults`` is the deviation bound a systematic search
    proves exhaustive; ``max_steps`` is how long a run may go without quiescing (a run
    that does not is a liveness failure); ``max_states`` caps the systematic search."""

    max_faults: int = attrs.field(default=3, validator=_at_least(0))
    max_steps: int = attrs.field(default=2000, validator=_at_least(1))
    max_states: int = attrs.field(default=200_000, validator=_at_least(1))


@attrs.frozen(kw_only=True)
class Budget:
    """How much effort a search may spend: runs per engine, wall time, the seed (a seeded
    search is reproducible and uses no example database), how many examples shrinking may
    run after the first failure, Hypothesis rule calls per example and the example
    database: a directory or a ``redis://HOST:PORT/DB`` URL (None: none)."""

    max_examples: int = attrs.field(default=1000, validator=_at_least(1))
    time_budget: float | None = attrs.field(default=None, validator=_seconds)
    seed: int | None = None
    max_shrinks: int | None = 500
    step_count: int = attrs.field(default=16, validator=_at_least(1))
    database: str | None = DEFAULT_DATABASE


@attrs.frozen
class Suite:
    """The target's invariants split once by kind; those with nothing to read for the
    contract and its services (``Invariant.applies``) are set apart, with the reason, and
    never evaluated: a verdict must not list them as checked."""

    safety: tuple[Invariant, ...]
    liveness: tuple[Invariant, ...]
    inapplicable: tuple[tuple[Invariant, str], ...] = ()

    @classmethod
    def of(
        cls,
        invariants: Sequence[Invariant],
        contract: Contract | None = None,
        services: Sequence[ServiceSet] = (),
    ) -> Suite:
        skipped: list[tuple[Invariant, str]] = []
        kept: list[Invariant] = []
        for check in invariants:
            why = None if contract is None else _inapplicable(check, contract, services)
            if why is None:
                kept.append(check)
            else:
                skipped.append((check, why))
        return cls(
            safety=tuple(i for i in kept if i.kind is Kind.SAFETY),
            liveness=tuple(i for i in kept if i.kind is Kind.LIVENESS),
            inapplicable=tuple(skipped),
        )


def _inapplicable(
    check: Invariant, contract: Contract, services: Sequence[ServiceSet]
) -> str | None:
    """``check.inapplicable``: a user's ``applies`` is user code, contained like its check
    (``InvariantError`` for whatever it raises, ``SystemExit`` too, or a reason that is not
    a string)."""
    try:
        why = check.inapplicable(contract, services)
    except (ControlFlow, UserCodeError):
        raise
    except BaseException as error:  # user code: even SystemExit is reported
        raise InvariantError(
            f"invariant {check.name!r}: its applies() raised {raised(error)}"
        ) from None
    if why is not None and not isinstance(why, str):
        raise InvariantError(
            f"invariant {check.name!r}: its applies() returned {type(why).__name__}: expected "
            "a string saying why it does not apply, or None"
        )
    return why


def _invariants(value: Sequence[Invariant]) -> tuple[Invariant, ...]:
    checks = tuple(value)
    for check in checks:
        if not isinstance(check, Invariant):
            raise InputError(
                "invariants must be made with @always or @eventually "
                f"(got {type(check).__name__}: {check!r})"
            )
    return checks


def _services(value: Sequence[ServiceSet]) -> tuple[ServiceSet, ...]:
    return tuple(value)


def _plan_sets(value: Sequence[Sequence[Plan] | Plan]) -> tuple[tuple[Plan, ...], ...]:
    """Plan sets, each the plans of one run (one orchestrator instance per plan); a bare
    ``Plan`` is a set of one (``plans=(PLAN,)`` runs PLAN alone)."""
    if isinstance(value, Plan) or not isinstance(value, (list, tuple)):
        raise InputError(
            "'plans' must be a list of plan sets, each a list of Plans run together "
            f"(for one plan alone: plans=[(plan,)] or plans=[plan]) (got {type(value).__name__})",
            source="Target",
        )
    sets: list[tuple[Plan, ...]] = []
    for index, entry in enumerate(value):
        plans = (entry,) if isinstance(entry, Plan) else entry
        if (
            not isinstance(plans, (list, tuple))
            or not plans
            or not all(isinstance(p, Plan) for p in plans)
        ):
            raise InputError(
                f"'plans'[{index}] must be a Plan or a non-empty list of Plans run together "
                f"(got {type(entry).__name__}: {entry!r:.80})",
                source="Target",
            )
        sets.append(tuple(plans))
    return tuple(sets)


def _default_name(target: Target) -> str:
    return str(target.policy.name)


@attrs.frozen(kw_only=True)
class Target:
    """What to check. ``plans`` are given plan sets (each entry: the plans of one run, one
    orchestrator instance per plan, or a bare ``Plan`` run alone); engines that generate
    plans use them as seeds, and fall back to the contract's representative plans when
    there are none."""

    policy: Policy = attrs.field(eq=False)
    policy_name: str = attrs.field(default=attrs.Factory(_default_name, takes_self=True))
    contract: Contract = attrs.field(factory=default_contract, eq=False)
    fixture: WorldFixture = attrs.field(factory=default_fixture, eq=False)
    services: tuple[ServiceSet, ...] = attrs.field(default=(CHECKOUT,), converter=_services)
    invariants: tuple[Invariant, ...] = attrs.field(
        default=DEFAULT_INVARIANTS, converter=_invariants, eq=False
    )
    plans: tuple[tuple[Plan, ...], ...] = attrs.field(default=(), converter=_plan_sets, eq=False)
    bounds: Bounds = Bounds()
    budget: Budget = Budget()
    stores: Stores | None = attrs.field(default=None, eq=False)
    """Real stores for the journal and idempotency records (None: the in-memory world)."""

    @property
    def fault_kinds(self) -> tuple[FaultKind, ...]:
        """The deviation kinds runs of this target can take: every kind but those the
        policy does not ask for (``Policy.late_commits``, ``Policy.model_turns``)."""
        policy = self.policy
        return fault_kinds(late_commits=policy.late_commits, model_turns=policy.model_turns)

    @cached_property
    def suite(self) -> Suite:
        return Suite.of(self.invariants, self.contract, self.services)

    @cached_property
    def time_blind(self) -> bool:
        """Whether no invariant can see absolute times (the clock, when a record was made,
        when an operation committed), so states that differ by a shift in time are one
        state to a search (``World.relative_time``). The built-in invariants are; a user's
        invariant is when it declares ``reads`` without the clock, the idempotency store
        or the operations log."""
        return self._unread_by_users({Part.CLOCK, Part.STORE, Part.OPERATIONS})

    @cached_property
    def count_blind(self) -> bool:
        """Whether no invariant can count the faults injected so far, only ask whether
        there was one, so states that differ only in how many faults led to them are one
        state to a search (``Run(fault_counts=False)``). The built-in invariants are; a
        user's invariant is when it declares ``reads`` without the history."""
        return self._unread_by_users({Part.HISTORY})

    def _unread_by_users(self, parts: set[Part]) -> bool:
        """Whether every invariant is a built-in one (whose uses of ``parts`` the search
        allows for) or declares ``reads`` without any of ``parts``."""
        return all(
            check in DEFAULT_INVARIANTS or (check.reads is not None and not check.reads & parts)
            for check in self.invariants
        )

    def world(self) -> World:
        """A fresh world for one run: the fixture's state, served by the target's services
        (its records in ``stores`` when given)."""
        if self.stores is not None:
            return self.stores.world(
                contract=self.contract,
                fixture=self.fixture,
                services=self.services,
                outbox=self.policy.uses_outbox,
                relative_time=self.time_blind,
            )
        return World(
            contract=self.contract,
            fixture=self.fixture,
            services=self.services,
            outbox=self.policy.uses_outbox,
            relative_time=self.time_blind,
        )

    def run(
        self, plans: Sequence[Plan], *, track_positions: bool = False, start: bool = True
    ) -> Run:
        """A fresh run of ``plans`` (one orchestrator instance per plan); ``start=False``
        leaves starting the instances to the caller (``Run.start``)."""
        return Run(
            policy=self.policy,
            contract=self.contract,
            plans=plans,
            world=self.world(),
            max_steps=self.bounds.max_steps,
            track_positions=track_positions,
            fault_counts=not self.count_blind,
            start=start,
        )


class Deadline:
    """When a search must stop: a wall-clock instant (``time.monotonic``) or none, and an
    interrupt flag shared by every share of it. It bounds the search only and never
    appears in results."""

    def __init__(self, seconds: float | None = None, *, interrupted: list[bool] | None = None):
        self.at = None if seconds is None else time.monotonic() + seconds
        self._interrupted = interrupted if interrupted is not None else [False]

    @classmethod
    def none(cls) -> Deadline:
        return cls()

    def interrupt(self) -> None:
        """Ask every search holding this deadline (or a share of it) to stop now."""
        self._interrupted[0] = True

    @property
    def interrupted(self) -> bool:
        return self._interrupted[0]

    def expired(self) -> bool:
        return self._interrupted[0] or (self.at is not None and time.monotonic() >= self.at)

    def left(self) -> float | None:
        """Seconds left, or None without a time limit."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def within(self, seconds: float | None) -> Deadline:
        """A deadline no later than this one and ``seconds`` from now."""
        child = Deadline(interrupted=self._interrupted)
        left = self.left()
        if seconds is None:
            child.at = self.at
        else:
            child.at = time.monotonic() + (seconds if left is None else min(seconds, left))
        return child

    def share(self, parts: int) -> Deadline:
        """An equal share of the time left among ``parts`` searches."""
        left = self.left()
        return self.within(None if left is None else left / max(1, parts))
