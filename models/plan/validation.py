"""Whole-plan validation: every violation at every level, never just the first.

Levels, each violation with a stable code:

- ``json``: the call's arguments did not parse (``invalid_json``); such a call is not
  schema-checked.
- ``schema``: arguments against the tool's JSON Schema
  (``txcheck.models.plan.schema_check``); calls to unknown tools are not schema-checked.
- ``plan``: ``unknown_tool``, ``duplicate_call_id``, ``missing_idempotency_key`` (a write or
  irreversible call without its key argument, whether or not the schema requires it),
  ``duplicate_key_different_intent``, ``duplicate_side_effect`` (the same operation under
  two keys: it would run twice), and the plan-graph codes (``txcheck.models.plan.plan_graph``).
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

import json
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from txcheck.models.json_path import describe
from txcheck.models.plan.business import NO_WORLD, BusinessCheck
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_index import contract_index
from txcheck.models.plan.plan_graph import (
    build_plan_graph,
    normalised,
    plan_graph_violations,
    show_id,
)
from txcheck.models.plan.plan_quick import CallLike, quick_checks
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.plan.schema_check import compile_contract
from txcheck.models.plan.verdict import LEVELS, Level, Verdict, Violation

__all__ = ["proven_valid", "validate"]

_RANK: dict[str, int] = {level: i for i, level in enumerate(LEVELS)}


def validate(
    contract: Contract,
    plan: Plan,
    *,
    business: BusinessCheck | None = None,
    summary: bool = True,
) -> Verdict:
    """The verdict on ``plan`` under ``contract``: all violations at every level that ran.

    ``summary=False`` is for callers that need only the violations (the scorer): ``plan``
    is left empty, and the plan graph is built only when a linear pass cannot show that
    it has nothing to report. The violations are the same either way.
    """
    quick = quick_checks(contract_index(contract), plan.calls)
    if summary:
        graph = build_plan_graph(contract, plan.calls)
        graph_found, plan_summary = graph.violations, graph.summary()
    else:
        graph_found = (
            ()
            if quick.graph_clean
            else plan_graph_violations(contract, plan.calls, in_order=quick.in_order)
        )
        plan_summary = {}
    checked, skipped = _levels(business)
    idle = _idle(business, contract, plan.calls)
    if idle is not None:  # a business level that would read nothing is not "checked"
        business, checked, skipped = None, _WITHOUT_BUSINESS, {"business": idle}
    return Verdict(
        violations=_violations(contract, plan, business, graph_found, keys_clean=quick.keys_clean),
        levels_checked=checked,
        levels_skipped=skipped,
        plan=plan_summary,
    )


def proven_valid(contract: Contract, calls: Sequence[CallLike]) -> bool:
    """True when one linear pass shows that validating a plan of ``calls`` (parsed, no
    business check) finds no violation: unique ids, known tools, arguments jsonschema-rs
    accepts, no key problem, nothing for the plan graph to report. ``False`` means only
    "not shown"."""
    compiled = compile_contract(contract)
    ids: set[str] = set()
    for call in calls:
        if call.id in ids or call.name not in contract.tools or not compiled.accepts(call):
            return False
        ids.add(call.id)
    quick = quick_checks(contract_index(contract), calls)
    return quick.keys_clean and quick.graph_clean


def _levels(business: BusinessCheck | None) -> tuple[tuple[Level, ...], dict[str, str]]:
    """The levels validation checks and the ones it skips (with why), given ``business``."""
    if business is None:
        return _WITHOUT_BUSINESS, {"business": NO_WORLD}
    return LEVELS, {}


_WITHOUT_BUSINESS: tuple[Level, ...] = tuple(level for level in LEVELS if level != "business")


def _idle(business: BusinessCheck | None, contract: Contract, calls: Sequence[Call]) -> str | None:
    """Why ``business`` has nothing to judge ``calls`` by (its ``not_applicable``), or None."""
    not_applicable = getattr(business, "not_applicable", None)
    if business is None or not_applicable is None:
        return None
    reason = not_applicable(contract, calls)
    return None if reason is None else str(reason)


def _violations(
    contract: Contract,
    plan: Plan,
    business: BusinessCheck | None,
    graph: tuple[tuple[int, Violation], ...],
    *,
    keys_clean: bool,
) -> tuple[Violation, ...]:
    """Every violation, by level then position (``graph``: the plan graph's violations;
    ``keys_clean``: the key rules are known to find nothing)."""
    compiled = compile_contract(contract)
    found: list[tuple[int, int, Violation]] = []

    def add(position: int, violation: Violation) -> None:
        found.append((_RANK.get(violation.level, len(LEVELS)), position, violation))

    first_at: dict[str, int] = {}
    well_formed: set[int] = set()
    tools = contract.tools
    for position, call in enumerate(plan.calls):
        if call.id in first_at:
            text = _duplicate_text(call, position, first_at[call.id])
            add(position, _plan("duplicate_call_id", call, text))
        else:
            first_at[call.id] = position
        tool = tools.get(call.name)
        if call.arguments is None:
            text = " ".join((call.json_error or "the call has no arguments object").split())
            add(position, Violation(code="invalid_json", level="json", call=call.id, message=text))
        if tool is None:
            add(position, _plan("unknown_tool", call, _unknown_text(call, contract)))
        elif call.arguments is not None:
            problems = compiled.check(call)
            for problem in problems:
                add(position, problem)
            if not problems and business is not None:
                well_formed.add(position)  # only the business level reads it
    if not keys_clean:
        for position, violation in _key_violations(contract, plan):
            add(position, violation)
    for position, violation in graph:
        add(position, violation)
    if business is not None:
        # The plan graph's order is the list order of the calls with unique ids.
        ready = [plan.calls[p] for p in first_at.values() if p in well_formed]
        for violation in business.check(contract, ready):
            add(_position(violation, first_at, len(plan.calls)), violation)
    if not found:
        return ()
    found.sort(key=lambda f: (f[0], f[1]))
    return tuple(v for _, _, v in found)


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
    import difflib  # noqa: PLC0415  (only an unknown tool needs it: one-off runs start lighter)

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
    """Missing keys on side effects, one key shared by different intents, and the same
    keyless write twice."""
    out: list[tuple[int, Violation]] = _keyless_repeats(contract, plan)
    owners: dict[Hashable, Call] = {}
    owner_intents: dict[Hashable, Hashable] = {}  # normalised only once a key repeats
    keyed_intents: dict[Hashable, tuple[Call, Hashable]] = {}
    keyed: list[tuple[int, Call, Tool, Any]] = []
    for position, call in enumerate(plan.calls):
        tool = contract.tool(call.name)
        if tool is None or call.arguments is None or not tool.has_side_effect:
            continue
        if tool.idempotency_key is None:
            continue
        keyed.append((position, call, tool, call.arguments.get(tool.idempotency_key)))
    # An intent starts with the tool's name, so only a tool keyed twice can repeat one:
    # the others need no normalised intent.
    repeated = _repeated(call.name for _, call, _, value in keyed if value is not None)
    for position, call, tool, value in keyed:
        assert call.arguments is not None and tool.idempotency_key is not None
        if value is None:
            text = (
                f"{call.name} is {'an' if tool.effect == 'irreversible' else 'a'} "
                f"{tool.effect} call without its idempotency key '{tool.idempotency_key}'; "
                "a side effect needs a key that stays the same across retries"
            )
            out.append((position, _plan("missing_idempotency_key", call, text)))
            continue
        key = normalised(value)
        if call.name in repeated:
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


def _keyless_repeats(contract: Contract, plan: Plan) -> list[tuple[int, Violation]]:
    """A write with no idempotency key called twice with the same arguments: nothing tells
    a repeat from a retry, so the effect would happen twice (a tool marked idempotent or
    repeatable means it)."""
    out: list[tuple[int, Violation]] = []
    first: dict[tuple[str, Hashable], Call] = {}
    for position, call in enumerate(plan.calls):
        tool = contract.tool(call.name)
        if (
            tool is None
            or call.arguments is None
            or not tool.has_side_effect
            or tool.idempotency_key is not None
            or tool.idempotent
            or tool.repeatable
        ):
            continue
        earlier = first.setdefault((call.name, normalised(call.arguments)), call)
        if earlier is not call:
            text = (
                f"{call.name} repeats {show_id(earlier.id)} with the same arguments and no "
                "idempotency key; the same side effect would run twice (mark the tool "
                "'repeatable' in x-txcheck if that is meant)"
            )
            out.append((position, _plan("duplicate_side_effect", call, text)))
    return out


def _repeated(names: Iterable[str]) -> set[str]:
    """The names that occur more than once."""
    seen: set[str] = set()
    twice: set[str] = set()
    for name in names:
        (twice if name in seen else seen).add(name)
    return twice


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
