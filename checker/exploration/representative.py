"""Representative plans: one business-consistent plan per workflow, and its double click.

When ``txcheck explore`` is given no ``--plan``, engines check the policy on these. Each
workflow becomes one plan that runs all of its steps on one new resource (a fresh order
id for checkout), with arguments the world fixture agrees with: a known customer, SKUs in
stock from the catalog, an amount equal to the order total, and one distinct idempotency
key per call. The same plan submitted twice (two orchestrator instances, the double click)
follows. Arguments are built from each tool's schema, so a user contract gets plans too;
the checkout names (``customer_id``, ``items``, ``amount``, ``currency``) get values the
checkout business rules accept. Deterministic: the same contract and fixture give the
same plans.

``near_valid_plans`` adds, for each of those plans, variants one mistake away (a wrong
type in a later call, a side effect without its key, two steps swapped, the last step
dropped): a policy must reject each whole before any call runs, which a policy that
validates lazily or partly does not.

``search_plans`` is what the systematic and random engines search when given no plans,
each set labelled for reports: every representative plan; a plan of one
call for each write tool (a lone ``create_order`` is an incomplete checkout: a policy
that waves short plans through runs it); the near-valid variants; each workflow run on
two resources stage by stage (two orders: a failure at the end makes the saga undo both,
two refunds included); and each representative plan submitted twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from txcheck.models.contract import Contract, Tool, Workflow
from txcheck.models.fixture import WorldFixture
from txcheck.models.proposal import Plan, plan_to_json
from txcheck.models.validation import validate

__all__ = [
    "NEAR_VALID",
    "PlanSet",
    "near_valid_plans",
    "one_call_plans",
    "representative_plans",
    "search_plans",
    "two_resource_plans",
]


@attrs.frozen
class PlanSet:
    """The plans of one run (one orchestrator instance each), and what to call them."""

    label: str
    plans: tuple[Plan, ...]


NEAR_VALID: tuple[str, ...] = ("wrong_type", "missing_key", "swap_steps", "drop_step")
"""The one-mistake variants ``near_valid_plans`` makes of each representative plan, in
order (names as in ``txcheck.exploration.mutations``)."""


def representative_plans(contract: Contract, fixture: WorldFixture) -> list[tuple[Plan, ...]]:
    """One single-instance plan per workflow, then each submitted twice.

    A contract without workflows gets one single-call plan per side-effecting tool.
    """
    singles = [plan for _, plan in _named_singles(contract, fixture)]
    return [(p,) for p in singles] + [(p, p) for p in singles]


def _named_singles(contract: Contract, fixture: WorldFixture) -> list[tuple[str, Plan]]:
    """The representative single plans, each with the workflow (or tool) it runs."""
    singles: list[tuple[str, Plan]] = []
    taken = {str(k) for k in fixture.document.get("orders", {})}
    for index, workflow in enumerate(contract.workflows):
        plan = _workflow_plan(contract, fixture, workflow, index + 1, taken)
        if plan is not None:
            singles.append((workflow.name, plan))
    if not contract.workflows:
        for index, name in enumerate(sorted(contract.tools)):
            tool = contract.tools[name]
            if tool.has_side_effect:
                flow = Workflow(name=name, steps=(name,))
                plan = _workflow_plan(contract, fixture, flow, index + 1, taken)
                if plan is not None:
                    singles.append((name, plan))
    return singles


def near_valid_plans(contract: Contract, fixture: WorldFixture) -> list[tuple[Plan, ...]]:
    """Each representative single plan with exactly one mistake (``NEAR_VALID``), one
    instance each; a variant the contract still accepts (``validate``) is left out."""
    variants: list[tuple[Plan, ...]] = []
    for plans in representative_plans(contract, fixture):
        if len(plans) != 1:
            continue
        calls = [(c.name, dict(c.arguments or {})) for c in plans[0].calls]
        for mistake in NEAR_VALID:
            changed = _one_mistake(contract, mistake, calls)
            if changed is None:
                continue
            plan = Plan.of(*changed)
            if not validate(contract, plan).valid:
                variants.append((plan,))
    return variants


def _one_mistake(
    contract: Contract, mistake: str, calls: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]] | None:
    """``calls`` with ``mistake`` made once, late in the plan (so a policy that checks only
    what it is about to run commits the earlier calls first); None if it does not apply."""
    changed = [(name, dict(arguments)) for name, arguments in calls]
    if mistake == "wrong_type":
        index = min(1, len(changed) - 1)
        name, arguments = changed[index]
        tool = contract.tool(name)
        field = tool.resource if tool is not None and tool.resource in arguments else None
        field = field or next(iter(sorted(arguments)), None)
        if field is None:
            return None
        arguments[field] = 0 if isinstance(arguments[field], str) else str(arguments[field])
        return changed
    if mistake == "missing_key":
        for name, arguments in reversed(changed):
            tool = contract.tool(name)
            if tool is not None and tool.has_side_effect and tool.idempotency_key in arguments:
                del arguments[tool.idempotency_key]
                return changed
        return None
    if mistake == "swap_steps":
        if len(changed) < 2 or changed[-1][0] == changed[-2][0]:
            return None
        changed[-1], changed[-2] = changed[-2], changed[-1]
        return changed
    if len(changed) < 2:  # drop_step: dropping the only call leaves no plan
        return None
    return changed[:-1]


def _workflow_plan(
    contract: Contract, fixture: WorldFixture, workflow: Workflow, number: int, taken: set[str]
) -> Plan | None:
    tools = [contract.tool(step) for step in workflow.steps]
    if any(t is None for t in tools):
        return None
    shared = _shared_values(fixture, number, taken)
    calls: list[tuple[str, dict[str, Any]]] = []
    for position, tool in enumerate(tools, start=1):
        assert tool is not None
        calls.append((tool.name, _arguments(tool, shared, f"{workflow.name}-{number}-{position}")))
    return Plan.of(*calls)


def _shared_values(fixture: WorldFixture, number: int, taken: set[str]) -> dict[str, Any]:
    """Values every step of one workflow agrees on: the resource, customer, items, total."""
    document = fixture.document
    order_id = f"ord_rep_{number}"
    while order_id in taken:
        order_id += "x"
    taken.add(order_id)
    principals: Mapping[str, Any] = document.get("principals", {})
    customers = [p for p in sorted(principals) if "customer" in principals[p].get("roles", ())]
    customer = (customers or sorted(principals) or ["cus_rep"])[0]
    catalog: Mapping[str, Any] = document.get("catalog", {})
    in_stock = [s for s in sorted(catalog) if int(catalog[s].get("stock", 0)) >= 1]
    values: dict[str, Any] = {"order_id": order_id, "customer_id": customer, "currency": "USD"}
    if in_stock:
        values["items"] = [{"sku": in_stock[0], "quantity": 1}]
        values["amount"] = int(catalog[in_stock[0]]["price"])
    return values


def _arguments(tool: Tool, shared: dict[str, Any], key: str) -> dict[str, Any]:
    """Schema-valid arguments: shared values where the names match, the tool's resource
    on the workflow's resource, a distinct idempotency key, and the required rest."""
    schema = tool.parameters
    properties: Mapping[str, Any] = schema.get("properties", {})
    wanted = [str(n) for n in schema.get("required", ())]
    if tool.idempotency_key and tool.idempotency_key not in wanted:
        wanted.append(tool.idempotency_key)
    arguments: dict[str, Any] = {}
    for name in wanted:
        spec = properties.get(name, {})
        if name == tool.resource:
            value = shared.setdefault(name, _example(spec, f"res-{key}"))
        elif name == tool.idempotency_key:
            value = _key_value(spec, f"key-{key}")
        elif name in shared and _fits(spec, shared[name]):
            value = shared[name]
        else:
            value = shared.setdefault(name, _example(spec, name))
        arguments[name] = value
    return arguments


