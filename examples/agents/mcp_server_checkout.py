"""A store's own MCP server (a checkout gateway) and a bare MCP client agent, checked
together: ``txcheck explore --agent examples.agents.mcp_server_checkout:make_agent
--framework mcp --mcp-server examples.agents.mcp_server_checkout:make_server``.

The server is written as such servers usually are, with the SDK's ``MCPServer`` and one
``async`` tool per backend operation. Its clients (``ports``) are, in production, the
store's HTTP clients for its order, inventory and payment services; under txcheck they
are the simulated world's ports, so every request the server makes is a point where the
checker chooses what happens (a timeout, a lost response, a late commit).

- ``make_server`` (as usually written) forwards each call (a write under the caller's
  key, if any), but for a charge mints a fresh idempotency key per request, as a payment
  provider's quick-start does (``uuid.uuid4().hex`` in production; here a serial prefixed
  with the server's generation, so that the same choices give the same trace and a
  restarted server never repeats a key). Whatever the model sends, a retried charge is a
  new charge to the payment service: when the first one committed but its answer was lost
  or late, the customer is charged twice.
- ``make_fixed_server`` derives every write's key from the business intent (the tool and
  its arguments), so every retry of one operation carries one key whatever the model
  minted; before sending it asks the idempotency store whether that key is still in
  flight (then it refuses, ``in_progress``: nobody knows yet whether it committed) and the
  service whether the intent already committed (then it answers that receipt).

``make_agent`` is the bare client loop (``--framework mcp``): ask the model, call the tool
over MCP under a timeout, tell the model, until it is done. It has no durable record of its
own, so default ``explore`` of it with either server also reports what a bare agent does
on an invalid proposal (it runs it as far as it goes). ``GatewayCheckoutAgent`` and
``FixedGatewayCheckoutAgent`` put the same loop inside examples/agents/checkout.py's
``CheckoutAgent`` (validate the proposal, claim the operation, journal each attempt, hand
an abandoned or restarted run to a person), with the usual and the fixed server: that
composition is what a fixed server needs to pass (``--policy
examples.agents.mcp_server_checkout:FixedGatewayCheckoutAgent``).
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from examples.agents.checkout import CheckoutAgent, Reply, StableKey, ToolDesk, intent_key
from txcheck.adapters.mcp import user_server
from txcheck.adapters.model import Feedback, ScriptedModel

__all__ = [
    "FixedGatewayCheckoutAgent",
    "GatewayCheckoutAgent",
    "make_agent",
    "make_fixed_server",
    "make_server",
]

TOOL_TIMEOUT = 10.0
"""Seconds the agent waits for a tool before it tells the model the call timed out."""


async def _send(ports: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One request to a backend service: its receipt, or a ``ToolError`` whose text starts
    with the status (``timeout``, ``error``, ``conflict``, ``rejected``)."""
    try:
        result = await ports.tools.call(tool, arguments)
    except TimeoutError:
        raise ToolError("timeout: the service did not answer") from None
    if result.status != "ok":
        raise ToolError(f"{result.status}: {result.code} {result.message}".strip())
    return dict(result.receipt or {})


Write = Callable[[str, dict[str, Any], str], Awaitable[dict[str, Any]]]
"""How a gateway sends a write: ``(tool, arguments but the key, the caller's key)``."""


def _gateway(name: str, ports: Any, write: Write) -> MCPServer:
    """The checkout gateway: one tool per backend operation, each write (a tool with an
    idempotency key) sent by ``write``, reads and refunds (keyed by their charge) as they
    are. (The SDK logs every failed tool call at INFO on stderr: ``log_level`` keeps it
    to warnings.)"""
    app: MCPServer = MCPServer(name, log_level="WARNING")

    @app.tool()
    async def get_order(order_id: str) -> dict[str, Any]:
        """The order as it stands."""
        return await _send(ports, "get_order", {"order_id": order_id})

    @app.tool()
    async def query_logistics(order_id: str) -> dict[str, Any]:
        """The order's shipping status."""
        return await _send(ports, "query_logistics", {"order_id": order_id})

    @app.tool()
    async def create_order(
        order_id: str,
        customer_id: str,
        items: list[dict[str, Any]],
        currency: str,
        idempotency_key: str = "",
    ) -> dict[str, Any]:
        """Create the order."""
        order = {"order_id": order_id, "customer_id": customer_id, "items": items}
        return await write("create_order", {**order, "currency": currency}, idempotency_key)

    @app.tool()
    async def reserve_inventory(order_id: str, idempotency_key: str = "") -> dict[str, Any]:
        """Reserve the order's stock."""
        return await write("reserve_inventory", {"order_id": order_id}, idempotency_key)

    @app.tool()
    async def charge_payment(
        order_id: str, amount: int, currency: str, idempotency_key: str = ""
    ) -> dict[str, Any]:
        """Charge the customer for the order."""
        charge = {"order_id": order_id, "amount": amount, "currency": currency}
        return await write("charge_payment", charge, idempotency_key)

    @app.tool()
    async def confirm_order(order_id: str, idempotency_key: str = "") -> dict[str, Any]:
        """Confirm the paid order."""
        return await write("confirm_order", {"order_id": order_id}, idempotency_key)

    @app.tool()
    async def cancel_order(order_id: str, reason: str, idempotency_key: str = "") -> dict[str, Any]:
        """Cancel the order."""
        cancel = {"order_id": order_id, "reason": reason}
        return await write("cancel_order", cancel, idempotency_key)

    @app.tool()
    async def release_inventory(order_id: str, idempotency_key: str = "") -> dict[str, Any]:
        """Release the order's reserved stock."""
        return await write("release_inventory", {"order_id": order_id}, idempotency_key)

    @app.tool()
    async def refund_payment(charge_id: str, reason: str) -> dict[str, Any]:
        """Refund a charge (the charge id is its key)."""
        refund = {"charge_id": charge_id, "reason": reason}
        return await _send(ports, "refund_payment", refund)

    return app


