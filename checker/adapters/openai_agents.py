"""OpenAI Agents SDK agents checked unmodified: the SDK's own ``Runner`` loop, with a scripted
model from the proposal and the contract's tools served by the simulated world (needs
``openai-agents``: ``pip install 'txcheck[openai-agents]'``; tested with the version pinned
in pyproject.toml).

- ``ScriptedAgentsModel`` is an ``agents.models.interface.Model`` driven by
  ``txcheck.adapters.model.ScriptedModel``: each ``get_response`` reads the
  ``function_call_output`` of its previous call from the input the SDK sends, turns it into
  ``Feedback``, and answers the scripted model's next turn as one ``function_call`` output
  item (or, once the plan is done or the model stopped, an assistant message, which ends the
  run). A retry gets the tool-call id ``<plan call id>~<attempt>``: the SDK treats a call id
  as one canonical invocation and would not run a completed one again (``plan_call_id``
  maps it back).
- ``contract_tools`` are the contract's tools as ``FunctionTool``s whose ``on_invoke_tool``
  is ``ports.tools.call``: each call is one ``Invoke`` of the world, its outcome the
  checker's choice. Their output (and what the scripted model reads back) is the JSON object
  ``{"status", "code", "message", "receipt"}`` (``tool_output``).
- ``run_agent(agent, ctx, ports)`` runs a user's ``Agent`` with those (its ``model``,
  ``tools`` and MCP servers replaced through ``Agent.clone``, the SDK's own override seam) by
  ``Runner.run``; ``agent_policy(make)`` is what ``txcheck explore --agent MODULE:MAKE_AGENT
  --framework openai-agents`` runs: ``make()`` is called once, with no argument, when the
  policy is loaded, and every run clones the agent it returned.

What the simulated loop cannot control is switched off or refused:

- tracing: the SDK's batch trace processor starts a worker thread on the first span; the
  adapter disables tracing globally when imported (``set_tracing_disabled(True)``, as
  ``OPENAI_AGENTS_DISABLE_TRACING=1`` would) and passes ``RunConfig(tracing_disabled=True)``;
- streaming (``Runner.run_streamed``): ``stream_response`` refuses with a one-line
  ``PolicyError``; the loop is the same, use ``Runner.run``;
- sync function tools (``@function_tool`` on a ``def``): the SDK runs them with
  ``asyncio.to_thread``; ``run_agent`` refuses such a tool by name (write it ``async def``);
- handoffs: another agent's model would not be scripted; ``run_agent`` refuses them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

try:
    from agents import Agent, FunctionTool, RunConfig, Runner, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model, ModelTracing
    from agents.testing import assistant_message, function_call
    from agents.tool_context import ToolContext
    from agents.usage import Usage
except ImportError as missing:  # pragma: no cover - the extra is part of the test extra
    raise ImportError(
        "txcheck.adapters.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'txcheck[openai-agents]'"
    ) from missing

from txcheck.adapters.model import Feedback, ScriptedModel, ToolCall, call_of, result_body
from txcheck.models.errors import PolicyError
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.requests import ResultStatus, ToolResult

__all__ = [
    "PROMPT",
    "RUN_CONFIG",
    "TESTED_VERSION",
    "AgentPolicy",
    "ScriptedAgentsModel",
    "agent_policy",
    "contract_tools",
    "feedback_of",
    "max_turns",
    "plan_call_id",
    "refuse_sync_tools",
    "run_agent",
    "tool_output",
    "wire_id",
]

TESTED_VERSION = "0.24.0"
"""The ``openai-agents`` release this adapter is tested with (pinned in its extra)."""

# The SDK's tracing exports spans from a worker thread the simulated loop cannot see (and
# would post them to OpenAI): off for the whole process once this adapter is imported.
set_tracing_disabled(True)

RUN_CONFIG = RunConfig(tracing_disabled=True)
"""The run configuration of every run: tracing off (no worker thread, no export)."""

PROMPT = "Carry out the checkout with the tools, one call at a time."
"""The user message a run starts with (the scripted model does not read it)."""

_RETRY = "~"
_SDK_ERRORS = (
    "An error occurred while running the tool",  # agents.tool.default_tool_error_function
    "Tool '",  # its texts for a tool not found, timed out or refused name the tool first
)
_SYNC_MARKER = "__agents_sync_function_tool__"  # agents.tool._SYNC_FUNCTION_TOOL_MARKER


def plan_call_id(tool_call_id: str) -> str:
    """The plan call a tool-call id of ``ScriptedAgentsModel`` belongs to (a retry's id
    carries ``~<attempt>``)."""
    return tool_call_id.split(_RETRY, 1)[0]


def wire_id(call: ToolCall) -> str:
    """The tool-call id the model emits for ``call``: the plan call's id, then
    ``~<attempt>`` on a retry (the SDK will not run a completed call id again)."""
    return call.id if call.attempt == 1 else f"{call.id}{_RETRY}{call.attempt}"


def tool_output(result: ToolResult) -> str:
    """A world's ``ToolResult`` as a tool's output text: a JSON object
    ``{"status", "code", "message", "receipt"}``, as the MCP adapter's."""
    return json.dumps(result_body(result), sort_keys=True)


