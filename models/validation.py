"""Whole-plan validation: every violation at every level, never just the first.

Levels, each violation with a stable code (DESIGN.md):

- ``json``: the call's arguments did not parse (``invalid_json``); such a call is not
  schema-checked.
- ``schema``: arguments against the tool's JSON Schema (``txcheck.models.schema_check``); calls to
  unknown tools are not schema-checked.
- ``plan``: ``unknown_tool``, ``duplicate_call_id``, ``missing_idempotency_key`` (a write or
  irreversible call without its key argument, whether or not the schema requires it),
  ``duplicate_key_different_intent``, ``duplicate_side_effect`` (the same operation under
  two keys: it would run twice), and the plan-graph codes (``txcheck.models.plan_graph``).
- ``business``: only when a ``BusinessCheck`` is given; it sees the calls that passed
  ``json`` and ``schema``, in execution order.

Idempotency keys identify one operation. One plan is one tenant's, so keys are compared
across all its tools. Calls sharing a key must be the same intent: the same tool and the
same normalised arguments (numbers by value, booleans apart from numbers, key order free).
Such repeats are valid: they execute once.

Violations are ordered by level (json, schema, business, plan), then by the call's position
in the plan. Validation is linear in the number of calls; validators are compiled once per
contract.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Hashable, Mapping
from typing import Any

from txcheck.models.business import NO_WORLD, BusinessCheck
from txcheck.models.contract import Contract, Tool
from txcheck.models.json_path import describe
from txcheck.models.plan_graph import build_plan_graph, normalised, show_id
from txcheck.models.proposal import Call, Plan
from txcheck.models.schema_check import compile_contract
from txcheck.models.verdict import LEVELS, Level, Verdict, Violation

__all__ = ["validate"]

_RANK: dict[str, int] = {level: i for i, level in enumerate(LEVELS)}


def validate(contract: Contract, plan: Plan, *, business: BusinessCheck | None = None) -> Verdict:
    """The verdict on ``plan`` under ``contract``: all violations at every level that ran."""
    compiled = compile_contract(contract)
    found: list[tuple[int, int, Violation]] = []

    def add(position: int, violation: Violation) -> None:
        found.append((_RANK.get(violation.level, len(LEVELS)), position, violation))

    first_at: dict[str, int] = {}
    well_formed: set[int] = set()
    for position, call in enumerate(plan.calls):
        if call.id in first_at:
            text = _duplicate_text(call, position, first_at[call.id])
            add(position, _plan("duplicate_call_id", call, text))
        else:
            first_at[call.id] = position
        tool = contract.tool(call.name)
        if call.arguments is None:
            text = " ".join((call.json_error or "the call has no arguments object").split())
            add(position, Violation(code="invalid_json", level="json", call=call.id, message=text))
        if tool is None:
            add(position, _plan("unknown_tool", call, _unknown_text(call, contract)))
        elif call.arguments is not None:
            problems = compiled.check(call)
            for problem in problems:
                add(position, problem)
            if not problems:
                well_formed.add(position)
    for position, violation in _key_violations(contract, plan):
        add(position, violation)

    graph = build_plan_graph(contract, plan.calls)
    for position, violation in graph.violations:
        add(position, violation)

    checked: list[Level] = ["json", "schema", "plan"]
    skipped: dict[str, str] = {}
    if business is None:
        skipped["business"] = NO_WORLD
    else:
        checked.append("business")
        ready = [plan.calls[first_at[i]] for i in graph.order if first_at[i] in well_formed]
        for violation in business.check(contract, ready):
            add(_position(violation, first_at, len(plan.calls)), violation)

    found.sort(key=lambda f: (f[0], f[1]))
    return Verdict(
        violations=tuple(v for _, _, v in found),
        levels_checked=tuple(level for level in LEVELS if level in checked),
        levels_skipped=skipped,
        plan=graph.summary(),
    )


def _plan(code: str, call: Call, message: str) -> Violation:
    return Violation(code=code, level="plan", call=call.id, message=message)


def _position(violation: Violation, first_at: Mapping[str, int], end: int) -> int:
    return first_at.get(violation.call, end) if violation.call is not None else end


def _duplicate_text(call: Call, position: int, first: int) -> str:
    return (
        f"call id {show_id(call.id)} is already used by call #{first + 1}; each call needs "
        f"its own id (this is call #{position + 1}, {show_id(call.name)})"
    )


def _unknown_text(call: Call, contract: Contract) -> str:
    names = sorted(contract.tools)
    close = difflib.get_close_matches(call.name, names, n=1)
    if close:
        hint = f"did you mean '{close[0]}'?"
    elif names:
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        hint = f"its tools are {shown}"
    else:
        hint = "it has no tools"
    return f"{_quoted(call.name)} is not a tool of the contract ({hint})"


def _quoted(text: str) -> str:
    quoted = json.dumps(text)
    return quoted if len(quoted) <= 60 else f"{quoted[:57]}..."


def _key_violations(contract: Contract, plan: Plan) -> list[tuple[int, Violation]]:
    """Missing keys on side effects, and one key shared by different intents."""
    out: list[tuple[int, Violation]] = []
    owners: dict[Hashable, Call] = {}
    owner_intents: dict[Hashable, Hashable] = {}  # normalised only once a key repeats
    keyed_intents: dict[Hashable, tuple[Call, Hashable]] = {}
    for position, call in enumerate(plan.calls):
        tool = contract.tool(call.name)
        if tool is None or call.arguments is None or not tool.has_side_effect:
            continue
        if tool.idempotency_key is None:
            continue
        value = call.arguments.get(tool.idempotency_key)
        if value is None:
            text = (
                f"{call.name} is {'an' if tool.effect == 'irreversible' else 'a'} "
                f"{tool.effect} call without its idempotency key '{tool.idempotency_key}'; "
                "a side effect needs a key that stays the same across retries"
            )
            out.append((position, _plan("missing_idempotency_key", call, text)))
            continue
        key = normalised(value)
        intent = (call.name, normalised(tool.intent_arguments(call.arguments)))
        first, first_key = keyed_intents.setdefault(intent, (call, key))
        if first_key != key:
            text = (
                f"{call.name} repeats {show_id(first.id)}'s operation under another "
                f"idempotency key; the same side effect would run twice"
            )
            out.append((position, _plan("duplicate_side_effect", call, text)))
        owner = owners.setdefault(key, call)
        if owner is call:
            continue
        if key not in owner_intents:
            owner_intents[key] = (owner.name, normalised(owner.arguments))
        if owner_intents[key] != (call.name, normalised(call.arguments)):
            text = _intent_text(tool, call, owner, value)
            out.append((position, _plan("duplicate_key_different_intent", call, text)))
    return out


def _intent_text(tool: Tool, call: Call, first: Call, value: Any) -> str:
    key = _quoted(value) if isinstance(value, str) else describe(value)
    if first.name != call.name:
        what = f"{first.name}, a different tool"
    else:
        assert call.arguments is not None and first.arguments is not None
        names = sorted(set(call.arguments) | set(first.arguments))
        differ = [
            n
            for n in names
            if n not in call.arguments
            or n not in first.arguments
            or normalised(call.arguments[n]) != normalised(first.arguments[n])
        ]
        what = f"{first.name} with different {', '.join(differ)}"
    return (
        f"idempotency key {key} ('{tool.idempotency_key}') is already used by "
        f"{show_id(first.id)} for {what}; one key is one operation, so calls sharing it must "
        "be identical"
    )
