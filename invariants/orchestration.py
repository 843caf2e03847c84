"""Properties every orchestration policy must keep, whatever the tools are."""

from __future__ import annotations

from collections.abc import Iterator

from txcheck.invariants.base import always, eventually
from txcheck.invariants.effects import contended_instances
from txcheck.invariants.views import last_phase_entry, plan_groups, progress_of, refused_by_world
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Part
from txcheck.models.sim.policies.journal import TERMINAL_PHASES, Phase
from txcheck.models.sim.runner import RunView
from txcheck.models.sim.world import World

__all__ = [
    "acceptable_outcome",
    "compensation_reverse_order",
    "consumed_effect_committed",
    "consumer_effect_at_most_once",
    "consumer_effect_exactly_once",
    "journal_terminal",
    "no_manual_without_fault",
    "rejected_plan_unchanged",
    "retries_reuse_key",
    "retry_budget",
    "state_and_event_together",
    "writes_within_plan",
]


@always(reads=(Part.EFFECTS,))
def consumer_effect_at_most_once(view: RunView) -> Iterator[str]:
    """A consumer applies each event at most once: a redelivered message without dedupe
    ships the parcel twice."""
    for event_id, count in sorted(view.world.effects.items()):
        if count > 1:
            yield f"event {event_id} applied {count} times by the consumer"


@always(reads=(Part.EFFECTS, Part.OPERATIONS))
def consumed_effect_committed(view: RunView) -> Iterator[str]:
    """Every event a consumer applied belongs to an operation that committed, before it was
    applied: an event published before its call (or for a call that then failed) ships a
    parcel for an order that was never paid."""
    if not view.world.effects:
        return
    committed = set(view.world.committed_events())
    for event_id in sorted(view.world.effects):
        if event_id not in committed:
            yield (
                f"event {event_id} was applied by the consumer, but no committed operation "
                "wrote it (published before its call, or for a call that never committed)"
            )


@eventually
def consumer_effect_exactly_once(view: RunView) -> Iterator[str]:
    """Every committed change's event is consumed exactly once: a dual write that crashes
    between commit and publish loses it for good."""
    for event_id in view.world.committed_events():
        count = view.world.effects.get(event_id, 0)
        if count != 1:
            op = _op_of_event(view.world, event_id)
            yield f"event {event_id} ({op}) consumed {count} times, expected exactly once"


@always(
    reads=(
        Part.OPERATIONS,
        Part.OUTBOX,
        Part.BROKER,
        Part.EFFECTS,
    )
)
def state_and_event_together(view: RunView) -> Iterator[str]:
    """In outbox mode a committed change and its event exist together: an event that is
    neither in the outbox, the broker nor consumed was lost or never written."""
    world = view.world
    if not world.outbox_mode:
        return
    known = {row["event"]["id"] for row in world.outbox}
    known |= {d["event"]["id"] for d in world.broker} | set(world.effects)
    for event_id in world.committed_events():
        if event_id not in known:
            yield f"event {event_id} ({_op_of_event(world, event_id)}) is committed but lost"


@always(reads=(Part.OPERATIONS,), severity="hygiene")
def rejected_plan_unchanged(view: RunView) -> Iterator[str]:
    """A plan that fails validation changes nothing: executing an invalid plan call by
    call leaves the side effects of its valid prefix."""
    for instance, codes in sorted(view.invalid_plans.items()):
        for op in view.world.operations:
            if op["owner"] == instance:
                yield (
                    f"{instance}'s plan is invalid ({', '.join(codes)}) but it committed "
                    f"{op['tool']} on {op['resource']!r} (op {op['op']})"
                )


@always(reads=(Part.OPERATIONS,))
def writes_within_plan(view: RunView) -> Iterator[str]:
    """Writes touch only the plan's resources (or undo the plan's own calls): a policy
    must not write where the model never asked it to."""
    allowed = {
        i: _plan_resources(view, p) for i, p in zip(view.instances, view.plans, strict=False)
    }
    for op in view.world.operations:
        resources = allowed.get(op["owner"], frozenset())
        if op["compensates"] is not None or op["resource"] in resources:
            continue
        if not op["resource"] and _call_scope(op["call_id"], op["tool"]) in resources:
            continue  # a tool with no resource argument, called by the plan itself
        named = sorted(r for r in resources if not r.startswith("call:"))
        where = f"on {op['resource']!r}" if op["resource"] else f"as {op['call_id']}"
        yield (f"{op['owner']} wrote {op['tool']} {where}, outside its plan's resources {named}")


@always(reads=(Part.HISTORY,), severity="hygiene")
def retries_reuse_key(view: RunView) -> Iterator[str]:
    """Every attempt of one call carries the same idempotency key: a fresh key on retry
    turns an unknown outcome into a duplicate side effect."""
    grouped: dict[tuple[str, str], list[str | None]] = {}
    for attempt in view.history.attempts:
        grouped.setdefault((attempt.instance, attempt.call_id), []).append(attempt.key)
    for (instance, call_id), keys in sorted(grouped.items()):
        if len(set(keys)) > 1:
            yield f"{instance} retried {call_id} under {len(set(keys))} keys: {keys}"


