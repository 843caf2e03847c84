"""Properties every contract gets from its annotations, whatever its domain.

They read only what ``x-txcheck`` (or MCP hints) say about tools: which calls have side
effects, which can be undone, which are idempotent or repeatable, and which workflow a call
belongs to. So a hotel booking, an airline or a device fleet is checked without a line of
Python, next to the checkout-specific properties.
"""

from __future__ import annotations

from collections.abc import Iterator

from txcheck.invariants.base import always, eventually
from txcheck.invariants.views import (
    Progress,
    last_phase_entry,
    operations_of,
    plan_groups,
    progress_of,
    refused_by_world,
)
from txcheck.models.canonical import canonical_json, normalize
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.sim.choices import Part
from txcheck.models.sim.policies.journal import Phase
from txcheck.models.sim.runner import RunView

__all__ = [
    "contended_instances",
    "fault_free_completion",
    "no_double_effect",
    "no_orphaned_effect",
]


@always(reads=(Part.OPERATIONS,))
def no_double_effect(view: RunView) -> Iterator[str]:
    """A write or irreversible operation commits at most once, across retries, crashes and
    re-submissions: the same call (tool and intent) of one business operation (one plan,
    however often submitted, under whatever keys) committed twice with different results
    is a double effect (a second booking, a second refund). Two different plans that make
    the same call are two operations. A tool the contract marks idempotent or repeatable
    is exempt, and a repeat the service answered with the same result is a replay, not a
    second effect."""
    operation = operations_of(view)
    results: dict[tuple[str, str, str], dict[str, int]] = {}
    for op in view.world.operations:
        if op["compensates"] is not None:
            continue
        tool = view.contract.tool(op["tool"])
        if tool is None or not tool.has_side_effect or tool.idempotent or tool.repeatable:
            continue
        group = operation.get(op["owner"], op["owner"])
        seen = results.setdefault((group, op["tool"], op["intent"]), {})
        seen.setdefault(canonical_json(normalize(op["receipt"])), op["op"])
    for (_, name, _), seen in sorted(results.items()):
        if len(seen) > 1:
            ops = ", ".join(f"op {n}" for n in sorted(seen.values()))
            first = next(o for o in view.world.operations if o["op"] == min(seen.values()))
            yield (
                f"{name} on {first['resource']!r} committed {len(seen)} times for one "
                f"operation ({ops}), each with another result"
            )


@eventually
def no_orphaned_effect(view: RunView) -> Iterator[str]:
    """At quiescence every committed write that can be compensated either belongs to a
    workflow that completed on its resource, or was undone by its own compensation, or the
    run handed it to MANUAL with the record listed: otherwise a booking stays held, an order
    stays half-placed, and nobody knows."""
    for plan, owners in plan_groups(view):
        progress = progress_of(view, plan, owners)
        listed = _manual_records(view, owners)
        calls = plan.by_id()
        for intent, call_id in sorted(progress.writes.items(), key=lambda item: item[1]):
            call = calls[call_id]
            tool = view.contract.tool(call.name)
            if tool is None or tool.compensated_by is None or not progress.committed(intent):
                continue
            if intent in progress.undone or _workflow_done(view, plan, call, progress):
                continue
            if listed is not None and any(call_id in record for record in listed):
                continue
            where = "" if listed is None else " (MANUAL does not list it)"
            yield (
                f"{call.name} ({call_id}) of {', '.join(owners)} committed and was neither "
                f"completed by its workflow nor undone{where}"
            )


def _manual_records(view: RunView, owners: list[str]) -> list[str] | None:
    """The diverging records of the owners that ended in MANUAL (None when none did)."""
    records: list[str] | None = None
    for owner in owners:
        entry = last_phase_entry(view.world, owner)
        if entry is not None and entry.get("phase") == Phase.MANUAL:
            records = (records or []) + [str(r) for r in entry.get("diverging") or ()]
    return records


