"""What every checkout agent of examples/agents shares, whatever its framework.

An agent framework runs the loop (ask the model, run the tools it asks for, tell the model
how they went); around that loop a checkout agent that is fit for production keeps a small
durable record of what it attempted. That part is the same for every framework, so it is
written once here and each framework example supplies only ``run``, its own agent loop:

- ``CheckoutAgent.orchestrate`` validates the model's whole proposal before any call goes
  out, claims the checkout's operation id (a second submission of it, a double click,
  attaches to the first instead of running again), hands a restarted run to a person
  (``MANUAL``, the calls listed: their outcome is not known here), runs the agent loop, and
  marks the checkout done or hands it over when the model gave up.
- ``ToolDesk`` is where a framework's tool function sends a call: it journals the attempt,
  sends the call under the agent's timeout, journals a receipt, and says what the model is
  to be told. When the outcome of a call stays unknown it stops the model, so the agent
  hands the checkout over instead of guessing.
- ``CheckoutAgent`` as it stands is the agent **as usually written**: it sends the model's
  arguments, so after a timeout the model's retry carries a fresh idempotency key.
  ``StableKey`` is **the fix**: the key comes from the business intent (the tool and its
  arguments but the key), and after a timeout the service is asked whether the intent
  committed before the model may retry (a key's record can expire while a response is lost).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

import txcheck
from txcheck.adapters.model import ScriptedModel
from txcheck.policy import TERMINAL_PHASES, Phase

__all__ = ["CheckoutAgent", "Reply", "StableKey", "ToolDesk", "intent_key"]


@attrs.frozen(kw_only=True)
class Reply:
    """What a tool call came to, as the agent tells the model: ``ok`` with the ``receipt``
    of a committed call, or the ``error`` met (``timeout``, ``error``, ``conflict``,
    ``rejected``)."""

    ok: bool
    receipt: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    error: str = ""


Send = Callable[[dict[str, Any]], Awaitable[Reply]]
"""How a framework's tool reaches the service with the arguments the agent sends."""


class ToolDesk:
    """The tool calls of one agent run: every framework tool goes through ``call``."""

    def __init__(self, agent: CheckoutAgent, ctx: Any, ports: Any, model: ScriptedModel) -> None:
        self.agent = agent
        self.ctx = ctx
        self.ports = ports
        self.model = model
        self.attempted: list[str] = []
        """The plan calls that went out at least once, in order."""
        self._tries: dict[str, int] = {}

    async def call(
        self, call_id: str, name: str, arguments: Mapping[str, Any], send: Send | None = None
    ) -> Reply:
        """One attempt of plan call ``call_id``: ``send`` (default: the world's tool, through
        ``ports.tools.call``) under the agent's ``tool_timeout``."""
        if call_id not in self.attempted:
            self.attempted.append(call_id)
        self._tries[call_id] = self._tries.get(call_id, 0) + 1
        await self.ports.journal.append(
            {"call": call_id, "event": "attempt", "n": self._tries[call_id]}
        )
        sent = self.agent.arguments(name, dict(arguments), self.ctx)
        try:
            reply = await asyncio.wait_for(
                (send or self._world(call_id, name))(sent), self.agent.tool_timeout
            )
        except TimeoutError:
            known = await self.agent.after_timeout(self.ports, self.ctx, call_id, name, sent)
            if known is None:  # nobody knows whether it committed: a person looks at it
                self.model.stopped = True
                return Reply(ok=False, error="unknown")
            reply = Reply(ok=True, receipt=known) if known else Reply(ok=False, error="timeout")
        if reply.ok:
            await self.ports.journal.append(
                {"call": call_id, "event": "done", "receipt": dict(reply.receipt)}
            )
        return reply

    def _world(self, call_id: str, name: str) -> Send:
        async def send(arguments: dict[str, Any]) -> Reply:
            result = await self.ports.tools.call(name, arguments, call_id=call_id)
            if result.status == "ok":
                return Reply(ok=True, receipt=dict(result.receipt or {}))
            return Reply(ok=False, error=str(result.status))

        return send


