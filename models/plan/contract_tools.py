"""One tool of a contract: its vendor form, its schema and what it does.

Three forms are read: an OpenAI function tool, an Anthropic tool and an MCP tool
(``inputSchema``, ``annotations``). What the tool does comes, in this order, from its
``x-txcheck`` object, from MCP annotations, or from neither:

- MCP: ``readOnlyHint: true`` is a read; otherwise ``destructiveHint`` (MCP's default:
  true) makes it irreversible, ``false`` a write; ``idempotentHint: true`` says a repeat
  with the same arguments has no further effect.
- Neither: the tool is a **write with unknown idempotency** (fail closed). An argument
  named ``idempotency_key`` (or ``idempotencyKey``) is taken as its key. The loader warns.

``x-txcheck`` keys: ``effect``, ``resource`` (an argument, or a list of them),
``idempotency_key``, ``compensated_by``, ``idempotent``, ``repeatable``, ``debits`` /
``credits`` (the argument holding the amount moved) and ``examples`` (argument values for
generated plans) (docs/contract.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from txcheck.models.json_path import describe, format_path
from txcheck.models.plan.contract import EFFECTS, DeclaredBy, Effect, Tool
from txcheck.models.plan.contract_checks import (
    CONTRACT_DOC,
    Path,
    fail,
    got,
    hint,
    known_keys,
    need_object,
)
from txcheck.models.plan.tool_schema import schema_problem

__all__ = [
    "EXTENSION_KEYS",
    "INFERRED_KEYS",
    "PendingTool",
    "argument_name",
    "read_tool",
    "tool_properties",
]

EXTENSION_KEYS = frozenset(
    {
        "effect",
        "resource",
        "idempotency_key",
        "compensated_by",
        "idempotent",
        "repeatable",
        "debits",
        "credits",
        "examples",
    }
)
INFERRED_KEYS = ("idempotency_key", "idempotencyKey")
"""Argument names taken as the idempotency key of a tool nothing describes."""

_OPENAI_KEYS = frozenset({"type", "function", "x-txcheck"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
_ANTHROPIC_KEYS = frozenset(
    {"type", "name", "description", "input_schema", "strict", "cache_control", "x-txcheck"}
)
_MCP_KEYS = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"}
    | {"icons", "x-txcheck"}
)
_MCP_HINTS = frozenset(
    {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
)

Warn = Callable[[str], None]


@attrs.frozen(kw_only=True)
class PendingTool:
    """A tool read from the contract; its compensation is resolved once all are known."""

    tool: Tool
    path: Path
    compensation: Any  # the raw ``compensated_by`` value


def read_tool(raw: Any, path: Path, warn: Warn) -> PendingTool:
    """Check one tool definition and build its ``Tool``; ``warn`` gets the warnings."""
    obj = need_object(raw, path, "a tool")
    if "function" in obj or obj.get("type") == "function":
        spec, spec_path, vendor, schema = _openai(obj, path)
    elif "inputSchema" in obj:
        spec, spec_path, vendor, schema = _mcp(obj, path)
    elif "name" in obj or "input_schema" in obj:
        spec, spec_path, vendor, schema = _anthropic(obj, path)
    else:
        raise fail(
            path,
            'a tool must be an OpenAI function tool {"type": "function", "function": '
            '{...}}, an Anthropic tool {"name", "input_schema"} or an MCP tool {"name", '
            f'"inputSchema"}} (got {describe(obj)}; see {CONTRACT_DOC})',
        )
    name = _name(spec.get("name"), (*spec_path, "name"), "name" in spec)
    description = spec.get("description", "")
    if not isinstance(description, str):
        raise fail(
            (*spec_path, "description"),
            f"'description' must be a string (got {describe(description)})",
        )
    strict = spec.get("strict", False)
    if not isinstance(strict, bool):
        raise fail(
            (*spec_path, "strict"), f"'strict' must be true or false (got {describe(strict)})"
        )
    schema_key = {"openai": "parameters", "anthropic": "input_schema", "mcp": "inputSchema"}[vendor]
    tool = Tool(
        name=name,
        description=description,
        parameters=schema,
        strict=strict,
        vendor=vendor,
        schema_path=format_path((*spec_path, schema_key)),
    )
    hints = _hints(obj, path) if vendor == "mcp" else None
    extension = obj.get("x-txcheck")
    if extension is None:
        return PendingTool(tool=_undescribed(tool, hints, warn), path=path, compensation=None)
    return _extension(tool, extension, path, hints=hints, warn=warn)


def _openai(obj: dict[str, Any], path: Path) -> tuple[dict[str, Any], Path, Any, Any]:
    known_keys(obj, _OPENAI_KEYS, path, "an OpenAI tool")
    if obj.get("type") != "function":
        raise fail((*path, "type"), f"'type' must be 'function' (got {got(obj, 'type')})")
    if "function" not in obj:
        raise fail(path, "the OpenAI tool has no 'function'")
    spec_path = (*path, "function")
    spec = need_object(obj["function"], spec_path, "'function'")
    known_keys(spec, _FUNCTION_KEYS, spec_path, "'function'")
    schema = spec.get("parameters", {"type": "object", "properties": {}})
    _check_schema(schema, (*spec_path, "parameters"), "parameters")
    return spec, spec_path, "openai", schema


def _anthropic(obj: dict[str, Any], path: Path) -> tuple[dict[str, Any], Path, Any, Any]:
    if "type" in obj and obj["type"] != "custom":
        raise fail(
            (*path, "type"),
            f"unsupported tool type {obj['type']!r} (txcheck reads OpenAI function tools, "
            "Anthropic custom tools and MCP tools)",
        )
    known_keys(obj, _ANTHROPIC_KEYS, path, "an Anthropic tool")
    if "input_schema" not in obj:
        raise fail(path, "the tool has no 'input_schema' schema")
    _check_schema(obj["input_schema"], (*path, "input_schema"), "input_schema")
    return obj, path, "anthropic", obj["input_schema"]


def _mcp(obj: dict[str, Any], path: Path) -> tuple[dict[str, Any], Path, Any, Any]:
    known_keys(obj, _MCP_KEYS, path, "an MCP tool")
    _check_schema(obj["inputSchema"], (*path, "inputSchema"), "inputSchema")
    return obj, path, "mcp", obj["inputSchema"]


def _hints(obj: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """An MCP tool's behaviour hints, checked, or None when it gives none."""
    if "annotations" not in obj:
        return None
    hints_path = (*path, "annotations")
    hints = need_object(obj["annotations"], hints_path, "'annotations'")
    known_keys(hints, _MCP_HINTS, hints_path, "MCP 'annotations'")
    for key, value in hints.items():
        if key != "title" and not isinstance(value, bool):
            raise fail((*hints_path, key), f"{key!r} must be true or false (got {describe(value)})")
    return hints


