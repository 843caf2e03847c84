"""A checkout agent written with the OpenAI Agents SDK, in two versions.

The agent loop is the SDK's own: ``Runner.run`` asks the model for its next turn, runs the
function tools it calls, and feeds their outputs back, until the model answers with a
message. The model decides the retries: when a tool reports a timeout, the model calls it
again. What is not the SDK (validating the whole proposal first, claiming the checkout's
operation id so a double click attaches, journaling every attempt, handing a restarted or
abandoned run to a person) is examples/agents/checkout.py's, shared by every framework.

- ``OpenAIAgentsCheckoutAgent`` (as usually written) sends the arguments the model emits.
  After a timeout a real model repeats the call under a fresh idempotency key; when the
  call that timed out commits later anyway (a late commit), the customer is charged twice.
- ``StableKeyOpenAIAgentsCheckoutAgent`` (fixed) replaces the model's key with one derived
  from the business intent and, after a timeout, asks the service whether the intent
  committed before the model may retry.

Under txcheck the model is ``txcheck.adapters.openai_agents.ScriptedAgentsModel`` (the
proposal's calls, the retry decision a choice of the search); in production it is your
model name or ``Model``. ``make_agent`` is the same agent bare (no journal, no validation),
as a factory for ``txcheck explore --agent
examples.agents.openai_agents_checkout:make_agent --framework openai-agents``.
"""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, FunctionTool
from agents.tool_context import ToolContext
from examples.agents.checkout import CheckoutAgent, Reply, StableKey, ToolDesk
from txcheck.adapters.model import ScriptedModel
from txcheck.adapters.openai_agents import plan_call_id, run_agent

__all__ = ["OpenAIAgentsCheckoutAgent", "StableKeyOpenAIAgentsCheckoutAgent", "make_agent"]

INSTRUCTIONS = (
    "You check out the customer's order: create it, reserve the stock, charge the payment, "
    "confirm the order. Call one tool at a time; if a call fails, try it again."
)


def reply_text(reply: Reply) -> str:
    """What a tool tells the model: a JSON object with the call's status and receipt."""
    status = "ok" if reply.ok else reply.error
    receipt = dict(reply.receipt) if reply.ok else None
    return json.dumps({"status": status, "receipt": receipt}, sort_keys=True)


def desk_tools(desk: ToolDesk, ctx: Any) -> list[FunctionTool]:
    """The checkout's tools as the SDK's function tools: each one sends its call through
    the agent's ``desk`` (journal, timeout, the world's service)."""

    def tool(name: str) -> Any:
        async def invoke(tool_ctx: ToolContext[Any], raw: str) -> str:
            call_id = plan_call_id(tool_ctx.tool_call_id)
            return reply_text(await desk.call(call_id, name, json.loads(raw or "{}")))

        return invoke

    return [
        FunctionTool(
            name=spec.name,
            description=spec.description or spec.name,
            params_json_schema=dict(spec.parameters) or {"type": "object", "properties": {}},
            on_invoke_tool=tool(spec.name),
            strict_json_schema=False,  # the contract's schemas are not OpenAI-strict
        )
        for spec in ctx.contract.tools.values()
    ]


class OpenAIAgentsCheckoutAgent(CheckoutAgent):
    """The agent as usually written: the model's arguments, the model's keys."""

    name = "openai-agents-checkout"

    async def run(self, model: ScriptedModel, desk: ToolDesk, ctx: Any) -> None:
        agent = Agent(name=self.name, instructions=INSTRUCTIONS, model="gpt-4.1-mini")
        # ``run_agent`` is ``Runner.run`` on ``agent.clone(model=..., tools=...)``: the
        # scripted model of this run, the desk's tools (see txcheck.adapters.openai_agents)
        await run_agent(agent, ctx, desk.ports, model=model, tools=desk_tools(desk, ctx))


class StableKeyOpenAIAgentsCheckoutAgent(StableKey, OpenAIAgentsCheckoutAgent):
    """The fix: the idempotency key comes from the business intent, not from the model."""

    name = "openai-agents-checkout-stable-key"


def make_agent() -> Agent[Any]:
    """The bare agent, as a factory: under ``--framework openai-agents`` txcheck replaces
    its model with the scripted one and its tools with the contract's, served by the world
    (in production: your model and your tools, e.g. ``@function_tool async def``)."""
    return Agent(name="checkout", instructions=INSTRUCTIONS, model="gpt-4.1-mini")
