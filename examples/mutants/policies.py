"""Sixteen realistic orchestration bugs, each ``guarded`` with exactly one mechanism broken.

Every class docstring names the bug, the invariant that should catch it, and the shortest
known failing run (as deviations from the default schedule on the checkout plan; the
replayable trace is ``traces/<name>.json``). The five positive controls live in
``txcheck.models.sim.policies.controls``; these go beyond them.
"""

from __future__ import annotations

from typing import Any

from txcheck import (
    Ack,
    ActorGen,
    ApplyEffect,
    BrokerSend,
    Delivery,
    Guarded,
    JournalState,
    KeyLookup,
    MarkSeen,
    OrchestratorContext,
    OutboxFetch,
    OutboxMarkPublished,
    Phase,
    Plan,
    ResultStatus,
    SeenCheck,
    Tool,
    ToolResult,
    validate,
)

__all__ = [
    "AckBeforeApply",
    "CompensateForward",
    "CompensationFromMemory",
    "DedupeByDelivery",
    "DedupeNotAtomic",
    "DropDuplicateWithoutAck",
    "KeyPerAttempt",
    "LookupByKeyOnly",
    "ManualNeverEscalated",
    "MarkSeenBeforeApply",
    "RelayMarkBeforeSend",
    "RetryRejections",
    "SkipTimedOutCompensation",
    "TimeoutAsFailure",
    "ValidateFirstCallOnly",
    "ValidateListOrder",
]


class CompensateForward(Guarded):
    """Bug: the saga undoes completed steps in the order they ran: the order is cancelled
    first and the charge refunded last, the reverse of what a saga promises.
    Caught by: compensation_reverse_order.
    Shortest run: 1 deviation, the charge declined (permanent_error)."""

    name = "mutant-compensate-forward"

    def compensation_order(self, state: JournalState) -> list[str]:
        return list(state.completed)


class SkipTimedOutCompensation(Guarded):
    """Bug: a compensation call that times out is taken as done, although its outcome is
    unknown: the run reports a clean rollback while the reservation was never released
    by its own compensation.
    Caught by: acceptable_outcome.
    Shortest run: 2 deviations, the charge declined, then release_inventory times out."""

    name = "mutant-skip-timed-out-compensation"

    def classify(self, tool: Tool, result: ToolResult, *, compensates: str | None) -> str:
        if compensates is not None and result.status is ResultStatus.TIMEOUT:
            return "ok"
        return super().classify(tool, result, compensates=compensates)


class TimeoutAsFailure(Guarded):
    """Bug: a timeout is treated as a definite failure, so the saga compensates the steps
    before it while the timed-out charge actually committed: money kept on a cancelled
    order.
    Caught by: acceptable_outcome.
    Shortest run: 1 deviation, the charge's response lost after commit."""

    name = "mutant-timeout-as-failure"

    def classify(self, tool: Tool, result: ToolResult, *, compensates: str | None) -> str:
        if result.status is ResultStatus.TIMEOUT:
            return "failed"
        return super().classify(tool, result, compensates=compensates)


class RetryRejections(Guarded):
    """Bug: every failure is retried, permanent rejections included, with no bound: a
    declined card is retried forever (each retry replays the stored rejection).
    Caught by: retry_budget.
    Shortest run: 1 deviation, the charge declined."""

    name = "mutant-retry-rejections"

    def budget(self) -> int:
        return 1_000

    def classify(self, tool: Tool, result: ToolResult, *, compensates: str | None) -> str:
        verdict = super().classify(tool, result, compensates=compensates)
        return "retry" if verdict == "failed" else verdict


