"""What several invariants compute from a run the same way: plans grouped by content, each
plan's progress (which of its writes committed, were adopted or undone), journal phases."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import attrs

from txcheck.models.canonical import canonical_json
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.plan.validation import validate
from txcheck.models.sim.policies.base import operation_id
from txcheck.models.sim.runner import RunView
from txcheck.models.sim.world import World
from txcheck.models.sim.world_rules import WorldBusinessCheck

__all__ = [
    "Progress",
    "last_phase_entry",
    "operations_of",
    "plan_groups",
    "progress_of",
    "refused_by_world",
]


def plan_groups(view: RunView) -> list[tuple[Plan, list[str]]]:
    """Instances grouped by plan content: a plan submitted twice is one plan."""
    groups: dict[str, tuple[Plan, list[str]]] = {}
    for instance, plan in zip(view.instances, view.plans, strict=True):
        key = _CONTENT((plan,), functools.partial(_content, plan))
        groups.setdefault(key, (plan, []))[1].append(instance)
    return list(groups.values())


_CONTENT: IdentityMemo[str] = IdentityMemo()


def _content(plan: Plan) -> str:
    return canonical_json(plan_to_json(plan))


def operations_of(view: RunView) -> dict[str, str]:
    """Each orchestrator instance's business operation (``operation_id``): instances of
    one plan, submitted again even under other keys, share it; different plans do not."""
    return {
        instance: operation_id(plan, view.contract)
        for instance, plan in zip(view.instances, view.plans, strict=True)
    }


def last_phase_entry(world: World, instance: str) -> dict[str, Any] | None:
    """The last journal entry of ``instance`` that sets a phase, or None."""
    for entry in reversed(world.journals.get(instance, [])):
        if "phase" in entry:
            return dict(entry)
    return None


def refused_by_world(view: RunView, plan: Plan) -> bool:
    """Whether the plan breaks a business rule of the run's initial world (once per
    contract, plan, fixture and services: it depends on nothing else)."""
    world = view.world

    def compute() -> bool:
        check = WorldBusinessCheck(fixture=world.fixture, services=world.services)
        verdict = validate(view.contract, plan, business=check)
        return any(v.level == "business" for v in verdict.violations)

    return _REFUSED((view.contract, plan, world.fixture, *world.services), compute)


_REFUSED: IdentityMemo[bool] = IdentityMemo()


@attrs.frozen(kw_only=True)
class Progress:
    """How far one plan (run by ``owners``) got: its writes by intent (the first call with
    each), how many times each committed, which were adopted (a journaled result whose
    receipt is a real committed operation's) and which were undone by a compensation."""

    writes: Mapping[str, str]
    intent_of_call: Mapping[str, str]
    commits: Mapping[str, int]
    adopted: frozenset[str]
    undone: frozenset[str]

    def committed(self, intent: str) -> bool:
        return bool(self.commits.get(intent)) or intent in self.adopted

    @property
    def completed(self) -> bool:
        """Every write committed (or adopted) and none undone."""
        return all(self.committed(i) for i in self.writes) and not self.undone


def progress_of(view: RunView, plan: Plan, owners: list[str]) -> Progress:
    """``plan``'s progress in the run, counting only its own instances' operations
    (computed once per view: several liveness properties ask)."""
    key = ("progress", id(plan), tuple(owners))
    found = view.derived.get(key)
    if found is None:
        found = view.derived[key] = _progress(view, plan, owners)
    assert isinstance(found, Progress)
    return found


def _progress(view: RunView, plan: Plan, owners: list[str]) -> Progress:
    world = view.world
    writes, intent_of_call = _writes(view.contract, plan)
    mine = set(owners)
    commits: dict[str, int] = {}
    undone: set[str] = set()
    for op in world.operations:
        if op["owner"] not in mine:
            continue
        if op["compensates"] is None:
            if op["intent"] in writes and op["call_id"] in intent_of_call:
                commits[op["intent"]] = commits.get(op["intent"], 0) + 1
        elif op["compensates"] in intent_of_call:
            undone.add(intent_of_call[op["compensates"]])
    # A journaled result counts only when its receipt is a real committed operation's: a
    # policy that writes "done" for a call that never committed does not get credit, and
    # "compensated" counts only with the receipt of an operation that undid that very call
    # (not the forward call's own receipt, found by asking about it).
    receipts = _receipts(view)
    undos = _undo_receipts(view, mine)
    adopted: set[str] = set()
    for owner in owners:
        for entry in world.journals.get(owner, []):
            call = str(entry.get("call"))
            journaled = intent_of_call.get(call)
            if journaled is None:
                continue
            receipt = canonical_json(entry.get("receipt"))
            if entry.get("event") == "done" and receipt in receipts:
                adopted.add(journaled)
            elif entry.get("event") == "compensated" and (call, receipt) in undos:
                undone.add(journaled)
    return Progress(
        writes=writes,
        intent_of_call=intent_of_call,
        commits=commits,
        adopted=frozenset(adopted),
        undone=frozenset(undone),
    )


def _undo_receipts(view: RunView, owners: set[str]) -> frozenset[tuple[str, str]]:
    """(the call undone, the receipt as canonical JSON) of every compensation ``owners``
    committed."""
    return frozenset(
        (str(op["compensates"]), canonical_json(op["receipt"]))
        for op in view.world.operations
        if op["owner"] in owners and op["compensates"] is not None
    )


def _receipts(view: RunView) -> frozenset[str]:
    """Every committed operation's receipt, as canonical JSON (once per view)."""
    found = view.derived.get("receipts")
    if found is None:
        ops = view.world.operations
        found = view.derived["receipts"] = frozenset(canonical_json(op["receipt"]) for op in ops)
    assert isinstance(found, frozenset)
    return found


_WRITES: IdentityMemo[tuple[Mapping[str, str], Mapping[str, str]]] = IdentityMemo()


def _writes(contract: Contract, plan: Plan) -> tuple[Mapping[str, str], Mapping[str, str]]:
    """The plan's writes by intent (intent -> the first call with it: repeats run once)
    and each write call's intent; once per (contract, plan). Read-only: shared."""

    def compute() -> tuple[Mapping[str, str], Mapping[str, str]]:
        intent_of_call: dict[str, str] = {}
        writes: dict[str, str] = {}
        for call in plan.calls:
            tool = contract.tool(call.name)
            if tool is not None and tool.has_side_effect and call.arguments is not None:
                intent = World.intent_of(tool, call.arguments)
                intent_of_call[call.id] = intent
                writes.setdefault(intent, call.id)
        return writes, intent_of_call

    return _WRITES((contract, plan), compute)
