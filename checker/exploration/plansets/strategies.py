"""Hypothesis strategies for plans, built from the contract and the world fixture.

Valid plans follow the contract's workflows: every step of a workflow, in order, on one
fresh resource, with argument values the world's business rules accept (a known customer,
SKUs from the catalog in stock, an amount equal to the order total priced from the
catalog, one distinct idempotency key per call). So a failure found on them is an
orchestration failure, not a bad plan. Free argument values come from the tool's JSON
Schema through hypothesis-jsonschema (``from_schema``) and are re-validated under Draft
2020-12 (see docs/decisions/001-hypothesis-jsonschema.md). Near-valid plans are one
mutation away (``txcheck.exploration.plansets.mutations``); submissions put one or two plans
in a run (the
same plan twice, two plans on one order, or two on two orders, their keys apart or shared).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from hypothesis import strategies as st

from txcheck.exploration.plansets.mutations import mutate
from txcheck.exploration.plansets.plan_space import Draft, DraftCall, Order, PlanSpace
from txcheck.models.plan.contract import Tool
from txcheck.models.plan.proposal import Plan

__all__ = [
    "Draft",
    "DraftCall",
    "Order",
    "PlanSpace",
    "draw_draft",
    "draw_flow",
    "draw_order",
    "draw_plan",
    "draw_read",
    "draw_submission",
    "near_valid_plans",
    "plans",
    "submissions",
    "valid_plans",
]


# -- drawing ---------------------------------------------------------------------------------
# Helpers take Hypothesis' ``draw`` and return values: building a new strategy object per
# draw costs more than the draw itself, so only the top-level strategies are composites.


def draw_order(
    draw: st.DrawFn, space: PlanSpace, order_id: str, used: dict[str, int] | None = None
) -> Order:
    """A new order: a known customer, 1-2 catalog SKUs still in stock after the plan's
    earlier orders (``used``, updated), a currency and its total."""
    used = {} if used is None else used
    values: dict[str, Any] = {"customer_id": space.pick(draw, space.customers)}
    left = [(sku, price, stock - used.get(sku, 0)) for sku, price, stock in space.in_stock]
    left = [entry for entry in left if entry[2] >= 1]
    if left:
        first = space.pick(draw, left)
        picked = [first]
        others = [entry for entry in left if entry != first]
        if others and space.pick(draw, (False, True)):
            picked.append(space.pick(draw, others))
        items = [
            {"sku": sku, "quantity": space.number(draw, 1, min(3, stock))}
            for sku, _, stock in picked
        ]
        for item in items:
            used[item["sku"]] = used.get(item["sku"], 0) + item["quantity"]
        values["items"] = items
        prices = {sku: price for sku, price, _ in space.in_stock}
        values["amount"] = sum(prices[i["sku"]] * i["quantity"] for i in items)
    values["currency"] = space.pick(draw, space.currencies)
    return Order(id=order_id, values=values)


def draw_flow(
    draw: st.DrawFn, space: PlanSpace, flow: Sequence[Tool], order: Order, *, index: int, tag: str
) -> list[DraftCall]:
    """Every step of one workflow on ``order``, each with its own key."""
    calls = []
    for position, tool in enumerate(flow, start=1):
        fixed = space.fixed_arguments(tool, order, f"key-{order.id}-{position}{tag}")
        free = draw(space.free_arguments(tool, tuple(fixed)))
        calls.append(DraftCall(tool=tool.name, arguments={**free, **fixed}, flow=index))
    return calls


def draw_read(draw: st.DrawFn, space: PlanSpace, targets: Sequence[str]) -> DraftCall:
    """A read-only call on one of ``targets``."""
    tool = space.pick(draw, space.reads)
    fixed = space.fixed_arguments(tool, Order(id=space.pick(draw, targets)), "")
    free = draw(space.free_arguments(tool, tuple(fixed)))
    return DraftCall(tool=tool.name, arguments={**free, **fixed})


def draw_draft(draw: st.DrawFn, space: PlanSpace) -> Draft:
    """A valid plan: one workflow (sometimes two, interleaved) on fresh resources, and
    sometimes a read of a resource that exists at that point."""
    count = space.pick(draw, (1, 1, 1, 2)) if len(space.new_ids) >= 2 else 1
    orders, flows, sequences = [], [], []
    used: dict[str, int] = {}
    for index in range(count):
        flow = space.pick(draw, space.flows)
        order = draw_order(draw, space, space.new_ids[index], used)
        orders.append(order)
        flows.append(tuple(t.name for t in flow))
        sequences.append(draw_flow(draw, space, flow, order, index=index, tag=""))
    calls = list(sequences[0])
    if count == 2:
        calls = _merge(draw, space, sequences[0], sequences[1])
    if space.reads:
        for _ in range(space.pick(draw, (0, 0, 0, 1, 2))):
            position = space.number(draw, 0, len(calls))
            created = {c.arguments.get(_resource(space, c)) for c in calls[:position]}
            targets = [o.id for o in orders if o.id in created] + space.existing
            if targets:
                calls.insert(position, draw_read(draw, space, targets))
    return Draft(calls=tuple(calls), orders=tuple(orders), flows=tuple(flows))


def _merge(
    draw: st.DrawFn, space: PlanSpace, first: list[DraftCall], second: list[DraftCall]
) -> list[DraftCall]:
    """Interleave two sequences, keeping each one's order (shrinks to one after the other)."""
    merged: list[DraftCall] = []
    a, b = list(first), list(second)
    while a and b:
        merged.append(b.pop(0) if space.pick(draw, (False, True)) else a.pop(0))
    return merged + a + b


