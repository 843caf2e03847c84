"""The mutant library: each mutant fails its catching invariant on its known shortest
run, and ``guarded`` survives the very same run."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest

from invariants import DEFAULT_INVARIANTS
from models.contract_loader import default_contract
from models.execution import execute
from models.fixture import default_fixture
from models.policies import Guarded
from models.proposal import Plan
from models.schedule import Deviation, Deviations

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS, Mutant  # noqa: E402

CONTRACT = default_contract()
FIXTURE = default_fixture()
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
_CALLS = list(CHECKOUT.calls)
PLANS = {
    "checkout": CHECKOUT,
    "second_call_invalid": Plan(
        calls=(
            _CALLS[0],
            attrs.evolve(_CALLS[1], arguments={"order_id": 5, "idempotency_key": "key-reserve-1"}),
            *_CALLS[2:],
        )
    ),
    "dependency_too_early": Plan(calls=(_CALLS[0], _CALLS[2], _CALLS[1], _CALLS[3])),
}


def declined(tool: str) -> Deviation:
    return Deviation(action="complete", outcome="permanent_error", tool=tool)


LOST_CHARGE = Deviation(
    action="complete", outcome="lost_response_after_commit", tool="charge_payment"
)
RELAY_DUPLICATE = Deviation(action="step", outcome="duplicate", actor="relay")

SHORTEST: dict[str, list[Deviation]] = {
    "mutant-compensate-forward": [declined("charge_payment")],
    "mutant-skip-timed-out-compensation": [
        declined("charge_payment"),
        Deviation(action="complete", outcome="timeout_before_commit", tool="release_inventory"),
    ],
    "mutant-timeout-as-failure": [LOST_CHARGE],
    "mutant-retry-rejections": [declined("charge_payment")],
    "mutant-key-per-attempt": [LOST_CHARGE],
    "mutant-lookup-by-key-only": [LOST_CHARGE, Deviation(action="jump", actor="clock")],
    "mutant-mark-seen-before-apply": [
        Deviation(action="crash", actor="consumer", kind="ApplyEffect")
    ],
    "mutant-dedupe-not-atomic": [Deviation(action="crash", actor="consumer", kind="MarkSeen")],
    "mutant-ack-before-apply": [Deviation(action="crash", actor="consumer", kind="ApplyEffect")],
    "mutant-dedupe-by-delivery": [RELAY_DUPLICATE],
    "mutant-relay-mark-before-send": [Deviation(action="crash", actor="relay", kind="BrokerSend")],
    "mutant-manual-never-escalated": [declined("confirm_order"), declined("refund_payment")],
    "mutant-validate-first-call-only": [],
    "mutant-validate-list-order": [],
    "mutant-drop-duplicate-without-ack": [RELAY_DUPLICATE],
    "mutant-compensation-from-memory": [
        declined("charge_payment"),
        Deviation(action="crash", actor="orchestrator-1", tool="release_inventory"),
    ],
}


def test_the_library_has_at_least_fifteen_distinct_mutants() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) >= 15 and len(set(names)) == len(names)
    assert set(names) == set(SHORTEST)
    for mutant in MUTANTS:
        doc = mutant.policy.__doc__ or ""
        assert "Bug:" in doc and "Caught by:" in doc and "Shortest run:" in doc


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_mutant_fails_its_invariant_on_its_shortest_run(mutant: Mutant) -> None:
    script = SHORTEST[mutant.name]
    chooser = Deviations(script)
    execution = execute(
        policy=mutant.policy(),
        contract=CONTRACT,
        plans=[PLANS[mutant.plan]],
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        chooser=chooser,
        stop_at_first=False,
    )
    assert chooser.unused == []
    fired = {f.name for f in execution.failures}
    assert fired & set(mutant.catches), fired
    assert execution.deviations == mutant.min_deviations == len(script)


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_guarded_survives_each_mutant_s_shortest_run(mutant: Mutant) -> None:
    execution = execute(
        policy=Guarded(),
        contract=CONTRACT,
        plans=[PLANS[mutant.plan]],
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        chooser=Deviations(SHORTEST[mutant.name]),
        stop_at_first=False,
    )
    assert execution.failures == () and execution.quiesced
