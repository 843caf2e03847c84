"""Scorer-level violations: how a plan departs from a case's ``expect``, and the vetoes.

Given the alignment of proposed and expected calls (``matching``), each proposed call is
either paired (then its arguments and, in ordered cases, its position are checked) or
extra. An extra call to a forbidden tool is ``forbidden_tool``; any other extra call is
``unexpected_call``. Both fail the case; a veto marks the ones that are forbidden side
effects: every forbidden tool, and an extra ``write``/``irreversible`` call unless it is an
authorised compensation of an earlier call in the plan or a same-key repeat of another call
(one operation, executed once). Every expected call left unpaired is ``missing_call``.
"""

from __future__ import annotations

from typing import Any

from txcheck.models.plan.contract import ArgRef, Contract
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.plan.verdict import Violation
from txcheck.scoring.cases import Expectation
from txcheck.scoring.matching import Alignment, typed_equal

__all__ = [
    "VETO_CODES",
    "any_call_violations",
    "compensated_call",
    "repeated_call",
    "scorer_violations",
]

VETO_CODES = ("forbidden_tool", "unauthorised_side_effect")
_VETO_EFFECTS = ("write", "irreversible")
_UNKNOWN: Any = object()


def repeated_call(call: Call, plan: Plan, contract: Contract) -> Call | None:
    """Another call of the plan that ``call`` repeats with the same idempotency key and the
    same arguments: the same operation, which executes once."""
    tool = contract.tool(call.name)
    key = tool.idempotency_key if tool is not None else None
    if key is None or call.arguments is None or key not in call.arguments:
        return None
    for other in plan.calls:
        if (
            other is not call
            and other.name == call.name
            and other.arguments is not None
            and typed_equal(other.arguments, call.arguments)
        ):
            return other
    return None


def _source_value(original: Call, compensation: Any, argument: str) -> Any:
    """The value the contract says compensation argument ``argument`` takes from
    ``original``, or ``_UNKNOWN`` when it comes from a receipt or is not mapped."""
    if original.arguments is None:
        return _UNKNOWN
    if compensation.arguments is None:  # plain form: same-named arguments are passed on
        return original.arguments.get(argument, _UNKNOWN)
    source = compensation.arguments.get(argument, _UNKNOWN)
    if isinstance(source, ArgRef):
        return original.arguments.get(source.name, _UNKNOWN)
    return _UNKNOWN


def compensated_call(call: Call, plan: Plan, contract: Contract) -> Call | None:
    """The earlier call of the plan that ``call`` compensates, as the contract authorises
    (``compensated_by``), on the same resource when the contract lets that be checked."""
    tool = contract.tool(call.name)
    if tool is None or call.arguments is None:
        return None
    for other in plan.calls[: call.index]:
        other_tool = contract.tool(other.name)
        undo = other_tool.compensated_by if other_tool is not None else None
        if undo is None or undo.tool != call.name:
            continue
        if tool.resource is None or tool.resource not in call.arguments:
            return other
        expected = _source_value(other, undo, tool.resource)
        if expected is _UNKNOWN or typed_equal(expected, call.arguments[tool.resource]):
            return other
    return None


def _extra(
    call: Call, plan: Plan, expect: Expectation, contract: Contract
) -> tuple[Violation, str | None]:
    """The violation for a proposed call no expected call is paired with, and its veto."""
    tool = contract.tool(call.name)
    if call.name in expect.forbidden:
        text = f"'{call.name}' is forbidden in this case (veto)"
        violation = Violation(code="forbidden_tool", level="scorer", call=call.id, message=text)
        return violation, "forbidden_tool"
    text = f"'{call.name}' matches no expected call"
    veto = None
    if tool is not None and tool.effect in _VETO_EFFECTS:
        undone = compensated_call(call, plan, contract)
        repeat = repeated_call(call, plan, contract)
        if undone is not None:
            text += (
                f"; it compensates {undone.id} ({undone.name}), as the contract authorises, "
                "so not a veto"
            )
        elif repeat is not None:
            text += f"; it repeats {repeat.id} with the same idempotency key, so not a veto"
        else:
            text += f": an unauthorised side effect ({tool.effect}, veto)"
            veto = "unauthorised_side_effect"
    return Violation(code="unexpected_call", level="scorer", call=call.id, message=text), veto


def scorer_violations(
    contract: Contract, expect: Expectation, plan: Plan, alignment: Alignment
) -> tuple[list[Violation], list[str]]:
    """The scorer-level violations, in plan order then expected order, and the sorted
    veto codes."""
    out: list[Violation] = []
    vetoes: set[str] = set()
    if alignment.exact and not (expect.ordered and alignment.out_of_order):
        return out, []  # every call paired, alike and in order: nothing to say
    by_proposed = {p.proposed: p for p in alignment.pairs}
    for j, call in enumerate(plan.calls):
        pair = by_proposed.get(j)
        if pair is None:
            violation, veto = _extra(call, plan, expect, contract)
            out.append(violation)
            vetoes.update([veto] if veto else [])
            continue
        if pair.diffs:
            where = f"'{call.name}' against expect.calls[{pair.expected}]"
            text = f"{where}: " + "; ".join(d.describe() for d in pair.diffs)
            out.append(
                Violation(code="wrong_arguments", level="scorer", call=call.id, message=text)
            )
        if expect.ordered and j in alignment.out_of_order:
            where = f"'{call.name}' against expect.calls[{pair.expected}]"
            text = f"{where} is out of the expected order"
            out.append(Violation(code="wrong_order", level="scorer", call=call.id, message=text))
    for i in alignment.missing:
        text = f"expect.calls[{i}] ('{expect.calls[i].name}') has no matching proposed call"
        out.append(Violation(code="missing_call", level="scorer", call=None, message=text))
    return out, sorted(vetoes)


def any_call_violations(expect: Expectation, plan: Plan) -> tuple[list[Violation], list[str]]:
    """The scorer-level violations when any call is right (``expect.any_call``): a call to
    a forbidden tool (a veto), or no call at all (``missing_call``)."""
    out: list[Violation] = []
    for call in plan.calls:
        if call.name in expect.forbidden:
            text = f"'{call.name}' is forbidden in this case (veto)"
            out.append(Violation(code="forbidden_tool", level="scorer", call=call.id, message=text))
    if not plan.calls:
        text = "expected at least one call (any tool, any arguments), got none"
        out.append(Violation(code="missing_call", level="scorer", call=None, message=text))
    return out, ["forbidden_tool"] if any(v.code == "forbidden_tool" for v in out) else []