def _mcp_effect(hints: Mapping[str, Any]) -> tuple[Effect, bool]:
    """(effect, idempotent) from MCP hints, with MCP's defaults for the missing ones."""
    if hints.get("readOnlyHint", False):
        return "read", True
    effect: Effect = "irreversible" if hints.get("destructiveHint", True) else "write"
    return effect, bool(hints.get("idempotentHint", False))


def _undescribed(tool: Tool, hints: Mapping[str, Any] | None, warn: Warn) -> Tool:
    """A tool without ``x-txcheck``: MCP hints, else a write with unknown idempotency."""
    key = _inferred_key(tool)
    if hints is not None:
        effect, idempotent = _mcp_effect(hints)
        return attrs.evolve(
            tool,
            effect=effect,
            idempotent=idempotent,
            declared_by="mcp",
            idempotency_key=key if effect != "read" else None,
        )
    keyed = f", keyed by its {key!r} argument" if key else " with unknown idempotency"
    warn(
        f"tool {tool.name!r} says nothing about what it does (no 'x-txcheck', no MCP "
        f"'annotations'): treated as a write{keyed}; describe it in 'x-txcheck' "
        f"({CONTRACT_DOC})"
    )
    return attrs.evolve(tool, effect="write", declared_by="default", idempotency_key=key)


def _inferred_key(tool: Tool) -> str | None:
    properties = tool_properties(tool)
    return next((name for name in INFERRED_KEYS if name in properties), None)