def _workflow_done(view: RunView, plan: Plan, call: Call, progress: Progress) -> bool:
    """Whether a workflow containing ``call``'s tool has every step committed on the
    call's resource (a tool in no workflow is its own complete unit once committed)."""
    tool = view.contract.tool(call.name)
    flows = view.contract.workflows_with(call.name)
    if tool is None or not flows:
        return True
    resource = _resource(view, call)
    for flow in flows:
        steps = [c for c in plan.calls if c.name in flow.steps and _resource(view, c) == resource]
        names = {c.name for c in steps}
        if set(flow.steps) <= names and all(
            progress.committed(progress.intent_of_call[c.id])
            for c in steps
            if c.id in progress.intent_of_call
        ):
            return True
    return False


def _resource(view: RunView, call: Call) -> object:
    """The call's first resource argument, as canonical JSON (once per contract and call)."""
    contract = view.contract

    def compute() -> object:
        tool = contract.tool(call.name)
        if tool is None or not tool.resources or call.arguments is None:
            return None
        return canonical_json(normalize({n: call.arguments.get(n) for n in tool.resources[:1]}))

    return _RESOURCE((contract, call), compute)


_RESOURCE: IdentityMemo[object] = IdentityMemo()


@eventually
def fault_free_completion(view: RunView) -> Iterator[str]:
    """A valid plan run with no fault injected completes: every write commits once and
    nothing is undone. A policy that rolls back (or hands over) a plan nothing went wrong
    with fails its users silently. Exempt: a plan that fails validation, one the world's
    business rules refuse from the start, and plans that share a resource or an
    idempotency key with a different plan in the same run (they may legitimately get in
    each other's way: a second plan on one order is refused, a resubmission attaches to
    the first, a key already bound to another intent is refused). A tool that names no
    resource may write on any of its own: two plans calling it share it."""
    if view.history.fault_count:
        return
    contended = contended_instances(view)
    for plan, owners in plan_groups(view):
        if any(o in view.invalid_plans for o in owners):
            continue
        if contended.intersection(owners) or refused_by_world(view, plan):
            continue
        progress = progress_of(view, plan, owners)
        if progress.completed:
            continue
        writes = progress.writes
        missing = [writes[i] for i in writes if not progress.committed(i)]
        undone = sorted(writes[i] for i in progress.undone)
        parts = []
        if missing:
            parts.append(f"{', '.join(missing)} never committed")
        if undone:
            parts.append(f"{', '.join(undone)} undone")
        yield (
            f"plan of {', '.join(owners)} is valid and no fault was injected, but it did not "
            f"complete: {'; '.join(parts)}"
        )


def contended_instances(view: RunView) -> frozenset[str]:
    """The instances whose plan shares a resource or an idempotency key with a different
    plan in the run: such plans may legitimately get in each other's way (a second plan on
    one order is refused, a key already bound to another intent is refused), so the
    fault-free properties exempt them."""
    groups = plan_groups(view)
    touched = [_resources_of(view, plan) for plan, _ in groups]
    found: set[str] = set()
    for index, (_, owners) in enumerate(groups):
        others = set().union(*(r for i, r in enumerate(touched) if i != index))
        if touched[index] & others:
            found.update(owners)
    return frozenset(found)


def _resources_of(view: RunView, plan: Plan) -> frozenset[str]:
    """Every resource the plan's calls name, each idempotency key of its writes, and each
    write tool that names no resource (it may write on anything of its own); once per
    contract and plan."""
    contract = view.contract

    def compute() -> frozenset[str]:
        found: set[str] = set()
        for call in plan.calls:
            tool = contract.tool(call.name)
            if tool is None or call.arguments is None:
                continue
            if not tool.resources and tool.has_side_effect:
                found.add(canonical_json(["tool", tool.name]))  # whatever it writes on
            key = tool.idempotency_key
            if tool.has_side_effect and key is not None and key in call.arguments:
                found.add(canonical_json(normalize(["key", call.arguments[key]])))
            for name in tool.resources:
                if name in call.arguments:
                    found.add(canonical_json(normalize([name, call.arguments[name]])))
        return frozenset(found)

    return _RESOURCES((contract, plan), compute)


_RESOURCES: IdentityMemo[frozenset[str]] = IdentityMemo()
