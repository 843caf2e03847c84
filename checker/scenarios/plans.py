"""The fixed plans the named scenarios run: one checkout, and its broken variants.

Every plan buys two books (``sku_book`` at 1250 cents, so 2500 USD) for customer
``cus_1`` as order ``ord_1`` against the bundled world fixture, in the checkout workflow's
four steps: create_order -> reserve_inventory -> charge_payment -> confirm_order, each
with its own idempotency key. A broken variant changes exactly one thing, and never the
first call, so a policy that executes before it validates visibly commits something.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from txcheck.models.plan.proposal import Plan

__all__ = [
    "CHARGE_AMOUNT_AS_STRING",
    "CHARGE_BEFORE_RESERVE",
    "CHARGE_IN_UNKNOWN_CURRENCY",
    "CHARGE_KEY",
    "CHARGE_WITHOUT_AMOUNT",
    "CHARGE_WITHOUT_KEY",
    "CHECKOUT",
    "ORDER",
    "RESUBMITTED",
    "SKU",
    "WITHOUT_CONFIRM",
]

ORDER = "ord_1"
SKU = "sku_book"
CHARGE_KEY = "key-charge-1"

_Step = tuple[str, Mapping[str, Any]]

CREATE: _Step = (
    "create_order",
    {
        "order_id": ORDER,
        "customer_id": "cus_1",
        "items": [{"sku": SKU, "quantity": 2}],
        "currency": "USD",
        "idempotency_key": "key-create-1",
    },
)
RESERVE: _Step = ("reserve_inventory", {"order_id": ORDER, "idempotency_key": "key-reserve-1"})
CHARGE: _Step = (
    "charge_payment",
    {"order_id": ORDER, "amount": 2500, "currency": "USD", "idempotency_key": CHARGE_KEY},
)
CONFIRM: _Step = ("confirm_order", {"order_id": ORDER, "idempotency_key": "key-confirm-1"})


def _charge(*, without: str | None = None, **changes: Any) -> _Step:
    """The charge call with one argument removed or changed."""
    arguments = {k: v for k, v in CHARGE[1].items() if k != without}
    return ("charge_payment", {**arguments, **changes})


CHECKOUT = Plan.of(CREATE, RESERVE, CHARGE, CONFIRM)
"""The valid four-step checkout."""

RESUBMITTED = Plan.of(CREATE, RESERVE, CHARGE, CONFIRM, ("get_order", {"order_id": ORDER}))
"""The same checkout proposed again under the same keys, with a read added: a different
plan (so not a double click of one operation) whose writes are the same operations."""

CHARGE_WITHOUT_AMOUNT = Plan.of(CREATE, RESERVE, _charge(without="amount"), CONFIRM)
"""The charge lacks its required ``amount`` (``missing_required``)."""

CHARGE_AMOUNT_AS_STRING = Plan.of(CREATE, RESERVE, _charge(amount="2500"), CONFIRM)
"""The charge's integer ``amount`` is the string ``"2500"`` (``type_mismatch``)."""

CHARGE_IN_UNKNOWN_CURRENCY = Plan.of(CREATE, RESERVE, _charge(currency="GBP"), CONFIRM)
"""The charge's ``currency`` is outside its enum (``enum_violation``)."""

CHARGE_WITHOUT_KEY = Plan.of(CREATE, RESERVE, _charge(without="idempotency_key"), CONFIRM)
"""The charge, a side effect, has no idempotency key (``missing_idempotency_key``)."""

WITHOUT_CONFIRM = Plan.of(CREATE, RESERVE, CHARGE)
"""The workflow's last step is missing (``incomplete_workflow``)."""

CHARGE_BEFORE_RESERVE = Plan.of(CREATE, CHARGE, RESERVE, CONFIRM)
"""The charge is listed before the reservation it depends on (``dependency_too_early``)."""
