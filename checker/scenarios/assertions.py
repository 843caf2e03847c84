"""The small assertion vocabulary scenarios declare up front, judged on the finished run.

A scenario states what must be true of the world when its run is over ("one charge",
"the reservation was released, then the order cancelled", "the invariant fired") before
anything runs; each ``Assertion`` measures one fact of the final ``Evidence`` and compares
it with the declared value. Every result keeps its name, expected and actual values, so a
failing scenario says exactly which fact was wrong. Values are plain JSON (lists, never
sets or tuples), so results are byte-stable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

from txcheck.exploration.kernel.session import Execution
from txcheck.models.canonical import canonical_json
from txcheck.models.sim.world import World

__all__ = [
    "Assertion",
    "AssertionResult",
    "Evidence",
    "answers",
    "attempt_keys",
    "charges",
    "charges_for",
    "committed_tools",
    "compensation_order",
    "compensations",
    "deliveries",
    "deviations_applied",
    "event_consumptions",
    "events_consumed_once",
    "invariant_fired",
    "journal_outcome",
    "journal_phase",
    "lost_events",
    "no_invariant_failed",
    "no_side_effects",
    "order_status",
    "quiesced",
    "refunds",
    "reservations",
    "stock",
    "verdict_codes",
]

MAIN = "orchestrator-1"


@attrs.frozen(kw_only=True)
class Evidence:
    """What assertions look at: the finished execution and the world before it started."""

    execution: Execution
    before: Mapping[str, Any]
    unused_deviations: int = 0

    @property
    def world(self) -> World:
        return self.execution.run.world

    @property
    def checkout(self) -> dict[str, Any]:
        return self.world.state.get("checkout", {})

    def fired(self) -> list[str]:
        """Names of the invariants that failed, sorted."""
        return sorted({f.name for f in self.execution.failures})

    def last_phase(self, instance: str) -> dict[str, Any] | None:
        for entry in reversed(self.world.journals.get(instance, [])):
            if "phase" in entry:
                return dict(entry)
        return None


def _json(value: Any) -> Any:
    """Tuples become lists, so declared values compare and serialise like actual ones."""
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


@attrs.frozen(kw_only=True)
class AssertionResult:
    """One assertion's verdict: what was expected, what was found."""

    name: str
    op: str
    expected: Any = attrs.field(eq=False)
    actual: Any = attrs.field(eq=False)
    passed: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "op": self.op,
            "expected": self.expected,
            "actual": self.actual,
            "passed": self.passed,
        }

    def describe(self) -> str:
        verdict = "ok" if self.passed else "FAILED"
        return (
            f"{self.name} {self.op} {canonical_json(self.expected)}: {verdict} "
            f"(actual {canonical_json(self.actual)})"
        )


@attrs.frozen(kw_only=True)
class Assertion:
    """A named fact about the final state and the value it must have.

    ``op`` is ``==`` (equal as JSON) or ``includes`` (the actual list contains every
    expected item).
    """

    name: str
    expected: Any = attrs.field(converter=_json, eq=False)
    measure: Callable[[Evidence], Any] = attrs.field(eq=False, repr=False)
    op: Literal["==", "includes"] = "=="

    def evaluate(self, evidence: Evidence) -> AssertionResult:
        actual = _json(self.measure(evidence))
        if self.op == "includes":
            passed = isinstance(actual, list) and all(
                canonical_json(item) in {canonical_json(a) for a in actual}
                for item in self.expected
            )
        else:
            passed = canonical_json(actual) == canonical_json(self.expected)
        return AssertionResult(
            name=self.name, op=self.op, expected=self.expected, actual=actual, passed=passed
        )


# -- money, stock and orders ------------------------------------------------------------------


def charges(n: int) -> Assertion:
    """How many charges the payments ledger holds, for any order."""
    return Assertion(name="charges", expected=n, measure=lambda e: len(e.checkout["charges"]))