def feedback_of(call: ToolCall, output: Any) -> Feedback:
    """What the model learns from a tool's output: a JSON object with a ``status`` is ok
    when it is ``"ok"`` (else its status is the error); one with a boolean ``ok`` says so
    (its ``error``, if any, is the error); any other text is the SDK's (a tool that raised,
    timed out or was refused) when the SDK wrote it, else a tool's plain answer: ok."""
    text = output if isinstance(output, str) else json.dumps(output, default=str)
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, Mapping):
        if "status" in body:
            status = str(body["status"])
            return Feedback(call=call, ok=status == "ok", error="" if status == "ok" else status)
        if isinstance(body.get("ok"), bool):
            ok = bool(body["ok"])
            return Feedback(call=call, ok=ok, error="" if ok else str(body.get("error") or "error"))
    if text.startswith("Tool '") and " timed out after " in text:  # FunctionTool.timeout_seconds
        return Feedback(call=call, ok=False, error="timeout")
    if text.startswith(_SDK_ERRORS):
        return Feedback(call=call, ok=False, error="error")
    return Feedback(call=call, ok=True)


class ScriptedAgentsModel(Model):
    """The SDK's ``Model``, its turns those of ``model`` (see the module's docstring)."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self._last: ToolCall | None = None

    async def get_response(  # noqa: PLR0917 - the SDK's signature
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        feedback = None if self._last is None else self._feedback(self._last, input)
        call = await self.model.turn(feedback)
        self._last = call
        if call is None:
            text = "I stopped: a call kept failing." if self.model.stopped else "Done."
            output = [assistant_message(text)]
        else:
            arguments = json.dumps(dict(call.arguments), sort_keys=True)
            output = [function_call(call.name, arguments, call_id=wire_id(call))]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise PolicyError(
            "streaming (Runner.run_streamed) is not supported under txcheck: use Runner.run"
        )

    @staticmethod
    def _feedback(call: ToolCall, items: str | list[Any]) -> Feedback:
        wanted = wire_id(call)
        for item in reversed(items if isinstance(items, list) else []):
            fields = item if isinstance(item, Mapping) else getattr(item, "__dict__", {})
            if fields.get("type") == "function_call_output" and fields.get("call_id") == wanted:
                return feedback_of(call, fields.get("output", ""))
        return Feedback(call=call, ok=False, error="no_output")  # the SDK ran no tool


Invoke = Callable[[str, str, dict[str, Any]], Awaitable[str]]
"""How a contract tool is served: ``(plan call id, tool, arguments) -> output text``."""


def contract_tools(contract: Contract, plan: Plan, ports: Any) -> list[FunctionTool]:
    """The contract's tools as the SDK's function tools, each call one ``Invoke`` of the
    world (``ports.tools.call``) under the plan call its tool-call id names (else the plan
    call its arguments match, ``call_of``)."""

    def serve(name: str) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
        async def invoke(ctx: ToolContext[Any], raw: str) -> str:
            arguments = json.loads(raw or "{}")
            call_id = plan_call_id(ctx.tool_call_id)
            if call_id not in {c.id for c in plan.calls}:
                call_id = call_of(plan, contract, name, arguments)
            try:
                result = await ports.tools.call(name, arguments, call_id=call_id)
            except TimeoutError:
                result = ToolResult(
                    status=ResultStatus.TIMEOUT, code="timeout", message="no answer"
                )
            return tool_output(result)

        return invoke

    return [
        FunctionTool(
            name=tool.name,
            description=tool.description or tool.name,
            params_json_schema=dict(tool.parameters) or {"type": "object", "properties": {}},
            on_invoke_tool=serve(tool.name),
            strict_json_schema=False,  # contract schemas are JSON Schema, not OpenAI-strict
        )
        for tool in contract.tools.values()
    ]


def max_turns(plan: Plan, max_attempts: int) -> int:
    """Enough model turns for every call of ``plan`` tried ``max_attempts`` times, and the
    closing message."""
    return len(plan.calls) * max_attempts + 1


async def run_agent(
    agent: Agent[Any],
    ctx: Any,
    ports: Any,
    *,
    model: ScriptedModel | None = None,
    tools: Sequence[Any] | None = None,
    max_attempts: int = 3,
) -> Any:
    """Run ``agent`` by ``Runner.run`` with the scripted model of ``ctx.plan`` (or
    ``model``) and ``tools`` (default: the contract's, served by the world); the SDK's
    ``RunResult``."""
    if agent.handoffs:
        raise PolicyError(
            f"agent {agent.name!r} has handoffs: their agents' models would not be scripted "
            f"(check each agent on its own)"
        )
    scripted = model or ScriptedModel(ctx.plan, ctx.contract, ports, max_attempts=max_attempts)
    served = list(tools) if tools is not None else contract_tools(ctx.contract, ctx.plan, ports)
    refuse_sync_tools(served)
    runnable = agent.clone(model=ScriptedAgentsModel(scripted), tools=served, mcp_servers=[])
    try:
        return await Runner.run(
            runnable,
            PROMPT,
            max_turns=max_turns(ctx.plan, scripted.max_attempts),
            run_config=RUN_CONFIG,
        )
    except ValueError as error:
        # A run the checker dropped is closed later, outside its task's context: the SDK's
        # trace scope then cannot reset its context variable (even with tracing off) and
        # says so; the run is being discarded, so it ends as closed, quietly.
        if _closing(error):
            raise GeneratorExit from None
        raise


def _closing(error: BaseException) -> bool:
    """Whether ``error`` was raised while a coroutine was being closed."""
    seen: BaseException | None = error.__context__
    while seen is not None:
        if isinstance(seen, GeneratorExit):
            return True
        seen = seen.__context__
    return False


def refuse_sync_tools(tools: Iterable[Any]) -> None:
    """Refuse a sync function tool: the SDK would run it in a thread (``asyncio.to_thread``)."""
    for tool in tools:
        if getattr(getattr(tool, "on_invoke_tool", None), _SYNC_MARKER, False):
            raise PolicyError(
                f"function tool {tool.name!r} is a sync function: the SDK runs it in a "
                f"thread the simulated loop cannot see; write it 'async def'"
            )


class AgentPolicy:
    """An async orchestrator running a user's bare ``Agent`` (see ``run_agent``): no
    validation, no journal, no hand-over; exactly the agent's loop over the world."""

    model_turns = True  # the scripted model's retry decisions are choices of the search
    max_attempts = 3

    def __init__(self, agent: Agent[Any], name: str) -> None:
        self.agent = agent
        self.name = name

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        await run_agent(self.agent, ctx, ports, max_attempts=self.max_attempts)


def agent_policy(make: Callable[[], Any]) -> AgentPolicy:
    """What ``--agent MODULE:MAKE_AGENT --framework openai-agents`` runs: ``make()`` (no
    argument) must return an ``agents.Agent``; its model and tools are replaced per run."""
    agent = make()
    if not isinstance(agent, Agent):
        raise PolicyError(
            f"{getattr(make, '__name__', 'make_agent')}() must return an agents.Agent "
            f"(got {type(agent).__name__})"
        )
    if agent.handoffs:
        raise PolicyError(
            f"agent {agent.name!r} has handoffs: their agents' models would not be scripted"
        )
    return AgentPolicy(agent, f"openai-agents:{agent.name}")