def _extension(
    tool: Tool,
    raw: Any,
    tool_path: Path,
    *,
    hints: Mapping[str, Any] | None,
    warn: Warn,
) -> PendingTool:
    path = (*tool_path, "x-txcheck")
    ext = need_object(raw, path, "'x-txcheck'")
    known_keys(ext, EXTENSION_KEYS, path, "'x-txcheck'")
    declared: DeclaredBy = "x-txcheck"
    idempotent = False
    if "effect" in ext:
        effect = ext["effect"]
        if effect not in EFFECTS:
            raise fail(
                (*path, "effect"),
                f"'effect' must be 'read', 'write' or 'irreversible' (got {describe(effect)})",
            )
    elif hints is not None:
        effect, idempotent = _mcp_effect(hints)
        declared = "mcp"
    else:
        effect = "write"
        warn(
            f"tool {tool.name!r}: 'x-txcheck' gives no 'effect': treated as a write "
            f"({CONTRACT_DOC})"
        )
    flags = {}
    for flag in ("idempotent", "repeatable"):
        if flag in ext:
            if not isinstance(ext[flag], bool):
                problem = f"{flag!r} must be true or false (got {describe(ext[flag])})"
                raise fail((*path, flag), problem)
            flags[flag] = ext[flag]
    resources = (
        _resources(tool, ext.get("resource"), (*path, "resource")) if "resource" in ext else ()
    )
    key: str | None = None
    if "idempotency_key" in ext:
        key = argument_name(
            tool, ext["idempotency_key"], (*path, "idempotency_key"), "'idempotency_key'"
        )
    if "compensated_by" in ext and effect == "read":
        raise fail(
            (*path, "compensated_by"),
            f"tool {tool.name!r} has effect 'read': there is nothing to compensate",
        )
    amounts: dict[str, str | None] = {}
    for side in ("debits", "credits"):
        if side in ext:
            if effect == "read":
                raise fail(
                    (*path, side), f"tool {tool.name!r} has effect 'read': it moves no amount"
                )
            amounts[side] = argument_name(tool, ext[side], (*path, side), repr(side))
    if amounts.get("debits") is not None and amounts.get("credits") is not None:
        raise fail(
            (*path, "credits"),
            f"tool {tool.name!r} both debits and credits: give one of them (a transfer is "
            "two steps, a debit and a credit)",
        )
    examples = _examples(tool, ext["examples"], (*path, "examples")) if "examples" in ext else {}
    return PendingTool(
        tool=attrs.evolve(
            tool,
            effect=effect,
            declared_by=declared,
            resources=resources,
            idempotency_key=key,
            idempotent=flags.get("idempotent", idempotent),
            repeatable=flags.get("repeatable", False),
            debits=amounts.get("debits"),
            credits=amounts.get("credits"),
            examples=examples,
        ),
        path=tool_path,
        compensation=ext.get("compensated_by"),
    )


def _examples(tool: Tool, value: Any, path: Path) -> dict[str, tuple[Any, ...]]:
    """``examples``: argument name -> a non-empty list of values to use in generated
    plans (each must fit the argument's schema: checked when plans are made)."""
    table = need_object(value, path, "'examples'")
    found: dict[str, tuple[Any, ...]] = {}
    for name, values in table.items():
        argument_name(tool, name, (*path, name), "'examples'")
        if not isinstance(values, list) or not values:
            raise fail(
                (*path, name),
                f"'examples' must map {name!r} to a non-empty list of values "
                f"(got {describe(values)})",
            )
        found[name] = tuple(values)
    return found


def _resources(tool: Tool, value: Any, path: Path) -> tuple[str, ...]:
    """``resource``: one argument, or a non-empty list of distinct arguments."""
    if isinstance(value, list):
        if not value:
            raise fail(path, "'resource' must name at least one argument")
        names = tuple(argument_name(tool, v, (*path, i), "'resource'") for i, v in enumerate(value))
        if len(set(names)) != len(names):
            raise fail(path, f"'resource' lists an argument twice (got {describe(value)})")
        return names
    return (argument_name(tool, value, path, "'resource'"),)


def argument_name(tool: Tool, value: Any, path: Path, what: str) -> str:
    """``value`` must name an argument in ``tool``'s top-level ``properties``."""
    if not isinstance(value, str):
        raise fail(path, f"{what} must name an argument (got {describe(value)})")
    props = tool_properties(tool)
    if value not in props:
        defined = ", ".join(repr(p) for p in props) or "none"
        raise fail(
            path,
            f"{what} names argument {value!r}, which tool {tool.name!r} does not define in its "
            f"schema's 'properties' (defined: {defined}){hint(value, props)}",
        )
    return value


def tool_properties(tool: Tool) -> Mapping[str, Any]:
    props = tool.parameters.get("properties", {})
    return props if isinstance(props, dict) else {}


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _name(value: Any, path: Path, present: bool) -> str:
    if not present:
        raise fail(path[:-1], "the tool has no 'name'")
    if not isinstance(value, str) or not value:
        raise fail(path, f"'name' must be a non-empty string (got {describe(value)})")
    if len(value) > 128 or _TOOL_NAME.fullmatch(value) is None:
        raise fail(path, f"tool name {value!r} must be 1-128 letters, digits, '_', '-' or '.'")
    return value


def _check_schema(schema: Any, path: Path, key: str) -> None:
    if not isinstance(schema, dict):
        raise fail(path, f"{key!r} must be a JSON Schema object (got {describe(schema)})")
    problem = schema_problem(schema)
    if problem is not None:
        inner, text = problem
        raise fail((*path, *inner), f"{key!r} {text}")


Vendor = Literal["openai", "anthropic", "mcp"]
