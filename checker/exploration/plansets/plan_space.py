"""What plan generation knows about a contract and a world fixture, computed once.

``PlanSpace`` holds the workflows (as tools), the catalog SKUs in stock, the customers,
the currencies, the resources that already exist, and cached strategies and validators
(Hypothesis pays for every new strategy object, so draws reuse them). ``Draft`` is a
generated plan with the structure mutations need (which calls belong to which workflow
instance, on which order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from hypothesis import strategies as st

from txcheck.exploration.plansets.schema_values import schema_values
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.schema_validator import reference_validator
from txcheck.models.sim.fixture import WorldFixture

__all__ = ["Draft", "DraftCall", "Order", "PlanSpace"]


@attrs.frozen(kw_only=True)
class Order:
    """One resource a plan works on, and the business values every step agrees on."""

    id: str
    values: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class DraftCall:
    """A call before it becomes part of a ``Plan``; ``flow`` is the index of the workflow
    instance it belongs to (None for reads and extra calls)."""

    tool: str
    arguments: Mapping[str, Any]
    flow: int | None = None


@attrs.frozen(kw_only=True)
class Draft:
    """A generated plan with the structure mutations need: its flows and orders."""

    calls: tuple[DraftCall, ...]
    orders: tuple[Order, ...] = ()
    flows: tuple[tuple[str, ...], ...] = ()

    def plan(self) -> Plan:
        return Plan.of(*((c.tool, dict(c.arguments)) for c in self.calls))


class PlanSpace:
    """What plan generation knows about a contract and a fixture, computed once."""

    def __init__(self, contract: Contract, fixture: WorldFixture) -> None:
        self.contract = contract
        self.fixture = fixture
        document = fixture.document
        catalog: Mapping[str, Any] = document.get("catalog", {})
        self.in_stock: list[tuple[str, int, int]] = [
            (sku, int(entry.get("price", 0)), int(entry.get("stock", 0)))
            for sku, entry in sorted(catalog.items())
            if int(entry.get("stock", 0)) >= 1
        ]
        principals: Mapping[str, Any] = document.get("principals", {})
        customers = [p for p in sorted(principals) if "customer" in principals[p].get("roles", ())]
        self.customers: list[str] = customers or sorted(principals) or ["customer-1"]
        self.existing: list[str] = sorted(str(o) for o in document.get("orders", {}))
        tools = contract.tools
        flows = [
            tuple(tools[s] for s in w.steps)
            for w in contract.workflows
            if w.steps and all(s in tools for s in w.steps)
        ]
        if not flows:
            flows = [(t,) for _, t in sorted(tools.items()) if t.has_side_effect]
        self.flows: list[tuple[Tool, ...]] = flows
        in_flows = {t.name for flow in flows for t in flow}
        self.reads: list[Tool] = [
            t for _, t in sorted(tools.items()) if not t.has_side_effect and t.resource
        ]
        self.outside: list[Tool] = [
            t for _, t in sorted(tools.items()) if t.name not in in_flows and t.resource
        ]
        self.currencies: list[Any] = _currencies(flows)
        taken = set(self.existing)
        self.new_ids: list[str] = [f"ord_{i}" for i in range(1, 10) if f"ord_{i}" not in taken][:3]
        self._validators: dict[tuple[str, str], Any] = {}
        self._free: dict[tuple[str, tuple[str, ...]], st.SearchStrategy[dict[str, Any]]] = {}
        self._ranges: dict[tuple[int, int], st.SearchStrategy[int]] = {}

    # -- cached strategies (Hypothesis pays per new strategy object, so reuse them) --------

    def pick(self, draw: st.DrawFn, values: Sequence[Any]) -> Any:
        """One of ``values`` (shrinks towards the first)."""
        if len(values) == 1:
            return values[0]
        return values[self.number(draw, 0, len(values) - 1)]

    def number(self, draw: st.DrawFn, low: int, high: int) -> int:
        """An integer in ``[low, high]`` (shrinks towards ``low``)."""
        strategy = self._ranges.get((low, high))
        if strategy is None:
            strategy = self._ranges[(low, high)] = st.integers(low, high)
        return int(draw(strategy))

    # -- argument values --------------------------------------------------------------------

    def fits(self, tool: Tool, name: str, value: Any) -> bool:
        """Whether ``value`` is valid for argument ``name`` of ``tool`` (Draft 2020-12)."""
        key = (tool.name, name)
        validator = self._validators.get(key)
        if validator is None:
            schema = tool.parameters.get("properties", {}).get(name, {})
            # evolved from the tool's whole schema, so a $ref into its $defs resolves
            root = reference_validator(dict(tool.parameters), formats=False)
            validator = root.evolve(schema=schema)
            self._validators[key] = validator
        return bool(validator.is_valid(value))

    def _fits_argument(self, tool: Tool, name: str) -> Callable[[Any], bool]:
        return lambda value: self.fits(tool, name, value)

    def free_arguments(self, tool: Tool, fixed: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
        """Schema-drawn values for every argument not in ``fixed`` (required ones always,
        optional ones sometimes), each re-validated under Draft 2020-12."""
        key = (tool.name, tuple(sorted(fixed)))
        strategy = self._free.get(key)
        if strategy is None:
            properties: Mapping[str, Any] = tool.parameters.get("properties", {})
            required = set(tool.parameters.get("required", ()))
            leaves: dict[str, st.SearchStrategy[Any]] = {
                name: schema_values(schema, tool.parameters).filter(self._fits_argument(tool, name))
                for name, schema in sorted(properties.items())
                if name not in fixed and schema is not False
            }
            strategy = st.fixed_dictionaries(
                {n: s for n, s in leaves.items() if n in required},
                optional={n: s for n, s in leaves.items() if n not in required},
            )
            self._free[key] = strategy
        return strategy

    def fixed_arguments(self, tool: Tool, order: Order, key: str) -> dict[str, Any]:
        """The business-consistent values of one call: its resource, its own idempotency
        key and the order's shared values, wherever the schema accepts them."""
        properties: Mapping[str, Any] = tool.parameters.get("properties", {})
        fixed: dict[str, Any] = {}
        if tool.resource and self.fits(tool, tool.resource, order.id):
            fixed[tool.resource] = order.id
        if tool.idempotency_key and tool.idempotency_key not in fixed:
            value = _padded(key, properties.get(tool.idempotency_key, {}))
            if self.fits(tool, tool.idempotency_key, value):
                fixed[tool.idempotency_key] = value
        for name, value in order.values.items():
            if name in properties and name not in fixed and self.fits(tool, name, value):
                fixed[name] = value
        return fixed


def _currencies(flows: Sequence[tuple[Tool, ...]]) -> list[Any]:
    for flow in flows:
        for tool in flow:
            spec = tool.parameters.get("properties", {}).get("currency")
            if isinstance(spec, Mapping) and isinstance(spec.get("enum"), list) and spec["enum"]:
                return list(spec["enum"])
    return ["USD"]


def _padded(text: str, spec: Mapping[str, Any]) -> str:
    low = spec.get("minLength", 0) if isinstance(spec, Mapping) else 0
    return text + "0" * max(0, int(low) - len(text))
