"""LangGraph agents checked unmodified: the scripted model as a LangChain chat model, the
contract's tools as LangChain tools served by the simulated world, and the graph's sync
functions run on the simulated loop (needs ``langgraph``: ``pip install
'txcheck[langgraph]'``; tested with the version pinned in pyproject.toml).

- ``ScriptedChatModel(script=ScriptedModel(...))`` is a ``BaseChatModel``: each
  ``ainvoke`` is one turn of the scripted model. It reads the tool results of its last call
  from the conversation (the ``ToolMessage`` answering it: ``status="error"`` is a failure,
  its content the error word) and answers with an ``AIMessage`` carrying the next tool call
  (its ``id`` is the plan call's id) or, when the plan is done or the model stopped, a final
  message with none. ``bind_tools`` returns the model itself (the script knows the tools).
- ``contract_tools(contract, send)`` are the contract's tools as async-only ``BaseTool``s
  (``WorldTool``): the model's arguments go as they are (the contract's JSON schema, no
  coercion) to ``send(call_id, name, arguments)``, ``call_id`` being the tool call's id.
  A committed call returns the receipt as JSON; any other outcome raises ``ToolException``
  with the error word, which LangChain turns into ``ToolMessage(status="error")``.
  ``world_send(ports)`` sends through ``ports.tools.call``.
- ``agent_policy(make)`` is what ``txcheck explore --agent MODULE:MAKE --framework
  langgraph`` runs: ``make(model=..., tools=...)``, the user's own graph factory given the
  scripted model and the world's tools, is invoked with the plan as its only input.

What the simulated loop cannot control is switched off or refused (docs/agents.md):

- LangGraph runs a *sync* node or edge function (``tools_condition`` is one) in a thread
  pool (``run_in_executor``), which ``SimLoop`` fences. ``run_sync_inline(graph)`` makes the
  graph's sync node and branch functions run inline on the loop instead. There is no
  public seam for it: it replaces ``afunc`` of langgraph's private ``RunnableCallable``
  where it is ``partial(run_in_executor, None, func)`` (tested with the pinned release).
  A sync function that blocks is still caught (``time.sleep`` is fenced).
- LangSmith tracing (a background thread and the network) is off for the run
  (``langsmith.tracing_context(enabled=False)``, which wins over ``LANGSMITH_TRACING``).
- ``set_debug(True)`` / ``set_verbose(True)`` add console callback handlers that LangChain
  runs in a thread pool: refused (``LangGraphSettingError``, a one-line message naming it).
- The chat model's cache and streaming are off (``cache=False``, ``disable_streaming``):
  a global LLM cache would answer a turn without asking the script.
- The model is async only: a sync ``invoke`` of it (a sync node calling ``model.invoke``)
  is refused with a message; call ``await model.ainvoke(...)`` in an async node.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol

import attrs

try:
    import langsmith
    from langchain_core import globals as lc_globals
    from langchain_core.caches import BaseCache
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.runnables import Runnable
    from langchain_core.runnables.config import run_in_executor
    from langchain_core.tools import BaseTool, ToolException
    from langgraph._internal._runnable import RunnableCallable
    from pydantic import ConfigDict, Field, PrivateAttr
except ImportError as missing:  # pragma: no cover - the extra is part of the test extra
    raise ImportError(
        "txcheck.adapters.langgraph needs LangGraph: pip install 'txcheck[langgraph]'"
    ) from missing

from txcheck.adapters.model import Feedback, ScriptedModel, ToolCall
from txcheck.models.errors import PolicyError
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.requests import ResultStatus

__all__ = [
    "TESTED_VERSION",
    "Answer",
    "LangGraphSettingError",
    "ScriptedChatModel",
    "WorldTool",
    "agent_policy",
    "contract_tools",
    "recursion_limit",
    "run_agent",
    "run_sync_inline",
    "untraced",
    "world_send",
]

TESTED_VERSION = "1.2.24"
"""The ``langgraph`` release this adapter is tested with (pinned in the ``langgraph`` extra)."""


class LangGraphSettingError(PolicyError):
    """A LangGraph or LangChain setting the simulated loop cannot control is on."""


# -- the model -------------------------------------------------------------------------------


class ScriptedChatModel(BaseChatModel):
    """The scripted model of one agent run as a LangChain chat model (async only)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: ScriptedModel
    # a global LLM cache would answer a turn without asking the script; streaming is off
    # (the script has one answer per turn, nothing to stream)
    cache: BaseCache | bool | None = Field(default=False, exclude=True)
    disable_streaming: bool | Literal["tool_calling"] = True
    _last: ToolCall | None = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "txcheck-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """The script already knows the contract's tools: the model itself."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise LangGraphSettingError(
            "txcheck's scripted model is async only: call it with `await model.ainvoke(...)`"
            " in an async node (a sync model call would need a thread)"
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        call = await self.script.turn(self._feedback(messages))
        self._last = call
        if call is None:
            message = AIMessage(content="stopped" if self.script.stopped else "done")
        else:
            message = AIMessage(
                content="",
                tool_calls=[
                    {"id": call.id, "name": call.name, "args": dict(call.arguments)},
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _feedback(self, messages: Sequence[BaseMessage]) -> Feedback | None:
        """How the last call went, from the ``ToolMessage`` answering it (None: the first
        turn). A missing answer counts as an error."""
        last = self._last
        if last is None:
            return None
        for message in reversed(messages):
            if isinstance(message, AIMessage):
                break
            if isinstance(message, ToolMessage) and message.tool_call_id == last.id:
                if message.status != "error":
                    return Feedback(call=last, ok=True)
                return Feedback(call=last, ok=False, error=_error_word(message.content))
        return Feedback(call=last, ok=False, error="error")


def _error_word(content: Any) -> str:
    """The error a failed tool's message names: our tools' word (``timeout``...) or, for
    any other text (a framework's own message), ``error``."""
    text = content if isinstance(content, str) else ""
    return text if text.isidentifier() else "error"


# -- the tools -------------------------------------------------------------------------------


class Answer(Protocol):
    """What a tool call came to: ``ok`` with its ``receipt``, or the ``error`` met."""

    @property
    def ok(self) -> bool: ...

    @property
    def receipt(self) -> Mapping[str, Any]: ...

    @property
    def error(self) -> str: ...


@attrs.frozen(kw_only=True)
class WorldAnswer:
    """An ``Answer`` from the world (see ``world_send``)."""

    ok: bool
    receipt: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    error: str = ""


Send = Callable[[str, str, dict[str, Any]], Awaitable[Answer]]
"""How a tool reaches the service: ``send(call_id, name, arguments)``."""

_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "txcheck_langgraph_call_id", default=None
)


class WorldTool(BaseTool):
    """One contract tool, async only (no sync body: LangChain would run it in a thread).
    Its arguments are the model's, unparsed (the contract's JSON schema is only shown)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    send: Any  # Send
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """As ``BaseTool.ainvoke``; a tool call's ``id`` is kept as the plan call's id."""
        call_id = input.get("id") if isinstance(input, dict) else None
        token = _CALL_ID.set(call_id)
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise LangGraphSettingError(
            f"tool {self.name!r} is async only under txcheck: call it with `ainvoke`"
        )

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        call_id = _CALL_ID.get() or self.name
        answer = await self.send(call_id, self.name, dict(kwargs))
        if not answer.ok:
            raise ToolException(answer.error or "error")
        return json.dumps(dict(answer.receipt), sort_keys=True, default=str)


def contract_tools(contract: Contract, send: Send) -> list[BaseTool]:
    """The contract's tools as LangChain tools, each calling ``send``."""
    return [
        WorldTool(
            name=tool.name,
            description=tool.description or tool.name,
            args_schema=dict(tool.parameters) or {"type": "object", "properties": {}},
            send=send,
        )
        for tool in contract.tools.values()
    ]


def world_send(ports: Any) -> Send:
    """A ``send`` through ``ports.tools.call``: one tool call, one ``Invoke`` of the world.
    A call past the port's ``call_timeout`` is a ``timeout``."""

    async def send(call_id: str, name: str, arguments: dict[str, Any]) -> Answer:
        try:
            result = await ports.tools.call(name, arguments, call_id=call_id)
        except TimeoutError:
            return WorldAnswer(ok=False, error="timeout")
        if result.status is ResultStatus.OK:
            return WorldAnswer(ok=True, receipt=dict(result.receipt or {}))
        return WorldAnswer(ok=False, error=str(result.status.value))

    return send


# -- the graph -------------------------------------------------------------------------------


def run_sync_inline(graph: Any) -> Any:
    """Make a compiled ``StateGraph``'s sync node and branch functions run inline on the
    loop instead of in LangGraph's thread pool (``SimLoop`` fences threads). Returns the
    graph. Private seam: langgraph's ``RunnableCallable.afunc`` (see the module's doc)."""
    builder = getattr(graph, "builder", None)
    if builder is None:
        raise LangGraphSettingError(
            f"expected a compiled StateGraph (with .builder), got {type(graph).__name__}"
        )
    for runnable in _graph_runnables(builder):
        if isinstance(runnable, RunnableCallable) and _in_thread(runnable.afunc):
            runnable.afunc = _inline(runnable.func)
    return graph


def _graph_runnables(builder: Any) -> Iterator[Any]:
    for spec in builder.nodes.values():
        yield from _walk(spec.runnable)
    for branches in builder.branches.values():
        for branch in branches.values():
            yield from _walk(branch.path)


def _walk(runnable: Any) -> Iterator[Any]:
    yield runnable
    for step in getattr(runnable, "steps", ()) or ():  # a RunnableSequence
        yield from _walk(step)
    bound = getattr(runnable, "bound", None)  # a RunnableBinding
    if isinstance(bound, Runnable):
        yield from _walk(bound)


def _in_thread(afunc: Any) -> bool:
    """Whether ``afunc`` is LangGraph's thread-pool wrapper of a sync function."""
    return isinstance(afunc, functools.partial) and afunc.func is run_in_executor


def _inline(func: Callable[..., Any] | None) -> Callable[..., Awaitable[Any]]:
    if func is None:  # pragma: no cover - an executor wrapper always has its sync func
        raise LangGraphSettingError("a sync graph function without its body")

    @functools.wraps(func)
    async def inline(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    # the config kwargs LangGraph injects are read from the signature: keep the sync one
    inline.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    return inline


def untraced() -> Any:
    """A context in which LangChain starts no tracer: LangSmith off whatever the
    environment says; a global debug or verbose flag (console handlers LangChain runs in
    a thread pool) is refused."""
    for setting, on in (
        ("set_debug", lc_globals.get_debug()),
        ("set_verbose", lc_globals.get_verbose()),
    ):
        if on:
            raise LangGraphSettingError(
                f"langchain_core.globals.{setting}(True) adds console callbacks LangChain runs"
                f" in a thread: call {setting}(False) before checking the agent"
            )
    return langsmith.tracing_context(enabled=False)


def recursion_limit(script: ScriptedModel) -> int:
    """Supersteps enough for every call of the plan tried ``max_attempts`` times (a model
    node and a tool node each) and the final answer."""
    return 2 * len(script.plan.calls) * script.max_attempts + 10


async def run_agent(graph: Any, script: ScriptedModel, *, task: str = "") -> Any:
    """Run a compiled graph over a ``messages`` state on the scripted model: its sync
    functions inline, untraced, with a recursion limit that allows every retry."""
    run_sync_inline(graph)
    with untraced():
        return await graph.ainvoke(
            {"messages": [("user", task or "carry out the plan")]},
            {"recursion_limit": recursion_limit(script)},
        )


# -- the CLI's entry -------------------------------------------------------------------------


def agent_policy(make: Callable[..., Any]) -> Any:
    """The async entry ``txcheck explore --agent MODULE:MAKE --framework langgraph`` runs:
    per generation, ``make(model=ScriptedChatModel, tools=[WorldTool...])`` (the user's
    factory; it needs no txcheck import) returns the compiled graph, run by ``run_agent``.
    ``make`` is called once here with stand-ins, so a broken factory is reported at once."""
    try:
        inspect.signature(make).bind(model=None, tools=[])
    except TypeError:
        raise LangGraphSettingError(
            f"{getattr(make, '__name__', make)!r} must accept model= and tools= (the scripted"
            " model and the contract's tools the adapter passes)"
        ) from None
    except ValueError:  # no signature to read (a builtin): let the call say
        pass
    probe = make(model=ScriptedChatModel(script=ScriptedModel(None, None, None)), tools=[])  # type: ignore[arg-type]
    if not hasattr(probe, "ainvoke") or not hasattr(probe, "builder"):
        raise LangGraphSettingError(
            f"{getattr(make, '__name__', make)!r} must return a compiled StateGraph"
            f" (got {type(probe).__name__})"
        )

    class LangGraphAgent:
        """The bare user agent: no journal, no key discipline of its own."""

        name = f"langgraph:{getattr(make, '__name__', 'agent')}"
        model_turns = True
        max_attempts = 3

        async def orchestrate(self, ctx: Any, ports: Any) -> None:
            script = ScriptedModel(ctx.plan, ctx.contract, ports, max_attempts=self.max_attempts)
            model = ScriptedChatModel(script=script)
            graph = make(model=model, tools=contract_tools(ctx.contract, world_send(ports)))
            await run_agent(graph, script)

    return LangGraphAgent