@always(reads=(Part.HISTORY,), severity="hygiene")
def retry_budget(view: RunView) -> Iterator[str]:
    """A call is attempted at most ``max_attempts`` times, across restarts: an unbounded
    retry hammers a failing service and never hands the case over."""
    budget = view.policy.max_attempts
    if budget is None:
        return
    grouped: dict[tuple[str, str], int] = {}
    for attempt in view.history.attempts:
        key = (attempt.instance, attempt.call_id)
        grouped[key] = grouped.get(key, 0) + 1
    for (instance, call_id), count in sorted(grouped.items()):
        if count > budget:
            yield f"{instance} attempted {call_id} {count} times (budget {budget})"


@always(reads=(Part.OPERATIONS,), severity="hygiene")
def compensation_reverse_order(view: RunView) -> Iterator[str]:
    """Compensations undo steps in reverse order of completion: releasing stock after
    cancelling the order, or refunding before releasing, breaks the saga's contract."""
    for instance in view.instances:
        committed = [
            op["call_id"]
            for op in view.world.operations
            if op["owner"] == instance and op["compensates"] is None
        ]
        undone = [
            op["compensates"]
            for op in view.world.operations
            if op["owner"] == instance and op["compensates"] is not None
        ]
        positions = [committed.index(c) for c in undone if c in committed]
        if positions != sorted(positions, reverse=True):
            yield f"{instance} compensated {undone}, but completed them in order {committed}"


@eventually(severity="hygiene")
def journal_terminal(view: RunView) -> Iterator[str]:
    """Every journaled operation ends RECONCILED, REJECTED or MANUAL: anything else is a
    case stuck half-way that nobody will look at."""
    for instance in view.instances:
        phases = [e["phase"] for e in view.world.journals.get(instance, []) if "phase" in e]
        if phases and phases[-1] not in TERMINAL_PHASES:
            yield f"{instance}'s journal ends in {phases[-1]}"


@eventually(severity="hygiene")
def no_manual_without_fault(view: RunView) -> Iterator[str]:
    """A run with no injected fault never needs a person: MANUAL there is a policy bug.
    Exempt: a plan the world itself refuses (a cancel between the reservation and the
    charge, say: its business violations are the reason, not a fault), and a plan that
    shares a resource or an idempotency key with a different plan in the run (a key
    already bound to another intent is refused, and a person may well be needed)."""
    if view.history.fault_count:
        return
    contended: frozenset[str] | None = None  # worked out only when something is MANUAL
    for instance, plan in zip(view.instances, view.plans, strict=True):
        phases = [e["phase"] for e in view.world.journals.get(instance, []) if "phase" in e]
        if not phases or phases[-1] != Phase.MANUAL:
            continue
        contended = contended_instances(view) if contended is None else contended
        if instance not in contended and not refused_by_world(view, plan):
            yield f"{instance} ended in MANUAL although no fault was injected"


@eventually
def acceptable_outcome(view: RunView) -> Iterator[str]:
    """Each plan ends completed (every write once), cleanly rolled back (every committed
    write compensated), or in MANUAL with the diverging records listed; a half-done
    checkout is none of these. A plan's writes are those its own instances committed or
    adopted (a replayed or looked-up result they journaled); another plan's identical
    operation on the same order is not this plan's."""
    world = view.world
    for plan, owners in plan_groups(view):
        manual = [last_phase_entry(world, o) for o in owners]
        if any(e is not None and e.get("phase") == Phase.MANUAL for e in manual):
            for owner, entry in zip(owners, manual, strict=True):
                if (
                    entry is not None
                    and entry.get("phase") == Phase.MANUAL
                    and not entry.get("diverging")
                ):
                    yield f"{owner} handed over to MANUAL without listing diverging records"
            continue
        problem = _outcome_problem(view, plan, owners)
        if problem:
            yield f"plan of {', '.join(owners)}: {problem}"


def _outcome_problem(view: RunView, plan: Plan, owners: list[str]) -> str | None:
    progress = progress_of(view, plan, owners)
    writes = progress.writes
    twice = [writes[i] for i, n in progress.commits.items() if n > 1]
    if twice:
        return f"{', '.join(sorted(twice))} committed more than once"
    committed = [i for i in writes if progress.committed(i)]
    if len(committed) == len(writes) and not progress.undone:
        return None  # completed
    kept = [writes[i] for i in committed if i not in progress.undone]
    if not kept:
        return None  # cleanly rolled back, or nothing ever committed
    missing = [writes[i] for i in writes if i not in committed]
    return (
        f"half done: {', '.join(kept)} committed and not undone, "
        f"{', '.join(missing) or 'nothing'} never committed"
    )


_RESOURCES: IdentityMemo[frozenset[str]] = IdentityMemo()


def _plan_resources(view: RunView, plan: Plan) -> frozenset[str]:
    """What the plan's calls may write on, once per (contract, plan): the resources they
    name and, for a tool with no resource argument, the call itself (``call:ID:TOOL``);
    writes_within_plan runs after every step that commits."""
    contract = view.contract

    def compute() -> frozenset[str]:
        resources: set[str] = set()
        for call in plan.calls:
            tool = contract.tool(call.name)
            if tool is None or call.arguments is None:
                continue
            if tool.resources:
                resources.update(str(call.arguments.get(r, "")) for r in tool.resources)
            else:
                resources.add(_call_scope(call.id, call.name))
        return frozenset(resources)

    return _RESOURCES((contract, plan), compute)


def _call_scope(call_id: str, tool: str) -> str:
    """What a call of a tool without a resource argument may write on: itself."""
    return f"call:{call_id}:{tool}"


def _op_of_event(world: World, event_id: str) -> str:
    for op in world.operations:
        if event_id in op["events"]:
            return f"{op['tool']} on {op['resource']!r}"
    return "unknown operation"