class KeyPerAttempt(Guarded):
    """Bug: the idempotency key is derived from the attempt number, so a retry after a
    lost response is a new operation: the customer is charged twice (or, lost on
    ``create_order``, a second order is made and the first is left behind).
    Caught by: no_double_charge, retries_reuse_key, acceptable_outcome.
    Shortest run: 1 deviation, the charge's response lost after commit."""

    name = "mutant-key-per-attempt"
    resolve_unknown = False

    def arguments_for_attempt(
        self, ctx: OrchestratorContext, tool: Tool, arguments: dict[str, Any], attempt: int
    ) -> dict[str, Any]:
        key = tool.idempotency_key
        if key is None or key not in arguments or key in tool.parameters.get("required", ()):
            return arguments
        return {**arguments, key: f"{arguments[key]}#{attempt}"}


class LookupByKeyOnly(Guarded):
    """Bug: an UNKNOWN outcome is resolved by asking the idempotency store, which forgets
    a key once its record expires; after a long stall the store says "never seen", the
    retry executes again, and the customer is charged twice. With two plans under shared
    keys, a conflict resolved by the key alone adopts the other plan's result as its own
    and leaves its plan half done.
    Caught by: no_double_charge; acceptable_outcome (two plans sharing keys).
    Shortest run: 2 deviations on the checkout plan, the charge's response lost, then a
    clock jump past the TTL; 1 on two plans sharing keys."""

    name = "mutant-lookup-by-key-only"

    def resolve(
        self, tool: Tool, arguments: dict[str, Any], journal_id: str, state: JournalState
    ) -> Any:
        key = arguments.get(tool.idempotency_key or "")
        record = yield KeyLookup(key=str(key))
        if record is not None and record["status"] == "committed":
            return ("ok", record["result_receipt"], "")
        yield from self.write(state, {"call": journal_id, "event": "not_committed"})
        return ("failed", None, "not committed")


class MarkSeenBeforeApply(Guarded):
    """Bug: the consumer records a message as processed before applying its effect; a
    crash in between loses the effect for good.
    Caught by: consumer_effect_exactly_once.
    Shortest run: 1 deviation, the consumer crashes after marking."""

    name = "mutant-mark-seen-before-apply"

    def consume(self, delivery: Delivery) -> ActorGen:
        seen = yield SeenCheck(event_id=delivery.event_id)
        if not seen:
            yield MarkSeen(event_id=delivery.event_id)
            yield ApplyEffect(event=delivery.event, record_seen=False)
        yield Ack(delivery_id=delivery.delivery_id)


class DedupeNotAtomic(Guarded):
    """Bug: the consumer applies the effect and writes the dedupe record in two separate
    transactions; a crash in between makes the redelivery apply the effect again.
    Caught by: consumer_effect_at_most_once.
    Shortest run: 1 deviation, the consumer crashes after applying."""

    name = "mutant-dedupe-not-atomic"

    def consume(self, delivery: Delivery) -> ActorGen:
        seen = yield SeenCheck(event_id=delivery.event_id)
        if not seen:
            yield ApplyEffect(event=delivery.event, record_seen=False)
            yield MarkSeen(event_id=delivery.event_id)
        yield Ack(delivery_id=delivery.delivery_id)


class AckBeforeApply(Guarded):
    """Bug: the consumer acknowledges the message before applying its effect; a crash in
    between means the broker never redelivers and the effect never happens.
    Caught by: consumer_effect_exactly_once.
    Shortest run: 1 deviation, the consumer crashes after the ACK."""

    name = "mutant-ack-before-apply"

    def consume(self, delivery: Delivery) -> ActorGen:
        seen = yield SeenCheck(event_id=delivery.event_id)
        yield Ack(delivery_id=delivery.delivery_id)
        if not seen:
            yield ApplyEffect(event=delivery.event, record_seen=True)


class DedupeByDelivery(Guarded):
    """Bug: the consumer deduplicates on the broker's delivery id instead of the message
    id, so a message the broker holds twice is applied twice.
    Caught by: consumer_effect_at_most_once.
    Shortest run: 1 deviation, the relay's send is duplicated."""

    name = "mutant-dedupe-by-delivery"

    def consume(self, delivery: Delivery) -> ActorGen:
        seen = yield SeenCheck(event_id=delivery.delivery_id)
        if not seen:
            yield ApplyEffect(event=delivery.event, record_seen=False)
            yield MarkSeen(event_id=delivery.delivery_id)
        yield Ack(delivery_id=delivery.delivery_id)


