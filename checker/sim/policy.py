"""An asyncio orchestrator as a policy: what ``--policy module:entry`` loads when the entry
is ``async``.

The entry is either an ``async def orchestrate(ctx, ports)`` function, or a class (or an
instance of one) with ``async def orchestrate(self, ctx, ports)`` and, optionally, ``async
def relay(self, ports)`` and ``async def consume(self, delivery, ports)``; the relay and the
consumer a class leaves out are the reference ones. ``ctx`` says what the instance is asked
to do (``ctx.plan``, ``ctx.contract``, ``ctx.instance``, ``ctx.generation``); ``ports``
(``txcheck.sim.ports``) is how the code reaches the world. A class may declare, as a
``Policy`` does: ``name``, ``uses_outbox`` (default True), ``max_attempts`` (default None),
``late_commits`` (default True: a call the code gave up on may still commit later),
``model_turns`` (default False: a scripted model's decisions are choices, docs/agents.md) and
``call_timeout`` (seconds a tool call waits before ``ToolTimeout``, default 30).
"""

from __future__ import annotations

import inspect
import zlib
from typing import Any

from txcheck.models.sim.policies.base import (
    ActorGen,
    OrchestratorContext,
    Policy,
    import_path,
    is_async_entry,
)
from txcheck.models.sim.requests import Delivery
from txcheck.models.sim.runner import CONSUMER, RELAY
from txcheck.sim.actors import drive

__all__ = ["AsyncPolicy", "is_async_entry"]

DEFAULT_CALL_TIMEOUT = 30.0


class AsyncPolicy(Policy):
    """A ``Policy`` whose actors are asyncio code, each generation on its own ``SimLoop``
    (``txcheck.sim.actors.drive``): the runner and every engine see requests, as from any
    policy."""

    def __init__(self, entry: Any, *, name: str | None = None, spec: str | None = None) -> None:
        if not is_async_entry(entry):
            raise TypeError(
                "an async orchestrator is an 'async def orchestrate(ctx, ports)' or a class "
                f"with one (got {type(entry).__name__})"
            )
        target = entry() if isinstance(entry, type) else entry
        self.entry = entry
        self._spec = spec
        self._target = target
        function = inspect.iscoroutinefunction(target)
        self._orchestrate = target if function else target.orchestrate
        self._relay = None if function else _async_method(target, "relay")
        self._consume = None if function else _async_method(target, "consume")
        default = getattr(entry, "__qualname__", type(entry).__qualname__)
        self.name = name or str(getattr(target, "name", "") or default)
        self.uses_outbox = bool(getattr(target, "uses_outbox", True))
        self.max_attempts = getattr(target, "max_attempts", None)
        self.late_commits = bool(getattr(target, "late_commits", True))
        self.model_turns = bool(getattr(target, "model_turns", False))
        self.call_timeout = float(getattr(target, "call_timeout", DEFAULT_CALL_TIMEOUT))

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        return drive(
            lambda ports: self._orchestrate(ctx, ports),
            who=ctx.instance,
            generation=ctx.generation,
            seed=_seed(ctx.instance),
            call_timeout=self.call_timeout,
        )

    def relay(self) -> ActorGen:
        method = self._relay
        if method is None:
            return super().relay()
        return drive(
            method, who=RELAY, generation=1, seed=_seed(RELAY), call_timeout=self.call_timeout
        )

    def consume(self, delivery: Delivery) -> ActorGen:
        method = self._consume
        if method is None:
            return super().consume(delivery)
        return drive(
            lambda ports: method(delivery, ports),
            who=CONSUMER,
            generation=1,
            seed=_seed(CONSUMER),
            call_timeout=self.call_timeout,
        )

    @property
    def import_path(self) -> str | None:
        """What loads this policy again (``load_policy``): the spec it was made from when
        given (an agent's ``FRAMEWORK:module:make_agent``), else ``module:QualName`` of the
        entry (its class, for an instance), when it can be imported back from it."""
        if self._spec is not None:
            return self._spec
        entry = self.entry
        return import_path(
            entry if inspect.isfunction(entry) or isinstance(entry, type) else type(entry)
        )

    def __repr__(self) -> str:
        return f"<async policy {self.name}>"


def _async_method(target: object, name: str) -> Any:
    method = getattr(target, name, None)
    return method if inspect.iscoroutinefunction(method) else None


def _seed(who: str) -> int:
    """The seed of an actor's loop: from its name only, so that a state's identity (which
    leaves generations out) says all that decides what its code does."""
    return zlib.crc32(who.encode("utf-8"))
