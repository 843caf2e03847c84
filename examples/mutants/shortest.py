"""Each mutant's shortest known failing run, as a readable deviation script, and its plans.

``SHORTEST[name]`` is a ``txcheck.exploration.kernel.schedule`` script: the default schedule on
``PLANS[mutant.plan]`` except for these deviations, found by the systematic engine on the
single checkout plan (``Mutant.min_deviations`` of them). The tests, the trace generator
(``make_traces.py``) and the benchmark harness share this one copy.
"""

from __future__ import annotations

import attrs

from txcheck import (
    DEFAULT_INVARIANTS,
    Deviation,
    Deviations,
    Execution,
    Plan,
    Policy,
    Target,
    default_contract,
    default_fixture,
    execute,
)

__all__ = ["CHECKOUT", "PLANS", "SHORTEST", "shortest_run"]

CHECKOUT = Plan.of(
    (
        "create_order",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "currency": "USD",
            "items": [{"sku": "sku_book", "quantity": 2}],
            "idempotency_key": "key-create-1",
        },
    ),
    ("reserve_inventory", {"order_id": "ord_1", "idempotency_key": "key-reserve-1"}),
    (
        "charge_payment",
        {"order_id": "ord_1", "amount": 2500, "currency": "USD", "idempotency_key": "key-charge-1"},
    ),
    ("confirm_order", {"order_id": "ord_1", "idempotency_key": "key-confirm-1"}),
)
"""The four-step checkout every mutant but the two validation ones fails on."""

_CALLS = list(CHECKOUT.calls)
_WRONG_TYPE = {"order_id": 5, "idempotency_key": "key-reserve-1"}
"""The reservation's order id as a number: the second call fails level 2 (schema)."""
PLANS: dict[str, Plan] = {
    "checkout": CHECKOUT,
    "second_call_invalid": Plan(
        calls=(
            _CALLS[0],
            attrs.evolve(_CALLS[1], arguments=_WRONG_TYPE, raw_arguments=_WRONG_TYPE),
            *_CALLS[2:],
        )
    ),
    "dependency_too_early": Plan(calls=(_CALLS[0], _CALLS[2], _CALLS[1], _CALLS[3])),
}
"""``Mutant.plan`` -> the plan its shortest run uses."""


def _declined(tool: str) -> Deviation:
    return Deviation(action="complete", outcome="permanent_error", tool=tool)


_LOST_CHARGE = Deviation(
    action="complete", outcome="lost_response_after_commit", tool="charge_payment"
)
_RELAY_DUPLICATE = Deviation(action="step", outcome="duplicate", actor="relay")

SHORTEST: dict[str, list[Deviation]] = {
    "mutant-compensate-forward": [_declined("charge_payment")],
    "mutant-skip-timed-out-compensation": [
        _declined("charge_payment"),
        Deviation(action="complete", outcome="timeout_before_commit", tool="release_inventory"),
    ],
    "mutant-timeout-as-failure": [_LOST_CHARGE],
    "mutant-retry-rejections": [_declined("charge_payment")],
    "mutant-key-per-attempt": [_LOST_CHARGE],
    "mutant-lookup-by-key-only": [_LOST_CHARGE, Deviation(action="jump", actor="clock")],
    "mutant-mark-seen-before-apply": [
        Deviation(action="crash", actor="consumer", kind="ApplyEffect")
    ],
    "mutant-dedupe-not-atomic": [Deviation(action="crash", actor="consumer", kind="MarkSeen")],
    "mutant-ack-before-apply": [Deviation(action="crash", actor="consumer", kind="ApplyEffect")],
    "mutant-dedupe-by-delivery": [_RELAY_DUPLICATE],
    "mutant-relay-mark-before-send": [Deviation(action="crash", actor="relay", kind="BrokerSend")],
    "mutant-manual-never-escalated": [_declined("confirm_order"), _declined("refund_payment")],
    "mutant-validate-first-call-only": [],
    "mutant-validate-list-order": [],
    "mutant-drop-duplicate-without-ack": [_RELAY_DUPLICATE],
    "mutant-compensation-from-memory": [
        _declined("charge_payment"),
        Deviation(action="crash", actor="orchestrator-1", tool="release_inventory"),
    ],
}
"""Mutant name -> the deviations of its shortest known failing run."""


def shortest_run(
    name: str,
    plan: str,
    policy: Policy,
    *,
    stop_at_first: bool = True,
) -> tuple[Execution, Deviations]:
    """Run ``policy`` on ``PLANS[plan]`` with the mutant ``name``'s shortest script (on
    the bundled contract and world, every default invariant); the chooser is returned
    too, so callers can check every deviation found its point (``unused``)."""
    chooser = Deviations(SHORTEST[name])
    execution = execute(
        Target(
            policy=policy,
            contract=default_contract(),
            fixture=default_fixture(),
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLANS[plan]],
        chooser=chooser,
        stop_at_first=stop_at_first,
    )
    return execution, chooser
