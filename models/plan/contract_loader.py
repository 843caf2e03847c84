"""Load and check a contract: ``{"tools": [...], "workflows": [...]}``, or a bare list of tools.

A tool is an OpenAI function tool, an Anthropic tool or an MCP tool, optionally with an
``x-txcheck`` object (``models.contract_tools``; docs/contract.md has the whole format).
Everything is checked up front, so later stages can trust the contract: each schema is
valid JSON Schema (draft 2020-12) with resolvable local ``$ref``s, every argument named by
``x-txcheck`` exists, compensations and workflows name real tools. Each problem is a
``ContractError`` naming the file, the line and the JSON path.

Decisions:

- A tool nothing describes (no ``x-txcheck``, no MCP annotations) is a write with unknown
  idempotency (fail closed), with a warning in ``Contract.warnings``.
- Unknown keys are rejected, with a "did you mean" hint, in ``x-txcheck``, in a compensation,
  in a workflow, at the top level, and in a tool's vendor fields. A typo such as
  ``"idempotency-key"`` or ``"paramters"`` would otherwise silently switch a check off.
  ``Tool.extra`` therefore stays empty until a further switch (permission, confirmation)
  is implemented; such a switch must be added to ``EXTENSION_KEYS`` with its checks.
- A compensation that cannot fill a required argument of its tool is a warning, not an
  error (``models.contract_compensation``): only a run that needs it must refuse.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

import attrs

from txcheck.models.errors import ContractError
from txcheck.models.json_path import describe, format_path
from txcheck.models.plan.contract import Contract, Tool, Workflow
from txcheck.models.plan.contract_checks import (
    CONTRACT_DOC,
    Path,
    fail,
    got,
    hint,
    known_keys,
    need_list,
    need_object,
)
from txcheck.models.plan.contract_compensation import with_compensation
from txcheck.models.plan.contract_tools import EXTENSION_KEYS, PendingTool, read_tool
from txcheck.models.strict_json import JsonDocument, load_json_document, parse_json_document

__all__ = [
    "BUNDLED_CONTRACT",
    "EXTENSION_KEYS",
    "default_contract",
    "load_contract",
    "parse_contract",
]

BUNDLED_CONTRACT = "<bundled checkout contract>"

_TOP_KEYS = frozenset({"tools", "workflows", "description", "$schema"})
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
        contract = parse_contract(document.value, source=document.source)
    except ContractError as error:
        raise error.located(line=document.line_of(error.path)) from None
    return attrs.evolve(contract, line_of=document.line_of)


def parse_contract(doc: Any, *, source: str = "<contract>") -> Contract:
    """Check a parsed contract document (an object, or a bare list of tools) and build the
    ``Contract``."""
    try:
        return _parse(doc, source)
    except ContractError as error:
        raise error.located(source=source) from None


def _parse(doc: Any, source: str) -> Contract:
    if isinstance(doc, list):
        root: dict[str, Any] = {"tools": doc}
        tools_path: Path = ()
    else:
        root = need_object(doc, (), f"a contract (or a list of tools; see {CONTRACT_DOC})")
        tools_path = ("tools",)
    known_keys(root, _TOP_KEYS, (), "the contract")
    if "tools" not in root:
        raise fail((), f"the contract has no 'tools' list (see {CONTRACT_DOC})")
    tools_value = need_list(root["tools"], tools_path, "'tools'")
    if not tools_value:
        raise fail(tools_path, "'tools' must list at least one tool")
    warnings: list[str] = []
    pending: dict[str, PendingTool] = {}
    for i, raw in enumerate(tools_value):
        found = read_tool(raw, (*tools_path, i), warnings.append)
        if found.tool.name in pending:
            first = pending[found.tool.name].path
            raise fail(
                found.path,
                f"duplicate tool name {found.tool.name!r} (first defined at {format_path(first)})",
            )
        pending[found.tool.name] = found
    plain = {name: p.tool for name, p in pending.items()}
    tools = {name: with_compensation(p, plain, warnings.append) for name, p in pending.items()}
    workflows = _workflows(root.get("workflows", []), tools)
    return Contract(
        tools=tools,
        workflows=workflows,
        source=source,
        document=root,
        warnings=tuple(warnings),
    )


# -- workflows ---------------------------------------------------------------------------


def _workflows(raw: Any, tools: Mapping[str, Tool]) -> tuple[Workflow, ...]:
    items = need_list(raw, ("workflows",), "'workflows'")
    workflows: dict[str, Workflow] = {}
    for i, value in enumerate(items):
        path: Path = ("workflows", i)
        obj = need_object(value, path, "a workflow")
        known_keys(obj, _WORKFLOW_KEYS, path, "a workflow")
        name = obj.get("name")
        if not isinstance(name, str) or not name:
            raise fail(
                (*path, "name"), f"'name' must be a non-empty string (got {got(obj, 'name')})"
            )
        if name in workflows:
            raise fail((*path, "name"), f"duplicate workflow name {name!r}")
        if "steps" not in obj:
            raise fail(path, f"workflow {name!r} has no 'steps'")
        steps = need_list(obj["steps"], (*path, "steps"), "'steps'")
        if not steps:
            raise fail((*path, "steps"), f"workflow {name!r} has no steps")
        for j, step in enumerate(steps):
            step_path = (*path, "steps", j)
            if not isinstance(step, str):
                raise fail(step_path, f"a step must be a tool name (got {describe(step)})")
            if step not in tools:
                raise fail(
                    step_path,
                    f"workflow {name!r} names tool {step!r}, which the contract does not "
                    f"define{hint(step, tools)}",
                )
            if step in steps[:j]:
                raise fail(step_path, f"workflow {name!r} lists tool {step!r} twice")
        workflows[name] = Workflow(name=name, steps=tuple(steps))
    return tuple(workflows.values())
