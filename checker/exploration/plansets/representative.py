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
two refunds included); each representative plan submitted twice; and each workflow as
two different plans at once (two resources; two resources sharing keys; one resource
under two sets of keys), where bugs in how keys are made and in what a lookup is taken to
mean show.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import Contract, Tool, Workflow
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.plan.schema_example import NO_VALUE, SchemaValues
from txcheck.models.plan.validation import validate
from txcheck.models.sim.fixture import WorldFixture

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
    """The plans of one run (one orchestrator instance each), and what to call them.
    ``meant_valid``: made to be valid (a workflow, its double click) or to be refused (a
    near-valid variant, an incomplete single call); None for plans a user gave."""

    label: str
    plans: tuple[Plan, ...]
    meant_valid: bool | None = None


NEAR_VALID: tuple[str, ...] = ("wrong_type", "missing_key", "swap_steps", "drop_step")
"""The one-mistake variants ``near_valid_plans`` makes of each representative plan, in
order (names as in ``txcheck.exploration.plansets.mutations``)."""


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
    values = _values_of(contract, fixture)
    calls: list[tuple[str, dict[str, Any]]] = []
    for position, tool in enumerate(tools, start=1):
        assert tool is not None
        key = f"{workflow.name}-{number}-{position}"
        calls.append((tool.name, values.arguments(tool, shared, key, number, taken)))
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


_VALUES: IdentityMemo[_PlanValues] = IdentityMemo(limit=64)


def _values_of(contract: Contract, fixture: WorldFixture) -> _PlanValues:
    return _VALUES((contract, fixture), lambda: _PlanValues(contract, fixture))


class _PlanValues:
    """Where representative arguments come from, for one contract and fixture: the
    values each tool's schema accepts (``SchemaValues``), the fixture's own ids and
    names (an account that exists), and the examples the contract gives."""

    def __init__(self, contract: Contract, fixture: WorldFixture) -> None:
        self.contract = contract
        self.fixture_words = tuple(_fixture_words(fixture.document))
        self._schemas: dict[str, SchemaValues] = {}

    def schemas(self, tool: Tool) -> SchemaValues:
        found = self._schemas.get(tool.name)
        if found is None:
            found = self._schemas[tool.name] = SchemaValues(tool.parameters)
        return found

    def arguments(
        self, tool: Tool, shared: dict[str, Any], key: str, number: int, taken: set[str]
    ) -> dict[str, Any]:
        """Arguments the tool's whole schema accepts (patterns and formats included):
        shared values where the names match and the schema agrees, the workflow's
        resource (a new one, unlike any the fixture or another plan holds), a distinct
        idempotency key, and the required rest: from the contract's examples, the
        fixture's values, else made to fit."""
        schema = tool.parameters
        properties: Mapping[str, Any] = schema.get("properties", {})
        wanted = [str(n) for n in schema.get("required", ())]
        if tool.idempotency_key and tool.idempotency_key not in wanted:
            wanted.append(tool.idempotency_key)
        values = self.schemas(tool)
        arguments: dict[str, Any] = {}
        for name in wanted:
            spec = properties.get(name, {})
            if name in shared and values.accepts(spec, shared[name]):
                value = shared[name]
            elif name == tool.idempotency_key:
                hints = (_key_value(spec, f"key-{key}"), _key_value(spec, _dashed(f"key-{key}")))
                value = self.fresh(values, spec, hints, number, taken)
            elif name == tool.resource:
                value = self.fresh(values, spec, (_hint(spec, f"res-{key}"),), number, taken)
                shared[name] = value
            else:
                value = self.existing(tool, values, name, spec, shared)
                shared[name] = value
            arguments[name] = value
        return arguments

    def fresh(
        self, values: SchemaValues, spec: Any, hints: tuple[Any, ...], number: int, taken: set[str]
    ) -> Any:
        """A value no plan and no fixture entry holds yet (a new resource, a new key)."""
        avoid = taken | set(self.fixture_words)
        value = values.first(spec, preferred=hints, index=number, avoid=avoid)
        if value is NO_VALUE:
            return hints[0]  # the schema admits nothing made here: the run will say so
        if isinstance(value, str):
            taken.add(value)
        return value

    def existing(
        self, tool: Tool, values: SchemaValues, name: str, spec: Any, shared: dict[str, Any]
    ) -> Any:
        """A value for an argument that names something: the contract's examples first,
        then a fixture value the schema accepts (one not already used by another argument
        of this plan, where there is one), else the simplest value that fits."""
        examples = tool.examples.get(name, ())
        used = {v for v in shared.values() if isinstance(v, str)}
        words = [w for w in self.fixture_words if w not in used] + [
            w for w in self.fixture_words if w in used
        ]
        simple = _example(spec, name)
        value = values.first(spec, preferred=(*examples, simple, *words), hint=_hint(spec, name))
        return simple if value is NO_VALUE else value


def _fixture_words(document: Mapping[str, Any]) -> Iterator[str]:
    """Every string the fixture holds, keys and values, in document order, once each:
    the ids of what exists (accounts, customers, SKUs)."""
    seen: set[str] = set()
    stack: list[Any] = [document]
    order: list[str] = []
    while stack:
        node = stack.pop(0)
        if isinstance(node, Mapping):
            for name, value in node.items():
                if name != "format":
                    order.append(str(name))
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            order.append(node)
    for word in order:
        if word not in seen:
            seen.add(word)
            yield word


