"""A model from a proposal: a scripted model whose turns are a plan's calls, and whose
decision after a failed tool call is a choice of the search.

Agent frameworks do not retry a failed tool call themselves: they tell the model, and the
model decides its next turn. Real models usually repeat the call under a fresh idempotency
key (they mint a new one), sometimes repeat it unchanged, sometimes give up. So the scripted
model asks the checker: after a failure it sends a ``ModelTurn`` request through the ports,
and the checker answers it like any other choice point (default: a fresh key; deviations:
the same arguments, or stop). The decision is recorded in the trace (``ModelTurn`` with its
``decision``), shrunk and replayed like a tool outcome, with no new machinery. A policy that
uses it declares ``model_turns = True`` so the engines offer those deviations.

Everything else is fixed by the proposal: the calls in plan order, their arguments, and the
retry budget (``max_attempts`` per call, after which the model stops on its own). The key
argument a fresh-key retry varies is the one the contract names for the tool
(``x-txcheck.idempotency_key``); a tool with none is repeated unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import attrs

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.requests import ModelTurn, ToolResult

__all__ = ["Feedback", "ScriptedModel", "ToolCall", "call_of", "result_body"]


@attrs.frozen(kw_only=True)
class ToolCall:
    """One tool call the model emits: ``id`` is its tool-call id (the plan call's id, as a
    vendor's ``call_...`` id), ``attempt`` counts the model's tries of that call."""

    id: str
    name: str
    arguments: Mapping[str, Any] = attrs.field(eq=False)
    attempt: int = 1


@attrs.frozen(kw_only=True)
class Feedback:
    """What the agent tells the model about a call: ``ok``, or the ``error`` it met
    (``timeout``, ``error``, ``conflict``, ``rejected``, or a framework's own word)."""

    call: ToolCall
    ok: bool
    error: str = ""


class ScriptedModel:
    """The model of one agent run: ``await turn(None)`` gives the first call, then
    ``await turn(feedback)`` the next one, or None when the plan is done or the model
    stopped (``stopped`` says which). Needs the run's ``ports`` (``txcheck.sim.Ports``):
    its decisions are port operations."""

    def __init__(
        self, plan: Plan, contract: Contract, ports: Any, *, max_attempts: int = 3
    ) -> None:
        self.plan = plan
        self.contract = contract
        self.max_attempts = max_attempts
        self.stopped = False
        """Whether the model gave up on a failed call (rather than finishing the plan)."""
        self._ports = ports
        self._next = 0

    async def turn(self, feedback: Feedback | None) -> ToolCall | None:
        """The model's next tool call after ``feedback`` (None: the conversation starts)."""
        if self.stopped:
            return None
        if feedback is None or feedback.ok:
            return self._from_plan()
        failed = feedback.call
        if failed.attempt >= self.max_attempts:
            self.stopped = True
            return None
        request = ModelTurn(
            call_id=failed.id,
            tool=failed.name,
            attempt=failed.attempt,
            error=feedback.error or "error",
        )
        decision = await self._ports.model.turn(request)
        if decision == "stop":
            self.stopped = True
            return None
        arguments = dict(failed.arguments)
        if decision == "fresh_key":
            arguments = self._fresh_key(failed, arguments)
        return ToolCall(
            id=failed.id, name=failed.name, arguments=arguments, attempt=failed.attempt + 1
        )

    def _from_plan(self) -> ToolCall | None:
        calls = self.plan.calls
        if self._next >= len(calls):
            return None
        call = calls[self._next]
        self._next += 1
        return ToolCall(id=call.id, name=call.name, arguments=dict(call.arguments or {}))

    def _fresh_key(self, failed: ToolCall, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments with a new idempotency key, as a model mints one: deterministic
        (``<original>-retry<attempt>``), so the same choices give the same trace."""
        tool = self.contract.tool(failed.name)
        key = tool.idempotency_key if tool is not None else None
        if key is None or key not in arguments:
            return arguments
        original = next(
            (dict(c.arguments or {}).get(key) for c in self.plan.calls if c.id == failed.id),
            arguments[key],
        )
        return {**arguments, key: f"{original}-retry{failed.attempt + 1}"}


def call_of(
    plan: Plan,
    contract: Contract,
    tool: str,
    arguments: Mapping[str, Any],
    answered: Collection[str] = (),
) -> str:
    """The id of the plan call a framework's call of ``tool`` with ``arguments`` belongs to
    (it carries no txcheck identifier): the plan's first call of that tool whose arguments
    match but for the idempotency key and that is not in ``answered`` (calls already
    answered for good: a plan may ask the same thing twice, and the second asking is the
    second call, not a fourth attempt of the first), else the last such call, else the
    first call of that tool, else the tool's name."""
    spec = contract.tool(tool)
    key = spec.idempotency_key if spec is not None else None

    def intent(values: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in values.items() if k != key}

    same_tool = [c for c in plan.calls if c.name == tool]
    matching = [c.id for c in same_tool if intent(c.arguments or {}) == intent(arguments)]
    if matching:
        return next((c for c in matching if c not in answered), matching[-1])
    return same_tool[0].id if same_tool else tool


def result_body(result: ToolResult) -> dict[str, Any]:
    """A world's ``ToolResult`` as the JSON object every adapter's tool answers with:
    ``{"status", "code", "message", "receipt"}`` (the receipt of a committed call)."""
    return {
        "status": result.status.value,
        "code": result.code,
        "message": result.message,
        "receipt": None if result.receipt is None else dict(result.receipt),
    }