def _key_value(spec: Mapping[str, Any], text: str) -> str:
    low = int(spec.get("minLength", 0))
    return text + "0" * max(0, low - len(text))


def _fits(spec: Mapping[str, Any], value: Any) -> bool:
    if "enum" in spec:
        return value in spec["enum"]
    kind = spec.get("type")
    checks: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "integer": int,
        "number": (int, float),
        "array": list,
        "object": dict,
        "boolean": bool,
    }
    return kind not in checks or isinstance(value, checks[kind])


def _example(spec: Mapping[str, Any], hint: str) -> Any:
    """The simplest value a schema accepts: the first enum value, the minimum, ..."""
    if "const" in spec:
        return spec["const"]
    if spec.get("enum"):
        return spec["enum"][0]
    kind = spec.get("type", "string")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind in ("integer", "number"):
        return int(spec.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        return [_example(spec.get("items", {}), hint)] * int(spec.get("minItems", 0))
    if kind == "object":
        properties: Mapping[str, Any] = spec.get("properties", {})
        return {str(n): _example(properties.get(n, {}), n) for n in spec.get("required", ())}
    text = hint.replace("_", "-")
    low, high = int(spec.get("minLength", 0)), spec.get("maxLength")
    text = text + "x" * max(0, low - len(text))
    return text[: int(high)] if high is not None else text


def one_call_plans(contract: Contract, fixture: WorldFixture) -> list[tuple[Plan, ...]]:
    """A plan of one call for each write tool, on a new resource with consistent values;
    valid for a tool that is a workflow of its own, an incomplete workflow otherwise."""
    taken = {str(k) for k in fixture.document.get("orders", {})}
    plans: list[tuple[Plan, ...]] = []
    for index, name in enumerate(sorted(contract.tools)):
        tool = contract.tools[name]
        if not tool.has_side_effect:
            continue
        shared = _shared_values(fixture, 100 + index, taken)
        plans.append((Plan.of((name, _arguments(tool, shared, f"{name}-alone"))),))
    return plans


def two_resource_plans(contract: Contract, fixture: WorldFixture) -> list[tuple[Plan, ...]]:
    """Each workflow of two or more steps run on two new resources, stage by stage (both
    first steps, then both second steps, ...): a failure at the last step leaves every
    earlier step of both to undo."""
    return [plans for _, plans in _two_resource(contract, fixture)]


def _two_resource(contract: Contract, fixture: WorldFixture) -> list[tuple[str, tuple[Plan, ...]]]:
    taken = {str(k) for k in fixture.document.get("orders", {})}
    plans: list[tuple[str, tuple[Plan, ...]]] = []
    for index, workflow in enumerate(contract.workflows):
        tools = [contract.tool(step) for step in workflow.steps]
        if len(tools) < 2 or any(t is None for t in tools):
            continue
        first = _shared_values(fixture, 200 + 2 * index, taken)
        second = _shared_values(fixture, 201 + 2 * index, taken)
        calls: list[tuple[str, dict[str, Any]]] = []
        for position, tool in enumerate(tools, start=1):
            assert tool is not None
            for side, shared in (("a", first), ("b", second)):
                key = f"{workflow.name}-two-{side}-{position}"
                calls.append((tool.name, _arguments(tool, shared, key)))
        plans.append((workflow.name, (Plan.of(*calls),)))
    return plans


def search_plans(contract: Contract, fixture: WorldFixture) -> list[PlanSet]:
    """What the systematic and random engines search when given no plans (see the module
    docstring), labelled, in that order, each plan set once."""
    singles = _named_singles(contract, fixture)
    found = [PlanSet(name, (plan,)) for name, plan in singles]
    found += [PlanSet(f"{p[0].calls[0].name} alone", p) for p in one_call_plans(contract, fixture)]
    for name, plan in singles:
        calls = [(c.name, dict(c.arguments or {})) for c in plan.calls]
        for mistake in NEAR_VALID:
            changed = _one_mistake(contract, mistake, calls)
            if changed is not None and not validate(contract, Plan.of(*changed)).valid:
                found.append(PlanSet(f"{name} with one mistake ({mistake})", (Plan.of(*changed),)))
    for name, plans in _two_resource(contract, fixture):
        found.append(PlanSet(f"{name} on two resources", plans))
    found += [PlanSet(f"{name}, submitted twice", (plan, plan)) for name, plan in singles]
    unique: dict[str, PlanSet] = {}
    for entry in found:
        unique.setdefault(str([plan_to_json(p) for p in entry.plans]), entry)
    return list(unique.values())
