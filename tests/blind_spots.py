"""Regression mutants for the search's former blind spots: ``guarded`` with one bug each
that explore used to miss (tests/test_blind_spots.py runs them).

Each docstring names the bug, what catches it, and what the search needs to reach it.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import attrs

from txcheck import (
    Ack,
    ActorGen,
    ApplyEffect,
    Call,
    Delivery,
    Guarded,
    Invoke,
    JournalState,
    Lookup,
    OrchestratorContext,
    Publish,
    Request,
    SeenCheck,
    Tool,
    ToolResult,
)

__all__ = [
    "CATCHES",
    "HOTEL_CATCHES",
    "DedupeOnTypeAndOrder",
    "FailedLookupNotCommitted",
    "KeyFromCallId",
    "PublishBeforeCall",
    "RetryTimeoutsForever",
    "SkipValidationForOneCall",
    "UndoAimedAside",
    "UndoResolvedByForwardCall",
]

UNDO_SUFFIX = "~undo"

Outcome = tuple[str, Any, str]


class SkipValidationForOneCall(Guarded):
    """Bug: a plan of one call is "too simple to validate" and runs as proposed, so a lone
    ``create_order`` (an incomplete checkout) creates an order nobody will ever pay for.
    Caught by: rejected_plan_unchanged (hygiene), reported for its harm, no_orphaned_effect
    (the order nobody completes). Needs: a plan of one write call, 0 deviations."""

    name = "blind-skip-validation-for-one-call"

    def check_plan(self, ctx: OrchestratorContext) -> tuple[list[str], list[str]]:
        if len(ctx.plan.calls) == 1:
            return [], [ctx.plan.calls[0].id]
        return super().check_plan(ctx)


class DedupeOnTypeAndOrder(Guarded):
    """Bug: the consumer deduplicates on (event type, order) instead of the message id; two
    refunds carry no order, so the second refund of a plan is taken for a redelivery of
    the first and never applied.
    Caught by: consumer_effect_exactly_once. Needs: a plan whose saga refunds two
    charges (two orders, the last step declined), 1 deviation."""

    name = "blind-dedupe-on-type-and-order"

    def consume(self, delivery: Delivery) -> ActorGen:
        event = delivery.event
        key = f"{event['type']}:{event.get('order_id')}"
        seen = yield SeenCheck(event_id=key)
        if not seen:
            yield ApplyEffect(event=event, record_seen=True, seen_id=key)
        yield Ack(delivery_id=delivery.delivery_id)


class FailedLookupNotCommitted(Guarded):
    """Bug: when the state query itself fails, the call is taken as not committed and sent
    again; if the first attempt did commit and its key has expired meanwhile, the retry
    charges twice (or, for an order, is refused and leaves the first one half done).
    Caught by: no_double_charge or acceptable_outcome. Needs: 3 deviations, a response
    lost, the lookup failing, a clock jump past the key's lifetime."""

    name = "blind-failed-lookup-not-committed"

    def resolve(
        self, tool: Tool, arguments: dict[str, Any], journal_id: str, state: JournalState
    ) -> Generator[Request, Any, Outcome]:
        answer: ToolResult = yield Lookup(tool=tool.name, arguments=arguments, call_id=journal_id)
        if answer.status == "ok" and answer.receipt is not None:
            return ("ok", answer.receipt, "")
        yield from self.write(state, {"call": journal_id, "event": "not_committed"})
        return ("failed", None, "not committed")


class RetryTimeoutsForever(Guarded):
    """Bug: the retry budget counts only transient errors; a call that keeps timing out
    (and is found not committed each time) is retried without end.
    Caught by: retry_budget. Needs: the same call timing out on every attempt (one
    deviation, its repeats free), and no scenario seed. It also drops guarded's look-up
    after a restart with an unanswered attempt, so a lost response and a clock jump past
    the key's lifetime charge twice (no_double_charge, 2 deviations): the search looks
    one level past the hygiene failure for such harm and reports it first. Two plans
    sharing keys reach it with no fault at all: the second plan's refused conflict is
    looked up, found not committed, and retried for ever (quiescence)."""

    name = "blind-retry-timeouts-forever"

    def run_with_retries(
        self,
        ctx: OrchestratorContext,
        tool: Tool,
        arguments: dict[str, Any],
        journal_id: str,
        state: JournalState,
        *,
        compensates: str | None,
    ) -> Generator[Request, Any, Outcome]:
        budget = self.budget()
        counted = 0  # the bug: only transient errors use the budget
        while counted < budget:
            attempt = state.attempts.get(journal_id, 0) + 1
            yield from self.write(state, {"call": journal_id, "event": "attempt", "n": attempt})
            result: ToolResult = yield Invoke(
                tool=tool.name, arguments=arguments, call_id=journal_id, compensates=compensates
            )
            verdict = self.classify(tool, result, compensates=compensates)
            if verdict == "ok":
                yield from self.after_commit(result)
                return ("ok", result.receipt, "")
            if verdict == "failed":
                return ("failed", None, result.code or result.status)
            if verdict == "unknown":
                found = yield from self.resolve(tool, arguments, journal_id, state)
                if found[0] != "failed":
                    return found
                continue  # not committed: try again, uncounted
            counted += 1
            yield from self.sleep(attempt)
        return ("failed", None, "retries exhausted")