def make_server(ports: Any) -> MCPServer:
    """The gateway as usually written: each write under the caller's key, except a charge,
    which gets a fresh idempotency key per request, as the payment provider's
    quick-start shows."""
    # production: uuid.uuid4().hex, one per request; here a serial within the server
    # process, prefixed with its generation so that a restarted server never repeats a key
    serial = itertools.count(1)

    async def write(tool: str, arguments: dict[str, Any], key: str) -> dict[str, Any]:
        if tool == "charge_payment":
            key = f"gw-{ports.generation}-{next(serial):06x}"
        return await _send(ports, tool, {**arguments, "idempotency_key": key} if key else arguments)

    return _gateway("checkout-gateway", ports, write)


def make_fixed_server(ports: Any) -> MCPServer:
    """The fix: every write's key comes from the business intent (the tool and its
    arguments), whatever key the caller sent; a key still in flight is refused
    (``in_progress``: nobody knows yet whether it committed), and an intent that already
    committed answers its receipt instead of being sent again."""

    async def write(tool: str, arguments: dict[str, Any], _caller_key: str) -> dict[str, Any]:
        key = intent_key(tool, arguments, "idempotency_key")  # as the agent's StableKey
        record = await ports.tools.key_record(key)
        if record and record.get("status") == "in_flight":
            raise ToolError(f"in_progress: {tool} of this intent is still in flight")
        done = await ports.tools.lookup(tool, arguments)
        if done.status != "ok":
            raise ToolError(f"error: cannot tell whether {tool} committed ({done.code})")
        if done.receipt is not None:
            return dict(done.receipt)  # done already: the same operation, not another
        return await _send(ports, tool, {**arguments, "idempotency_key": key})

    return _gateway("checkout-gateway-fixed", ports, write)


_SDK_PREFIX = re.compile(r"^Error executing tool [^:]*: ")


def _status(text: str) -> str:
    """The status an error text of the gateway starts with (after the SDK's own prefix,
    ``Error executing tool NAME: ``)."""
    return _SDK_PREFIX.sub("", text).split(":", 1)[0].strip() or "error"


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> Reply:
    """One tool call over MCP under the agent's timeout, as the model is to hear of it."""
    try:
        return await asyncio.wait_for(_result(client, name, arguments), TOOL_TIMEOUT)
    except TimeoutError:
        return Reply(ok=False, error="timeout")


async def _result(client: Client, name: str, arguments: dict[str, Any]) -> Reply:
    """One tool call over MCP: a receipt, or the status its error text starts with."""
    result = await client.call_tool(name, arguments)
    if not result.is_error:
        return Reply(ok=True, receipt=dict(result.structured_content or {}))
    text = getattr(result.content[0], "text", "") if result.content else ""
    return Reply(ok=False, error=_status(text))


async def agent(client: Client, model: ScriptedModel) -> None:
    """The bare agent loop: the model's next call, over MCP, until the model is done."""
    call = await model.turn(None)
    while call is not None:
        reply = await _call(client, call.name, dict(call.arguments))
        call = await model.turn(Feedback(call=call, ok=reply.ok, error=reply.error))


def make_agent() -> Callable[[Client, ScriptedModel], Any]:
    """The factory ``--agent ... --framework mcp`` calls: the bare agent loop."""
    return agent


class GatewayCheckoutAgent(CheckoutAgent):
    """The same loop inside the shared checkout discipline (validation, claim, journal,
    hand-over), against the usual gateway."""

    name = "gateway-checkout"
    make_server: Callable[[Any], MCPServer] = staticmethod(make_server)

    async def run(self, model: ScriptedModel, desk: ToolDesk, ctx: Any) -> None:
        serve = user_server(type(self).make_server, check=False)
        async with Client(serve(ctx, desk.ports), mode="legacy") as client:

            def over_mcp(name: str) -> Any:
                async def send(arguments: dict[str, Any]) -> Reply:
                    return await _result(client, name, arguments)  # the desk times it

                return send

            call = await model.turn(None)
            while call is not None:
                reply = await desk.call(call.id, call.name, call.arguments, over_mcp(call.name))
                call = await model.turn(Feedback(call=call, ok=reply.ok, error=reply.error))


class StableKeyGatewayCheckoutAgent(StableKey, GatewayCheckoutAgent):
    """The agent's own fix (keys from the business intent, a timeout resolved by asking)
    against the usual gateway: the gateway still mints its own key for every charge."""

    name = "gateway-checkout-stable-key"


class FixedGatewayCheckoutAgent(StableKey, GatewayCheckoutAgent):
    """Both fixes: the agent's keys from the intent (a key in a tool's own arguments, such
    as a refund's charge id, is one only the agent can keep stable across the model's
    retries) and the fixed gateway."""

    name = "gateway-checkout-fixed"
    make_server = staticmethod(make_fixed_server)
