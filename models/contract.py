"""The contract: tools (JSON Schema plus txcheck metadata) and workflows.

Loading and checking a contract file lives in ``txcheck.models.contract_loader``; this module holds
only the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

__all__ = [
    "ArgRef",
    "Compensation",
    "Contract",
    "Effect",
    "ReceiptRef",
    "Tool",
    "Workflow",
]

Effect = Literal["read", "write", "irreversible"]
EFFECTS: tuple[Effect, ...] = ("read", "write", "irreversible")


@attrs.frozen(kw_only=True)
class ArgRef:
    """A compensation argument taken from the original call's argument ``name``."""

    name: str


@attrs.frozen(kw_only=True)
class ReceiptRef:
    """A compensation argument taken from field ``field`` of the original call's receipt."""

    field: str


@attrs.frozen(kw_only=True)
class Compensation:
    """The call that undoes a tool's effect, as named by ``compensated_by``.

    ``arguments`` maps each argument to a literal, an ``ArgRef`` or a ``ReceiptRef``. When it
    is ``None`` (the plain string form), the compensation receives the original call's
    arguments that its own schema defines.
    """

    tool: str
    arguments: Mapping[str, Any] | None = None


@attrs.frozen(kw_only=True)
class Tool:
    """One tool: its argument schema and what running it does to the world."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    strict: bool = False
    vendor: Literal["openai", "anthropic"] = "openai"
    effect: Effect = "read"
    resource: str | None = None
    idempotency_key: str | None = None
    compensated_by: Compensation | None = None
    # Further x-txcheck switches (permission, confirmation, ...); off unless set.
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    @property
    def has_side_effect(self) -> bool:
        return self.effect != "read"

    def intent_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments that say what the operation does: all but a pure idempotency key.

        A key argument the schema requires is business identity (a refund is keyed by its
        charge id), so it stays part of the intent.
        """
        key = self.idempotency_key
        if key is None or key in self.parameters.get("required", ()):
            return dict(arguments)
        return {k: v for k, v in arguments.items() if k != key}


@attrs.frozen(kw_only=True)
class Workflow:
    """An ordered list of tool names that together make one business operation."""

    name: str
    steps: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Contract:
    """A set of tools plus workflows. ``source`` names where it came from, for messages."""

    tools: Mapping[str, Tool] = attrs.field(eq=False)
    workflows: tuple[Workflow, ...] = ()
    source: str = "<contract>"
    document: Mapping[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    def tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def workflows_with(self, tool_name: str) -> tuple[Workflow, ...]:
        return tuple(w for w in self.workflows if tool_name in w.steps)

    def compensation_tools(self) -> frozenset[str]:
        return frozenset(
            t.compensated_by.tool for t in self.tools.values() if t.compensated_by is not None
        )
