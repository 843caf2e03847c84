"""A checkout agent written against the MCP client SDK, in two versions.

The agent loop is the usual one: ask the model for its next tool call, call the tool over
MCP under a timeout, tell the model how it went, until the model is done. The model decides
the retries. What is not MCP (validating the whole proposal first, claiming the checkout's
operation id so a double click attaches, journaling every attempt, handing a restarted or
abandoned run to a person) is examples/agents/checkout.py's, shared by every framework.

- ``McpCheckoutAgent`` (as usually written) sends the arguments the model emits. After a
  timeout a real model repeats the call under a fresh idempotency key; when the call that
  timed out commits later anyway (a late commit: the server finished it after the client
  gave up), the customer is charged twice.
- ``StableKeyMcpCheckoutAgent`` (fixed) replaces the model's key with one derived from the
  business intent, so every retry of one operation carries the same key whatever the model
  minted, and the service deduplicates; and after a timeout it asks the service whether
  the intent committed before the model may retry.

The MCP code is the SDK's own (``mcp.Client`` over its in-memory transport); under txcheck
the server is ``txcheck.adapters.mcp.server`` and the model
``txcheck.adapters.model.ScriptedModel``. In production they would be your MCP server and
your LLM client: the loop in ``run`` is what is checked.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from examples.agents.checkout import CheckoutAgent, Reply, StableKey, ToolDesk
from txcheck.adapters.mcp import server as mcp_server
from txcheck.adapters.model import Feedback, ScriptedModel

__all__ = ["McpCheckoutAgent", "StableKeyMcpCheckoutAgent"]


class McpCheckoutAgent(CheckoutAgent):
    """The agent as usually written: the model's arguments, the model's keys."""

    name = "mcp-checkout"
    transport = "legacy"  # the SDK's memory streams and JSON-RPC session, as over stdio

    async def run(self, model: ScriptedModel, desk: ToolDesk, ctx: Any) -> None:
        async with Client(mcp_server(ctx, desk.ports), mode=self.transport) as client:

            def over_mcp(name: str) -> Any:
                async def send(arguments: dict[str, Any]) -> Reply:
                    result = await client.call_tool(name, arguments)
                    if not result.is_error:
                        return Reply(ok=True, receipt=dict(result.structured_content or {}))
                    body = json.loads(result.content[0].text)  # type: ignore[union-attr]
                    return Reply(ok=False, error=str(body["status"]))

                return send

            call = await model.turn(None)
            while call is not None:
                reply = await desk.call(call.id, call.name, call.arguments, over_mcp(call.name))
                call = await model.turn(Feedback(call=call, ok=reply.ok, error=reply.error))


class StableKeyMcpCheckoutAgent(StableKey, McpCheckoutAgent):
    """The fix: the idempotency key comes from the business intent, not from the model."""

    name = "mcp-checkout-stable-key"
