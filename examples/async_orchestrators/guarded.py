"""The guarded orchestrator written as plain asyncio code: the twin of the built-in
``guarded`` policy, request for request.

- a durable operation id claimed first, so a second submission of the same plan (a double
  click) attaches to the first instead of running again;
- a durable journal: PROPOSED -> VALIDATED -> EXECUTING -> RECONCILED, REJECTED or MANUAL;
- the whole plan validated before any side effect;
- one stable key per call (the model's), reused across retries and restarts, the attempt
  journaled before each send;
- a timeout or a conflict is UNKNOWN, resolved by asking the service before any replay;
  a transient error backs off (``asyncio.sleep``) and retries; a rejection is final;
- saga compensation in reverse order of the completed steps, stopping at a pivot;
- events through the outbox and a relay, a deduplicating consumer;
- MANUAL, with the diverging records, when compensation fails or UNKNOWN stays unknown.

It uses txcheck's journal folding (``JournalState``) and plan validation
(``plan_verdict``) as a team would use its own; everything else is asyncio and the ports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from txcheck.policy import (
    UNDO_SUFFIX,
    JournalState,
    Phase,
    plan_verdict,
    shares_resource,
    undo_arguments,
)

Outcome = tuple[str, Mapping[str, Any] | None, str]  # ("ok"|"failed"|"unknown", receipt, why)


class Guarded:
    """The reference orchestrator. Its controls subclass it and turn one switch off.

    Checked as its generator twin is, without late commits: with them, txcheck finds
    that it compensates a call still in flight (a lookup says "not committed", the
    retries meet the key in flight until the budget is spent, the plan is rolled back,
    and then the call lands). ``InFlightAware`` below is the fix."""

    name = "guarded-async"
    late_commits = False
    uses_outbox = True
    max_attempts: int | None = 4
    backoff: tuple[int, ...] = (1, 2, 4, 8)
    lookup_attempts = 3
    validate_first = True
    resolve_unknown = True
    compensate = True
    respect_pivots = True

    # -- the plan ---------------------------------------------------------------------------

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        state = JournalState.fold(await ports.journal.read())
        if state.terminal:
            return
        calls = ctx.plan.by_id()
        if state.phase is None:
            operation = ctx.operation_id()
            proposed = {"phase": Phase.PROPOSED, "operation": operation, "calls": list(calls)}
            owner = await ports.journal.claim(operation, proposed)
            if owner != ctx.instance:
                await self.write(
                    ports, state, {"phase": Phase.ATTACHED, "operation": operation, "owner": owner}
                )
                return
            state.apply(proposed)
        if state.phase == Phase.PROPOSED:
            codes, order = self.check_plan(ctx)
            if codes:
                await self.write(ports, state, {"phase": Phase.REJECTED, "codes": codes})
                return
            await self.write(ports, state, {"phase": Phase.VALIDATED, "order": order})
        if state.phase == Phase.VALIDATED:
            await self.write(ports, state, {"phase": Phase.EXECUTING})
        if state.phase == Phase.EXECUTING:
            for call_id in state.order:
                if call_id in state.receipts:
                    continue
                if call_id in state.failed:
                    break
                outcome = await self.execute_call(ports, ctx, calls[call_id], state)
                if outcome[0] == "unknown":
                    await self.manual(ports, state, [f"{call_id}: outcome unknown ({outcome[2]})"])
                    return
                if outcome[0] == "failed":
                    break
            if not state.failed:
                writes = {
                    call_id: receipt
                    for call_id, receipt in state.receipts.items()
                    if (tool := ctx.tool(calls[call_id])) is not None and tool.has_side_effect
                }
                diverging = await ports.tools.reconcile(writes)
                if diverging:
                    await self.manual(ports, state, list(diverging))
                    return
                await self.write(ports, state, {"phase": Phase.RECONCILED, "outcome": "completed"})
                return
            if not self.compensate:
                await self.write(ports, state, {"phase": Phase.RECONCILED, "outcome": "failed"})
                return
            await self.write(ports, state, {"phase": Phase.COMPENSATING})
        if state.phase == Phase.COMPENSATING:
            problems = await self.compensate_all(ports, ctx, calls, state)
            if problems:
                await self.manual(ports, state, problems)
                return
            await self.write(ports, state, {"phase": Phase.RECONCILED, "outcome": "rolled_back"})

    def check_plan(self, ctx: Any) -> tuple[list[str], list[str]]:
        listed = [c.id for c in ctx.plan.calls]
        if not self.validate_first:
            return [], listed
        verdict = plan_verdict(ctx.contract, ctx.plan)
        return sorted(set(verdict.codes())), [str(c) for c in verdict.plan.get("order", listed)]

    async def manual(self, ports: Any, state: JournalState, diverging: list[str]) -> None:
        listed = list(diverging)
        for call_id in state.completed:
            if call_id not in state.compensated and not any(
                line.startswith(f"{call_id}:") for line in listed
            ):
                listed.append(f"{call_id}: committed, not undone")
        await self.write(ports, state, {"phase": Phase.MANUAL, "diverging": listed})

    async def write(self, ports: Any, state: JournalState, entry: dict[str, Any]) -> None:
        await ports.journal.append(entry)
        state.apply(entry)

    # -- one call ---------------------------------------------------------------------------

    async def execute_call(self, ports: Any, ctx: Any, call: Any, state: JournalState) -> Outcome:
        tool = ctx.tool(call)
        outcome = await self.run_with_retries(
            ports,
            ctx,
            tool,
            dict(call.arguments),
            journal_id=call.id,
            state=state,
            compensates=None,
        )
        if outcome[0] == "ok":
            receipt = dict(outcome[1] or {})
            await self.write(ports, state, {"call": call.id, "event": "done", "receipt": receipt})
        elif outcome[0] == "failed":
            await self.write(ports, state, {"call": call.id, "event": "failed", "code": outcome[2]})
        return outcome

    async def run_with_retries(
        self,
        ports: Any,
        ctx: Any,
        tool: Any,
        arguments: dict[str, Any],
        *,
        journal_id: str,
        state: JournalState,
        compensates: str | None,
    ) -> Outcome:
        budget = self.max_attempts if self.max_attempts is not None else 1_000_000
        if journal_id in state.unresolved:  # a restart after an unanswered attempt
            found = await self.resolve(ports, tool, arguments, journal_id, state)
            if found[0] != "failed":
                return found
        why = "budget exhausted"
        while state.attempts.get(journal_id, 0) < budget:
            attempt = state.attempts.get(journal_id, 0) + 1
            await self.write(ports, state, {"call": journal_id, "event": "attempt", "n": attempt})
            try:
                result = await ports.tools.call(
                    tool.name,
                    self.arguments_for_attempt(tool, arguments, attempt),
                    call_id=journal_id,
                    compensates=compensates,
                )
            except TimeoutError:
                status, code = "timeout", "timeout"
            else:
                if result.status == "ok":
                    if not self.uses_outbox:
                        for event in result.events:  # a dual write
                            await ports.broker.publish(event)
                    return ("ok", result.receipt, "")
                status, code = str(result.status), result.code
            if status == "rejected":
                return ("failed", None, code or status)
            if status in ("timeout", "conflict") and self.resolve_unknown:
                found = await self.resolve(ports, tool, arguments, journal_id, state)
                if found[0] != "failed":
                    return found
            why = code or status
            await asyncio.sleep(self.backoff[min(attempt, len(self.backoff)) - 1])
        return await self.exhausted(ports, ctx, tool, arguments, journal_id, state, why)

    async def exhausted(  # noqa: PLR0917 - what a subclass may need to decide
        self,
        ports: Any,
        ctx: Any,
        tool: Any,
        arguments: dict[str, Any],
        journal_id: str,
        state: JournalState,
        why: str,
    ) -> Outcome:
        """The budget is spent: the call failed (as the generator ``guarded`` decides)."""
        return ("failed", None, f"retries exhausted ({why})")

    async def resolve(
        self, ports: Any, tool: Any, arguments: dict[str, Any], journal_id: str, state: JournalState
    ) -> Outcome:
        """UNKNOWN: ask the service whether the intent committed."""
        for _ in range(self.lookup_attempts):
            answer = await ports.tools.lookup(tool.name, arguments, call_id=journal_id)
            if answer.status == "ok":
                if answer.receipt is not None:
                    return ("ok", answer.receipt, "")
                await self.write(ports, state, {"call": journal_id, "event": "not_committed"})
                return ("failed", None, "not committed")
        return ("unknown", None, "the state could not be queried")

    def arguments_for_attempt(
        self, tool: Any, arguments: dict[str, Any], attempt: int
    ) -> dict[str, Any]:
        """Every attempt carries the same arguments, and so the same key."""
        return arguments

    # -- the saga ---------------------------------------------------------------------------

    async def compensate_all(
        self, ports: Any, ctx: Any, calls: Mapping[str, Any], state: JournalState
    ) -> list[str]:
        problems: list[str] = []
        pivots: list[Any] = []
        for call_id in list(reversed(state.completed)):
            if call_id in state.compensated:
                continue
            call = calls[call_id]
            tool = ctx.tool(call)
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
            undo = ctx.contract.tool(tool.compensated_by.tool)
            arguments = undo_arguments(
                tool, undo, dict(call.arguments), state.receipts.get(call_id, {})
            )
            outcome = await self.run_with_retries(
                ports,
                ctx,
                undo,
                arguments,
                journal_id=call_id + UNDO_SUFFIX,
                state=state,
                compensates=call_id,
            )
            if outcome[0] != "ok":
                problems.append(f"{call_id}: compensation {undo.name} {outcome[0]} ({outcome[2]})")
                break
            receipt = dict(outcome[1] or {})
            await self.write(
                ports, state, {"call": call_id, "event": "compensated", "receipt": receipt}
            )
        return problems

    # -- the relay and the consumer ---------------------------------------------------------

    async def relay(self, ports: Any) -> None:
        """Publish one outbox row: fetch, send, then mark."""
        event = await ports.outbox.fetch()
        if event is None:
            return
        await ports.broker.send(event)
        await ports.outbox.mark_published(event["id"])

    async def consume(self, delivery: Any, ports: Any) -> None:
        """Apply a delivered event once: the dedupe record commits with the effect."""
        if not await ports.inbox.seen(delivery.event_id):
            await ports.inbox.apply(delivery.event, record_seen=True)
        await ports.broker.ack(delivery.delivery_id)


class InFlightAware(Guarded):
    """``Guarded`` for a world where a call given up on may still commit. Before it calls
    a spent budget a failure it asks the idempotency store about the key: still in flight
    under this instance (its own call, given up on), the outcome is unknown and a person
    looks at it; otherwise it asks the service once more whether the intent committed (the
    late call may have landed after the last lookup), and only a "no" is a failure."""

    name = "guarded-in-flight-async"
    late_commits = True

    async def exhausted(  # noqa: PLR0917
        self,
        ports: Any,
        ctx: Any,
        tool: Any,
        arguments: dict[str, Any],
        journal_id: str,
        state: JournalState,
        why: str,
    ) -> Outcome:
        key = arguments.get(tool.idempotency_key) if tool.idempotency_key else None
        if key is not None:
            record = await ports.tools.key_record(str(key))
            if (
                record is not None
                and record.get("status") == "in_flight"
                and record.get("owner") == ctx.instance
            ):
                return ("unknown", None, f"retries exhausted, key {key} still in flight")
        found = await self.resolve(ports, tool, arguments, journal_id, state)
        if found[0] == "ok":
            return found
        return await super().exhausted(ports, ctx, tool, arguments, journal_id, state, why)