def charges_for(order: str, n: int) -> Assertion:
    """How many charges were written against ``order``."""

    def measure(e: Evidence) -> int:
        return sum(1 for c in e.checkout["charges"].values() if c["order_id"] == order)

    return Assertion(name=f"charges_for({order})", expected=n, measure=measure)


def refunds(n: int) -> Assertion:
    return Assertion(name="refunds", expected=n, measure=lambda e: len(e.checkout["refunds"]))


def reservations(n: int) -> Assertion:
    """How many orders still hold reserved stock."""
    return Assertion(
        name="reservations", expected=n, measure=lambda e: len(e.checkout["reservations"])
    )


def order_status(order: str, status: str | None) -> Assertion:
    """The order's status (``None``: the order does not exist)."""

    def measure(e: Evidence) -> str | None:
        found = e.checkout["orders"].get(order)
        return None if found is None else str(found["status"])

    return Assertion(name=f"order_status({order})", expected=status, measure=measure)


def stock(sku: str, available: int, reserved: int, sold: int) -> Assertion:
    expected = {"available": available, "reserved": reserved, "sold": sold}
    return Assertion(
        name=f"stock({sku})", expected=expected, measure=lambda e: e.checkout["stock"].get(sku)
    )


def no_side_effects() -> Assertion:
    """Nothing committed and the services' state equals the initial one. The actual value
    lists each side effect found."""

    def measure(e: Evidence) -> list[str]:
        found = [f"op {op['op']}: {op['tool']} on {op['resource']!r}" for op in e.world.operations]
        initial = e.execution.run.view().initial_business_state
        if canonical_json(e.world.business_state()) != canonical_json(initial):
            found.append("the services' state changed")
        return found

    return Assertion(name="no_side_effects", expected=[], measure=measure)


def committed_tools(tools: Sequence[str]) -> Assertion:
    """The tools of every committed write, in commit order (compensations included)."""
    return Assertion(
        name="committed_tools",
        expected=list(tools),
        measure=lambda e: [op["tool"] for op in e.world.operations],
    )


# -- the saga ---------------------------------------------------------------------------------


def compensations(evidence: Evidence) -> list[dict[str, Any]]:
    """Each committed compensation, in commit order: the call it undoes, that call's tool
    and the tool that undid it."""
    tools = {(op["owner"], op["call_id"]): op["tool"] for op in evidence.world.operations}
    return [
        {
            "instance": op["owner"],
            "call": op["compensates"],
            "tool": tools.get((op["owner"], op["compensates"])),
            "compensated_by": op["tool"],
        }
        for op in evidence.world.operations
        if op["compensates"] is not None
    ]


def compensation_order(tools: Sequence[str]) -> Assertion:
    """The tools compensated, in the order their compensations committed."""
    return Assertion(
        name="compensation_order",
        expected=list(tools),
        measure=lambda e: [c["tool"] for c in compensations(e)],
    )


# -- the journal and the verdict --------------------------------------------------------------


def journal_phase(phase: str | None, instance: str = MAIN) -> Assertion:
    """The last phase ``instance`` journaled (PROPOSED ... RECONCILED, REJECTED, MANUAL)."""

    def measure(e: Evidence) -> str | None:
        entry = e.last_phase(instance)
        return None if entry is None else str(entry["phase"])

    return Assertion(name=f"journal_phase({instance})", expected=phase, measure=measure)


def journal_outcome(outcome: str | None, instance: str = MAIN) -> Assertion:
    """The outcome a RECONCILED journal recorded: ``completed``, ``rolled_back``..."""

    def measure(e: Evidence) -> str | None:
        entry = e.last_phase(instance)
        return None if entry is None or "outcome" not in entry else str(entry["outcome"])

    return Assertion(name=f"journal_outcome({instance})", expected=outcome, measure=measure)


