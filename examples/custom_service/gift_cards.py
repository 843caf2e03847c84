"""Model your own tool next to checkout: a gift-card service, its contract and invariants.

The contract (``contract.json`` here) declares ``send_gift_card``, a write keyed by an
idempotency key and undone by ``void_gift_card``. This module gives the tools their
semantics (a ``ServiceSet``), adds two invariants of its own, and runs the ``guarded``
and ``naive`` policies over a checkout plan that sends a gift card before confirming,
under a few faults. Run it from the repository root::

    python examples/custom_service/gift_cards.py

It exits 0 when ``guarded`` keeps every invariant and ``naive`` is caught sending a gift
card twice, 1 otherwise.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from txcheck import (
    CHECKOUT,
    DEFAULT_INVARIANTS,
    Committed,
    Contract,
    Deviation,
    Deviations,
    Execution,
    Plan,
    Rejected,
    RunView,
    ServiceSet,
    Target,
    WorldFixture,
    always,
    builtin_policy,
    default_contract,
    default_fixture,
    execute,
    parse_contract,
    parse_world,
)

__all__ = [
    "GIFT_CARDS",
    "INVARIANTS",
    "PLAN",
    "SCENARIOS",
    "contract",
    "fixture",
    "main",
    "run",
]

HERE = Path(__file__).resolve().parent

# -- the service: state and handlers ----------------------------------------------------------


def gift_card_state(document: Mapping[str, Any]) -> dict[str, Any]:
    """Built from the fixture's ``services.gift_cards`` section: the budget to give away."""
    section = document.get("services", {}).get("gift_cards", {})
    return {"budget": int(section.get("budget", 0)), "cards": {}, "issued": 0}


def send_gift_card(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    """Check first, mutate last: a rejection leaves the state as it was."""
    if args["amount"] > state["budget"]:
        return Rejected(
            code="budget_exhausted",
            message=f"gift card of {args['amount']} exceeds the budget left ({state['budget']})",
        )
    state["issued"] += 1
    card_id = f"gc_{state['issued']}"
    state["budget"] -= args["amount"]
    state["cards"][card_id] = {
        "order_id": args["order_id"],
        "customer_id": args["customer_id"],
        "amount": args["amount"],
        "currency": args["currency"],
        "status": "active",
    }
    return Committed(
        receipt={"card_id": card_id, "order_id": args["order_id"], "amount": args["amount"]},
        events=({"type": "gift_card_sent", "card_id": card_id},),
    )


def void_gift_card(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    """Voiding twice is a no-op, so a retried compensation is harmless."""
    card = state["cards"].get(args["card_id"])
    if card is None:
        return Rejected(code="card_not_found", message=f"no gift card {args['card_id']!r}")
    if card["status"] == "void":
        return Committed(receipt={"card_id": args["card_id"], "status": "void"})
    card["status"] = "void"
    state["budget"] += card["amount"]
    return Committed(
        receipt={"card_id": args["card_id"], "status": "void"},
        events=({"type": "gift_card_voided", "card_id": args["card_id"]},),
    )


GIFT_CARDS = ServiceSet(
    name="gift_cards",
    initial_state=gift_card_state,
    handlers={"send_gift_card": send_gift_card, "void_gift_card": void_gift_card},
)

# -- properties of the new service ---------------------------------------------------------


@always
def one_gift_card_per_order(view: RunView) -> Iterator[str]:
    """An order earns one active gift card: a retry under a fresh key sends a second."""
    active: dict[str, list[str]] = {}
    for card_id, card in view.world.state["gift_cards"]["cards"].items():
        if card["status"] == "active":
            active.setdefault(card["order_id"], []).append(card_id)
    for order_id, cards in sorted(active.items()):
        if len(cards) > 1:
            yield f"order {order_id} has {len(cards)} active gift cards: {', '.join(cards)}"


@always
def gift_budget_conserved(view: RunView) -> Iterator[str]:
    """The budget left plus the active cards is what the fixture granted."""
    now = view.world.state["gift_cards"]
    granted = view.initial_business_state["gift_cards"]["budget"]
    out = sum(c["amount"] for c in now["cards"].values() if c["status"] == "active")
    if now["budget"] + out != granted:
        yield f"gift budget {now['budget']} + active cards {out} != {granted} granted"


INVARIANTS = (*DEFAULT_INVARIANTS, one_gift_card_per_order, gift_budget_conserved)

# -- contract, fixture and plan ------------------------------------------------------------


@functools.cache
def contract() -> Contract:
    """The bundled checkout tools and workflows, plus the gift-card tools of contract.json."""
    path = HERE / "contract.json"
    checkout = default_contract().document
    mine = json.loads(path.read_text("utf-8"))
    document = {
        "tools": [*checkout["tools"], *mine["tools"]],
        "workflows": [*checkout.get("workflows", []), *mine.get("workflows", [])],
    }
    return parse_contract(document, source=path.name)


def fixture() -> WorldFixture:
    """The bundled checkout world, with a gift-card budget of 2000 cents."""
    document = {**default_fixture().document, "services": {"gift_cards": {"budget": 2000}}}
    return parse_world(document, source="gift_cards_world")


PLAN = Plan.of(
    (
        "create_order",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "items": [{"sku": "sku_book", "quantity": 2}],
            "currency": "USD",
            "idempotency_key": "key-create-1",
        },
    ),
    ("reserve_inventory", {"order_id": "ord_1", "idempotency_key": "key-reserve-1"}),
    (
        "charge_payment",
        {"order_id": "ord_1", "amount": 2500, "currency": "USD", "idempotency_key": "key-charge-1"},
    ),
    (
        "send_gift_card",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "amount": 500,
            "currency": "USD",
            "idempotency_key": "key-gift-1",
        },
    ),
    ("confirm_order", {"order_id": "ord_1", "idempotency_key": "key-confirm-1"}),
)

