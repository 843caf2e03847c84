"""pydantic-ai agents checked unmodified: the framework's own agent loop, with the scripted
model of a proposal as its model and a contract's tools served by the simulated world (needs
``pydantic-ai-slim``: ``pip install 'txcheck[pydantic-ai]'``; tested with the version pinned
in pyproject.toml, ``TESTED_VERSION``).

- **The model.** ``scripted_model(model)`` is a ``FunctionModel`` whose *async* function
  plays a ``txcheck.adapters.model.ScriptedModel``: each response is one ``ToolCallPart``
  (the plan call's tool and arguments, ``tool_call_id`` the plan call's id, ``-try<n>`` for
  a retry), or a final ``TextPart`` when the plan is done or the model stopped (an agent
  whose ``output_type`` does not accept text is refused then, naming the setting). The next
  request's ``ToolReturnPart`` for that id is ``Feedback(ok=True)`` when its ``outcome`` is
  ``success``; any other outcome (``retried``: the tool raised ``ModelRetry``, which this
  version reports as a return part rather than a ``RetryPromptPart``) is a failure whose
  ``error`` is the ``status`` of the JSON body the tool raised with (else ``error``). After
  a failure the model's next turn is the search's choice (fresh key, same arguments,
  stop), as for every framework.
- **The tools.** ``contract_tools(contract, send)`` are async ``Tool``\\ s, one per contract
  tool (name, description, JSON schema), each calling ``send(run_context, name,
  arguments)``; a committed call returns the body ``{"status", "code", "message",
  "receipt"}``, any other raises ``ModelRetry`` with it: pydantic-ai's own way to tell the
  model a call failed. Their ``max_retries`` is the scripted model's whole budget, so
  pydantic-ai's retry limit never ends a run before the model stops (its default is 1).
  ``world_send(ctx, ports)`` sends to the world (``ports.tools.call``; a call past the
  port's timeout answers ``timeout``).
- **The run.** ``run_agent(agent, model, ...)`` runs ``agent.run`` under
  ``agent.override(model=..., [tools=..., toolsets=[]])`` (pydantic-ai's own test seam;
  context variables, so it holds per task) and ``disable_threads()`` (see below).
- **``--agent``.** ``agent_policy(make)`` calls ``make()`` once, with no argument (the
  user's factory needs no txcheck knowledge), and returns the orchestrator entry that, per
  run, replaces the agent's model with the plan's scripted model and *all* its tools and
  toolsets with the contract's tools bound to the world, then runs the framework's loop.

What the simulated loop cannot control is switched off or refused:

- Sync functions (sync tools, a sync model function, sync instructions, validators or
  history processors) run in worker threads by default, and a thread deadlocks
  ``SimLoop``. The adapter's model and tools are async, and the run is under pydantic-ai's
  ``disable_threads()`` (the switch its Temporal integration uses), so any sync callback
  of the user's agent runs inline on the loop instead.
- Instrumentation (OpenTelemetry/logfire: ``agent.instrument``, ``Agent.instrument_all()``,
  ``capabilities=[Instrumentation(...)]``) may start exporter threads: an instrumented
  agent is refused with a message naming the setting. It is off by default.
- Streaming (``run_stream``) is not used: the adapter calls ``agent.run``, and the scripted
  model has no stream function.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable
from contextlib import ExitStack
from typing import Any

try:
    from pydantic_ai import Agent, ModelRetry, RunContext, Tool
    from pydantic_ai._utils import disable_threads
    from pydantic_ai.capabilities._ordering import has_capability_type
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
except ImportError as missing:  # pragma: no cover - the extra is part of the test extra
    raise ImportError(
        "txcheck.adapters.pydantic_ai needs pydantic-ai: pip install 'txcheck[pydantic-ai]'"
    ) from missing

from txcheck.adapters.model import Feedback, ScriptedModel, ToolCall, call_of, result_body
from txcheck.models.errors import PolicyError
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.requests import ResultStatus, ToolResult

__all__ = [
    "TESTED_VERSION",
    "AgentEntry",
    "agent_policy",
    "call_id_of",
    "contract_tools",
    "run_agent",
    "scripted_model",
    "world_send",
]

TESTED_VERSION = "2.68.0"
"""The ``pydantic-ai-slim`` release this adapter is tested with (pinned in the extra)."""

PROMPT = "Carry out the checkout."
"""The user prompt of a run: the scripted model does not read it."""

Send = Callable[[RunContext[Any], str, dict[str, Any]], Awaitable[ToolResult]]
"""How a contract tool reaches its service: ``(run_context, name, arguments)``; the run
context has the ``tool_call_id`` (``call_id_of`` it for the plan call) and the ``deps``."""

_RETRY = re.compile(r"^(?P<call>.+)-try(?P<attempt>[0-9]+)$")


def tool_call_id(call: ToolCall) -> str:
    """The ``tool_call_id`` the scripted model emits for ``call``: the plan call's id, with
    ``-try<n>`` from the second attempt on (each id in a conversation is its own)."""
    return call.id if call.attempt == 1 else f"{call.id}-try{call.attempt}"


def call_id_of(tool_call_id: str) -> str:
    """The plan call's id a ``tool_call_id`` of the scripted model stands for."""
    matched = _RETRY.match(tool_call_id)
    return matched["call"] if matched else tool_call_id