def _dashed(text: str) -> str:
    return text.replace("_", "-").lower()


def _hint(spec: Mapping[str, Any], text: str) -> Any:
    """The readable value tried first: ``text`` as ``_example`` spells it."""
    return _example(spec, text)


def _key_value(spec: Mapping[str, Any], text: str) -> str:
    low = int(spec.get("minLength", 0))
    return text + "0" * max(0, low - len(text))


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
        arguments = _values_of(contract, fixture).arguments(
            tool, shared, f"{name}-alone", 100 + index, taken
        )
        plans.append((Plan.of((name, arguments)),))
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
        values = _values_of(contract, fixture)
        sides = [(n, _shared_values(fixture, n, taken)) for n in (200 + 2 * index, 201 + 2 * index)]
        calls: list[tuple[str, dict[str, Any]]] = []
        for position, tool in enumerate(tools, start=1):
            assert tool is not None
            for (number, shared), side in zip(sides, "ab", strict=True):
                key = f"{workflow.name}-two-{side}-{position}"
                calls.append((tool.name, values.arguments(tool, shared, key, number, taken)))
        plans.append((workflow.name, (Plan.of(*calls),)))
    return plans


def _alone(plan: Plan, in_flows: set[str]) -> bool | None:
    """A lone step of a workflow is an incomplete workflow, made to be refused; a tool of
    its own (a refund, a cancel) names something the fixture may not hold, so whether it
    should commit is judged by validation, the world's rules included."""
    return False if plan.calls[0].name in in_flows else None


def _concurrent(contract: Contract, fixture: WorldFixture) -> list[PlanSet]:
    """Each workflow as two different plans at once, one orchestrator instance each: on
    two new resources with their own keys (two customers checking out together); the
    same with the second plan reusing the first one's keys (keys made from something
    other than the business intent collide so); and the first plan again under the
    second one's keys (a second proposal for the same order: only one may take effect)."""
    taken = {str(k) for k in fixture.document.get("orders", {})}
    values = _values_of(contract, fixture)
    found: list[PlanSet] = []
    for index, workflow in enumerate(contract.workflows):
        tools = [contract.tool(step) for step in workflow.steps]
        if any(t is None for t in tools):
            continue
        pair: list[Plan] = []
        for side, number in (("a", 300 + 2 * index), ("b", 301 + 2 * index)):
            shared = _shared_values(fixture, number, taken)
            calls: list[tuple[str, dict[str, Any]]] = []
            for position, tool in enumerate(tools, start=1):
                assert tool is not None
                key = f"{workflow.name}-pair-{side}-{position}"
                calls.append((tool.name, values.arguments(tool, shared, key, number, taken)))
            pair.append(Plan.of(*calls))
        first, second = pair
        found.append(PlanSet(f"{workflow.name}, two at once", (first, second), meant_valid=True))
        if any(t is not None and t.idempotency_key for t in tools):
            clashing = _with_keys_of(contract, second, first)
            found.append(
                PlanSet(
                    f"{workflow.name}, two at once sharing keys",
                    (first, clashing),
                    meant_valid=True,
                )
            )
            rival = _with_keys_of(contract, first, second)
            found.append(
                PlanSet(
                    f"{workflow.name}, two at once on the same resources",
                    (first, rival),
                    meant_valid=True,
                )
            )
    return found


def _with_keys_of(contract: Contract, plan: Plan, source: Plan) -> Plan:
    """``plan`` with the idempotency keys of ``source``'s calls, call by call."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for call, other in zip(plan.calls, source.calls, strict=True):
        arguments = dict(call.arguments or {})
        tool = contract.tool(call.name)
        key = tool.idempotency_key if tool is not None else None
        if key and key in arguments and other.arguments and key in other.arguments:
            arguments[key] = other.arguments[key]
        calls.append((call.name, arguments))
    return Plan.of(*calls)


def search_plans(contract: Contract, fixture: WorldFixture) -> list[PlanSet]:
    """What the systematic and random engines search when given no plans (see the module
    docstring), labelled, in that order, each plan set once."""
    singles = _named_singles(contract, fixture)
    found = [PlanSet(name, (plan,), meant_valid=True) for name, plan in singles]
    in_flows = {step for flow in contract.workflows for step in flow.steps}
    found += [  # a step of a workflow alone is refused; another tool is judged when run
        PlanSet(f"{p[0].calls[0].name} alone", p, meant_valid=_alone(p[0], in_flows))
        for p in one_call_plans(contract, fixture)
    ]
    for name, plan in singles:
        calls = [(c.name, dict(c.arguments or {})) for c in plan.calls]
        for mistake in NEAR_VALID:
            changed = _one_mistake(contract, mistake, calls)
            if changed is not None and not validate(contract, Plan.of(*changed)).valid:
                label = f"{name} with one mistake ({mistake})"
                found.append(PlanSet(label, (Plan.of(*changed),), meant_valid=False))
    for name, plans in _two_resource(contract, fixture):
        found.append(PlanSet(f"{name} on two resources", plans, meant_valid=True))
    found += [
        PlanSet(f"{name}, submitted twice", (plan, plan), meant_valid=True)
        for name, plan in singles
    ]
    found += _concurrent(contract, fixture)
    unique: dict[str, PlanSet] = {}
    for entry in found:
        unique.setdefault(str([plan_to_json(p) for p in entry.plans]), entry)
    return list(unique.values())
