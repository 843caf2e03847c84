"""The policy interface: how an orchestrator, its outbox relay and its consumer behave.

A policy is three generators. Each ``yield``s requests from ``txcheck.models.sim.requests`` and is
resumed with the world's answer; each yield is a point where the checker may interleave,
inject a fault or crash the actor. After a crash the generator is dropped and
``orchestrate`` starts again: only what it wrote through requests (its journal, the
services' state) survives. A page of code is enough for a new policy: subclass ``Policy``
and write ``orchestrate``.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Generator, Mapping
from typing import Any

import attrs

from txcheck.models.canonical import canonical_json, normalize, stable_hash
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import ArgRef, Contract, ReceiptRef, Tool
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.sim.requests import (
    Ack,
    ApplyEffect,
    BrokerSend,
    Delivery,
    OutboxFetch,
    OutboxMarkPublished,
    Request,
    SeenCheck,
)

__all__ = [
    "UNDO_SUFFIX",
    "ActorGen",
    "OrchestratorContext",
    "Policy",
    "import_path",
    "is_async_entry",
    "operation_id",
    "resource_values",
    "shares_resource",
    "undo_arguments",
]

ActorGen = Generator[Request, Any, None]


@attrs.frozen(kw_only=True)
class OrchestratorContext:
    """What an orchestrator instance knows when it (re)starts: its name, plan and contract,
    and its ``generation``: 1 when it first starts, one more at each restart after a crash.
    The generation is for labels (which run of the code a message is about), never for
    decisions: a state's identity leaves it out."""

    instance: str
    plan: Plan
    contract: Contract
    generation: int = 1

    def tool(self, call: Call) -> Tool | None:
        return self.contract.tool(call.name)

    def key_of(self, call: Call) -> str | None:
        """The idempotency key the model gave this call, if its tool has one."""
        tool = self.tool(call)
        if tool is None or tool.idempotency_key is None or call.arguments is None:
            return None
        value = call.arguments.get(tool.idempotency_key)
        return None if value is None else str(value)

    def operation_id(self) -> str:
        """A durable id for the plan's business operation, to ``Claim`` before anything
        runs (``operation_id``)."""
        return operation_id(self.plan, self.contract)


def operation_id(plan: Plan, contract: Contract) -> str:
    """The durable id of ``plan``'s business operation: the same plan submitted twice is
    one operation, even under other idempotency keys (a model asked twice writes fresh
    ones). Like a service's ``Lookup``, it goes by each call's intent: its arguments but a
    pure idempotency key. Computed once per (plan, contract): every run claims it."""

    def compute() -> str:
        body: list[list[Any]] = []
        for call in plan.calls:
            tool = contract.tool(call.name)
            if tool is None or call.arguments is None:
                body.append([call.name, call.raw_arguments])
            else:
                body.append([call.name, tool.intent_arguments(call.arguments)])
        return "op_" + stable_hash(body)[:16]

    return _OPERATION_IDS((plan, contract), compute)


_OPERATION_IDS: IdentityMemo[str] = IdentityMemo()


UNDO_SUFFIX = "~undo"
"""What a compensation's call id and idempotency key add to the original's."""


def resource_values(contract: Contract, call: Call) -> frozenset[str]:
    """The resources ``call`` names: each of its tool's ``resource`` arguments with its
    value (two calls share a resource when they give one argument the same value)."""
    tool = contract.tool(call.name)
    if tool is None or call.arguments is None:
        return frozenset()
    arguments = call.arguments
    return frozenset(
        canonical_json(normalize([name, arguments[name]]))
        for name in tool.resources
        if name in arguments
    )


def shares_resource(contract: Contract, first: Call, second: Call) -> bool:
    """Whether two calls name the same value for a resource argument."""
    return bool(resource_values(contract, first) & resource_values(contract, second))


