"""A client that gives each tool call five seconds and retries a timeout, in two versions:
under a fresh key per attempt (as a client that mints a key per request does), and under
one stable key. Without a saga, lookups or a journal, they are not orchestrators to ship;
they show what a late commit does to a key, in a few lines."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any


class FreshKey:
    name = "wait-for-fresh-key"
    max_attempts = 3
    stable_key = False

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        for call in ctx.plan.calls:
            tool = ctx.tool(call)
            arguments = dict(call.arguments)
            for _ in range(self.max_attempts):
                try:
                    result = await asyncio.wait_for(
                        ports.tools.call(call.name, arguments, call_id=call.id), 5
                    )
                except TimeoutError:
                    if tool.idempotency_key and not self.stable_key:
                        arguments[tool.idempotency_key] = f"k-{uuid.uuid4().hex[:8]}"
                    await asyncio.sleep(1)
                    continue
                if result.status == "ok":
                    break
                if result.status == "rejected":
                    return
                await asyncio.sleep(1)
            else:
                return


class StableKey(FreshKey):
    name = "wait-for-stable-key"
    stable_key = True
