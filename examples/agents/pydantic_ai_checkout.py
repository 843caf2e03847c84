"""A checkout agent written with pydantic-ai, in two versions.

The agent loop is pydantic-ai's own (``Agent.run``): the model asks for a tool call, the
framework runs the tool, a tool that fails raises ``ModelRetry`` so the model is told and
decides what to do next, until the model answers with text. The tools send their calls
through the agent's ``ToolDesk`` (its ``deps``). What is not pydantic-ai (validating the
whole proposal first, claiming the checkout's operation id so a double click attaches,
journaling every attempt, handing a restarted or abandoned run to a person) is
examples/agents/checkout.py's, shared by every framework.

- ``PydanticAiCheckoutAgent`` (as usually written) sends the arguments the model emits.
  After a timeout a real model repeats the call under a fresh idempotency key; when the
  call that timed out commits later anyway (a late commit), the customer is charged twice.
- ``StableKeyPydanticAiCheckoutAgent`` (fixed) replaces the model's key with one derived
  from the business intent, and after a timeout asks the service whether the intent
  committed before the model may retry.

``make_agent()`` builds the ``Agent`` (its tools, its retry budget); it is also what
``txcheck explore --agent examples.agents.pydantic_ai_checkout:make_agent --framework
pydantic-ai`` checks bare (no journal, no key discipline). Under txcheck the model is
``txcheck.adapters.pydantic_ai.scripted_model``, put in with ``Agent.override``; in
production it would be your LLM (``Agent("openai:...")``): the loop is what is checked.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, RunContext

from examples.agents.checkout import CheckoutAgent, StableKey, ToolDesk
from txcheck import default_contract
from txcheck.adapters.model import ScriptedModel
from txcheck.adapters.pydantic_ai import call_id_of, contract_tools, run_agent
from txcheck.policy import ResultStatus, ToolResult

__all__ = ["PydanticAiCheckoutAgent", "StableKeyPydanticAiCheckoutAgent", "make_agent"]

RETRIES = 20
"""pydantic-ai's retry budget per tool (its default, 1, would end a run at the second
failure of a tool: more than the model's own ``max_attempts`` per call is needed)."""


def make_agent() -> Agent[ToolDesk, str]:
    """The checkout agent: the bundled contract's tools, each sending through the run's
    ``ToolDesk``; no model (``override`` or ``run(model=...)`` gives one)."""

    async def via_desk(
        run: RunContext[ToolDesk], name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        reply = await run.deps.call(call_id_of(run.tool_call_id or name), name, arguments)
        if reply.ok:
            return ToolResult(status=ResultStatus.OK, receipt=dict(reply.receipt))
        return ToolResult(status=ResultStatus(_status(reply.error)), code=reply.error)

    return Agent(
        name="checkout",
        deps_type=ToolDesk,
        instructions="Check the order out with the tools, one call at a time.",
        tools=contract_tools(default_contract(), via_desk, max_retries=RETRIES),
    )


class PydanticAiCheckoutAgent(CheckoutAgent):
    """The agent as usually written: the model's arguments, the model's keys."""

    name = "pydantic-ai-checkout"

    def __init__(self) -> None:
        self.agent = make_agent()

    async def run(self, model: ScriptedModel, desk: ToolDesk, ctx: Any) -> None:
        await run_agent(self.agent, model, deps=desk)


class StableKeyPydanticAiCheckoutAgent(StableKey, PydanticAiCheckoutAgent):
    """The fix: the idempotency key comes from the business intent, not from the model."""

    name = "pydantic-ai-checkout-stable-key"


def _status(error: str) -> str:
    known = {s.value for s in ResultStatus}
    return error if error in known else ResultStatus.ERROR.value