def undo_arguments(
    tool: Tool, undo: Tool, original: Mapping[str, Any], receipt: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments of the call that undoes ``original`` (a committed call of ``tool``,
    answered with ``receipt``), as ``tool.compensated_by`` says: the plain form copies the
    original's arguments the undo's schema defines; the object form takes literals, the
    original's arguments (``ArgRef``, ``{"$arg": ...}`` in the contract) and fields of the
    receipt (``ReceiptRef``, ``{"$receipt": ...}``). The undo is another operation, so its
    idempotency key is derived from the original's (``<key>~undo``), never copied: a
    copied key would make the store answer the undo with the original call's result."""
    spec = tool.compensated_by
    if spec is None:
        raise ValueError(f"tool {tool.name!r} has no compensated_by")
    properties = undo.parameters.get("properties", {})
    if spec.arguments is None:
        arguments = {
            k: v for k, v in original.items() if k in properties and k != tool.idempotency_key
        }
    else:
        arguments = {}
        for name, value in spec.arguments.items():
            if isinstance(value, ArgRef):
                arguments[name] = original.get(value.name)
            elif isinstance(value, ReceiptRef):
                arguments[name] = receipt.get(value.field)
            else:
                arguments[name] = value
    if undo.idempotency_key and undo.idempotency_key not in arguments:
        base = original.get(tool.idempotency_key or "", "")
        arguments[undo.idempotency_key] = f"{base}{UNDO_SUFFIX}"
    return arguments


def is_async_entry(found: object) -> bool:
    """Whether ``found`` is an asyncio orchestrator (``txcheck.sim``) rather than a policy:
    an ``async def`` function, or a class or object (not a ``Policy``) whose
    ``orchestrate`` is one."""
    if isinstance(found, Policy) or (isinstance(found, type) and issubclass(found, Policy)):
        return False
    if inspect.iscoroutinefunction(found):
        return True
    return inspect.iscoroutinefunction(getattr(found, "orchestrate", None))


def import_path(obj: Any) -> str | None:
    """``module:QualName`` of a class or function that can be imported back from it (not
    one from ``__main__`` or defined inside a function), else None: how a policy is named
    where it must be loaded again (traces, printed reproductions, workers)."""
    module, qualname = obj.__module__, obj.__qualname__
    if module == "__main__" or "<locals>" in qualname:
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module}:{qualname}" if found is obj else None


class Policy:
    """Base class: an outbox relay and a deduplicating consumer; subclasses orchestrate.

    Class attributes a subclass may override:

    - ``name``: the stable name used in traces and on the command line;
    - ``uses_outbox``: tool calls write their events into the outbox in the same local
      transaction (otherwise the orchestrator must ``Publish`` them: a dual write);
    - ``max_attempts``: the retry budget per call, which the ``retry_budget`` invariant
      holds the policy to (``None``: no budget declared);
    - ``late_commits``: the checker may also answer a tool call with a timeout while the
      call is still in flight and commits later (``Outcome.LATE_COMMIT``): what a client
      that gives up on a call (``asyncio.wait_for``, a cancelled task) faces. Off for
      the built-in generator policies, whose recorded results predate it; on for asyncio
      orchestrators (``txcheck.sim``).
    - ``model_turns``: the policy's code asks a scripted model what to do after a failed
      tool call (``ModelTurn``, ``txcheck.agents``), so the model's decisions are
      deviation kinds the engines draw (``MODEL_KINDS``). Off by default.
    """

    name: str = "policy"
    uses_outbox: bool = True
    max_attempts: int | None = 3
    late_commits: bool = False
    model_turns: bool = False

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        raise NotImplementedError(f"{type(self).__name__} must implement orchestrate()")

    def relay(self) -> ActorGen:
        """Publish one outbox row: fetch, send, then mark. A crash between send and mark
        sends it again, so the consumer must deduplicate."""
        event = yield OutboxFetch()
        if event is None:
            return
        yield BrokerSend(event=event)
        yield OutboxMarkPublished(event_id=event["id"])

    def consume(self, delivery: Delivery) -> ActorGen:
        """Apply a delivered event once: the dedupe record commits with the effect."""
        seen = yield SeenCheck(event_id=delivery.event_id)
        if not seen:
            yield ApplyEffect(event=delivery.event, record_seen=True)
        yield Ack(delivery_id=delivery.delivery_id)

    def __repr__(self) -> str:
        return f"<policy {self.name}>"
