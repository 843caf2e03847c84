"""``guarded``: the full production chain, and the switches its controls flip.

- a durable operation id claimed first, so a second submission of the same plan (a
  double click) attaches to the first instead of running again;
- a durable journal: PROPOSED -> VALIDATED -> EXECUTING -> RECONCILED, REJECTED or MANUAL;
- the whole plan is validated before any side effect;
- one stable key per operation (the model's), reused across retries and restarts, with
  the attempt count journaled before each send;
- errors are classified: a transient error or a conflict backs off and retries within the
  budget; a rejection is final; a timeout is UNKNOWN and is resolved by querying the state
  before any replay, so a key whose record may have expired is never replayed blind;
- saga compensation in reverse order of the completed steps;
- events through the outbox and a relay, a deduplicating consumer;
- MANUAL, with the diverging records, when compensation fails or UNKNOWN stays unknown.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from txcheck.models.plan.contract import Tool
from txcheck.models.plan.plan_verdicts import plan_verdict
from txcheck.models.plan.proposal import Call
from txcheck.models.sim.policies.base import (
    UNDO_SUFFIX,
    ActorGen,
    OrchestratorContext,
    Policy,
    shares_resource,
    undo_arguments,
)
from txcheck.models.sim.policies.journal import JournalState, Phase
from txcheck.models.sim.requests import (
    Claim,
    Invoke,
    JournalAppend,
    JournalRead,
    Lookup,
    Publish,
    Reconcile,
    Request,
    ResultStatus,
    Sleep,
    ToolResult,
)

__all__ = ["Guarded"]

Outcome = tuple[str, Mapping[str, Any] | None, str]  # ("ok"|"failed"|"unknown", receipt, why)
_Sub = Generator[Request, Any, Outcome]

UNDO = UNDO_SUFFIX


class Guarded(Policy):
    """The reference policy. Positive controls subclass it and turn one switch off."""

    name = "guarded"
    uses_outbox = True
    max_attempts: int | None = 4
    backoff: tuple[int, ...] = (1, 2, 4, 8)
    lookup_attempts = 3
    # The mechanisms a positive control removes, one each.
    validate_first = True
    resolve_unknown = True
    compensate = True
    respect_pivots = True
    """Leave the steps before a committed step that cannot be undone as they are."""

    # -- the plan ---------------------------------------------------------------------------

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        state = self.recover((yield JournalRead()))
        if state.terminal:
            return
        calls = ctx.plan.by_id()
        if state.phase is None:
            operation = self.operation_id(ctx)
            proposed = {"phase": Phase.PROPOSED, "operation": operation, "calls": list(calls)}
            owner = yield Claim(operation=operation, entry=proposed)
            if owner != ctx.instance:
                attached = {"phase": Phase.ATTACHED, "operation": operation, "owner": owner}
                yield from self.write(state, attached)
                return
            state.apply(proposed)
        if state.phase == Phase.PROPOSED:
            codes, order = self.check_plan(ctx)
            if codes:
                yield from self.write(state, {"phase": Phase.REJECTED, "codes": codes})
                return
            yield from self.write(state, {"phase": Phase.VALIDATED, "order": order})
        if state.phase == Phase.VALIDATED:
            yield from self.write(state, {"phase": Phase.EXECUTING})
        if state.phase == Phase.EXECUTING:
            for call_id in state.order:
                if call_id in state.receipts:
                    continue
                if call_id in state.failed:
                    break
                outcome = yield from self.execute_call(ctx, calls[call_id], state)
                if outcome[0] == "unknown":
                    yield from self.manual(state, [f"{call_id}: outcome unknown ({outcome[2]})"])
                    return
                if outcome[0] == "failed":
                    break
            if not state.failed:
                writes = {
                    call_id: receipt
                    for call_id, receipt in state.receipts.items()
                    if (tool := ctx.tool(calls[call_id])) is not None and tool.has_side_effect
                }
                diverging = yield Reconcile(receipts=writes)
                if diverging:
                    yield from self.manual(state, list(diverging))
                    return
                yield from self.write(state, {"phase": Phase.RECONCILED, "outcome": "completed"})
                return
            if not self.compensate:
                yield from self.write(state, {"phase": Phase.RECONCILED, "outcome": "failed"})
                return
            yield from self.write(state, {"phase": Phase.COMPENSATING})
        if state.phase == Phase.COMPENSATING:
            problems = yield from self.compensate_all(ctx, calls, state)
            if problems:
                yield from self.manual(state, problems)
                return
            yield from self.write(state, {"phase": Phase.RECONCILED, "outcome": "rolled_back"})

    def operation_id(self, ctx: OrchestratorContext) -> str:
        """The durable operation id (``OrchestratorContext.operation_id``)."""
        return ctx.operation_id()

    def recover(self, entries: tuple[dict[str, Any], ...]) -> JournalState:
        """What a (re)started instance knows: its durable journal, folded."""
        return JournalState.fold(entries)

    def check_plan(self, ctx: OrchestratorContext) -> tuple[list[str], list[str]]:
        """The whole plan's violation codes (empty when valid) and its execution order."""
        listed = [c.id for c in ctx.plan.calls]
        if not self.validate_first:
            return [], listed
        verdict = plan_verdict(ctx.contract, ctx.plan)
        return sorted(set(verdict.codes())), [str(c) for c in verdict.plan.get("order", listed)]

    def manual(self, state: JournalState, diverging: list[str]) -> ActorGen:
        """Hand the operation to a person, listing what does not add up: the problem, and
        every committed call that nothing has undone (what the person must look at)."""
        listed = list(diverging)
        for call_id in state.completed:
            if call_id not in state.compensated and not any(
                line.startswith(f"{call_id}:") for line in listed
            ):
                listed.append(f"{call_id}: committed, not undone")
        yield from self.write(state, {"phase": Phase.MANUAL, "diverging": listed})

    # -- one call ---------------------------------------------------------------------------

    def execute_call(self, ctx: OrchestratorContext, call: Call, state: JournalState) -> _Sub:
        tool = ctx.tool(call)
        assert tool is not None and call.arguments is not None
        outcome = yield from self.run_with_retries(
            ctx, tool, dict(call.arguments), call.id, state, compensates=None
        )
        if outcome[0] == "ok":
            receipt = dict(outcome[1] or {})
            yield from self.write(state, {"call": call.id, "event": "done", "receipt": receipt})
        elif outcome[0] == "failed":
            yield from self.write(state, {"call": call.id, "event": "failed", "code": outcome[2]})
        return outcome

    def write(self, state: JournalState, entry: dict[str, Any]) -> ActorGen:
        """Append to the durable journal and fold the entry into the in-memory view."""
        yield JournalAppend(entry=entry)
        state.apply(entry)

    def run_with_retries(
        self,
        ctx: OrchestratorContext,
        tool: Tool,
        arguments: dict[str, Any],
        journal_id: str,
        state: JournalState,
        *,
        compensates: str | None,
    ) -> _Sub:
        """Send with one stable key until a definite answer or the budget is spent."""
        budget = self.budget()
        if journal_id in state.unresolved:  # a restart after an unanswered attempt
            found = yield from self.resolve(tool, arguments, journal_id, state)
            if found[0] != "failed":
                return found
        why = "budget exhausted"
        while state.attempts.get(journal_id, 0) < budget:
            attempt = state.attempts.get(journal_id, 0) + 1
            yield from self.write(state, {"call": journal_id, "event": "attempt", "n": attempt})
            result: ToolResult = yield Invoke(
                tool=tool.name,
                arguments=self.arguments_for_attempt(ctx, tool, arguments, attempt),
                call_id=journal_id,
                compensates=compensates,
            )
            verdict = self.classify(tool, result, compensates=compensates)
            if verdict == "ok":
                yield from self.after_commit(result)
                return ("ok", result.receipt, "")
            if verdict == "failed":
                return ("failed", None, result.code or result.status.value)
            if verdict == "unknown":
                found = yield from self.resolve(tool, arguments, journal_id, state)
                if found[0] != "failed":
                    return found
            why = result.code or result.status.value
            yield from self.sleep(attempt)
        return ("failed", None, f"retries exhausted ({why})")

    def budget(self) -> int:
        """How many attempts a call gets (the declared ``max_attempts``)."""
        return self.max_attempts if self.max_attempts is not None else 1_000_000

    def classify(self, tool: Tool, result: ToolResult, *, compensates: str | None) -> str:
        """Sort an answer into ``ok``, ``failed`` (final), ``unknown`` (may have
        committed) or ``retry`` (definitely did not commit; try again, same key)."""
        if result.status is ResultStatus.OK:
            return "ok"
        if result.status is ResultStatus.REJECTED:
            return "failed"
        if result.status in (ResultStatus.TIMEOUT, ResultStatus.CONFLICT):
            # A conflict means another instance holds the key in flight: it may commit.
            return "unknown" if self.resolve_unknown else "retry"
        return "retry"

    def resolve(
        self, tool: Tool, arguments: dict[str, Any], journal_id: str, state: JournalState
    ) -> _Sub:
        """UNKNOWN: ask the service whether the intent committed. ``failed`` here means
        "definitely not committed", so a replay with the same key is safe."""
        for _ in range(self.lookup_attempts):
            answer: ToolResult = yield Lookup(
                tool=tool.name, arguments=arguments, call_id=journal_id
            )
            if answer.status is ResultStatus.OK:
                if answer.receipt is not None:
                    return ("ok", answer.receipt, "")
                yield from self.write(state, {"call": journal_id, "event": "not_committed"})
                return ("failed", None, "not committed")
        return ("unknown", None, "the state could not be queried")

    def arguments_for_attempt(
        self, ctx: OrchestratorContext, tool: Tool, arguments: dict[str, Any], attempt: int
    ) -> dict[str, Any]:
        """Every attempt carries the same arguments, and so the same key."""
        return arguments

    def after_commit(self, result: ToolResult) -> ActorGen:
        """With the outbox there is nothing to do; a dual-write policy publishes here."""
        if not self.uses_outbox:
            for event in result.events:
                yield Publish(event=event)

    def sleep(self, attempt: int) -> ActorGen:
        yield Sleep(ticks=self.backoff[min(attempt, len(self.backoff)) - 1])

    # -- the saga ---------------------------------------------------------------------------

    def compensate_all(
        self, ctx: OrchestratorContext, calls: Mapping[str, Call], state: JournalState
    ) -> Generator[Request, Any, list[str]]:
        """Undo completed steps in reverse order; return what could not be undone. A step
        that cannot be undone (irreversible, or without a compensation) is a pivot: the
        steps before it on its resource are left as they are, for a person to finish,
        never undone (undoing a credit after the money was captured destroys it)."""
        problems: list[str] = []
        pivots: list[Call] = []
        for call_id in self.compensation_order(state):
            if call_id in state.compensated:
                continue
            call = calls[call_id]
            tool = ctx.tool(call)
            assert tool is not None and call.arguments is not None
            if not tool.has_side_effect:
                continue
            if not tool.compensable:
                pivots.append(call)
                problems.append(f"{call_id}: {tool.name} committed and cannot be undone")
                continue
            guarded_by = [p for p in pivots if shares_resource(ctx.contract, p, call)]
            if guarded_by and self.respect_pivots:
                past = guarded_by[0]
                problems.append(
                    f"{call_id}: {tool.name} committed, not undone: {past.id} "
                    f"({past.name}) after it cannot be undone"
                )
                continue
            assert tool.compensated_by is not None
            undo = ctx.contract.tool(tool.compensated_by.tool)
            assert undo is not None
            arguments = self.compensation_arguments(
                tool, undo, dict(call.arguments), state.receipts.get(call_id, {})
            )
            outcome = yield from self.run_with_retries(
                ctx, undo, arguments, call_id + UNDO, state, compensates=call_id
            )
            if outcome[0] != "ok":
                problems.append(f"{call_id}: compensation {undo.name} {outcome[0]} ({outcome[2]})")
                break
            receipt = dict(outcome[1] or {})
            yield from self.write(
                state, {"call": call_id, "event": "compensated", "receipt": receipt}
            )
        return problems

    def compensation_order(self, state: JournalState) -> list[str]:
        """Completed calls to undo, most recent first."""
        return list(reversed(state.completed))

    def compensation_arguments(
        self,
        tool: Tool,
        undo: Tool,
        original: dict[str, Any],
        receipt: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The undo's arguments (``undo_arguments``)."""
        return undo_arguments(tool, undo, original, receipt)
