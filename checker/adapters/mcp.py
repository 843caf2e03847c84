"""MCP agents checked unmodified: an in-memory MCP server whose tools are a contract's,
backed by the simulated world (needs ``mcp``: ``pip install 'txcheck[mcp]'``; tested with
the version pinned in pyproject.toml).

``server(ctx, ports)`` is an ``mcp.server.Server`` (the SDK's low-level server) listing the
contract's tools (name, description, input schema) and answering ``tools/call`` by calling
``ports.tools.call``: each MCP tool call is one ``Invoke`` of the world, so its outcome (ok,
timeout, lost response, transient or permanent error, late commit) is the checker's choice,
as for any orchestrator. User client code connects with the SDK's own in-process transport,
``mcp.Client(server, mode="legacy")`` (the anyio memory streams and the JSON-RPC session,
as over stdio) or the default mode (its direct dispatcher), and runs on txcheck's
``SimLoop`` unchanged: no thread, socket or real clock is involved.

What a result looks like to the client: ``is_error`` is False only for a committed call; the
text content is a JSON object ``{"status", "code", "message", "receipt"}``
(``ToolResult``); ``structured_content`` holds the receipt of a committed call. A call the
world never answers (a timeout) hangs until the client's own timer fires (``wait_for``,
``read_timeout_seconds``) or, past the port's ``call_timeout``, answers ``status
"timeout"`` with ``is_error``.

The plan call an MCP call belongs to (``call_id`` in traces and the history the invariants
read) is the plan's first call of that tool whose arguments match but for the idempotency
key and that has not yet committed through this server (a plan that asks the same thing
twice makes two calls); else the first call of that tool; else the tool's name. So client
code need not pass any txcheck identifier.
"""

from __future__ import annotations

import json
from typing import Any

try:
    from mcp import types
    from mcp.server import Server
except ImportError as missing:  # pragma: no cover - the extra is part of the test extra
    raise ImportError(
        "txcheck.adapters.mcp needs the MCP SDK: pip install 'txcheck[mcp]'"
    ) from missing

from txcheck.adapters.model import call_of, result_body
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.requests import ResultStatus, ToolResult

__all__ = ["TESTED_VERSION", "call_of", "server"]

TESTED_VERSION = "2.3.0"
"""The ``mcp`` release this adapter is tested with (pinned in the ``mcp`` extra)."""


def server(ctx: Any, ports: Any, *, name: str = "txcheck") -> Server[Any]:
    """An MCP server for one orchestrator generation: ``ctx`` (its plan and contract) and
    ``ports`` are the ones ``orchestrate(ctx, ports)`` receives."""
    contract: Contract = ctx.contract
    plan: Plan = ctx.plan
    listed = types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool.name,
                description=tool.description or None,
                input_schema=dict(tool.parameters) or {"type": "object"},
            )
            for tool in contract.tools.values()
        ]
    )

    async def list_tools(
        _ctx: Any, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    done: set[str] = set()  # plan calls that committed: the same asking again is the next

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        call_id = call_of(plan, contract, params.name, arguments, answered=done)
        try:
            result = await ports.tools.call(params.name, arguments, call_id=call_id)
        except TimeoutError:
            result = ToolResult(status=ResultStatus.TIMEOUT, code="timeout", message="no answer")
        if result.status is ResultStatus.OK:
            done.add(call_id)
        return as_mcp(result)

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def as_mcp(result: ToolResult) -> types.CallToolResult:
    """A world's ``ToolResult`` as an MCP tool result (see the module's docstring)."""
    body = result_body(result)
    ok = result.status is ResultStatus.OK
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body, sort_keys=True))],
        structured_content=body["receipt"] if ok else None,
        is_error=not ok,
    )
