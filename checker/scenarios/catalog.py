"""The 14 named scenarios and 5 positive controls, as fixed data.

A ``Scenario`` is a fixed plan (or two) plus a fixed script of deviations from the default
schedule, written as ``txcheck.exploration.kernel.schedule`` values so a reader sees "the charge's
response is lost after commit" rather than "choice 17"; the trace of each run records the
flat choices. Each scenario declares, before anything runs, what must be true of the final
world. Under ``guarded`` all 14 must pass.

A ``Control`` pairs a scenario with a positive-control policy (``guarded`` with one
mechanism removed, ``txcheck.models.sim.policies.controls``) and declares the failure it must show:
its designated invariant fires and the concrete damage is there (two charges, a leftover
reservation...). A control that does not fail is a failed run: it would mean the checker
cannot see what it claims to check.

The scenarios double as regression seeds: ``scenario_seeds()`` hands their plans and
deviations to the exploration engines, which replay them first.
"""

from __future__ import annotations

from txcheck.exploration.kernel.schedule import Deviation
from txcheck.models.errors import TxcheckError
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.policies import BUILTIN_POLICIES, DESIGNATED
from txcheck.scenarios import plans
from txcheck.scenarios.assertions import (
    Assertion,
    answers,
    attempt_keys,
    charges,
    charges_for,
    committed_tools,
    compensation_order,
    deliveries,
    event_consumptions,
    events_consumed_once,
    invariant_fired,
    journal_outcome,
    journal_phase,
    lost_events,
    no_invariant_failed,
    no_side_effects,
    order_status,
    reservations,
    stock,
    verdict_codes,
)
from txcheck.scenarios.spec import DIMENSIONS, Control, Scenario

__all__ = [
    "CONTROLS",
    "DIMENSIONS",
    "SCENARIOS",
    "Control",
    "Scenario",
    "control",
    "scenario",
    "scenario_seeds",
]

_FOUR_STEPS = ("create_order", "reserve_inventory", "charge_payment", "confirm_order")
_ROLLED_BACK = ("create_order", "reserve_inventory", "release_inventory", "cancel_order")


# -- outcomes several scenarios share ---------------------------------------------------------


def _rejected(code: str) -> tuple[Assertion, ...]:
    """Rejected as a whole before any tool ran: nothing changed anywhere."""
    return (
        verdict_codes(code),
        journal_phase("REJECTED"),
        no_side_effects(),
        charges(0),
        no_invariant_failed(),
    )


def _completed() -> tuple[Assertion, ...]:
    """Every step applied once, every event consumed once."""
    return (
        journal_phase("RECONCILED"),
        journal_outcome("completed"),
        committed_tools(_FOUR_STEPS),
        charges_for(plans.ORDER, 1),
        order_status(plans.ORDER, "confirmed"),
        reservations(0),
        stock(plans.SKU, available=8, reserved=0, sold=2),
        events_consumed_once(),
        no_invariant_failed(),
    )


def _rolled_back() -> tuple[Assertion, ...]:
    """Cleanly rolled back: no charge, stock released, the order cancelled, in reverse."""
    return (
        journal_phase("RECONCILED"),
        journal_outcome("rolled_back"),
        committed_tools(_ROLLED_BACK),
        compensation_order(["reserve_inventory", "create_order"]),
        charges(0),
        reservations(0),
        order_status(plans.ORDER, "cancelled"),
        stock(plans.SKU, available=10, reserved=0, sold=0),
        events_consumed_once(),
        no_invariant_failed(),
    )


def _on_charge(outcome: str) -> Deviation:
    return Deviation(action="complete", outcome=outcome, tool="charge_payment")


CHARGE_ATTEMPTS = 4
"""``guarded``'s retry budget: the exhausted-retries scenario times out every attempt."""

