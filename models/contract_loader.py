"""Load and check a contract file: ``{"tools": [...], "workflows": [...]}``.

A tool is an OpenAI function tool or an Anthropic tool, optionally with an ``x-txcheck``
object (see DESIGN.md "Public formats"). Everything is checked up front, so later stages can
trust the contract: each schema is valid JSON Schema (draft 2020-12) with resolvable local
``$ref``s, every argument named by ``x-txcheck`` exists, compensations and workflows name
real tools. Each problem is a ``ContractError`` naming the file, the line and the JSON path.

Decisions:

- ``effect`` defaults to ``"read"``: a tool with no ``x-txcheck`` is treated as having no
  side effect (declare writes explicitly).
- Unknown keys are rejected, with a "did you mean" hint, in ``x-txcheck``, in a compensation,
  in a workflow, at the top level, and in a tool's vendor fields. A typo such as
  ``"idempotency-key"`` or ``"paramters"`` would otherwise silently switch a check off.
  ``Tool.extra`` therefore stays empty until a further switch (permission, confirmation)
  is implemented; such a switch must be added to ``EXTENSION_KEYS`` with its checks.
- A compensation must be able to fill every argument its tool requires: in the plain form
  from the original tool's arguments, in the object form from ``arguments``. Literal
  arguments must satisfy the compensation tool's schema for that argument.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Mapping
from importlib import resources
from typing import Any, Literal

import attrs

from txcheck.models.contract import (
    EFFECTS,
    ArgRef,
    Compensation,
    Contract,
    ReceiptRef,
    Tool,
    Workflow,
)
from txcheck.models.errors import ContractError
from txcheck.models.json_path import PathPart, describe, format_path
from txcheck.models.strict_json import JsonDocument, load_json_document, parse_json_document
from txcheck.models.tool_schema import literal_problem, schema_problem

__all__ = [
    "BUNDLED_CONTRACT",
    "EXTENSION_KEYS",
    "default_contract",
    "load_contract",
    "parse_contract",
]

BUNDLED_CONTRACT = "<bundled checkout contract>"
EXTENSION_KEYS = frozenset({"effect", "resource", "idempotency_key", "compensated_by"})

_Path = tuple[PathPart, ...]
_TOP_KEYS = frozenset({"tools", "workflows", "description", "$schema"})
_OPENAI_KEYS = frozenset({"type", "function", "x-txcheck"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
_ANTHROPIC_KEYS = frozenset(
    {"type", "name", "description", "input_schema", "strict", "cache_control", "x-txcheck"}
)
_WORKFLOW_KEYS = frozenset({"name", "steps", "description"})


def default_contract() -> Contract:
    """The bundled checkout contract (parsed once; treat it as read-only)."""
    return _bundled()


@functools.cache
def _bundled() -> Contract:
    data = (resources.files("txcheck.models") / "data" / "checkout_contract.json").read_bytes()
    return _from_document(parse_json_document(data, source=BUNDLED_CONTRACT, error=ContractError))


def load_contract(path: str | os.PathLike[str]) -> Contract:
    """Read and check a contract file; every problem is a ``ContractError``."""
    return _from_document(load_json_document(path, error=ContractError))


def _from_document(document: JsonDocument) -> Contract:
    try:
        return parse_contract(document.value, source=document.source)
    except ContractError as error:
        raise error.located(line=document.line_of(error.path)) from None


def parse_contract(doc: Any, *, source: str = "<contract>") -> Contract:
    """Check a parsed contract document and build the ``Contract``."""
    try:
        return _parse(doc, source)
    except ContractError as error:
        raise error.located(source=source) from None


def _fail(path: _Path, problem: str) -> ContractError:
    return ContractError(problem, path=format_path(path))


@attrs.frozen(kw_only=True)
class _Pending:
    tool: Tool
    path: _Path
    compensation: Any  # the raw ``compensated_by`` value, resolved once all tools are known


def _parse(doc: Any, source: str) -> Contract:
    root = _object(doc, (), "a contract")
    _known_keys(root, _TOP_KEYS, (), "the contract")
    if "tools" not in root:
        raise _fail((), "the contract has no 'tools' list")
    tools_value = _list(root["tools"], ("tools",), "'tools'")
    if not tools_value:
        raise _fail(("tools",), "'tools' must list at least one tool")
    pending: dict[str, _Pending] = {}
    for i, raw in enumerate(tools_value):
        found = _tool(raw, ("tools", i))
        if found.tool.name in pending:
            first = format_path(pending[found.tool.name].path)
            raise _fail(
                found.path,
                f"duplicate tool name {found.tool.name!r} (first defined at {first})",
            )
        pending[found.tool.name] = found
    tools = {
        name: _with_compensation(p, {n: q.tool for n, q in pending.items()})
        for name, p in pending.items()
    }
    workflows = _workflows(root.get("workflows", []), tools)
    return Contract(tools=tools, workflows=workflows, source=source, document=root)


# -- tools -------------------------------------------------------------------------------


def _tool(raw: Any, path: _Path) -> _Pending:
    obj = _object(raw, path, "a tool")
    vendor: Literal["openai", "anthropic"]
    if "function" in obj or obj.get("type") == "function":
        _known_keys(obj, _OPENAI_KEYS, path, "an OpenAI tool")
        if obj.get("type") != "function":
            raise _fail((*path, "type"), f"'type' must be 'function' (got {_got(obj, 'type')})")
        if "function" not in obj:
            raise _fail(path, "the OpenAI tool has no 'function'")
        fpath = (*path, "function")
        spec = _object(obj["function"], fpath, "'function'")
        _known_keys(spec, _FUNCTION_KEYS, fpath, "'function'")
        vendor = "openai"
        schema_key = "parameters"
        default_schema: Any = {"type": "object", "properties": {}}
    elif "name" in obj or "input_schema" in obj:
        if "type" in obj and obj["type"] != "custom":
            raise _fail(
                (*path, "type"),
                f"unsupported tool type {obj['type']!r} (txcheck reads OpenAI function "
                "tools and Anthropic custom tools)",
            )
        _known_keys(obj, _ANTHROPIC_KEYS, path, "an Anthropic tool")
        fpath, spec, vendor, schema_key, default_schema = (
            path,
            obj,
            "anthropic",
            "input_schema",
            None,
        )
    else:
        raise _fail(
            path,
            'a tool must be an OpenAI function tool {"type": "function", "function": '
            '{...}} or an Anthropic tool {"name", "input_schema"} '
            f"(got {describe(obj)})",
        )
    name = _name(spec.get("name"), (*fpath, "name"), "name" in spec)
    description = spec.get("description", "")
    if not isinstance(description, str):
        raise _fail(
            (*fpath, "description"), f"'description' must be a string (got {describe(description)})"
        )
    strict = spec.get("strict", False)
    if not isinstance(strict, bool):
        raise _fail((*fpath, "strict"), f"'strict' must be true or false (got {describe(strict)})")
    if schema_key not in spec and default_schema is None:
        raise _fail(fpath, f"the tool has no {schema_key!r} schema")
    schema = spec.get(schema_key, default_schema)
    _check_schema(schema, (*fpath, schema_key), schema_key)
    tool = Tool(
        name=name,
        description=description,
        parameters=schema,
        strict=strict,
        vendor=vendor,
    )
    if "x-txcheck" not in obj:
        return _Pending(tool=tool, path=path, compensation=None)
    return _extension(tool, obj["x-txcheck"], (*path, "x-txcheck"), path)


def _name(value: Any, path: _Path, present: bool) -> str:
    if not present:
        raise _fail(path[:-1], "the tool has no 'name'")
    if not isinstance(value, str) or not value:
        raise _fail(path, f"'name' must be a non-empty string (got {describe(value)})")
    if not all(c.isascii() and (c.isalnum() or c in "_-.") for c in value) or len(value) > 128:
        raise _fail(path, f"tool name {value!r} must be 1-128 letters, digits, '_', '-' or '.'")
    return value


def _check_schema(schema: Any, path: _Path, key: str) -> None:
    if not isinstance(schema, dict):
        raise _fail(path, f"{key!r} must be a JSON Schema object (got {describe(schema)})")
    problem = schema_problem(schema)
    if problem is not None:
        inner, text = problem
        raise _fail((*path, *inner), f"{key!r} {text}")


def _properties(tool: Tool) -> Mapping[str, Any]:
    props = tool.parameters.get("properties", {})
    return props if isinstance(props, dict) else {}


def _extension(tool: Tool, raw: Any, path: _Path, tool_path: _Path) -> _Pending:
    ext = _object(raw, path, "'x-txcheck'")
    _known_keys(ext, EXTENSION_KEYS, path, "'x-txcheck'")
    effect = ext.get("effect", "read")
    if effect not in EFFECTS:
        raise _fail(
            (*path, "effect"),
            f"'effect' must be 'read', 'write' or 'irreversible' (got {describe(effect)})",
        )
    found = {}
    for key in ("resource", "idempotency_key"):
        if key in ext:
            found[key] = _argument(tool, ext[key], (*path, key), f"'{key}'")
    if "compensated_by" in ext and effect == "read":
        raise _fail(
            (*path, "compensated_by"),
            f"tool {tool.name!r} has effect 'read': there is nothing to compensate",
        )
    return _Pending(
        tool=attrs.evolve(
            tool,
            effect=effect,
            resource=found.get("resource"),
            idempotency_key=found.get("idempotency_key"),
        ),
        path=tool_path,
        compensation=ext.get("compensated_by"),
    )


def _argument(tool: Tool, value: Any, path: _Path, what: str) -> str:
    """``value`` must name an argument in ``tool``'s top-level ``properties``."""
    if not isinstance(value, str):
        raise _fail(path, f"{what} must name an argument (got {describe(value)})")
    props = _properties(tool)
    if value not in props:
        defined = ", ".join(repr(p) for p in props) or "none"
        raise _fail(
            path,
            f"{what} names argument {value!r}, which tool {tool.name!r} does not define in its "
            f"schema's 'properties' (defined: {defined}){_hint(value, props)}",
        )
    return value


