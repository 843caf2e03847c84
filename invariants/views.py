"""What several invariants compute from a run the same way: plans grouped by content, each
plan's progress (which of its writes committed, were adopted or undone), journal phases."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from txcheck.models.canonical import canonical_json
from txcheck.models.contract import Contract
from txcheck.models.policies.base import operation_id
from txcheck.models.proposal import Plan, plan_to_json
from txcheck.models.runner import RunView
from txcheck.models.validation import validate
from txcheck.models.world import World
from txcheck.models.world_rules import WorldBusinessCheck

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
        key = canonical_json(plan_to_json(plan))
        groups.setdefault(key, (plan, []))[1].append(instance)
    return list(groups.values())


def operations_of(view: RunView) -> dict[str, str]:
    """Each orchestrator instance's business operation (``operation_id``): instances of
    one plan, submitted again even under other keys, share it; different plans do not."""
    return {
        instance: _operation_id(plan, view.contract)
        for instance, plan in zip(view.instances, view.plans, strict=True)
    }


_OPERATION_IDS: dict[tuple[int, int], tuple[Plan, Contract, str]] = {}


def _operation_id(plan: Plan, contract: Contract) -> str:
    """``operation_id``, once per (plan, contract): invariants run after every step."""
    key = (id(plan), id(contract))
    entry = _OPERATION_IDS.get(key)
    if entry is not None and entry[0] is plan and entry[1] is contract:
        return entry[2]
    if len(_OPERATION_IDS) >= 1024:
        _OPERATION_IDS.clear()
    found = operation_id(plan, contract)
    _OPERATION_IDS[key] = (plan, contract, found)
    return found


def last_phase_entry(world: World, instance: str) -> dict[str, Any] | None:
    """The last journal entry of ``instance`` that sets a phase, or None."""
    for entry in reversed(world.journals.get(instance, [])):
        if "phase" in entry:
            return dict(entry)
    return None


def refused_by_world(view: RunView, plan: Plan) -> bool:
    """Whether the plan breaks a business rule of the run's initial world."""
    check = WorldBusinessCheck(fixture=view.world.fixture, services=view.world.services)
    verdict = validate(view.contract, plan, business=check)
    return any(v.level == "business" for v in verdict.violations)


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
    """``plan``'s progress in the run, counting only its own instances' operations."""
    world = view.world
    intent_of_call: dict[str, str] = {}
    writes: dict[str, str] = {}  # intent -> the first call with it (repeats run once)
    for call in plan.calls:
        tool = view.contract.tool(call.name)
        if tool is not None and tool.has_side_effect and call.arguments is not None:
            intent = world.intent_of(tool, call.arguments)
            intent_of_call[call.id] = intent
            writes.setdefault(intent, call.id)
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
    # policy that writes "done" for a call that never committed does not get credit.
    receipts = {canonical_json(op["receipt"]) for op in world.operations}
    adopted: set[str] = set()
    for owner in owners:
        for entry in world.journals.get(owner, []):
            journaled = intent_of_call.get(str(entry.get("call")))
            if journaled is None or canonical_json(entry.get("receipt")) not in receipts:
                continue
            if entry.get("event") == "done":
                adopted.add(journaled)
            elif entry.get("event") == "compensated":
                undone.add(journaled)
    return Progress(
        writes=writes,
        intent_of_call=intent_of_call,
        commits=commits,
        adopted=frozenset(adopted),
        undone=frozenset(undone),
    )
