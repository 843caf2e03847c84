"""The naive orchestrator as a first asyncio version usually looks.

It runs the calls in list order, retries a failed or timed-out call with a fresh key,
publishes each call's events itself after the call returns (a dual write, outside the
tool's transaction) and its consumer applies every delivery without deduplicating. The twin
of the built-in ``naive`` policy.
"""

from __future__ import annotations

from typing import Any


class Naive:
    name = "naive-async"
    late_commits = False  # checked as its generator twin is (it fails without them anyway)
    uses_outbox = False
    max_attempts = 3

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        for call in ctx.plan.calls:
            tool = ctx.tool(call)
            arguments = dict(call.arguments or {})
            key_arg = tool.idempotency_key if tool is not None else None
            for attempt in range(1, self.max_attempts + 1):
                if attempt > 1 and key_arg and key_arg in arguments:
                    arguments[key_arg] = f"{ctx.key_of(call)}-retry{attempt}"
                try:
                    result = await ports.tools.call(call.name, arguments, call_id=call.id)
                except TimeoutError:
                    continue  # no answer: try again, with a fresh key
                if result.status == "ok":
                    for event in result.events:
                        await ports.broker.publish(event)
                    break
                if result.status in ("rejected", "conflict"):
                    return
            else:
                return

    async def consume(self, delivery: Any, ports: Any) -> None:
        await ports.inbox.apply(delivery.event, record_seen=False)
        await ports.broker.ack(delivery.delivery_id)
