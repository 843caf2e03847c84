"""Generic services: behaviour for every annotated tool that no registered service serves.

A contract's ``x-txcheck`` annotations (or MCP hints) say what a tool does, and that is
enough to model it without writing Python:

- a **write** or **irreversible** call commits an *effect record* on its resources (the
  values of its ``resource`` arguments), with an event; an irreversible one is recorded as
  such. Through the world it gets the same idempotency store, two-phase calls and faults as
  any service: a retry under the same key replays, a new key commits a second effect.
- a tool marked ``idempotent`` (MCP ``idempotentHint``) that repeats an applied effect with
  the same arguments answers that effect's receipt and commits nothing new.
- a write's **receipt** carries its effect id, its resource values and every field a
  compensation takes from it (``{"$receipt": "hold_id"}``): a value made to fit the
  undo's schema for that argument (``^hold_[0-9]+$`` gives ``hold_1``), stable and unique
  per effect. A field no such value can be made for is refused before any run
  (``receipt_problem``): a saga that can never run is an error, not a MANUAL pass.
- a **compensation** (a tool some tool names in ``compensated_by``) marks the forward
  effect it undoes as undone: the most recent applied effect of a tool it compensates whose
  effect id or receipt field one of its arguments names, or whose resource values its
  arguments share. An irreversible effect cannot be undone (a permanent rejection). A
  compensation with nothing to undo commits a no-op, so a retried undo is harmless.
- a **read** answers from the durable effect log: the effects on its resources.

Registered services (checkout, a user's own) always take precedence. A tool with neither a
service nor an annotation has no behaviour, and runs refuse to start (docs/contract.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from txcheck.models.canonical import canonical_json, normalize
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import Contract, ReceiptRef, Tool
from txcheck.models.plan.schema_example import NO_VALUE, SchemaValues
from txcheck.models.sim.services import Committed, Handler, Rejected, ServiceSet

__all__ = ["GENERIC", "ReceiptField", "generic_services", "receipt_fields", "receipt_problem"]

GENERIC = "generic"
"""The name of the generic service set (and of its part of the world's state)."""


@attrs.frozen(kw_only=True)
class ReceiptField:
    """A field a compensation takes from a tool's receipt, and the schemas its value must
    fit: the argument of each undo that takes it (``SchemaValues`` of that undo's root)."""

    name: str
    needs: tuple[tuple[str, SchemaValues, Any], ...] = attrs.field(eq=False)
    """(undo tool, its schema values, the argument's schema), one per undo that takes it."""

    def value(self, number: int, avoid: set[Any]) -> Any:
        """The field's value for the ``number``-th effect: its effect id when every undo
        accepts that, else the first made value they all accept (``NO_VALUE``: none)."""
        preferred = [f"eff_{number}"]
        for _, values, schema in self.needs:
            found = values.first(schema, preferred=preferred, index=number, avoid=avoid)
            if found is NO_VALUE:
                return NO_VALUE
            if all(v.accepts(s, found) for _, v, s in self.needs):
                return found
            preferred.append(found)
        return NO_VALUE


def receipt_fields(contract: Contract) -> dict[str, tuple[ReceiptField, ...]]:
    """Each tool's receipt fields that its compensation takes (``{"$receipt": FIELD}``)."""
    return _FIELDS((contract,), lambda: _receipt_fields(contract))


_FIELDS: IdentityMemo[dict[str, tuple[ReceiptField, ...]]] = IdentityMemo(limit=64)


def _receipt_fields(contract: Contract) -> dict[str, tuple[ReceiptField, ...]]:
    found: dict[str, dict[str, list[tuple[str, SchemaValues, Any]]]] = {}
    for tool in contract.tools.values():
        spec = tool.compensated_by
        undo = contract.tool(spec.tool) if spec is not None else None
        if spec is None or spec.arguments is None or undo is None:
            continue
        properties = undo.parameters.get("properties", {})
        for argument, ref in spec.arguments.items():
            if isinstance(ref, ReceiptRef):
                schema = properties.get(argument, {}) if isinstance(properties, Mapping) else {}
                values = SchemaValues(undo.parameters)
                found.setdefault(tool.name, {}).setdefault(ref.field, []).append(
                    (undo.name, values, schema)
                )
    return {
        name: tuple(ReceiptField(name=f, needs=tuple(n)) for f, n in sorted(fields.items()))
        for name, fields in found.items()
    }


def receipt_problem(contract: Contract, served: frozenset[str]) -> str | None:
    """Why generic behaviour cannot give a tool's receipt a field its compensation takes
    (no value fits the undo's schema for it), or None. Tools a registered service serves
    are that service's business."""
    for name, fields in sorted(receipt_fields(contract).items()):
        if name in served:
            continue
        for field in fields:
            if field.value(1, set()) is NO_VALUE:
                undos = ", ".join(sorted({undo for undo, _, _ in field.needs}))
                return (
                    f"tool {name!r} has no service, and its compensation ({undos}) takes "
                    f"{field.name!r} from its receipt ($receipt), but no value txcheck can "
                    f"make fits the schema of that argument: the saga could never run; "
                    f"register a service for {name!r} (--services) or loosen the schema"
                )
    return None


def generic_services(contract: Contract, served: set[str]) -> ServiceSet | None:
    """Handlers for the contract's annotated tools that ``served`` does not cover, or None
    when there are none (built once per contract and set of served tools)."""
    key = frozenset(served)
    table = _BUILT((contract,), dict)
    if key not in table:
        table[key] = _generic_services(contract, key)
    return table[key]


_BUILT: IdentityMemo[dict[frozenset[str], ServiceSet | None]] = IdentityMemo(limit=64)


def _generic_services(contract: Contract, served: frozenset[str]) -> ServiceSet | None:
    undoes: dict[str, list[str]] = {}
    for tool in contract.tools.values():
        if tool.compensated_by is not None:
            undoes.setdefault(tool.compensated_by.tool, []).append(tool.name)
    fields = receipt_fields(contract)
    handlers: dict[str, Handler] = {}
    for name, tool in sorted(contract.tools.items()):
        if tool.annotated and name not in served:
            handlers[name] = _handler(tool, tuple(undoes.get(name, ())), fields.get(name, ()))
    if not handlers:
        return None
    return ServiceSet(name=GENERIC, initial_state=_empty, handlers=handlers)


def _empty(document: Mapping[str, Any]) -> dict[str, Any]:
    return {"effects": {}, "count": 0}


def _resource_values(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {name: arguments[name] for name in tool.resources if name in arguments}


def _intent(tool: Tool, arguments: Mapping[str, Any]) -> str:
    return canonical_json(normalize(tool.intent_arguments(arguments)))


def _handler(tool: Tool, compensates: tuple[str, ...], fields: tuple[ReceiptField, ...]) -> Handler:
    if not tool.has_side_effect:
        return lambda state, arguments: _read(tool, state, arguments)
    return lambda state, arguments: _write(tool, compensates, fields, state, arguments)


def _read(tool: Tool, state: dict[str, Any], arguments: Mapping[str, Any]) -> Committed:
    wanted = _resource_values(tool, arguments)
    found = [
        {"effect_id": effect_id, "tool": effect["tool"], "status": effect["status"]}
        for effect_id, effect in state["effects"].items()
        if _shares(effect["resource"], wanted)
    ]
    return Committed(receipt={"tool": tool.name, **wanted, "effects": found})


def _shares(resource: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether an effect's resource values agree with ``wanted`` on every argument they
    both name, and there is at least one (or ``wanted`` names none: a read of everything)."""
    common = [name for name in wanted if name in resource]
    if not wanted:
        return True
    return bool(common) and all(normalize(resource[n]) == normalize(wanted[n]) for n in common)


def _write(
    tool: Tool,
    compensates: tuple[str, ...],
    fields: tuple[ReceiptField, ...],
    state: dict[str, Any],
    arguments: Mapping[str, Any],
) -> Committed | Rejected:
    effects: dict[str, dict[str, Any]] = state["effects"]
    intent = _intent(tool, arguments)
    if tool.idempotent:
        for effect_id, effect in effects.items():
            same = effect["tool"] == tool.name and effect["intent"] == intent
            if same and effect["status"] == "applied":
                return Committed(receipt=_receipt(tool, effect_id, effect))
    target = _undo_target(compensates, effects, arguments) if compensates else None
    if target is not None and effects[target]["irreversible"]:
        forward = effects[target]["tool"]
        return Rejected(
            code="irreversible",
            message=f"{forward} effect {target} is irreversible: it cannot be undone",
        )
    state["count"] += 1
    effect_id = f"eff_{state['count']}"
    effects[effect_id] = {
        "tool": tool.name,
        "resource": _resource_values(tool, arguments),
        "intent": intent,
        "status": "applied",
        "irreversible": tool.effect == "irreversible",
    }
    if fields:
        used = {v for e in effects.values() for v in e.get("fields", {}).values()}
        made = {f.name: f.value(state["count"], used) for f in fields}
        effects[effect_id]["fields"] = {k: v for k, v in made.items() if v is not NO_VALUE}
    events: tuple[Mapping[str, Any], ...] = (
        {"type": f"{tool.name}.applied", "effect_id": effect_id},
    )
    if compensates:
        effects[effect_id]["undoes"] = target
        if target is not None:
            effects[target]["status"] = "undone"
            events = (*events, {"type": f"{effects[target]['tool']}.undone", "effect_id": target})
    return Committed(receipt=_receipt(tool, effect_id, effects[effect_id]), events=events)


def _receipt(tool: Tool, effect_id: str, effect: Mapping[str, Any]) -> dict[str, Any]:
    receipt = {**effect.get("fields", {}), "effect_id": effect_id, "tool": tool.name}
    receipt.update(effect["resource"])
    if "undoes" in effect:
        receipt["undoes"] = effect["undoes"]
    return receipt


def _undo_target(
    compensates: tuple[str, ...],
    effects: Mapping[str, Mapping[str, Any]],
    arguments: Mapping[str, Any],
) -> str | None:
    """The applied effect this compensation undoes: the latest of a tool it compensates
    that one of its arguments names by effect id or receipt field, else whose resource
    values it shares."""
    candidates = [
        (effect_id, effect)
        for effect_id, effect in effects.items()
        if effect["tool"] in compensates and effect["status"] == "applied"
    ]
    named = {canonical_json(normalize(v)) for v in arguments.values()}
    for effect_id, effect in reversed(candidates):
        given = [effect_id, *effect.get("fields", {}).values()]
        if any(canonical_json(normalize(v)) in named for v in given):
            return str(effect_id)
    for effect_id, effect in reversed(candidates):
        if _shares(effect["resource"], arguments) and effect["resource"]:
            return str(effect_id)
    return None
