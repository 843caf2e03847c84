"""What a tau2-bench tool does, as ``x-txcheck``: from tau2's own tool types.

tau2-bench marks each tool of a domain with a ``ToolType`` (``@is_tool(ToolType.WRITE)``
in its code): ``read`` and ``write`` say whether the tool changes the domain's database;
``think`` and ``generic`` tools (``calculate``, ``transfer_to_human_agents``) change
nothing in it. So:

- ``read`` -> ``effect: read``;
- ``write`` -> ``effect: write`` with ``resource`` the tool's identifier arguments: every
  argument named ``id`` or ending in ``_id`` (``reservation_id``, ``user_id``,
  ``order_id``, ``payment_method_id``, ``customer_id``, ``line_id``): two writes conflict
  when they name the same reservation, order, user or payment method;
- ``think`` and ``generic`` -> ``effect: read`` (a documented choice: tau2's final
  database, which decides its outcome, is the same with or without them).

tau2's tools take no idempotency key, and a repeat of the same write is a second effect in
tau2's database (two bookings): such a repeat stays a ``duplicate_side_effect``.

Order: tau2 checks that each expected action was taken, in any order, and compares the
final database. When two expected writes name the same identifier value, their order can
change that database (a flight changed, then its cabin), so the case asks for the writes in
order (``"ordered": "writes"``); reads may come anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TOOL_TYPES", "annotate", "id_arguments", "tool_name", "writes_conflict"]

TOOL_TYPES = ("read", "write", "think", "generic")


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = tool.get("function")
    return inner if isinstance(inner, dict) else tool


def tool_name(tool: Any) -> str | None:
    """The name of an OpenAI or Anthropic tool, or ``None``."""
    if not isinstance(tool, dict):
        return None
    name = _function(tool).get("name")
    return name if isinstance(name, str) else None


def id_arguments(tool: Mapping[str, Any]) -> list[str]:
    """The tool's identifier arguments (``id`` or ``*_id``), sorted."""
    function = _function(tool)
    schema = function.get("parameters", function.get("input_schema"))
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    return sorted(name for name in props if name == "id" or name.endswith("_id"))


def annotate(tool: Mapping[str, Any], tool_type: str) -> dict[str, Any]:
    """``tool`` with the ``x-txcheck`` its tau2 tool type gives (an existing one wins)."""
    if tool_type not in TOOL_TYPES:
        raise ValueError(f"tool type must be one of {', '.join(TOOL_TYPES)} (got {tool_type!r})")
    out = dict(tool)
    if "x-txcheck" in out:
        return out
    if tool_type == "write":
        resources = id_arguments(tool)
        spec: dict[str, Any] = {"effect": "write"}
        if resources:
            spec["resource"] = resources[0] if len(resources) == 1 else resources
        out["x-txcheck"] = spec
    else:
        out["x-txcheck"] = {"effect": "read"}
    return out


def writes_conflict(
    calls: Sequence[tuple[str, Mapping[str, Any]]], tools: Mapping[str, Mapping[str, Any]]
) -> bool:
    """Whether two of ``calls`` are writes that name the same identifier value."""
    seen: set[tuple[str, str]] = set()
    for name, arguments in calls:
        spec = tools.get(name, {}).get("x-txcheck", {})
        if spec.get("effect", "write") == "read":
            continue
        resource = spec.get("resource", [])
        names = [resource] if isinstance(resource, str) else list(resource)
        values = {
            (arg, repr(arguments[arg]))
            for arg in names
            if arg in arguments and isinstance(arguments[arg], (str, int))
        }
        if values & seen:
            return True
        seen |= values
    return False
