"""Positive controls for the third deviation level on "checkout, submitted twice": ``guarded``
with one bug in how a double click is told apart from a first submission.

Each bug needs two orchestrator instances running the same plan and three deviations (a
crash or a transient error, another fault, a clock jump past the idempotency records'
lifetime) before an invariant fails: the same key sent again after its record expired
commits the same intent twice. tests/test_deep_levels.py requires default ``explore
--seed 1`` to find each of them (and ``FailedLookupNotCommitted`` of tests/blind_spots.py).
"""

from __future__ import annotations

from typing import Any

from txcheck import ActorGen, Guarded, OrchestratorContext, ToolResult
from txcheck.models.sim.policies.journal import Phase
from txcheck.models.sim.requests import (
    Claim,
    JournalAppend,
    JournalRead,
    Lookup,
    ResultStatus,
    Sleep,
)

__all__ = ["DEEP_CATCHES", "ProposedBeforeClaim", "StaleClaimTakenOver"]


def _proposed(policy: Guarded, ctx: OrchestratorContext) -> dict[str, Any]:
    calls = [c.id for c in ctx.plan.calls]
    return {"phase": Phase.PROPOSED, "operation": policy.operation_id(ctx), "calls": calls}


class ProposedBeforeClaim(Guarded):
    """Bug: the instance journals PROPOSED before it claims the operation id, in two
    transactions instead of one; restarted between them (or after a claim another instance
    won, before journaling that it attached), it finds PROPOSED, takes the operation for
    its own and runs the plan a second time with the same keys.
    Caught by: no_double_charge (or acceptable_outcome). Needs: the plan submitted twice, a
    crash in that window, and the first instance's keys expired before the second sends
    them again (a clock jump; the rest of the run makes the deviations three)."""

    name = "deep-proposed-before-claim"

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        state = self.recover((yield JournalRead()))
        if state.phase is None:
            proposed = _proposed(self, ctx)
            yield JournalAppend(entry=proposed)  # the bug: not in the claim's transaction
            owner = yield Claim(operation=str(proposed["operation"]), entry=proposed)
            if owner != ctx.instance:
                attached = {"phase": Phase.ATTACHED, "operation": proposed["operation"]}
                yield JournalAppend(entry={**attached, "owner": owner})
                return
        yield from super().orchestrate(ctx)


class StaleClaimTakenOver(Guarded):
    """Bug: an instance that finds the operation claimed by another waits a little, and if
    the plan's first call has still not committed, judges the claim stale (its owner
    taken for dead) and runs the plan itself, with the same keys, while the owner is
    merely slow.
    Caught by: no_double_charge (or acceptable_outcome, no_orphaned_effect). Needs: the
    plan submitted twice, the owner's first call delayed (a transient error or a crash),
    and a key expired between the two instances' sends (a clock jump): three deviations."""

    name = "deep-stale-claim-taken-over"
    patience = 2
    """Ticks the second instance waits before it judges the claim."""

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        state = self.recover((yield JournalRead()))
        if state.phase is None:
            proposed = _proposed(self, ctx)
            owner = yield Claim(operation=str(proposed["operation"]), entry=proposed)
            if owner != ctx.instance:
                yield Sleep(ticks=self.patience)
                first = ctx.plan.calls[0]
                answer: ToolResult = yield Lookup(
                    tool=first.name, arguments=dict(first.arguments or {}), call_id=first.id
                )
                if answer.status is not ResultStatus.OK or answer.receipt is not None:
                    attached = {"phase": Phase.ATTACHED, "operation": proposed["operation"]}
                    yield JournalAppend(entry={**attached, "owner": owner})
                    return
                yield JournalAppend(entry=proposed)  # the bug: the owner is only slow
        yield from super().orchestrate(ctx)


DEEP_CATCHES: dict[str, frozenset[str]] = {
    "ProposedBeforeClaim": frozenset(
        {"no_double_charge", "acceptable_outcome", "no_orphaned_effect", "no_double_effect"}
    ),
    "StaleClaimTakenOver": frozenset(
        {"no_double_charge", "acceptable_outcome", "no_orphaned_effect", "no_double_effect"}
    ),
}
"""Each control (by class name) and the invariants that may catch it."""
