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

Two more seams (``txcheck explore --agent MODULE:make_agent --framework mcp [--mcp-server
MODULE:make_server]``):

- ``agent_policy(make, make_server=None)``: MCP has no agent loop of its own, the user's
  client code is the loop. ``make()`` (called once, with no argument, at load) returns an
  async callable ``agent(client, model)``: ``client`` an ``mcp.Client`` connected in-process
  to the server (entered: ``await client.call_tool(...)`` works at once), ``model`` the run's
  ``ScriptedModel`` (``await model.turn(feedback)`` -> the next ``ToolCall`` or None). The
  transport is the agent's ``mode`` attribute, ``mcp.Client``'s own word: ``"legacy"`` by
  default (the SDK's memory streams and JSON-RPC session, as over stdio) or ``"auto"`` (its
  direct in-process dispatcher).
- ``user_server(make_server)``: the user's own MCP server in place of the contract's.
  ``make_server(ports)`` is called once per orchestrator generation and returns an
  ``mcp.server.Server`` or an ``mcp.server.MCPServer`` (async tools only: the SDK runs a sync
  tool in a thread, so one is refused by name) whose handlers reach the world through
  ``ports`` (``ServerPorts``: the run's ports, ``tools.call`` and ``tools.lookup`` with
  the plan call supplied by ``call_of`` when not given, no ``model``). Every port
  operation is a world request, so every fault between the server and the world is the
  checker's choice, and what the handler does (the key it sends, the lookups it makes) is
  in the trace.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

try:
    from mcp import Client, types
    from mcp.server import MCPServer, Server
except ImportError as missing:  # pragma: no cover - the extra is part of the test extra
    raise ImportError(
        "txcheck.adapters.mcp needs the MCP SDK: pip install 'txcheck[mcp]'"
    ) from missing

from txcheck.adapters.model import ScriptedModel, call_of, result_body
from txcheck.models.errors import ControlFlow, PolicyError
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.requests import ResultStatus, ToolResult

__all__ = [
    "MODES",
    "TESTED_VERSION",
    "AgentPolicy",
    "McpAgent",
    "ServerPorts",
    "ServerTools",
    "agent_policy",
    "as_mcp",
    "call_of",
    "server",
    "user_server",
]

TESTED_VERSION = "2.3.0"
"""The ``mcp`` release this adapter is tested with (pinned in the ``mcp`` extra)."""


def server(ctx: Any, ports: Any, *, name: str = "txcheck") -> Server[Any]:
    """An MCP server for one orchestrator generation: ``ctx`` (its plan and contract) and
    ``ports`` are the ones ``orchestrate(ctx, ports)`` receives."""
    contract: Contract = ctx.contract
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

    tools = ServerTools(ctx, ports.tools)  # names each call's plan call, as for a user's

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await tools.call(params.name, dict(params.arguments or {}))
        except TimeoutError:
            result = ToolResult(status=ResultStatus.TIMEOUT, code="timeout", message="no answer")
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


McpAgent = Callable[[Client, ScriptedModel], Awaitable[Any]]
"""A user's MCP agent loop (what ``make_agent()`` returns for ``--framework mcp``)."""

MakeServer = Callable[[Any], "Server[Any] | MCPServer[Any]"]
"""A user's ``make_server(ports)``."""

ServeFor = Callable[[Any, Any], "Server[Any] | MCPServer[Any]"]
"""What serves one orchestrator generation: ``(ctx, ports) -> server`` (``server`` itself,
or ``user_server(make_server)``)."""


