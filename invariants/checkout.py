"""Properties of the built-in checkout world: money, stock and reservations."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from txcheck.invariants.base import always, eventually
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.behaviour import served_tools
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.choices import Part
from txcheck.models.sim.policies.journal import Phase
from txcheck.models.sim.runner import RunView
from txcheck.models.sim.services import ServiceSet

__all__ = [
    "no_double_charge",
    "no_leftover_reservation",
    "no_orphan_reservation",
    "stock_and_money_conserved",
]


def _checkout(view: RunView) -> dict[str, Any] | None:
    return view.world.state.get("checkout")


def checkout_served(contract: Contract, services: Sequence[ServiceSet]) -> str | None:
    """Why the checkout properties have nothing to read: no tool of the contract is served
    by the checkout service (there are no orders, charges or stock to look at)."""
    mine = [s for s in services if s.name == CHECKOUT.name]
    if served_tools(contract, mine):
        return None
    return "no tool of the contract is served by the checkout service (no orders, stock or charges)"


@always(reads=(Part.SERVICES,), applies=checkout_served)
def no_double_charge(view: RunView) -> Iterator[str]:
    """An order is charged at most once: a retry under a fresh key, or a replay the
    idempotency store missed, charges the customer twice."""
    state = _checkout(view)
    if state is None:
        return
    by_order: dict[str, list[str]] = {}
    for charge_id, charge in state["charges"].items():
        by_order.setdefault(charge["order_id"], []).append(
            f"{charge_id} ({charge['amount']} {charge['currency']})"
        )
    for order_id, charges in sorted(by_order.items()):
        if len(charges) > 1:
            yield f"order {order_id} charged {len(charges)} times: {', '.join(charges)}"


@always(reads=(Part.SERVICES,), applies=checkout_served)
def no_orphan_reservation(view: RunView) -> Iterator[str]:
    """Stock is reserved only for a live order: a reservation left on a cancelled or
    missing order (a cancel that keeps the stock) strands stock nobody can buy."""
    state = _checkout(view)
    if state is None:
        return
    for order_id, held in sorted(state["reservations"].items()):
        order = state["orders"].get(order_id)
        if order is None or order["status"] == "cancelled":
            status = "missing" if order is None else "cancelled"
            yield f"reservation {held} held for order {order_id}, which is {status}"


@eventually(applies=checkout_served)
def no_leftover_reservation(view: RunView) -> Iterator[str]:
    """At quiescence no stock stays reserved: a failed checkout without compensation
    leaves a reservation behind, unless the case was handed to MANUAL."""
    state = _checkout(view)
    if state is None or _any_manual(view):
        return
    for order_id, held in sorted(state["reservations"].items()):
        status = state["orders"].get(order_id, {}).get("status", "missing")
        yield f"reservation {held} left behind for order {order_id} ({status})"


@always(reads=(Part.SERVICES,), applies=checkout_served)
def stock_and_money_conserved(view: RunView) -> Iterator[str]:
    """Units are never created or lost (available + reserved + sold is constant per SKU)
    and no charge is refunded beyond its amount."""
    state = _checkout(view)
    initial = view.initial_business_state.get("checkout")
    if state is None or initial is None:
        return
    for sku, now in sorted(state["stock"].items()):
        before = initial["stock"].get(sku, {"available": 0, "reserved": 0, "sold": 0})
        total_now = now["available"] + now["reserved"] + now["sold"]
        total_before = before["available"] + before["reserved"] + before["sold"]
        if total_now != total_before or min(now.values()) < 0:
            yield f"stock of {sku} is {now} (total {total_now}, was {total_before})"
    refunded: dict[str, int] = {}
    for refund in state["refunds"].values():
        refunded[refund["charge_id"]] = refunded.get(refund["charge_id"], 0) + refund["amount"]
    for charge_id, charge in sorted(state["charges"].items()):
        paid_back = refunded.get(charge_id, 0)
        if paid_back > charge["amount"] or paid_back != charge["refunded"]:
            yield f"charge {charge_id} of {charge['amount']} has refunds totalling {paid_back}"


def _any_manual(view: RunView) -> bool:
    return any(
        entries and entries[-1].get("phase") == Phase.MANUAL
        for entries in view.world.journals.values()
    )