def verdict_codes(*codes: str, instance: str = MAIN) -> Assertion:
    """The plan's validation verdict includes these violation codes."""
    return Assertion(
        name=f"verdict_codes({instance})",
        expected=sorted(codes),
        op="includes",
        measure=lambda e: list(e.execution.run.invalid_plans.get(instance, ())),
    )


# -- attempts and answers ---------------------------------------------------------------------


def attempt_keys(call: str, keys: Sequence[str | None], instance: str = MAIN) -> Assertion:
    """The idempotency key of every attempt of one plan call, in send order."""

    def measure(e: Evidence) -> list[str | None]:
        attempts = e.execution.run.history.attempts_by_call().get((instance, call), [])
        return [a.key for a in attempts]

    return Assertion(name=f"attempt_keys({instance}/{call})", expected=list(keys), measure=measure)


def _answer(observed: Mapping[str, Any]) -> str:
    text = str(observed["status"])
    code = observed.get("code")
    if code and code != text:
        text += f":{code}"
    return text + (" replayed" if observed.get("replayed") else "")


def answers(call: str, expected: Sequence[str], instance: str = MAIN) -> Assertion:
    """The services' answers to every attempt of one plan call, in order: ``ok``,
    ``ok replayed``, ``timeout``, ``conflict:idempotency_conflict``..."""

    def measure(e: Evidence) -> list[str]:
        return [
            _answer(step.observed)
            for step in e.execution.steps
            if step.choice.actor == instance
            and step.request.get("kind") == "Invoke"
            and step.request.get("call") == call
            and "compensates" not in step.request
            and "status" in step.observed
        ]

    return Assertion(name=f"answers({instance}/{call})", expected=list(expected), measure=measure)


# -- events -----------------------------------------------------------------------------------


def events_consumed_once() -> Assertion:
    """Every committed event was applied by the consumer exactly once; the actual value
    lists each one that was not."""

    def measure(e: Evidence) -> list[str]:
        committed = e.world.committed_events()
        effects = e.world.effects
        problems = [
            f"{ev} consumed {effects.get(ev, 0)} times"
            for ev in committed
            if effects.get(ev, 0) != 1
        ]
        problems += [
            f"{ev} consumed but never committed" for ev in sorted(effects) if ev not in committed
        ]
        return problems

    return Assertion(name="events_consumed_once", expected=[], measure=measure)


def event_consumptions(event: str, n: int) -> Assertion:
    """How many times the consumer applied ``event``."""
    return Assertion(
        name=f"event_consumptions({event})",
        expected=n,
        measure=lambda e: e.world.effects.get(event, 0),
    )


def lost_events(events: Sequence[str]) -> Assertion:
    """Committed events the consumer never applied."""
    return Assertion(
        name="lost_events",
        expected=list(events),
        measure=lambda e: [ev for ev in e.world.committed_events() if ev not in e.world.effects],
    )


# -- invariants and the run itself ------------------------------------------------------------


def invariant_fired(name: str) -> Assertion:
    return Assertion(
        name=f"invariant_fired({name})", expected=True, measure=lambda e: name in e.fired()
    )


def no_invariant_failed() -> Assertion:
    return Assertion(name="no_invariant_failed", expected=[], measure=lambda e: e.fired())


def quiesced() -> Assertion:
    """The run drained to quiescence (no policy error, no step limit)."""
    return Assertion(name="quiesced", expected=True, measure=lambda e: e.execution.quiesced)


def deviations_applied(n: int) -> Assertion:
    """Every scripted deviation found its point in the run (a deviation that never matched
    means the scenario did not test what it says)."""
    return Assertion(
        name="deviations_applied", expected=n, measure=lambda e: n - e.unused_deviations
    )


def deliveries(event: str, n: int) -> Assertion:
    """How many times the broker delivered ``event`` to the consumer (redeliveries too)."""

    def measure(e: Evidence) -> int:
        return sum(
            1
            for step in e.execution.steps
            if step.choice.action == "deliver" and step.observed.get("event") == event
        )

    return Assertion(name=f"deliveries({event})", expected=n, measure=measure)