class KeyFromCallId(Guarded):
    """Bug: each call's idempotency key is made from its call id, not from the business
    operation, so two different plans at once (two customers checking out) send the same
    key for different intents, and the second plan is refused although nothing went wrong.
    Caught by: fault_free_completion. Needs: two different plans at once, 0 deviations."""

    name = "blind-key-from-call-id"

    def execute_call(self, ctx: OrchestratorContext, call: Call, state: JournalState) -> Any:
        tool = ctx.tool(call)
        key = tool.idempotency_key if tool is not None else None
        if key is not None and call.arguments is not None and key in call.arguments:
            call = attrs.evolve(call, arguments={**call.arguments, key: f"key-{call.id}"})
        return (yield from super().execute_call(ctx, call, state))


class PublishBeforeCall(Guarded):
    """Bug: a dual write that announces each write before making it: the event is out
    (and consumed) even when the call then fails, so a parcel ships for an order that was
    never paid. Caught by: consumed_effect_committed. Needs: any write, 0 deviations."""

    name = "blind-publish-before-call"
    uses_outbox = False

    def execute_call(self, ctx: OrchestratorContext, call: Call, state: JournalState) -> Any:
        tool = ctx.tool(call)
        if tool is not None and tool.has_side_effect:
            event = {"id": f"pre_{ctx.instance}_{call.id}", "type": f"{tool.name}.requested"}
            yield Publish(event=event)
        return (yield from super().execute_call(ctx, call, state))


class UndoResolvedByForwardCall(Guarded):
    """Bug: an undo whose outcome is unknown is "resolved" by asking about the forward
    call, which did commit: the saga journals the step as compensated, with the forward
    call's receipt, and the refund never happens.
    Caught by: no_orphaned_effect or acceptable_outcome (a "compensated" entry counts only
    with the receipt of an operation that undid that call). Needs: a step failing after a
    charge, then the refund timing out, 2 deviations."""

    name = "blind-undo-resolved-by-forward-call"

    def resolve(
        self, tool: Tool, arguments: dict[str, Any], journal_id: str, state: JournalState
    ) -> Generator[Request, Any, Outcome]:
        if journal_id.endswith(UNDO_SUFFIX):
            forward = state.receipts.get(journal_id.removesuffix(UNDO_SUFFIX))
            if forward:
                return ("ok", forward, "")
        return (yield from super().resolve(tool, arguments, journal_id, state))


class UndoAimedAside(Guarded):
    """Bug: the undo is sent a resource next to the one its call wrote (an id built
    wrongly), so on generic services it undoes nothing and commits a no-op, labelled as
    the call's compensation: the booking stays held while every record says it was
    released.
    Caught by: compensation_matches_its_call. Needs: the hotel contract (generic
    services), a step failing after a hold, 1 deviation."""

    name = "blind-undo-aimed-aside"

    def compensation_arguments(
        self, tool: Tool, undo: Tool, original: dict[str, Any], receipt: Mapping[str, Any]
    ) -> dict[str, Any]:
        arguments = super().compensation_arguments(tool, undo, original, receipt)
        for name in undo.resources:
            if isinstance(arguments.get(name), str):
                arguments[name] = arguments[name] + "-x"
        return arguments


CATCHES: dict[str, frozenset[str]] = {
    "SkipValidationForOneCall": frozenset({"rejected_plan_unchanged", "no_orphaned_effect"}),
    "DedupeOnTypeAndOrder": frozenset({"consumer_effect_exactly_once"}),
    "FailedLookupNotCommitted": frozenset({"no_double_charge", "acceptable_outcome"}),
    "RetryTimeoutsForever": frozenset({"retry_budget", "no_double_charge", "quiescence"}),
    "KeyFromCallId": frozenset({"fault_free_completion"}),
    "PublishBeforeCall": frozenset({"consumed_effect_committed"}),
    "UndoResolvedByForwardCall": frozenset({"no_orphaned_effect", "acceptable_outcome"}),
}
"""Each regression mutant (by class name, in the order they are reported) and the
invariants that may catch it (its docstring's "Caught by")."""

HOTEL_CATCHES: dict[str, frozenset[str]] = {
    "UndoAimedAside": frozenset({"compensation_matches_its_call"}),
}
"""The regression mutants whose bug shows on the hotel contract (generic services)."""