# -- compensations -----------------------------------------------------------------------


def _with_compensation(pending: _Pending, tools: Mapping[str, Tool]) -> Tool:
    raw = pending.compensation
    if raw is None:
        return pending.tool
    tool = pending.tool
    path = (*pending.path, "x-txcheck", "compensated_by")
    if isinstance(raw, str):
        target, arguments = raw, None
        target_path = path
    elif isinstance(raw, dict):
        _known_keys(raw, frozenset({"tool", "arguments"}), path, "'compensated_by'")
        if "tool" not in raw:
            raise _fail(path, "'compensated_by' has no 'tool'")
        target, target_path = raw["tool"], (*path, "tool")
        if not isinstance(target, str):
            raise _fail(target_path, f"'tool' must be a tool name (got {describe(target)})")
        arguments = _object(raw.get("arguments", {}), (*path, "arguments"), "'arguments'")
    else:
        raise _fail(
            path,
            '\'compensated_by\' must be a tool name or {"tool": ..., "arguments": {...}} '
            f"(got {describe(raw)})",
        )
    if target not in tools:
        raise _fail(
            target_path,
            f"'compensated_by' names tool {target!r}, which the contract does not define"
            f"{_hint(target, tools)}",
        )
    undo = tools[target]
    required = undo.parameters.get("required", [])
    if arguments is None:
        missing = [r for r in required if r not in _properties(tool)]
        if missing:
            raise _fail(
                path,
                f"compensation {target!r} requires {', '.join(map(repr, missing))}, which "
                f'{tool.name!r} does not define; give them in {{"tool": ..., "arguments": '
                "{...}}",
            )
        return attrs.evolve(tool, compensated_by=Compensation(tool=target))
    values = {
        name: _compensation_value(tool, undo, name, value, (*path, "arguments", name))
        for name, value in arguments.items()
    }
    missing = [r for r in required if r not in values]
    if missing:
        raise _fail(
            (*path, "arguments"),
            f"compensation {target!r} requires {', '.join(map(repr, missing))}, which "
            "'arguments' does not give",
        )
    return attrs.evolve(tool, compensated_by=Compensation(tool=target, arguments=values))


