"""Run a policy through a sequence of choices, checking properties as it goes.

This is the one execution path every engine, the scenarios and replay share: apply the
given choices, check every safety property after every step, then (optionally) quiesce
and check the liveness properties. The result carries the trace, the world and every
property failure, with the step at which each first appeared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from txcheck.models.contract import Contract
from txcheck.models.errors import PolicyError
from txcheck.models.fixture import WorldFixture
from txcheck.models.policies.base import Policy
from txcheck.models.proposal import Plan
from txcheck.models.runner import Check, Choice, Run, Step, StepLimitExceeded
from txcheck.models.world import World

__all__ = ["Chooser", "Divergence", "Execution", "Failure", "check_now", "execute"]

Chooser = Callable[[Run, Sequence[Choice]], "Choice | None"]
"""Picks the next choice from the available ones (the default is first); None hands
the rest of the run to the default schedule."""


@attrs.frozen(kw_only=True)
class Failure:
    """A property that failed, where, and why (one message per offending record)."""

    name: str
    kind: str
    step: int | None
    messages: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.name,
            "kind": self.kind,
            "step": self.step,
            "messages": list(self.messages),
        }


@attrs.frozen(kw_only=True)
class Divergence:
    """A recorded choice that is not possible at this point of the run."""

    step: int
    wanted: Choice
    available: tuple[Choice, ...]

    def message(self) -> str:
        options = ", ".join(f"{c.actor} {c.action} {c.outcome}" for c in self.available[:8])
        return (
            f"step {self.step}: recorded choice {self.wanted.actor} {self.wanted.action} "
            f"{self.wanted.outcome} is not possible here (possible: {options or 'none'})"
        )


@attrs.frozen(kw_only=True)
class Execution:
    """The result of one execution: its run (trace and world) and what failed."""

    run: Run
    failures: tuple[Failure, ...]
    divergence: Divergence | None = None
    quiesced: bool = False
    error: str | None = None

    @property
    def steps(self) -> list[Step]:
        return self.run.steps

    @property
    def deviations(self) -> int:
        """How many steps took a choice other than the default."""
        return sum(1 for step in self.run.steps if step.deviation)

    @property
    def ok(self) -> bool:
        return not self.failures and self.divergence is None and self.error is None

    def failed(self, name: str) -> bool:
        return any(f.name == name for f in self.failures)


def _kind(check: Check) -> str:
    return str(getattr(check, "kind", "always"))


def check_now(run: Run, checks: Sequence[Check], step: int | None) -> list[Failure]:
    """Evaluate ``checks`` on the run's current state."""
    view = run.view()
    failures = []
    for check in checks:
        messages = tuple(check(view))
        if messages:
            failures.append(
                Failure(name=check.name, kind=_kind(check), step=step, messages=messages)
            )
    return failures


def execute(
    *,
    policy: Policy,
    contract: Contract,
    plans: Sequence[Plan],
    fixture: WorldFixture,
    invariants: Sequence[Check],
    choices: Sequence[Choice] = (),
    chooser: Chooser | None = None,
    quiesce: bool = True,
    stop_at_first: bool = True,
    max_steps: int = 2000,
    world_factory: Callable[..., World] = World,
) -> Execution:
    """Apply ``choices`` in order, then let ``chooser`` pick until the run is quiescent
    or the chooser returns None, then quiesce on the default schedule. Safety properties
    are checked after every step, liveness at quiescence. A recorded choice that is not
    available ends the run as a divergence. ``world_factory`` builds the world (e.g. with
    the user's own ``ServiceSet`` next to checkout), as for ``Run``.
    """
    safety = [c for c in invariants if _kind(c) == "always"]
    liveness = [c for c in invariants if _kind(c) != "always"]
    run = Run(
        policy=policy,
        contract=contract,
        plans=plans,
        fixture=fixture,
        world_factory=world_factory,
        max_steps=max_steps,
    )
    failures: list[Failure] = []
    seen: set[str] = set()

    def after(step: Step) -> bool:
        for failure in check_now(run, safety, step.index):
            if failure.name not in seen:
                seen.add(failure.name)
                failures.append(failure)
        return bool(failures) and stop_at_first

    try:
        for wanted in choices:
            available = run.choices()
            if wanted not in available:
                divergence = Divergence(
                    step=len(run.steps), wanted=wanted, available=tuple(available)
                )
                return Execution(run=run, failures=tuple(failures), divergence=divergence)
            if after(run.apply(wanted, deviation=wanted != available[0])):
                return Execution(run=run, failures=tuple(failures))
        if chooser is not None:
            while options := run.choices():
                if len(run.steps) >= max_steps:
                    raise StepLimitExceeded(
                        f"no quiescence within {max_steps} steps (a livelock or an "
                        "unbounded retry?)"
                    )
                picked = chooser(run, options)
                if picked is None:
                    break
                if after(run.apply(picked, deviation=picked != options[0])):
                    return Execution(run=run, failures=tuple(failures))
        if not quiesce:
            return Execution(run=run, failures=tuple(failures))
        if not run.quiesce(after_each=after):
            return Execution(run=run, failures=tuple(failures))
    except StepLimitExceeded as error:
        failures.append(
            Failure(
                name="quiescence", kind="eventually", step=len(run.steps), messages=(str(error),)
            )
        )
        return Execution(run=run, failures=tuple(failures))
    except PolicyError as error:
        return Execution(run=run, failures=tuple(failures), error=str(error))
    failures.extend(f for f in check_now(run, liveness, None) if f.name not in seen)
    return Execution(run=run, failures=tuple(failures), quiesced=True)
