"""The fixed fault schedule of ``txcheck evaluate``: every single fault along the default run.

Stage two judges a proposal under faults without searching: it walks the policy's default
(fault-free) run once, and at each step lists the faults the runner offers there, of these
kinds only:

- each non-``ok`` outcome of every tool call (``TOOL_OUTCOMES``, or ``READ_OUTCOMES`` for
  reads, in ``txcheck.models.sim.choices``): the k-th call's timeout, lost response, transient and
  permanent error;
- a crash of each actor that is in the middle of something (an orchestrator that has done
  nothing since it started is skipped: crashing it changes nothing but the fault count);
- a broker duplicate at each ``BrokerSend``/``Publish`` and a lost ACK at each ``Ack``.

Each fault point becomes one run: the default run's choices up to that step, the fault,
then the default schedule to quiescence. Reorderings, interleavings and clock jumps are
left to ``txcheck explore``. The schedule is a function of the policy's default run, so it
is deterministic, and it differs per policy (naive and guarded take different steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Target
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Action, Choice, FaultKind, fault_kind
from txcheck.models.sim.runner import Run

__all__ = ["SCHEDULE_KINDS", "FaultPoint", "Schedule", "fault_schedule"]

SCHEDULE_KINDS: tuple[FaultKind, ...] = (
    FaultKind.TIMEOUT_BEFORE_COMMIT,
    FaultKind.LOST_RESPONSE_AFTER_COMMIT,
    FaultKind.TRANSIENT_ERROR,
    FaultKind.PERMANENT_ERROR,
    FaultKind.CRASH,
    FaultKind.DUPLICATE,
    FaultKind.ACK_LOST,
)
"""The fault kinds the schedule injects, in report order."""


@attrs.frozen(kw_only=True)
class FaultPoint:
    """One fault: ``choice`` taken instead of the default at ``step`` of the default run.

    ``request`` summarises what the actor was about to do (its request kind, tool and
    call); ``invoke`` is k for a fault on the k-th tool call of the default run.
    """

    step: int
    kind: FaultKind = attrs.field(converter=FaultKind)
    choice: Choice
    request: tuple[tuple[str, str], ...] = ()
    invoke: int | None = None

    def describe(self) -> str:
        """E.g. ``step 13: lost_response_after_commit on tool call 3 (charge_payment call_3)``."""
        info = dict(self.request)
        if self.invoke is not None:
            where = f"on tool call {self.invoke} ({info.get('tool')} {info.get('call')})"
        elif self.kind is FaultKind.CRASH:
            where = f"of {self.choice.actor}" + (
                f" before its {info['kind']}" if "kind" in info else ""
            )
        else:
            where = f"at {self.choice.actor}'s {info.get('kind', 'step')}"
        return f"step {self.step}: {self.kind} {where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "kind": str(self.kind),
            **self.choice.to_json(),
            "request": dict(self.request),
            "invoke": self.invoke,
            "text": self.describe(),
        }


@attrs.frozen(kw_only=True)
class Schedule:
    """The default run's choices and the fault points along it."""

    default: tuple[Choice, ...]
    points: tuple[FaultPoint, ...]

    @property
    def runs(self) -> int:
        """The fault-free run plus one run per fault point."""
        return 1 + len(self.points)

    def choices(self, point: FaultPoint) -> list[Choice]:
        """The recorded choices of ``point``'s run: the default prefix, then the fault."""
        return [*self.default[: point.step], point.choice]

    def counts(self) -> dict[str, int]:
        """Fault points per kind, every kind listed."""
        counts = dict.fromkeys((str(k) for k in SCHEDULE_KINDS), 0)
        for point in self.points:
            counts[str(point.kind)] += 1
        return counts


def _kind(run: Run, choice: Choice, options: Sequence[Choice]) -> FaultKind | None:
    """The schedule kind of an option (``fault_kind``, as every engine names it), or None
    when the schedule skips it: the default, a kind it does not inject, or a crash that
    changes nothing (``Run.idle_crash``)."""
    kind = fault_kind(choice, options)
    if kind not in SCHEDULE_KINDS or run.idle_crash(choice):
        return None
    return kind


def _request(run: Run, actor: str) -> tuple[tuple[str, str], ...]:
    current = run.current(actor)
    return tuple((k, str(current[k])) for k in ("kind", "tool", "call") if k in current)


def fault_schedule(target: Target, plans: Sequence[Plan]) -> Schedule:
    """Walk the default run of ``plans`` under ``target``'s policy and list every scheduled
    fault. A policy that raises ends the walk there: the judged fault-free run reports the
    error."""
    default: list[Choice] = []
    points: list[FaultPoint] = []
    max_steps = target.bounds.max_steps
    session = Session(target, plans, stop_at_first=False)  # judged later, run by run
    run = session.run
    invokes = 0
    while session.error is None and (options := run.choices()) and len(default) < max_steps:
        first = options[0]
        if first.action is Action.COMPLETE:
            invokes += 1
        for choice in options[1:]:
            kind = _kind(run, choice, options)
            if kind is None:
                continue
            if choice.action is Action.COMPLETE and choice.actor != first.actor:
                continue  # another pending call: its faults are listed when it completes
            points.append(
                FaultPoint(
                    step=len(default),
                    kind=kind,
                    choice=choice,
                    request=_request(run, choice.actor),
                    invoke=invokes if choice.action is Action.COMPLETE else None,
                )
            )
        default.append(first)
        session.apply(first, check=False)  # a policy that raises ends the walk here
    return Schedule(default=tuple(default), points=tuple(points))
