"""A checkout agent written with LangGraph, in two versions.

The graph is LangGraph's usual tool-calling agent: a ``StateGraph(MessagesState)`` whose
``agent`` node asks the model, ``ToolNode(tools, handle_tool_errors=True)`` runs the tool
calls it emits, and ``tools_condition`` routes back to the model until it answers without a
tool call. The model decides the retries. What is not LangGraph (validating the whole
proposal first, claiming the checkout's operation id so a double click attaches,
journaling every attempt, handing a restarted or abandoned run to a person) is
examples/agents/checkout.py's, shared by every framework.

- ``LangGraphCheckoutAgent`` (as usually written) sends the arguments the model emits.
  After a timeout a real model repeats the call under a fresh idempotency key; when the
  call that timed out commits later anyway (a late commit), the customer is charged twice.
- ``StableKeyLangGraphCheckoutAgent`` (fixed) replaces the model's key with one derived
  from the business intent and, after a timeout, asks the service whether the intent
  committed before the model may retry.

``build_graph(model, tools)`` is the LangGraph code that is checked. Under txcheck the
model is ``txcheck.adapters.langgraph.ScriptedChatModel`` and the tools are
``contract_tools`` whose calls go through the agent's ``ToolDesk``; in production they
would be your chat model and your tools. ``make_agent(model=..., tools=...)`` is the same
graph bare (no journal, no key discipline), for
``txcheck explore --agent examples.agents.langgraph_checkout:make_agent --framework
langgraph``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from examples.agents.checkout import CheckoutAgent, StableKey, ToolDesk
from txcheck.adapters.langgraph import ScriptedChatModel, contract_tools, run_agent
from txcheck.adapters.model import ScriptedModel

__all__ = [
    "LangGraphCheckoutAgent",
    "StableKeyLangGraphCheckoutAgent",
    "build_graph",
    "make_agent",
]


def build_graph(model: BaseChatModel, tools: Sequence[BaseTool]) -> Any:
    """LangGraph's tool-calling agent: model, tools, back to the model until it is done."""
    bound = model.bind_tools(tools)

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def make_agent(model: BaseChatModel, tools: Sequence[BaseTool]) -> Any:
    """The bare agent for ``--agent ... --framework langgraph``: the adapter passes the
    scripted model and the contract's tools served by the world."""
    return build_graph(model, tools)


class LangGraphCheckoutAgent(CheckoutAgent):
    """The agent as usually written: the model's arguments, the model's keys."""

    name = "langgraph-checkout"

    async def run(self, model: ScriptedModel, desk: ToolDesk, ctx: Any) -> None:
        tools = contract_tools(ctx.contract, desk.call)
        await run_agent(build_graph(ScriptedChatModel(script=model), tools), model)


class StableKeyLangGraphCheckoutAgent(StableKey, LangGraphCheckoutAgent):
    """The fix: the idempotency key comes from the business intent, not from the model."""

    name = "langgraph-checkout-stable-key"
