"""Regression mutants for the search's former blind spots: ``guarded`` with one bug each
that explore used to miss (tests/test_blind_spots.py runs them).

Each docstring names the bug, what catches it, and what the search needs to reach it.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from txcheck import (
    Ack,
    ActorGen,
    ApplyEffect,
    Delivery,
    Guarded,
    Invoke,
    JournalState,
    Lookup,
    OrchestratorContext,
    Request,
    SeenCheck,
    Tool,
    ToolResult,
)

__all__ = [
    "CATCHES",
    "DedupeOnTypeAndOrder",
    "FailedLookupNotCommitted",
    "RetryTimeoutsForever",
    "SkipValidationForOneCall",
]

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
    one level past the hygiene failure for such harm and reports it first."""

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


CATCHES: dict[str, frozenset[str]] = {
    "SkipValidationForOneCall": frozenset({"rejected_plan_unchanged", "no_orphaned_effect"}),
    "DedupeOnTypeAndOrder": frozenset({"consumer_effect_exactly_once"}),
    "FailedLookupNotCommitted": frozenset({"no_double_charge", "acceptable_outcome"}),
    "RetryTimeoutsForever": frozenset({"retry_budget", "no_double_charge"}),
}
"""Each regression mutant (by class name, in the order they are reported) and the
invariants that may catch it (its docstring's "Caught by")."""