def scripted_model(model: ScriptedModel) -> FunctionModel:
    """The framework's model for ``model``: an async ``FunctionModel`` (a sync function
    would be run in a worker thread)."""
    pending: list[ToolCall] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        feedback = _feedback(pending[-1], messages) if pending else None
        call = await model.turn(feedback)
        if call is None:
            if not info.allow_text_output:  # nothing the plan says could fill the output
                raise PolicyError(
                    "the pydantic-ai agent's output_type does not accept text: the scripted "
                    "model ends a run with a text answer (use output_type=str)"
                )
            return ModelResponse(parts=[TextPart("stopped" if model.stopped else "done")])
        pending.append(call)
        part = ToolCallPart(call.name, dict(call.arguments), tool_call_id(call))
        return ModelResponse(parts=[part])

    return FunctionModel(respond, model_name="txcheck-scripted")


def _feedback(call: ToolCall, messages: list[ModelMessage]) -> Feedback:
    """What the last request tells the model about ``call``."""
    wanted = tool_call_id(call)
    request = messages[-1] if messages else None
    parts = request.parts if isinstance(request, ModelRequest) else ()
    for part in parts:
        if isinstance(part, ToolReturnPart) and part.tool_call_id == wanted:
            if part.outcome == "success":
                return Feedback(call=call, ok=True)
            # ``retried`` (the tool raised ModelRetry), ``failed``, ``denied``, ...
            return Feedback(call=call, ok=False, error=_error_of(part.content))
        if isinstance(part, RetryPromptPart) and part.tool_call_id == wanted:  # older form
            return Feedback(call=call, ok=False, error=_error_of(part.content))
    return Feedback(call=call, ok=False, error="no_answer")


def _error_of(content: Any) -> str:
    if isinstance(content, str):
        try:
            body = json.loads(content)
        except ValueError:
            return "error"
        if isinstance(body, dict) and isinstance(body.get("status"), str):
            return str(body["status"])
        return "error"
    return "rejected"  # a list of validation errors: the arguments did not fit the schema


def contract_tools(contract: Contract, send: Send, *, max_retries: int = 100) -> list[Tool[Any]]:
    """One async pydantic-ai tool per contract tool, each sending through ``send``: a
    committed call returns its body, any other raises ``ModelRetry`` with it.
    ``max_retries`` (per tool, over a run) must exceed the model's own retry budget."""
    tools: list[Tool[Any]] = []
    for spec in contract.tools.values():
        function = _tool_function(spec.name, send)
        tool: Tool[Any] = Tool.from_schema(
            function,
            name=spec.name,
            description=spec.description or None,
            json_schema=dict(spec.parameters) or {"type": "object", "properties": {}},
            takes_ctx=True,
        )
        tool.max_retries = max_retries
        tools.append(tool)
    return tools


