"""``naive``: what a first orchestrator usually does, and every mechanism it lacks.

It executes the calls in list order as it goes (no whole-plan validation), retries a
failed or timed-out call with a fresh key, has no saga, dual-writes events after the tool
returns (outside the tool's transaction) and its consumer does not deduplicate.
"""

from __future__ import annotations

from txcheck.models.sim.policies.base import ActorGen, OrchestratorContext, Policy
from txcheck.models.sim.requests import (
    Ack,
    ApplyEffect,
    Delivery,
    Invoke,
    Publish,
    ResultStatus,
    ToolResult,
)

__all__ = ["Naive"]


class Naive(Policy):
    name = "naive"
    uses_outbox = False
    max_attempts = 3

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        for call in ctx.plan.calls:
            tool = ctx.tool(call)
            arguments = dict(call.arguments or {})
            key_arg = tool.idempotency_key if tool is not None else None
            for attempt in range(1, self.max_attempts + 1):
                if attempt > 1 and key_arg and key_arg in arguments:
                    arguments[key_arg] = f"{ctx.key_of(call)}-retry{attempt}"
                result: ToolResult = yield Invoke(
                    tool=call.name, arguments=dict(arguments), call_id=call.id
                )
                if result.status is ResultStatus.OK:
                    for event in result.events:
                        yield Publish(event=event)
                    break
                if result.status in (ResultStatus.REJECTED, ResultStatus.CONFLICT):
                    return
            else:
                return

    def consume(self, delivery: Delivery) -> ActorGen:
        yield ApplyEffect(event=delivery.event, record_seen=False)
        yield Ack(delivery_id=delivery.delivery_id)
