"""Properties of sagas every contract gets from its annotations: pivots and amounts.

- A **pivot** is a step that cannot be undone: an ``irreversible`` call, or a write with no
  ``compensated_by``. Once it commits, the saga is past the point of no return on its
  resource: the steps before it must be completed, or handed to a person, never undone.
  Undoing them anyway (reversing a credit after the money was captured) destroys what
  the pivot made final.
- **Amounts.** A call that ``debits`` or ``credits`` an argument moves that amount. At
  quiescence, what a plan moved is either all of it, once (completed) or nothing (rolled
  back): anything else created or destroyed money (or units), unless the run handed the
  plan to MANUAL with its records listed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from txcheck.invariants.base import always, eventually
from txcheck.invariants.views import last_phase_entry, plan_groups
from txcheck.models.canonical import canonical_json, normalize
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Part
from txcheck.models.sim.generic import GENERIC
from txcheck.models.sim.policies.base import shares_resource, undo_arguments
from txcheck.models.sim.policies.journal import Phase
from txcheck.models.sim.runner import RunView
from txcheck.models.sim.services import ServiceSet
from txcheck.models.sim.world import admission

__all__ = ["amounts_conserved", "compensation_matches_its_call", "no_compensation_past_pivot"]


def _has_pivot(contract: Contract, services: Sequence[ServiceSet]) -> str | None:
    """Why ``no_compensation_past_pivot`` has nothing to read: no workflow step or tool
    both can be undone and can be followed by one that cannot."""
    compensable = any(t.compensable for t in contract.tools.values())
    pivot = any(t.has_side_effect and not t.compensable for t in contract.tools.values())
    if compensable and pivot:
        return None
    return "the contract has no compensable write and pivot (irreversible or uncompensable) pair"


def _moves_amounts(contract: Contract, services: Sequence[ServiceSet]) -> str | None:
    """Why ``amounts_conserved`` has nothing to read: no tool declares ``debits`` or
    ``credits``."""
    if any(t.debits or t.credits for t in contract.tools.values()):
        return None
    return "no tool of the contract declares 'debits' or 'credits' in x-txcheck"


@always(reads=(Part.OPERATIONS,), applies=_has_pivot)
def no_compensation_past_pivot(view: RunView) -> Iterator[str]:
    """A saga never undoes a step after a later step on the same resource that cannot be
    undone (an irreversible call, or a write without a compensation) committed: past that
    pivot the steps before it must be completed or handed to a person. Reversing a credit
    after the money was captured destroys the money."""
    contract = view.contract
    committed: dict[tuple[str, str], Mapping[str, Any]] = {}  # (owner, call) -> op
    pivots: list[Mapping[str, Any]] = []
    plans = dict(zip(view.instances, view.plans, strict=True))
    for op in view.world.operations:
        owner, undone = op["owner"], op["compensates"]
        if undone is None:
            committed.setdefault((owner, op["call_id"]), op)
            tool = contract.tool(op["tool"])
            if tool is not None and tool.has_side_effect and not tool.compensable:
                pivots.append(op)
            continue
        forward = committed.get((owner, undone))
        if forward is None:
            continue
        plan = plans.get(owner)
        for pivot in pivots:
            if pivot["owner"] != owner or pivot["op"] <= forward["op"]:
                continue
            if plan is not None and _share(contract, plan, forward["call_id"], pivot["call_id"]):
                yield (
                    f"{owner} undid {forward['call_id']} ({forward['tool']} on "
                    f"{forward['resource']!r}, op {op['op']}) after {pivot['call_id']} "
                    f"({pivot['tool']}, op {pivot['op']}) committed on it and cannot be undone"
                )
                break


def _compensable(contract: Contract, services: Sequence[ServiceSet]) -> str | None:
    """Why ``compensation_matches_its_call`` has nothing to read: no tool names a
    compensation."""
    if any(t.compensated_by is not None for t in contract.tools.values()):
        return None
    return "no tool of the contract names a compensation ('compensated_by')"


@always(reads=(Part.OPERATIONS, Part.SERVICES), applies=_compensable)
def compensation_matches_its_call(view: RunView) -> Iterator[str]:
    """A compensation undoes the call it says it undoes: it is aimed at the resource that
    call's compensation names (from its arguments and the fields of its own receipt), and
    on generic services the effect it undid is that call's. A compensation labelled for
    one call but aimed at another (the wrong booking, a receipt looked up from the forward
    call) leaves the real effect in place while every record says it was undone."""
    contract = view.contract
    plans = dict(zip(view.instances, view.plans, strict=True))
    forward: dict[tuple[str, str], Mapping[str, Any]] = {}
    effects = view.world.state.get(GENERIC, {}).get("effects", {})
    for op in view.world.operations:
        owner, undone = op["owner"], op["compensates"]
        if undone is None:
            forward[(owner, op["call_id"])] = op
            continue
        original = forward.get((owner, undone))
        plan = plans.get(owner)
        call = plan.by_id().get(undone) if plan is not None else None
        tool = contract.tool(original["tool"]) if original is not None else None
        undo = contract.tool(op["tool"])
        if original is None or call is None or tool is None or undo is None:
            continue
        if tool.compensated_by is None or tool.compensated_by.tool != undo.name:
            continue
        wrong = _mismatch(tool, undo, call.arguments or {}, original["receipt"], op["resource"])
        if wrong is not None:
            yield f"{owner}'s compensation of {undone} ({undo.name}, op {op['op']}) {wrong}"
            continue
        effect = original["receipt"].get("effect_id")
        if effect in effects and effects[effect]["status"] == "applied":
            undid = op["receipt"].get("undoes")
            yield (
                f"{owner}'s compensation of {undone} ({undo.name}, op {op['op']}) undid "
                f"{undid or 'nothing'}, and {undone}'s effect {effect} is still applied"
            )


def _mismatch(
    tool: Tool, undo: Tool, original: Mapping[str, Any], receipt: Mapping[str, Any], aimed: str
) -> str | None:
    """How the resource the undo was aimed at (``aimed``, as the operation recorded it)
    differs from the one its call's compensation names (``undo_arguments`` on that call's
    arguments and its own receipt), or None. Only the resource is compared: a policy may
    send an undo more than the contract asks (a reason, a note), never another target."""
    if not undo.resource:
        return None
    found = admission(undo, undo_arguments(tool, undo, original, receipt))
    if found.problems or found.resource == aimed:
        return None
    return (
        f"was aimed at {undo.resource}={aimed!r}, not at {found.resource!r} as that call's "
        "compensation takes"
    )


def _share(contract: Contract, plan: Plan, first: str, second: str) -> bool:
    """Whether two calls of ``plan`` name the same value for a resource argument."""
    calls = plan.by_id()
    if first not in calls or second not in calls:
        return False
    return shares_resource(contract, calls[first], calls[second])


@eventually(applies=_moves_amounts)
def amounts_conserved(view: RunView) -> Iterator[str]:
    """At quiescence the amounts a plan moves (the ``debits`` and ``credits`` arguments of
    its calls) moved once each, or not at all: a transfer completed, or rolled back. A
    credit kept while its debit was released creates money; a debit kept while its credit
    was reversed destroys it. Exempt: a plan handed to MANUAL that lists its records."""
    contract = view.contract
    for plan, owners in plan_groups(view):
        moves = _moves(contract, plan)
        if not moves or _handed_over(view, owners):
            continue
        full = sum(moves.values(), Fraction(0))
        mine = set(owners)
        applied: dict[str, set[str]] = {}  # call -> distinct committed receipts
        undone: dict[str, int] = {}
        for op in view.world.operations:
            if op["owner"] not in mine:
                continue
            if op["compensates"] is None and op["call_id"] in moves:
                applied.setdefault(op["call_id"], set()).add(
                    canonical_json(normalize(op["receipt"]))
                )
            elif op["compensates"] in moves:
                undone[op["compensates"]] = undone.get(op["compensates"], 0) + 1
        net = sum(
            (
                moves[call] * max(0, len(receipts) - undone.get(call, 0))
                for call, receipts in applied.items()
            ),
            Fraction(0),
        )
        if net not in (0, full):
            who = f"plan of {', '.join(owners)}"
            if full == 0:
                what = "created" if net > 0 else "destroyed"
                yield (
                    f"{who} {what} {_shown(abs(net))}: its credits minus debits still applied "
                    f"sum to {_shown(net)}, not 0"
                )
            else:
                yield (
                    f"{who} moved {_shown(net)} (credits minus debits still applied): a "
                    f"completed run moves {_shown(full)}, a rolled-back one 0"
                )


def _shown(amount: Fraction) -> str:
    return str(amount.numerator) if amount.denominator == 1 else str(float(amount))


_MOVES: IdentityMemo[dict[str, Fraction]] = IdentityMemo()


def _moves(contract: Contract, plan: Plan) -> dict[str, Fraction]:
    """Each amount-moving call of ``plan`` and its signed amount (credits positive),
    exactly (``0.1 + 0.2`` is ``0.3``)."""

    def compute() -> dict[str, Fraction]:
        found: dict[str, Fraction] = {}
        for call in plan.calls:
            tool = contract.tool(call.name)
            if tool is None or call.arguments is None:
                continue
            amount = _amount(tool, call.arguments)
            if amount:
                found[call.id] = amount
        return found

    return _MOVES((contract, plan), compute)


def _amount(tool: Tool, arguments: Mapping[str, Any]) -> Fraction:
    for name, sign in ((tool.credits, 1), (tool.debits, -1)):
        value = arguments.get(name) if name else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return sign * Fraction(str(value)) if math.isfinite(value) else Fraction(0)
    return Fraction(0)


def _handed_over(view: RunView, owners: list[str]) -> bool:
    """Whether one of ``owners`` ended in MANUAL listing what diverged."""
    for owner in owners:
        entry = last_phase_entry(view.world, owner)
        if entry is not None and entry.get("phase") == Phase.MANUAL and entry.get("diverging"):
            return True
    return False
