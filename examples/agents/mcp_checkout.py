"""A checkout agent written against the MCP client SDK, in two versions.

The agent loop is the usual one: ask the model for its next tool call, call the tool over
MCP under a timeout, tell the model how it went, until the model is done. The model decides
the retries. Both versions keep a small durable record (journal) of what they attempted, so
a crashed or abandoned run is handed to a person with the calls listed, and a finished one
is marked done; they validate the model's whole proposal before any call goes out, and
claim the checkout's operation id first, so a second submission of it (a double click)
attaches to the first instead of running again.

- ``McpCheckoutAgent`` (as usually written) sends the arguments the model emits. After a
  timeout a real model repeats the call under a fresh idempotency key; when the call that
  timed out commits later anyway (a late commit: the server finished it after the client
  gave up), the customer is charged twice.
- ``StableKeyMcpCheckoutAgent`` (fixed) replaces the model's key with one derived from the
  business intent (the tool and its arguments but the key), so every retry of one
  operation carries the same key whatever the model minted, and the service deduplicates;
  and after a timeout it asks the service whether the intent committed before the model
  may retry (an idempotency record can expire while a response is lost).

The MCP code is the SDK's own (``mcp.Client`` over its in-memory transport); under txcheck
the server is ``txcheck.adapters.mcp.server`` and the model
``txcheck.adapters.model.ScriptedModel``. In production they would be your MCP server and
your LLM client: the loop in ``run`` is what is checked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from mcp import Client

import txcheck
from txcheck.adapters.mcp import server as mcp_server
from txcheck.adapters.model import Feedback, ScriptedModel, ToolCall
from txcheck.policy import TERMINAL_PHASES, Phase


class McpCheckoutAgent:
    """The agent as usually written: the model's arguments, the model's keys."""

    name = "mcp-checkout"
    model_turns = True  # the scripted model's retry decisions are choices of the search
    max_attempts = 3  # tries per call the model makes before it gives up
    tool_timeout = 10.0  # seconds the client waits for a tool's answer
    transport = "legacy"  # the SDK's memory streams and JSON-RPC session, as over stdio

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        journal = list(await ports.journal.read())
        phases = [e["phase"] for e in journal if "phase" in e]
        if phases and phases[-1] in TERMINAL_PHASES:
            return
        codes = sorted(set(txcheck.validate(ctx.contract, ctx.plan, summary=False).codes()))
        if codes:  # the whole proposal is checked before any call goes out
            await ports.journal.append({"phase": Phase.REJECTED, "codes": codes})
            return
        if not phases:  # the checkout is one business operation: a double click attaches
            operation = ctx.operation_id()
            owner = await ports.journal.claim(
                operation, {"phase": Phase.EXECUTING, "operation": operation}
            )
            if owner != ctx.instance:
                await ports.journal.append(
                    {"phase": Phase.ATTACHED, "operation": operation, "owner": owner}
                )
                return
        attempted = _attempted(journal)
        if attempted:  # a restart after calls went out: their outcome is not known here
            await self.hand_over(ports, attempted, "the agent restarted")
            return
        model = ScriptedModel(ctx.plan, ctx.contract, ports, max_attempts=self.max_attempts)
        async with Client(mcp_server(ctx, ports), mode=self.transport) as client:
            attempted = await self.run(client, model, ports, ctx)
        if model.stopped:
            await self.hand_over(ports, attempted, "the model gave up")
        else:
            await ports.journal.append({"phase": Phase.RECONCILED, "outcome": "completed"})

    async def run(self, client: Client, model: ScriptedModel, ports: Any, ctx: Any) -> list[str]:
        """The agent loop; answers the calls it attempted."""
        attempted: list[str] = []
        call = await model.turn(None)
        while call is not None:
            if call.id not in attempted:
                attempted.append(call.id)
            await ports.journal.append({"call": call.id, "event": "attempt", "n": call.attempt})
            arguments = self.arguments(call, ctx)
            try:
                result = await asyncio.wait_for(
                    client.call_tool(call.name, arguments), self.tool_timeout
                )
            except TimeoutError:
                known = await self.after_timeout(ports, call, arguments)
                if known is None:  # the outcome stays unknown: a person looks at it
                    model.stopped = True
                    break
                if known:
                    await ports.journal.append({"call": call.id, "event": "done", "receipt": known})
                    call = await model.turn(Feedback(call=call, ok=True))
                else:
                    call = await model.turn(Feedback(call=call, ok=False, error="timeout"))
                continue
            body = json.loads(result.content[0].text)  # type: ignore[union-attr]
            if not result.is_error:
                receipt = dict(result.structured_content or {})
                await ports.journal.append({"call": call.id, "event": "done", "receipt": receipt})
            call = await model.turn(
                Feedback(call=call, ok=not result.is_error, error=str(body["status"]))
            )
        return attempted

    def arguments(self, call: ToolCall, ctx: Any) -> dict[str, Any]:
        """What the agent sends: the model's arguments as they are."""
        return dict(call.arguments)

    async def after_timeout(
        self, ports: Any, call: ToolCall, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """What the agent learns after a timeout before it tells the model: here nothing,
        it reports the timeout (``{}``: not committed, as far as it knows)."""
        return {}

    async def hand_over(self, ports: Any, attempted: list[str], why: str) -> None:
        """Hand the checkout to a person, listing every call that went out."""
        diverging = [f"{call_id}: attempted, {why}" for call_id in attempted]
        await ports.journal.append({"phase": Phase.MANUAL, "diverging": diverging})


class StableKeyMcpCheckoutAgent(McpCheckoutAgent):
    """The fix: the idempotency key comes from the business intent, not from the model."""

    name = "mcp-checkout-stable-key"

    def arguments(self, call: ToolCall, ctx: Any) -> dict[str, Any]:
        arguments = dict(call.arguments)
        tool = ctx.contract.tool(call.name)
        key = tool.idempotency_key if tool is not None else None
        if key is None:
            return arguments
        intent = {k: v for k, v in arguments.items() if k != key}
        digest = hashlib.sha256(
            json.dumps([call.name, intent], sort_keys=True).encode("utf-8")
        ).hexdigest()
        return {**arguments, key: f"intent-{digest[:32]}"}

    async def after_timeout(
        self, ports: Any, call: ToolCall, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Ask the service whether the intent committed before any retry (a key can
        expire while the response is lost): the receipt if it did, ``{}`` if not, None
        if the query failed (then nobody knows, and the agent hands over)."""
        answer = await ports.tools.lookup(call.name, arguments, call_id=call.id)
        if answer.status != "ok":
            return None
        return dict(answer.receipt) if answer.receipt is not None else {}


def _attempted(journal: list[Any]) -> list[str]:
    seen: list[str] = []
    for entry in journal:
        if entry.get("event") == "attempt" and entry["call"] not in seen:
            seen.append(str(entry["call"]))
    return seen