def _compensation_value(tool: Tool, undo: Tool, name: str, value: Any, path: _Path) -> Any:
    props = _properties(undo)
    if name not in props:
        raise _fail(
            path,
            f"compensation tool {undo.name!r} does not define argument {name!r}"
            f"{_hint(name, props)}",
        )
    if isinstance(value, dict) and any(k.startswith("$") for k in value):
        if list(value) == ["$arg"]:
            return ArgRef(name=_argument(tool, value["$arg"], (*path, "$arg"), "'$arg'"))
        if list(value) == ["$receipt"]:
            field = value["$receipt"]
            if not isinstance(field, str) or not field:
                raise _fail(
                    (*path, "$receipt"),
                    f"'$receipt' must name a receipt field (got {describe(field)})",
                )
            return ReceiptRef(field=field)
        raise _fail(
            path,
            'a reference must be exactly {"$arg": NAME} or {"$receipt": FIELD} '
            f"(got {describe(value)})",
        )
    problem = literal_problem(dict(undo.parameters), name, value)
    if problem is not None:
        raise _fail(
            path,
            f"literal {describe(value)} does not fit argument {name!r} of {undo.name!r}: {problem}",
        )
    return value


# -- workflows ---------------------------------------------------------------------------


def _workflows(raw: Any, tools: Mapping[str, Tool]) -> tuple[Workflow, ...]:
    items = _list(raw, ("workflows",), "'workflows'")
    workflows: dict[str, Workflow] = {}
    for i, value in enumerate(items):
        path: _Path = ("workflows", i)
        obj = _object(value, path, "a workflow")
        _known_keys(obj, _WORKFLOW_KEYS, path, "a workflow")
        name = obj.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(
                (*path, "name"), f"'name' must be a non-empty string (got {_got(obj, 'name')})"
            )
        if name in workflows:
            raise _fail((*path, "name"), f"duplicate workflow name {name!r}")
        if "steps" not in obj:
            raise _fail(path, f"workflow {name!r} has no 'steps'")
        steps = _list(obj["steps"], (*path, "steps"), "'steps'")
        if not steps:
            raise _fail((*path, "steps"), f"workflow {name!r} has no steps")
        for j, step in enumerate(steps):
            step_path = (*path, "steps", j)
            if not isinstance(step, str):
                raise _fail(step_path, f"a step must be a tool name (got {describe(step)})")
            if step not in tools:
                raise _fail(
                    step_path,
                    f"workflow {name!r} names tool {step!r}, which the contract does not "
                    f"define{_hint(step, tools)}",
                )
            if step in steps[:j]:
                raise _fail(step_path, f"workflow {name!r} lists tool {step!r} twice")
        workflows[name] = Workflow(name=name, steps=tuple(steps))
    return tuple(workflows.values())


# -- shared pieces -----------------------------------------------------------------------


def _object(value: Any, path: _Path, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"{what} must be a JSON object (got {describe(value)})")
    return value


def _list(value: Any, path: _Path, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"{what} must be a list (got {describe(value)})")
    return value


def _known_keys(obj: Mapping[str, Any], known: Collection[str], path: _Path, what: str) -> None:
    for key in obj:
        if key not in known:
            expected = ", ".join(repr(k) for k in sorted(known))
            raise _fail(
                (*path, key),
                f"unknown key {key!r} in {what} (expected {expected}){_hint(key, known)}",
            )


def _hint(word: str, choices: Collection[str]) -> str:
    import difflib  # noqa: PLC0415  (only a mistake needs it: loading a contract starts lighter)

    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _got(obj: Mapping[str, Any], key: str) -> str:
    return describe(obj[key]) if key in obj else "nothing"
