"""``compensated_by``: the call that undoes a tool's effect, resolved once every tool is known.

Two forms. The plain string names the undo tool, whose arguments are taken from the
original call's by name. The object form ``{"tool": ..., "arguments": {...}}`` gives each
argument as a literal, ``{"$arg": NAME}`` (an argument of the original call) or
``{"$receipt": FIELD}`` (a field of its receipt). In both, the undo's idempotency key is
derived from the original call's key at run time, so it need not be given.

A required argument of the undo that nothing fills does not stop the contract from
loading: validating and scoring proposals never run a compensation. It is recorded in
``Compensation.unmapped`` with a warning; a run that would need the compensation refuses
to start (``txcheck explore`` and ``evaluate``, exit 2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from txcheck.models.json_path import describe
from txcheck.models.plan.contract import ArgRef, Compensation, ReceiptRef, Tool
from txcheck.models.plan.contract_checks import (
    CONTRACT_DOC,
    Path,
    fail,
    hint,
    known_keys,
    need_object,
)
from txcheck.models.plan.contract_tools import PendingTool, argument_name, tool_properties
from txcheck.models.plan.tool_schema import literal_problem

__all__ = ["with_compensation"]

Warn = Callable[[str], None]


def with_compensation(pending: PendingTool, tools: Mapping[str, Tool], warn: Warn) -> Tool:
    """``pending``'s tool with its ``compensated_by`` resolved against ``tools``."""
    raw = pending.compensation
    tool = pending.tool
    if raw is None:
        return tool
    path = (*pending.path, "x-txcheck", "compensated_by")
    if isinstance(raw, str):
        target, arguments, target_path = raw, None, path
    elif isinstance(raw, dict):
        known_keys(raw, frozenset({"tool", "arguments"}), path, "'compensated_by'")
        if "tool" not in raw:
            raise fail(path, "'compensated_by' has no 'tool'")
        target, target_path = raw["tool"], (*path, "tool")
        if not isinstance(target, str):
            raise fail(target_path, f"'tool' must be a tool name (got {describe(target)})")
        arguments = need_object(raw.get("arguments", {}), (*path, "arguments"), "'arguments'")
    else:
        raise fail(
            path,
            '\'compensated_by\' must be a tool name or {"tool": ..., "arguments": {...}} '
            f"(got {describe(raw)})",
        )
    if target not in tools:
        raise fail(
            target_path,
            f"'compensated_by' names tool {target!r}, which the contract does not define"
            f"{hint(target, tools)}",
        )
    undo = tools[target]
    values = None
    if arguments is None:
        filled = set(tool_properties(tool))
    else:
        values = {
            name: _value(tool, undo, name, value, (*path, "arguments", name))
            for name, value in arguments.items()
        }
        filled = set(values)
    required = [str(r) for r in undo.parameters.get("required", [])]
    unmapped = tuple(r for r in required if r not in filled and r != undo.idempotency_key)
    if unmapped:
        where = "its own arguments" if arguments is None else "'arguments'"
        warn(
            f"tool {tool.name!r}: compensation {target!r} requires "
            f"{', '.join(map(repr, unmapped))}, which {where} do not give; it cannot run "
            f'until the contract maps it in {{"tool": ..., "arguments": {{...}}}} '
            f"({CONTRACT_DOC})"
        )
    return attrs.evolve(
        tool, compensated_by=Compensation(tool=target, arguments=values, unmapped=unmapped)
    )


def _value(tool: Tool, undo: Tool, name: str, value: Any, path: Path) -> Any:
    props = tool_properties(undo)
    if name not in props:
        raise fail(
            path,
            f"compensation tool {undo.name!r} does not define argument {name!r}{hint(name, props)}",
        )
    if isinstance(value, dict) and any(k.startswith("$") for k in value):
        if list(value) == ["$arg"]:
            return ArgRef(name=argument_name(tool, value["$arg"], (*path, "$arg"), "'$arg'"))
        if list(value) == ["$receipt"]:
            field = value["$receipt"]
            if not isinstance(field, str) or not field:
                raise fail(
                    (*path, "$receipt"),
                    f"'$receipt' must name a receipt field (got {describe(field)})",
                )
            return ReceiptRef(field=field)
        raise fail(
            path,
            'a reference must be exactly {"$arg": NAME} or {"$receipt": FIELD} '
            f"(got {describe(value)})",
        )
    problem = literal_problem(dict(undo.parameters), name, value)
    if problem is not None:
        raise fail(
            path,
            f"literal {describe(value)} does not fit argument {name!r} of {undo.name!r}: {problem}",
        )
    return value
