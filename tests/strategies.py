"""Shared Hypothesis strategies and small plan builders for txcheck's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Call, Plan

__all__ = [
    "CHECKOUT_STEPS",
    "arbitrary_plans",
    "arguments_from_schema",
    "call",
    "checkout_calls",
    "json_objects",
    "json_values",
    "plan_of",
]

CHECKOUT_STEPS = ("create_order", "reserve_inventory", "charge_payment", "confirm_order")

# -- builders --------------------------------------------------------------------------


def call(
    call_id: str,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    index: int = 0,
    depends_on: Sequence[str] = (),
    json_error: str | None = None,
) -> Call:
    """One call; ``arguments=None`` is a call whose arguments did not parse."""
    return Call(
        id=call_id,
        name=name,
        index=index,
        raw_arguments=dict(arguments) if arguments is not None else "{oops",
        arguments=dict(arguments) if arguments is not None else None,
        json_error=json_error if arguments is None else None,
        depends_on=tuple(depends_on),
    )


def plan_of(*calls: Call) -> Plan:
    """A plan of ``calls`` with their ``index`` set to their position."""
    return Plan(calls=tuple(attrs.evolve(c, index=i) for i, c in enumerate(calls)))


def checkout_calls(order: str = "o1", *, prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """The four checkout steps for ``order``, each with its own idempotency key."""
    return [
        (
            "create_order",
            {
                "order_id": order,
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": 1}],
                "currency": "USD",
                "idempotency_key": f"{prefix}{order}-create",
            },
        ),
        ("reserve_inventory", {"order_id": order, "idempotency_key": f"{prefix}{order}-reserve"}),
        (
            "charge_payment",
            {
                "order_id": order,
                "amount": 1250,
                "currency": "USD",
                "idempotency_key": f"{prefix}{order}-charge",
            },
        ),
        ("confirm_order", {"order_id": order, "idempotency_key": f"{prefix}{order}-confirm"}),
    ]


# -- strategies ------------------------------------------------------------------------


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value (no NaN or infinity), nested."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=12)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=max_leaves,
    )


def json_objects(max_leaves: int = 12) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object: what a call's parsed arguments are."""
    return st.dictionaries(st.text(max_size=16), json_values(max_leaves), max_size=4)


def _near_checkout_arguments() -> st.SearchStrategy[dict[str, Any]]:
    """Arguments shaped like checkout's, so plan-level rules (keys, resources) get exercised."""
    return st.fixed_dictionaries(
        {},
        optional={
            "order_id": st.sampled_from(["o1", "o2", 1, None]),
            "idempotency_key": st.sampled_from(["key-0001", "key-0002", "key-0003", 7]),
            "amount": st.sampled_from([1, 1.0, True, "1", 1250]),
            "currency": st.sampled_from(["USD", "GBP"]),
            "reason": st.sampled_from(["fraud", "compensation", 3]),
            "charge_id": st.sampled_from(["ch_1", "ch_2"]),
            "items": st.just([{"sku": "sku_book", "quantity": 1}]),
        },
    )


_IDS = st.sampled_from(["call_1", "call_2", "call_3", "call_4", "x", "\ud800", "[b]"])
_ARGUMENTS = json_objects(max_leaves=6) | _near_checkout_arguments()


@st.composite
def arbitrary_plans(draw: st.DrawFn, contract: Contract) -> Plan:
    """Plans of up to 6 calls: known and unknown tools, repeated ids, ``depends_on`` (also on
    missing ids and on later calls), unparsed arguments, and arbitrary JSON arguments."""
    names = st.sampled_from(sorted(contract.tools)) | st.text(max_size=10)
    count = draw(st.integers(min_value=0, max_value=6))
    calls = []
    for index in range(count):
        parsed = draw(st.booleans() | st.just(True))
        arguments: dict[str, Any] | None = None
        if parsed:
            arguments = draw(_ARGUMENTS)
        calls.append(
            call(
                draw(_IDS),
                draw(names),
                arguments,
                index=index,
                depends_on=draw(st.lists(_IDS, max_size=3)),
                json_error="'arguments' is not valid JSON",
            )
        )
    return Plan(calls=tuple(calls))


def arguments_from_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid under ``schema``: objects and arrays assembled here, everything else from
    ``hypothesis_jsonschema.from_schema``.

    hypothesis-jsonschema 0.23.1 builds objects with a private Hypothesis API that newer
    Hypothesis releases removed (``'many' object has no attribute 'more'``), so objects (with
    ``properties``, ``required`` and closed extras, as tool schemas are) and arrays (``items``,
    ``minItems``, ``maxItems``) are composed here from their parts' strategies.
    """
    kind = schema.get("type")
    if kind == "object" and set(schema) <= _OBJECT_KEYWORDS:
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: arguments_from_schema(v) for k, v in properties.items() if k in required},
            optional={
                k: arguments_from_schema(v) for k, v in properties.items() if k not in required
            },
        )
    if kind == "array" and set(schema) <= _ARRAY_KEYWORDS and "items" in schema:
        return st.lists(
            arguments_from_schema(schema["items"]),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", 5),
        )
    return from_schema(dict(schema))


_OBJECT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "description", "title"}
)
_ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems", "description", "title"})