def _tool_function(name: str, send: Send) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def call(ctx: RunContext[Any], **arguments: Any) -> dict[str, Any]:
        result = await send(ctx, name, arguments)
        body = result_body(result)
        if result.status is not ResultStatus.OK:
            raise ModelRetry(json.dumps(body, sort_keys=True))
        return body

    call.__name__ = name
    return call


def world_send(ctx: Any, ports: Any) -> Send:
    """Send a contract tool's call to the world: one ``Invoke`` per call, its plan call the
    scripted model's id, else the one its arguments match (``call_of``)."""
    plan_ids = {c.id for c in ctx.plan.calls}

    async def send(run: RunContext[Any], name: str, arguments: dict[str, Any]) -> ToolResult:
        call_id = call_id_of(run.tool_call_id or name)
        if call_id not in plan_ids:
            call_id = call_of(ctx.plan, ctx.contract, name, arguments)
        try:
            result: ToolResult = await ports.tools.call(name, arguments, call_id=call_id)
        except TimeoutError:
            result = ToolResult(status=ResultStatus.TIMEOUT, code="timeout", message="no answer")
        return result

    return send


def refuse_uncontrolled(agent: Agent[Any, Any]) -> None:
    """Raise ``PolicyError`` (one line, naming the setting) for what the simulated loop
    cannot control: instrumentation, which may start exporter threads."""
    if not isinstance(agent, Agent):
        raise PolicyError(
            f"a pydantic-ai agent must be a pydantic_ai.Agent (got {type(agent).__name__})"
        )
    instrumented = agent._resolve_instrumentation_settings() is not None
    if instrumented or has_capability_type([agent._root_capability], Instrumentation):
        raise PolicyError(
            f"pydantic-ai agent {agent.name or ''!r} is instrumented (agent.instrument, "
            "Agent.instrument_all() or capabilities=[Instrumentation(...)]): its exporters may "
            "start threads the simulated loop cannot see; check it uninstrumented"
        )


async def run_agent(
    agent: Agent[Any, Any],
    model: ScriptedModel,
    *,
    tools: Iterable[Tool[Any]] | None = None,
    deps: Any = None,
    prompt: str = PROMPT,
) -> Any:
    """Run ``agent``'s own loop with ``model`` as its model (and, given ``tools``, those as
    its only tools), sync callbacks inline: the run's output."""
    refuse_uncontrolled(agent)
    with ExitStack() as stack:
        stack.enter_context(disable_threads())  # sync callbacks inline, never a thread
        if tools is None:
            stack.enter_context(agent.override(model=scripted_model(model)))
        else:
            stack.enter_context(
                agent.override(model=scripted_model(model), tools=list(tools), toolsets=[])
            )
        result = await agent.run(prompt, deps=deps)
    return result.output


class AgentEntry:
    """The orchestrator entry of a bare user agent (``--agent``): per run, the plan's
    scripted model and the contract's tools bound to the world, then the framework's loop.
    No journal, no key discipline: what is checked is the agent as configured."""

    model_turns = True  # the scripted model's retry decisions are choices of the search
    max_attempts = 3  # tries per call the model makes before it gives up

    def __init__(self, agent: Agent[Any, Any]) -> None:
        refuse_uncontrolled(agent)
        self.agent = agent
        self.name = f"pydantic-ai:{agent.name or 'agent'}"

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        model = ScriptedModel(ctx.plan, ctx.contract, ports, max_attempts=self.max_attempts)
        budget = self.max_attempts * max(1, len(ctx.plan.calls))
        tools = contract_tools(ctx.contract, world_send(ctx, ports), max_retries=budget)
        await run_agent(self.agent, model, tools=tools)


def agent_policy(make: Callable[[], Any]) -> AgentEntry:
    """The entry ``txcheck explore --agent MODULE:MAKE --framework pydantic-ai`` runs:
    ``make()`` is called once, with no argument, and must return a ``pydantic_ai.Agent``."""
    return AgentEntry(make())
