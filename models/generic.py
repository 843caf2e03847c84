"""Generic services: behaviour for every annotated tool that no registered service serves.

A contract's ``x-txcheck`` annotations (or MCP hints) say what a tool does, and that is
enough to model it without writing Python:

- a **write** or **irreversible** call commits an *effect record* on its resources (the
  values of its ``resource`` arguments), with an event; an irreversible one is recorded as
  such. Through the world it gets the same idempotency store, two-phase calls and faults as
  any service: a retry under the same key replays, a new key commits a second effect.
- a tool marked ``idempotent`` (MCP ``idempotentHint``) that repeats an applied effect with
  the same arguments answers that effect's receipt and commits nothing new.
- a **compensation** (a tool some tool names in ``compensated_by``) marks the forward
  effect it undoes as undone: the most recent applied effect of a tool it compensates whose
  effect id one of its arguments names, or whose resource values its arguments share. An
  irreversible effect cannot be undone (a permanent rejection). A compensation with nothing
  to undo commits a no-op, so a retried undo is harmless.
- a **read** answers from the durable effect log: the effects on its resources.

Registered services (checkout, a user's own) always take precedence. A tool with neither a
service nor an annotation has no behaviour, and runs refuse to start (docs/contract.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from txcheck.models.canonical import canonical_json, normalize
from txcheck.models.contract import Contract, Tool
from txcheck.models.services import Committed, Handler, Rejected, ServiceSet

__all__ = ["GENERIC", "generic_services"]

GENERIC = "generic"
"""The name of the generic service set (and of its part of the world's state)."""


def generic_services(contract: Contract, served: set[str]) -> ServiceSet | None:
    """Handlers for the contract's annotated tools that ``served`` does not cover, or None
    when there are none."""
    undoes: dict[str, list[str]] = {}
    for tool in contract.tools.values():
        if tool.compensated_by is not None:
            undoes.setdefault(tool.compensated_by.tool, []).append(tool.name)
    handlers: dict[str, Handler] = {}
    for name, tool in sorted(contract.tools.items()):
        if tool.annotated and name not in served:
            handlers[name] = _handler(tool, tuple(undoes.get(name, ())))
    if not handlers:
        return None
    return ServiceSet(name=GENERIC, initial_state=_empty, handlers=handlers)


def _empty(document: Mapping[str, Any]) -> dict[str, Any]:
    return {"effects": {}, "count": 0}


def _resource_values(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {name: arguments[name] for name in tool.resources if name in arguments}


def _intent(tool: Tool, arguments: Mapping[str, Any]) -> str:
    return canonical_json(normalize(tool.intent_arguments(arguments)))


def _handler(tool: Tool, compensates: tuple[str, ...]) -> Handler:
    if not tool.has_side_effect:
        return lambda state, arguments: _read(tool, state, arguments)
    return lambda state, arguments: _write(tool, compensates, state, arguments)


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
    tool: Tool, compensates: tuple[str, ...], state: dict[str, Any], arguments: Mapping[str, Any]
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
    receipt = {"effect_id": effect_id, "tool": tool.name, **effect["resource"]}
    if "undoes" in effect:
        receipt["undoes"] = effect["undoes"]
    return receipt


def _undo_target(
    compensates: tuple[str, ...],
    effects: Mapping[str, Mapping[str, Any]],
    arguments: Mapping[str, Any],
) -> str | None:
    """The applied effect this compensation undoes: the latest of a tool it compensates
    that one of its arguments names by effect id, else whose resource values it shares."""
    candidates = [
        (effect_id, effect)
        for effect_id, effect in effects.items()
        if effect["tool"] in compensates and effect["status"] == "applied"
    ]
    named = {str(v) for v in arguments.values() if isinstance(v, str)}
    for effect_id, _ in reversed(candidates):
        if effect_id in named:
            return str(effect_id)
    for effect_id, effect in reversed(candidates):
        if _shares(effect["resource"], arguments) and effect["resource"]:
            return str(effect_id)
    return None