class ServerTools:
    """``ports.tools`` for a server's handlers: a call or lookup without ``call_id`` is
    put under the plan call it belongs to (``call_of``); a call that committed is not named
    again (the contract server calls through one too)."""

    def __init__(self, ctx: Any, tools: Any) -> None:
        self._ctx = ctx
        self._tools = tools
        self._done: set[str] = set()  # plan calls that committed: the same asking is the next

    @property
    def call_timeout(self) -> float:
        """Seconds a call waits for an answer before it raises ``ToolTimeout``."""
        return float(self._tools.call_timeout)

    def _call_id(self, tool: str, arguments: Mapping[str, Any], call_id: str | None) -> str:
        if call_id is not None:
            return call_id
        return call_of(self._ctx.plan, self._ctx.contract, tool, arguments, answered=self._done)

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        call_id: str | None = None,
        compensates: str | None = None,
    ) -> ToolResult:
        """``ports.tools.call``: a ``ToolResult``; no answer raises ``ToolTimeout``."""
        named = self._call_id(tool, arguments, call_id)
        result: ToolResult = await self._tools.call(
            tool, arguments, call_id=named, compensates=compensates
        )
        if result.status is ResultStatus.OK:
            self._done.add(named)
        return result

    async def lookup(
        self, tool: str, arguments: Mapping[str, Any], *, call_id: str | None = None
    ) -> ToolResult:
        """``ports.tools.lookup``: whether an operation with this intent committed."""
        return await self._tools.lookup(  # type: ignore[no-any-return]
            tool, arguments, call_id=self._call_id(tool, arguments, call_id)
        )

    async def key_record(self, key: str) -> dict[str, Any] | None:
        """``ports.tools.key_record``: the idempotency store's live record of ``key``."""
        return await self._tools.key_record(key)  # type: ignore[no-any-return]

    async def reconcile(self, receipts: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """``ports.tools.reconcile``: the receipts that match no committed operation."""
        return await self._tools.reconcile(receipts)  # type: ignore[no-any-return]


class ServerPorts:
    """What ``make_server(ports)`` receives: the generation's ports as a server's
    production clients (``tools``, ``journal``, ``inbox``, ``broker``, ``outbox``), with
    ``tools`` a ``ServerTools``; no ``model`` (a server has none)."""

    def __init__(self, ctx: Any, ports: Any) -> None:
        self.tools = ServerTools(ctx, ports.tools)
        self.journal = ports.journal
        self.inbox = ports.inbox
        self.broker = ports.broker
        self.outbox = ports.outbox
        self.generation: int = ports.generation
        """1 for the first run of this instance, one more after each crash."""

    def __repr__(self) -> str:
        return f"<server ports of generation {self.generation}>"


def _named(make: Callable[..., Any], default: str) -> str:
    module = getattr(make, "__module__", None)
    name = getattr(make, "__qualname__", None) or default
    return f"{module}:{name}" if module else str(name)


def _check_server(made: Any, make: MakeServer) -> Server[Any] | MCPServer[Any]:
    if isinstance(made, MCPServer):
        _refuse_sync_tools(made, make)
        return made
    if isinstance(made, Server):
        return made
    raise PolicyError(
        f"MCP server factory {_named(make, 'make_server')}(ports) must return an "
        f"mcp.server.Server or mcp.server.MCPServer (got {type(made).__name__})"
    )


def _refuse_sync_tools(made: MCPServer[Any], make: MakeServer) -> None:
    """An ``MCPServer`` runs a sync tool with ``anyio.to_thread``: a thread the simulated
    loop cannot see or schedule, so such a tool is refused by name. The tool list is the
    SDK's ``_tool_manager`` (mcp 2.3.0, the pinned version); without it nothing is refused
    and the loop's fence stops a thread at run time."""
    manager = getattr(made, "_tool_manager", None)
    tools = manager.list_tools() if manager is not None else ()
    sync = sorted(t.name for t in tools if not getattr(t, "is_async", True))
    if sync:
        raise PolicyError(
            f"MCP server factory {_named(make, 'make_server')}(ports): tool {sync[0]!r} is a "
            f"sync function, which MCPServer runs in a thread the simulated loop cannot "
            f"see; write it 'async def'"
        )


class _Unconnected:
    """The ports ``user_server`` builds a probe server with: building a server must not
    use them (a port operation happens in a handler, inside a run)."""

    generation = 1

    def __getattr__(self, name: str) -> Any:
        return self

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise PolicyError("make_server(ports) used a port while building the server")


def user_server(make_server: MakeServer, *, check: bool = True) -> ServeFor:
    """Serve a run with the user's own MCP server: ``(ctx, ports) -> make_server(
    ServerPorts(ctx, ports))``, made for each orchestrator generation (no server outlives
    its run). With ``check`` (default) ``make_server`` is tried once now on unconnected
    ports, so a factory that raises or returns no server is a one-line ``PolicyError`` at
    load time rather than a failed run."""
    if not callable(make_server):
        raise PolicyError(
            f"the MCP server factory must be a function 'make_server(ports)' "
            f"(got {type(make_server).__name__})"
        )
    if check:
        try:
            made: Any = make_server(_Unconnected())
        except (PolicyError, ControlFlow):
            raise
        except BaseException as error:  # user code: even SystemExit is reported, not obeyed
            raise PolicyError(
                f"MCP server factory {_named(make_server, 'make_server')}(ports) raised "
                f"{type(error).__name__}: {error}"
            ) from None
        if inspect.iscoroutine(made):
            made.close()
        _check_server(made, make_server)

    def serve(ctx: Any, ports: Any) -> Server[Any] | MCPServer[Any]:
        return _check_server(make_server(ServerPorts(ctx, ports)), make_server)

    serve.__qualname__ = f"user_server({_named(make_server, 'make_server')})"
    return serve


class AgentPolicy:
    """An async orchestrator running a user's bare MCP agent loop (``agent(client,
    model)``) against ``serve``'s server (default: the contract's, ``server``): no
    validation, no journal, no hand-over; exactly the agent's loop over the world."""

    model_turns = True  # the scripted model's retry decisions are choices of the search
    max_attempts = 3

    def __init__(
        self, agent: McpAgent, name: str, *, serve: ServeFor = server, mode: str = "legacy"
    ) -> None:
        self.agent = agent
        self.name = name
        self.serve = serve
        self.mode = mode
        """``mcp.Client``'s ``mode``: ``"legacy"`` (memory streams, JSON-RPC, the
        initialize handshake: as over stdio) or ``"auto"`` (the SDK's direct in-process
        dispatcher)."""

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        model = ScriptedModel(ctx.plan, ctx.contract, ports, max_attempts=self.max_attempts)
        async with Client(self.serve(ctx, ports), mode=self.mode) as client:
            await self.agent(client, model)


MODES = ("legacy", "auto")
"""The transports an agent may ask for by its ``mode`` attribute (``mcp.Client``'s):
``"legacy"`` (the default) or ``"auto"`` (direct, in-process)."""


def _is_async_callable(value: Any) -> bool:
    return inspect.iscoroutinefunction(value) or inspect.iscoroutinefunction(
        getattr(value, "__call__", None)  # noqa: B004 - an object's async __call__
    )


def agent_policy(make: Callable[[], Any], make_server: MakeServer | None = None) -> AgentPolicy:
    """What ``--agent MODULE:MAKE_AGENT --framework mcp [--mcp-server MODULE:MAKE_SERVER]``
    runs: ``make()`` (no argument, once) must return an async ``agent(client, model)``; its
    client is connected to ``user_server(make_server)``'s server, else to the contract's,
    by the transport the agent's ``mode`` attribute names (``MODES``; default legacy)."""
    agent = make()
    label = getattr(make, "__name__", "make_agent")
    if not _is_async_callable(agent):
        raise PolicyError(
            f"{label}() must return an async function 'agent(client, model)' "
            f"(got {type(agent).__name__})"
        )
    mode = getattr(agent, "mode", "legacy")
    if mode not in MODES:
        raise PolicyError(
            f"the agent {label}() made asks for MCP mode {mode!r} (known: {', '.join(MODES)})"
        )
    serve = server if make_server is None else user_server(make_server)
    name = f"mcp:{getattr(agent, '__name__', None) or type(agent).__name__}"
    if make_server is not None:
        name += f"@{getattr(make_server, '__name__', 'make_server')}"
    return AgentPolicy(agent, name, serve=serve, mode=str(mode))