SCENARIOS: dict[str, tuple[Deviation, ...]] = {
    "no fault": (),
    "gift card response lost": (
        Deviation(action="complete", outcome="lost_response_after_commit", tool="send_gift_card"),
    ),
    "orchestrator crash after gift": (
        Deviation(action="crash", actor="orchestrator-1", after_tool="send_gift_card"),
    ),
    "confirm declined": (
        Deviation(action="complete", outcome="permanent_error", tool="confirm_order"),
    ),
}

# -- running it ----------------------------------------------------------------------------


def run(policy: str, deviations: tuple[Deviation, ...]) -> Execution:
    """One deterministic run, every invariant checked after every step."""
    found = builtin_policy(policy)
    assert found is not None
    return execute(
        Target(
            policy=found,
            contract=contract(),
            fixture=fixture(),
            invariants=INVARIANTS,
            services=(CHECKOUT, GIFT_CARDS),
        ),
        [PLAN],
        chooser=Deviations(deviations),
        stop_at_first=False,
    )


def main() -> int:
    print(f"{'scenario':<30} {'policy':<8} {'active gift cards':<17} invariants that failed")
    ok = True
    for scenario, deviations in SCENARIOS.items():
        for policy in ("guarded", "naive"):
            execution = run(policy, deviations)
            failed = sorted(f.name for f in execution.failures)
            cards = execution.run.world.state["gift_cards"]["cards"]
            active = sorted(c for c, card in cards.items() if card["status"] == "active")
            verdict = ", ".join(failed) if failed else "ok"
            print(f"{scenario:<30} {policy:<8} {', '.join(active) or '-':<17} {verdict}")
            if policy == "guarded":
                ok = ok and execution.ok and execution.quiesced
            elif scenario == "gift card response lost":
                ok = ok and "one_gift_card_per_order" in failed
    print("as expected" if ok else "NOT as expected")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