class CheckoutAgent:
    """A checkout agent around a framework's loop (``run``), as usually written: the
    model's arguments, the model's keys."""

    name = "checkout-agent"
    model_turns = True  # the scripted model's retry decisions are choices of the search
    max_attempts = 3  # tries per call the model makes before it gives up
    tool_timeout = 10.0  # seconds a tool call may take before the agent stops waiting

    async def orchestrate(self, ctx: Any, ports: Any) -> None:
        journal = list(await ports.journal.read())
        phases = [e["phase"] for e in journal if "phase" in e]
        if phases and phases[-1] in TERMINAL_PHASES:
            return
        codes = sorted(set(txcheck.validate(ctx.contract, ctx.plan, summary=False).codes()))
        if codes:  # the whole proposal is checked before any call goes out
            await ports.journal.append({"phase": Phase.REJECTED, "codes": codes})
            return
        if not phases:  # the checkout is one business operation: a double click attaches
            operation = ctx.operation_id()
            owner = await ports.journal.claim(
                operation, {"phase": Phase.EXECUTING, "operation": operation}
            )
            if owner != ctx.instance:
                await ports.journal.append(
                    {"phase": Phase.ATTACHED, "operation": operation, "owner": owner}
                )
                return
        attempted = _attempted(journal)
        if attempted:  # a restart after calls went out: their outcome is not known here
            await self.hand_over(ports, attempted, "the agent restarted")
            return
        model = ScriptedModel(ctx.plan, ctx.contract, ports, max_attempts=self.max_attempts)
        desk = ToolDesk(self, ctx, ports, model)
        await self.run(model, desk, ctx)
        if model.stopped:
            await self.hand_over(ports, desk.attempted, "the model gave up")
        else:
            await ports.journal.append({"phase": Phase.RECONCILED, "outcome": "completed"})

    async def run(self, model: ScriptedModel, desk: ToolDesk, ctx: Any) -> None:
        """The framework's agent loop, driven by ``model``, its tools calling ``desk``."""
        raise NotImplementedError

    def arguments(self, name: str, arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """What the agent sends: the model's arguments as they are."""
        return arguments

    async def after_timeout(
        self, ports: Any, ctx: Any, call_id: str, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """What the agent learns after a timeout before it tells the model: here nothing,
        it reports the timeout (``{}``: not committed, as far as it knows)."""
        return {}

    async def hand_over(self, ports: Any, attempted: list[str], why: str) -> None:
        """Hand the checkout to a person, listing every call that went out."""
        diverging = [f"{call_id}: attempted, {why}" for call_id in attempted]
        await ports.journal.append({"phase": Phase.MANUAL, "diverging": diverging})


class StableKey(CheckoutAgent):
    """The fix, for any framework's agent (put it first among the bases): the idempotency
    key comes from the business intent, and a timeout is resolved by asking the service."""

    def arguments(self, name: str, arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        tool = ctx.contract.tool(name)
        key = tool.idempotency_key if tool is not None else None
        if key is None:
            return arguments
        return {**arguments, key: intent_key(name, arguments, key)}

    async def after_timeout(
        self, ports: Any, ctx: Any, call_id: str, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Before any retry, find out whether the intent committed: the receipt if it did,
        ``{}`` if not, None when nobody can know yet (then the agent hands over). A key
        still in flight under this agent means the call given up on may still commit (a
        late commit: a "not committed" from the service would not last); otherwise the
        service is asked (a key's record can expire while a response is lost)."""
        tool = ctx.contract.tool(name)
        key = arguments.get(tool.idempotency_key) if tool and tool.idempotency_key else None
        if key is not None:
            record = await ports.tools.key_record(str(key))
            if (
                record
                and record.get("status") == "in_flight"
                and record.get("owner") == ctx.instance
            ):
                return None
        answer = await ports.tools.lookup(name, arguments, call_id=call_id)
        if answer.status != "ok":
            return None
        return dict(answer.receipt) if answer.receipt is not None else {}


def intent_key(name: str, arguments: Mapping[str, Any], key: str) -> str:
    """An idempotency key made from the business intent: the tool and its arguments but
    the key, so every retry of one operation carries it whatever key the model minted."""
    intent = {k: v for k, v in arguments.items() if k != key}
    digest = hashlib.sha256(json.dumps([name, intent], sort_keys=True).encode("utf-8"))
    return f"intent-{digest.hexdigest()[:32]}"


def _attempted(journal: list[Any]) -> list[str]:
    seen: list[str] = []
    for entry in journal:
        if entry.get("event") == "attempt" and entry["call"] not in seen:
            seen.append(str(entry["call"]))
    return seen
