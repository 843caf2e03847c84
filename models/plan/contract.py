"""The contract: tools (JSON Schema plus txcheck metadata) and workflows.

Loading and checking a contract file lives in ``models.contract_loader``; this module holds
only the values. docs/contract.md describes the file format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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

DeclaredBy = Literal["x-txcheck", "mcp", "default"]
"""Where a tool's effect comes from: its ``x-txcheck`` object, MCP annotations, or neither
(then it is a write with unknown idempotency: fail closed)."""


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
    arguments that its own schema defines, by name. Either way its idempotency key is
    derived from the original call's key, never copied. ``unmapped`` lists the required
    arguments nothing fills: the compensation cannot run until the contract gives them.
    """

    tool: str
    arguments: Mapping[str, Any] | None = None
    unmapped: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Tool:
    """One tool: its argument schema and what running it does to the world."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    strict: bool = False
    vendor: Literal["openai", "anthropic", "mcp"] = "openai"
    effect: Effect = "read"
    declared_by: DeclaredBy = "x-txcheck"
    resources: tuple[str, ...] = ()
    """The arguments naming what the call acts on (an order, a user and a reservation)."""
    idempotency_key: str | None = None
    idempotent: bool = False
    """Repeating the call with the same arguments has no further effect (MCP's
    ``idempotentHint``): a repeat is not a second side effect."""
    repeatable: bool = False
    """Identical repeated calls are intended (a device reboot), not a duplicated effect."""
    compensated_by: Compensation | None = None
    debits: str | None = None
    """The argument holding the amount the call takes out (a hold, a withdrawal): with
    ``credits``, what the generic conservation invariant adds up."""
    credits: str | None = None
    """The argument holding the amount the call puts in (a credit, a deposit)."""
    examples: Mapping[str, tuple[Any, ...]] = attrs.field(factory=dict, eq=False)
    """Argument values the contract offers for generated plans (``x-txcheck`` examples)."""
    schema_path: str = ""
    """Where the tool's argument schema is in the contract file (a JSON path), for messages."""
    # Further x-txcheck switches (permission, confirmation, ...); off unless set.
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    @property
    def has_side_effect(self) -> bool:
        return self.effect != "read"

    @property
    def compensable(self) -> bool:
        """Whether a saga can undo this call: a write with a compensation. An irreversible
        call, or a write without one, is a pivot: once it commits, the steps before it
        on its resource must not be undone."""
        return self.effect == "write" and self.compensated_by is not None

    @property
    def resource(self) -> str | None:
        """The first resource argument (the one traces and reports name), or None."""
        return self.resources[0] if self.resources else None

    @property
    def annotated(self) -> bool:
        """Whether the contract says what the tool does (x-txcheck or MCP annotations)."""
        return self.declared_by != "default"

    def intent_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments that say what the operation does: all but a pure idempotency key.

        A key argument that is also one of the tool's resources is business identity (a
        refund keyed by its charge id), so it stays part of the intent. Whether the schema
        requires the key says nothing: strict schemas require every argument.
        """
        key = self.idempotency_key
        if key is None or key in self.resources:
            return dict(arguments)
        return {k: v for k, v in arguments.items() if k != key}


@attrs.frozen(kw_only=True)
class Workflow:
    """An ordered list of tool names that together make one business operation."""

    name: str
    steps: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Contract:
    """A set of tools plus workflows. ``source`` names where it came from, for messages;
    ``warnings`` are the loader's (one line each: a tool treated as a write because nothing
    says what it does, a compensation that cannot fill a required argument, ...)."""

    tools: Mapping[str, Tool] = attrs.field(eq=False)
    workflows: tuple[Workflow, ...] = ()
    source: str = "<contract>"
    document: Mapping[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    warnings: tuple[str, ...] = attrs.field(default=(), eq=False)
    line_of: Callable[[str | None], int | None] | None = attrs.field(
        default=None, eq=False, repr=False
    )
    """The line of a JSON path in the contract file (None when it was not read from one)."""

    def line(self, path: str | None) -> int | None:
        """The line of ``path`` in the contract file, when known."""
        return None if self.line_of is None else self.line_of(path)

    def tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def workflows_with(self, tool_name: str) -> tuple[Workflow, ...]:
        return tuple(w for w in self.workflows if tool_name in w.steps)

    def compensation_tools(self) -> frozenset[str]:
        return frozenset(
            t.compensated_by.tool for t in self.tools.values() if t.compensated_by is not None
        )