class RelayMarkBeforeSend(Guarded):
    """Bug: the relay marks an outbox row published (deletes it) before the broker has
    the message; a crash in between loses the event.
    Caught by: consumer_effect_exactly_once.
    Shortest run: 1 deviation, the relay crashes after marking."""

    name = "mutant-relay-mark-before-send"

    def relay(self) -> ActorGen:
        event = yield OutboxFetch()
        if event is None:
            return
        yield OutboxMarkPublished(event_id=event["id"])
        yield BrokerSend(event=event)


class ManualNeverEscalated(Guarded):
    """Bug: when compensation fails or an outcome stays unknown, the case is marked
    reconciled instead of handed to a person; the customer keeps a charge for an order
    that was never confirmed.
    Caught by: acceptable_outcome.
    Shortest run: 2 deviations, confirm declined, then the refund declined."""

    name = "mutant-manual-never-escalated"

    def manual(self, state: JournalState, diverging: list[str]) -> ActorGen:
        yield from self.write(state, {"phase": Phase.RECONCILED, "outcome": "rolled_back"})


class ValidateFirstCallOnly(Guarded):
    """Bug: only the first call of the plan is validated, so an invalid later call is
    discovered half-way, after earlier calls committed.
    Caught by: rejected_plan_unchanged.
    Shortest run: 0 deviations on a plan whose second call is invalid."""

    name = "mutant-validate-first-call-only"

    def check_plan(self, ctx: OrchestratorContext) -> tuple[list[str], list[str]]:
        first = Plan(calls=ctx.plan.calls[:1], format=ctx.plan.format)
        codes = {v.code for v in validate(ctx.contract, first).violations}
        codes.discard("incomplete_workflow")
        return sorted(codes), [c.id for c in ctx.plan.calls]


class ValidateListOrder(Guarded):
    """Bug: the plan is validated but executed in list order, not in dependency order, so
    a plan that lists the charge before the reservation charges an order with no stock
    held (and the dependency check is skipped).
    Caught by: rejected_plan_unchanged.
    Shortest run: 0 deviations on a plan with a dependency listed too early."""

    name = "mutant-validate-list-order"

    def check_plan(self, ctx: OrchestratorContext) -> tuple[list[str], list[str]]:
        codes = {v.code for v in validate(ctx.contract, ctx.plan).violations}
        codes -= {"dependency_too_early", "cycle"}
        return sorted(codes), [c.id for c in ctx.plan.calls]


class DropDuplicateWithoutAck(Guarded):
    """Bug: the consumer skips a message it has already processed but does not
    acknowledge it, so the broker hands it back again and again: a livelock.
    Caught by: quiescence (the run never drains).
    Shortest run: 1 deviation, the relay's send is duplicated."""

    name = "mutant-drop-duplicate-without-ack"

    def consume(self, delivery: Delivery) -> ActorGen:
        seen = yield SeenCheck(event_id=delivery.event_id)
        if seen:
            return
        yield ApplyEffect(event=delivery.event, record_seen=True)
        yield Ack(delivery_id=delivery.delivery_id)


class CompensationFromMemory(Guarded):
    """Bug: the list of steps to undo lives in memory, not in the journal; an instance
    that restarts mid-compensation believes nothing needs undoing and reports a clean
    rollback with the stock still reserved.
    Caught by: no_leftover_reservation, acceptable_outcome.
    Shortest run: 2 deviations, the charge declined, then a crash while compensating."""

    name = "mutant-compensation-from-memory"

    def recover(self, entries: tuple[dict[str, Any], ...]) -> JournalState:
        state = super().recover(entries)
        if state.phase == Phase.COMPENSATING:
            state.completed.clear()
        return state