# orchestrator-2 runs ahead of orchestrator-1 right after the reservation commits: journal
# read, PROPOSED, VALIDATED, EXECUTING, then attempt + send + done for create_order and
# reserve_inventory (both replayed), then attempt + send for the charge, which is then in
# flight when orchestrator-1 sends the same key.
_SECOND_CLICK_STEPS = 12

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="schema-missing-required",
        dimension="schema",
        purpose="the charge lacks its required amount: reject the whole plan before any call",
        plans=(plans.CHARGE_WITHOUT_AMOUNT,),
        assertions=_rejected("missing_required"),
    ),
    Scenario(
        id="schema-wrong-type",
        dimension="schema",
        purpose="the charge's amount is a string: reject the whole plan before any call",
        plans=(plans.CHARGE_AMOUNT_AS_STRING,),
        assertions=_rejected("type_mismatch"),
    ),
    Scenario(
        id="schema-enum-out-of-range",
        dimension="schema",
        purpose="the charge's currency is not in its enum: reject before any call",
        plans=(plans.CHARGE_IN_UNKNOWN_CURRENCY,),
        assertions=_rejected("enum_violation"),
    ),
    Scenario(
        id="schema-missing-idempotency-key",
        dimension="schema",
        purpose="the charge, a side effect, has no idempotency key: reject before any call",
        plans=(plans.CHARGE_WITHOUT_KEY,),
        assertions=_rejected("missing_idempotency_key"),
    ),
    Scenario(
        id="completeness-four-step-success",
        dimension="completeness",
        purpose="the full checkout with no fault: four writes once, four events once",
        plans=(plans.CHECKOUT,),
        assertions=(*_completed(), answers("call_3", ["ok"])),
    ),
    Scenario(
        id="completeness-confirm-missing",
        dimension="completeness",
        purpose="the plan stops before confirm_order: reject it as an incomplete workflow",
        plans=(plans.WITHOUT_CONFIRM,),
        assertions=_rejected("incomplete_workflow"),
    ),
    Scenario(
        id="order-dependency-too-early",
        dimension="order",
        purpose="the charge is listed before the reservation: reject before execution",
        plans=(plans.CHARGE_BEFORE_RESERVE,),
        assertions=_rejected("dependency_too_early"),
    ),
    Scenario(
        id="timeout-before-side-effect",
        dimension="timeout",
        purpose="the charge times out before it commits: query, retry with the same key",
        plans=(plans.CHECKOUT,),
        deviations=(_on_charge("timeout_before_commit"),),
        assertions=(
            *_completed(),
            answers("call_3", ["timeout", "ok"]),
            attempt_keys("call_3", [plans.CHARGE_KEY] * 2),
        ),
    ),
    Scenario(
        id="timeout-retries-exhausted",
        dimension="timeout",
        purpose="every charge attempt times out: give up explicitly, roll back, no charge",
        plans=(plans.CHECKOUT,),
        deviations=(_on_charge("timeout_before_commit"),) * CHARGE_ATTEMPTS,
        assertions=(
            *_rolled_back(),
            answers("call_3", ["timeout"] * CHARGE_ATTEMPTS),
            attempt_keys("call_3", [plans.CHARGE_KEY] * CHARGE_ATTEMPTS),
        ),
    ),
    Scenario(
        id="idempotency-response-lost",
        dimension="idempotency",
        purpose="the charge commits but its response is lost: find it, never charge again",
        plans=(plans.CHECKOUT,),
        deviations=(_on_charge("lost_response_after_commit"),),
        assertions=(
            *_completed(),
            answers("call_3", ["timeout"]),
            attempt_keys("call_3", [plans.CHARGE_KEY]),
        ),
    ),
    Scenario(
        id="idempotency-same-key-twice",
        dimension="idempotency",
        purpose="the checkout submitted again under the same keys (re-proposed with an "
        "extra read), both charges in flight at once under one key: one charge",
        plans=(plans.CHECKOUT, plans.RESUBMITTED),
        deviations=(
            Deviation(action="step", actor="orchestrator-2", after_tool="reserve_inventory"),
        )
        * _SECOND_CLICK_STEPS,
        assertions=(
            *_completed(),
            journal_outcome("completed", instance="orchestrator-2"),
            answers("call_3", ["conflict:idempotency_conflict", "ok replayed"]),
            answers("call_3", ["ok"], instance="orchestrator-2"),
            answers("call_1", ["ok replayed"], instance="orchestrator-2"),
        ),
    ),
    Scenario(
        id="saga-payment-declined",
        dimension="saga",
        purpose="the payment is declined after the reservation: release, then cancel",
        plans=(plans.CHECKOUT,),
        deviations=(_on_charge("permanent_error"),),
        assertions=(*_rolled_back(), answers("call_3", ["rejected:declined"])),
    ),
    Scenario(
        id="delivery-crash-after-commit",
        dimension="delivery",
        purpose="the orchestrator crashes right after the charge commits: recover from the "
        "journal, the outbox still delivers the event once",
        plans=(plans.CHECKOUT,),
        deviations=(
            Deviation(action="crash", actor="orchestrator-1", after_tool="charge_payment"),
        ),
        assertions=(
            *_completed(),
            answers("call_3", ["ok"]),
            attempt_keys("call_3", [plans.CHARGE_KEY]),
            event_consumptions("evt_3", 1),
        ),
    ),
    Scenario(
        id="delivery-ack-lost-redelivered",
        dimension="delivery",
        purpose="the consumer's first ACK is lost, so the broker redelivers: apply it once",
        plans=(plans.CHECKOUT,),
        deviations=(Deviation(action="step", outcome="ack_lost", actor="consumer"),),
        assertions=(*_completed(), deliveries("evt_1", 2), event_consumptions("evt_1", 1)),
    ),
)