def _resource(space: PlanSpace, call: DraftCall) -> str:
    tool = space.contract.tool(call.tool)
    return (tool.resource or "") if tool is not None else ""


def _stock_used(draft: Draft) -> dict[str, int]:
    """The quantities of each SKU ``draft``'s orders take."""
    used: dict[str, int] = {}
    for order in draft.orders:
        for item in order.values.get("items", ()):
            used[item["sku"]] = used.get(item["sku"], 0) + item["quantity"]
    return used


def draw_rival(draw: st.DrawFn, space: PlanSpace, draft: Draft) -> Plan:
    """A second plan beside the first: on the first plan's order (the workflow again under
    new keys, with other values, or reads only), or the workflow on another new order
    (two customers at once), with its own keys or with the first plan's (keys made from
    something other than the business intent collide so)."""
    order = draft.orders[0]
    flow = [t for name in draft.flows[0] if (t := space.contract.tool(name)) is not None]
    free = [i for i in space.new_ids if i not in {o.id for o in draft.orders}]
    kinds = ("again", "other") + (("elsewhere", "same keys") if free else ())
    kind = space.pick(draw, (*kinds, "reads") if space.reads else kinds)
    if kind == "reads":
        return Draft(calls=(draw_read(draw, space, [order.id]),)).plan()
    if kind == "other":
        order = draw_order(draw, space, order.id)
    if kind in ("elsewhere", "same keys"):
        order = draw_order(draw, space, free[0], _stock_used(draft))
    calls = draw_flow(draw, space, flow, order, index=0, tag="-b")
    if kind == "same keys":
        first = [c for c in draft.calls if c.flow == 0]
        calls = [_with_key_of(space, c, f) for c, f in zip(calls, first, strict=False)]
    return Draft(calls=tuple(calls)).plan()


def _with_key_of(space: PlanSpace, call: DraftCall, source: DraftCall) -> DraftCall:
    """``call`` with ``source``'s idempotency key (when both carry one)."""
    tool = space.contract.tool(call.tool)
    key = tool.idempotency_key if tool is not None else None
    if not key or key not in call.arguments or key not in source.arguments:
        return call
    return attrs.evolve(call, arguments={**call.arguments, key: source.arguments[key]})


def draw_plan(draw: st.DrawFn, space: PlanSpace) -> Plan:
    """Mostly valid plans, a third near-valid (valid first, so shrinking prefers them)."""
    draft = draw_draft(draw, space)
    if space.pick(draw, (False, False, True)):
        draft = mutate(draw, space, draft)[1]
    return draft.plan()


def draw_submission(draw: st.DrawFn, space: PlanSpace) -> tuple[Plan, ...]:
    """The plans of one run: usually one, sometimes the same plan submitted twice (a
    double click) or two plans on one order (the second after or alongside the first)."""
    mode = space.pick(draw, ("single",) * 6 + ("twice", "rival"))
    if mode == "rival":
        draft = draw_draft(draw, space)
        return (draft.plan(), draw_rival(draw, space, draft))
    plan = draw_plan(draw, space)
    return (plan, plan) if mode == "twice" else (plan,)


# -- strategies --------------------------------------------------------------------------------


def valid_plans(space: PlanSpace) -> st.SearchStrategy[Plan]:
    """Plans valid at every level, business included (see the module docstring)."""
    return st.composite(lambda draw: draw_draft(draw, space).plan())()


def near_valid_plans(space: PlanSpace) -> st.SearchStrategy[tuple[str, Plan]]:
    """Plans one mutation away from a valid one, with the mutation's name."""

    def near(draw: st.DrawFn) -> tuple[str, Plan]:
        name, draft = mutate(draw, space, draw_draft(draw, space))
        return name, draft.plan()

    return st.composite(near)()


def plans(space: PlanSpace) -> st.SearchStrategy[Plan]:
    """Mostly valid plans, a third near-valid."""
    return st.composite(lambda draw: draw_plan(draw, space))()


def submissions(space: PlanSpace) -> st.SearchStrategy[tuple[Plan, ...]]:
    """The plans of one run (see ``draw_submission``)."""
    return st.composite(lambda draw: draw_submission(draw, space))()
