"""The built-in checkout services: orders, inventory and a payments ledger.

Amounts are integers in minor units (cents), so money is conserved exactly. Every handler
checks first and mutates last: a rejection leaves the state as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from txcheck.models.sim.services import Committed, Handler, Rejected, ServiceSet

__all__ = ["CHECKOUT", "ORDER_STATUSES", "checkout_state"]

ORDER_STATUSES = ("created", "reserved", "paid", "confirmed", "cancelled")


def checkout_state(fixture: Mapping[str, Any]) -> dict[str, Any]:
    """The checkout state a world fixture describes (checked by ``models.fixture``)."""
    catalog = {sku: {"price": int(e["price"])} for sku, e in fixture.get("catalog", {}).items()}
    stock = {
        sku: {"available": int(e.get("stock", 0)), "reserved": 0, "sold": 0}
        for sku, e in fixture.get("catalog", {}).items()
    }
    orders: dict[str, Any] = {}
    for order_id, order in fixture.get("orders", {}).items():
        items = [{"sku": i["sku"], "quantity": int(i["quantity"])} for i in order["items"]]
        status = order.get("status", "created")
        if status == "confirmed":
            for item in items:
                stock[item["sku"]]["sold"] += item["quantity"]
        orders[order_id] = {
            "customer_id": order["customer_id"],
            "items": items,
            "currency": order.get("currency", "USD"),
            "total": _total(catalog, items),
            "status": status,
            "version": 1,
        }
    return {
        "catalog": catalog,
        "stock": stock,
        "orders": orders,
        "reservations": {},
        "charges": {},
        "refunds": {},
        "principals": {p: dict(v) for p, v in fixture.get("principals", {}).items()},
        "counters": {"charge": 0, "refund": 0},
    }


def _total(catalog: Mapping[str, Any], items: list[dict[str, Any]]) -> int:
    return sum(catalog[i["sku"]]["price"] * i["quantity"] for i in items if i["sku"] in catalog)


def _order(state: dict[str, Any], args: Mapping[str, Any]) -> dict[str, Any] | Rejected:
    order_id = args.get("order_id")
    order = state["orders"].get(order_id)
    if order is None:
        return Rejected(code="order_not_found", message=f"order {order_id!r} does not exist")
    return order  # type: ignore[no-any-return]


def _move(order: dict[str, Any], status: str) -> None:
    order["status"] = status
    order["version"] += 1


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def get_order(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    return Committed(receipt={"order_id": args["order_id"], **order})


def query_logistics(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    shipped = order["status"] == "confirmed"
    return Committed(receipt={"order_id": args["order_id"], "shipping": shipped})


def create_order(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order_id = args["order_id"]
    if order_id in state["orders"]:
        return Rejected(code="order_exists", message=f"order {order_id!r} already exists")
    principals = state["principals"]
    if principals and args["customer_id"] not in principals:
        return Rejected(
            code="unknown_customer", message=f"customer {args['customer_id']!r} is unknown"
        )
    items = [{"sku": i["sku"], "quantity": int(i["quantity"])} for i in args["items"]]
    for item in items:
        if item["sku"] not in state["catalog"]:
            return Rejected(
                code="unknown_sku", message=f"sku {item['sku']!r} is not in the catalog"
            )
    total = _total(state["catalog"], items)
    state["orders"][order_id] = {
        "customer_id": args["customer_id"],
        "items": items,
        "currency": args["currency"],
        "total": total,
        "status": "created",
        "version": 1,
    }
    return Committed(
        receipt={"order_id": order_id, "total": total, "version": 1},
        events=(_event("order_created", order_id=order_id, total=total),),
    )


def reserve_inventory(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    if order["status"] != "created":
        return Rejected(
            code="invalid_state",
            message=f"only a created order can reserve stock (order is {order['status']})",
        )
    stock = state["stock"]
    for item in order["items"]:
        if stock[item["sku"]]["available"] < item["quantity"]:
            return Rejected(
                code="out_of_stock",
                message=f"{item['sku']}: {item['quantity']} wanted, "
                f"{stock[item['sku']]['available']} available",
            )
    held: dict[str, int] = {}
    for item in order["items"]:
        stock[item["sku"]]["available"] -= item["quantity"]
        stock[item["sku"]]["reserved"] += item["quantity"]
        held[item["sku"]] = held.get(item["sku"], 0) + item["quantity"]
    state["reservations"][args["order_id"]] = held
    _move(order, "reserved")
    return Committed(
        receipt={"order_id": args["order_id"], "reserved": held, "version": order["version"]},
        events=(_event("inventory_reserved", order_id=args["order_id"]),),
    )


def charge_payment(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    if order["status"] not in ("reserved", "paid"):
        # Like a real gateway, payments check the order exists and the amount, not
        # whether it was already paid: only an idempotency key stops a second charge.
        return Rejected(
            code="invalid_state",
            message=f"only a reserved order can be charged (order is {order['status']})",
        )
    if args["amount"] != order["total"] or args["currency"] != order["currency"]:
        return Rejected(
            code="amount_mismatch",
            message=f"charge must equal the order total {order['total']} {order['currency']} "
            f"(got {args['amount']!r} {args['currency']})",
        )
    state["counters"]["charge"] += 1
    charge_id = f"ch_{state['counters']['charge']}"
    state["charges"][charge_id] = {
        "order_id": args["order_id"],
        "amount": order["total"],
        "currency": order["currency"],
        "refunded": 0,
    }
    if order["status"] == "reserved":
        _move(order, "paid")
    return Committed(
        receipt={"charge_id": charge_id, "order_id": args["order_id"], "amount": order["total"]},
        events=(_event("payment_charged", order_id=args["order_id"], charge_id=charge_id),),
    )


def confirm_order(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    if order["status"] != "paid":
        return Rejected(
            code="not_paid", message=f"an unpaid order cannot be confirmed ({order['status']})"
        )
    held = state["reservations"].pop(args["order_id"], {})
    for sku, quantity in held.items():
        state["stock"][sku]["reserved"] -= quantity
        state["stock"][sku]["sold"] += quantity
    _move(order, "confirmed")
    return Committed(
        receipt={"order_id": args["order_id"], "status": "confirmed"},
        events=(_event("order_confirmed", order_id=args["order_id"]),),
    )


def cancel_order(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    if order["status"] == "confirmed":
        return Rejected(code="invalid_state", message="a confirmed order cannot be cancelled")
    if order["status"] == "cancelled":
        return Committed(receipt={"order_id": args["order_id"], "status": "cancelled"})
    # A cancelled order gives its stock back in the same transaction: otherwise a cancel
    # that races a checkout (another plan on the same order) strands the reservation.
    held = state["reservations"].pop(args["order_id"], {})
    for sku, quantity in held.items():
        state["stock"][sku]["reserved"] -= quantity
        state["stock"][sku]["available"] += quantity
    _move(order, "cancelled")
    return Committed(
        receipt={"order_id": args["order_id"], "status": "cancelled"},
        events=(_event("order_cancelled", order_id=args["order_id"]),),
    )


def refund_payment(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    charge = state["charges"].get(args["charge_id"])
    if charge is None:
        return Rejected(code="charge_not_found", message=f"no charge {args['charge_id']!r}")
    if charge["refunded"] >= charge["amount"]:
        return Rejected(
            code="refund_exceeds_charge",
            message=f"charge {args['charge_id']} is already refunded in full",
        )
    amount = charge["amount"] - charge["refunded"]
    charge["refunded"] += amount
    state["counters"]["refund"] += 1
    refund_id = f"re_{state['counters']['refund']}"
    state["refunds"][refund_id] = {"charge_id": args["charge_id"], "amount": amount}
    return Committed(
        receipt={"refund_id": refund_id, "charge_id": args["charge_id"], "amount": amount},
        events=(_event("payment_refunded", charge_id=args["charge_id"], refund_id=refund_id),),
    )


def release_inventory(state: dict[str, Any], args: Mapping[str, Any]) -> Committed | Rejected:
    order = _order(state, args)
    if isinstance(order, Rejected):
        return order
    held = state["reservations"].pop(args["order_id"], None)
    if held is None:
        return Committed(receipt={"order_id": args["order_id"], "released": {}})
    for sku, quantity in held.items():
        state["stock"][sku]["reserved"] -= quantity
        state["stock"][sku]["available"] += quantity
    order["version"] += 1
    return Committed(
        receipt={"order_id": args["order_id"], "released": held},
        events=(_event("inventory_released", order_id=args["order_id"]),),
    )


_HANDLERS: dict[str, Handler] = {
    "get_order": get_order,
    "query_logistics": query_logistics,
    "create_order": create_order,
    "reserve_inventory": reserve_inventory,
    "charge_payment": charge_payment,
    "confirm_order": confirm_order,
    "cancel_order": cancel_order,
    "refund_payment": refund_payment,
    "release_inventory": release_inventory,
}

CHECKOUT = ServiceSet(name="checkout", initial_state=checkout_state, handlers=_HANDLERS)