CONTROLS: tuple[Control, ...] = (
    Control(
        policy="control-fresh-key",
        scenario="idempotency-response-lost",
        expected_failure="double_charge",
        designated="no_double_charge",
        assertions=(
            invariant_fired("retries_reuse_key"),
            charges_for(plans.ORDER, 2),
            attempt_keys("call_3", [plans.CHARGE_KEY, f"{plans.CHARGE_KEY}-retry2"]),
            answers("call_3", ["timeout", "ok"]),
            committed_tools(
                [
                    "create_order",
                    "reserve_inventory",
                    "charge_payment",
                    "charge_payment",
                    "confirm_order",
                ]
            ),
        ),
    ),
    Control(
        policy="control-no-saga",
        scenario="saga-payment-declined",
        expected_failure="leftover_reservation",
        designated="no_leftover_reservation",
        assertions=(
            journal_outcome("failed"),
            compensation_order([]),
            reservations(1),
            order_status(plans.ORDER, "reserved"),
            stock(plans.SKU, available=8, reserved=2, sold=0),
            charges(0),
        ),
    ),
    Control(
        policy="control-dual-write",
        scenario="delivery-crash-after-commit",
        expected_failure="lost_event",
        designated="consumer_effect_exactly_once",
        assertions=(lost_events(["evt_3"]), charges_for(plans.ORDER, 1)),
    ),
    Control(
        policy="control-no-dedupe",
        scenario="delivery-ack-lost-redelivered",
        expected_failure="duplicate_consumption",
        designated="consumer_effect_at_most_once",
        assertions=(deliveries("evt_1", 2), event_consumptions("evt_1", 2)),
    ),
    Control(
        policy="control-lazy-validation",
        scenario="schema-wrong-type",
        expected_failure="side_effects_from_rejected_plan",
        designated="rejected_plan_unchanged",
        assertions=(
            journal_outcome("rolled_back"),
            answers("call_3", ["rejected:invalid_arguments"]),
            committed_tools(_ROLLED_BACK),
            order_status(plans.ORDER, "cancelled"),
        ),
    ),
)


def scenario(scenario_id: str) -> Scenario:
    """The scenario called ``scenario_id``."""
    for found in SCENARIOS:
        if found.id == scenario_id:
            return found
    known = ", ".join(s.id for s in SCENARIOS)
    raise KeyError(f"no scenario {scenario_id!r} (known: {known})")


def control(policy: str) -> Control:
    """The positive control run under ``policy``."""
    for found in CONTROLS:
        if found.policy == policy:
            return found
    raise KeyError(f"no control for policy {policy!r}")


def scenario_seeds() -> list[tuple[tuple[Plan, ...], list[Deviation]]]:
    """Each scenario's plans and deviations, in definition order: regression seeds the
    exploration engines replay first (``txcheck.exploration.kernel.schedule`` turns the list into
    a chooser)."""
    return [(s.plans, list(s.deviations)) for s in SCENARIOS]


def _check_definitions() -> None:
    ids = [s.id for s in SCENARIOS]
    if len(set(ids)) != len(ids):
        raise TxcheckError(f"scenario ids must be unique (got {ids})")
    for entry in CONTROLS:
        scenario(entry.scenario)
        if entry.policy not in BUILTIN_POLICIES:
            raise TxcheckError(f"control policy {entry.policy!r} is not a built-in policy")
    if {c.policy for c in CONTROLS} != set(DESIGNATED):
        raise TxcheckError(f"every control policy needs a control (have {sorted(DESIGNATED)})")


_check_definitions()
