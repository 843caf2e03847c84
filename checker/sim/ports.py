"""The ports: how asyncio code under check reaches the simulated world.

An orchestrator's code awaits ``ports.tools.call(...)``, ``ports.journal.append(...)`` and
the rest, as it would await its production clients. Each port operation becomes one request
of ``txcheck.models.sim.requests`` (the same requests generator policies yield), so the
world, the services, the contract and the invariants are the ones every other policy is
checked against, and each operation is a point where the checker chooses what happens:
the outcome of a tool call, a crash, another actor moving first.

A tool call whose outcome is a timeout gets no answer: the caller's own timer (an
``asyncio.wait_for``, an ``asyncio.timeout``) fires first, or else the port's own
``call_timeout`` raises ``ToolTimeout``. Ports belong to one generation of an instance: once
it crashes they are closed, and code that still calls them (a port kept in a global across
a restart) gets ``StalePortError``, which the trace shows as a ``Refused`` step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from txcheck.models.sim.requests import (
    Ack,
    ApplyEffect,
    BrokerSend,
    Claim,
    Invoke,
    JournalAppend,
    JournalRead,
    KeyLookup,
    Lookup,
    MarkSeen,
    ModelTurn,
    OutboxFetch,
    OutboxMarkPublished,
    Publish,
    Reconcile,
    Refused,
    Request,
    SeenCheck,
    ToolResult,
)
from txcheck.sim.loop import PortFuture, SimLoop

__all__ = [
    "Broker",
    "Channel",
    "Inbox",
    "Journal",
    "Model",
    "Outbox",
    "Ports",
    "StalePortError",
    "ToolTimeout",
    "Tools",
]


class ToolTimeout(TimeoutError):
    """A tool call got no answer within the port's ``call_timeout`` (and no timer of the
    caller's fired first). Whether it committed is unknown: it may have, it may still."""

    def __init__(self, tool: str, call_id: str, seconds: float) -> None:
        self.tool = tool
        self.call_id = call_id
        super().__init__(f"{tool} ({call_id}) got no answer in {seconds:g} s")


class StalePortError(RuntimeError):
    """A port of a generation that crashed was used: its connection is gone. Keeping a
    port (or a client) across a restart is what this catches."""


class Channel:
    """One generation's line to the checker: the port operations waiting for an answer,
    and the refusals to show. The driver (``txcheck.sim.actors``) reads both."""

    def __init__(self, loop: SimLoop, *, who: str, generation: int) -> None:
        self.loop = loop
        self.who = who
        self.generation = generation
        self.requests: dict[PortFuture[Any], Request] = {}
        self.refusals: list[Refused] = []
        self.closed = False
        loop.txcheck_channel = self  # type: ignore[attr-defined]  # where stale calls report

    def send(self, label: str, request: Request) -> PortFuture[Any]:
        """A future the checker resolves with the world's answer to ``request``."""
        if self.closed or _running_loop() is not self.loop:
            raise self._stale(label)
        future = self.loop.create_port_future(label)
        self.requests[future] = request
        return future

    def _stale(self, label: str) -> StalePortError:
        reason = (
            f"{self.who} called {label} on a port of its generation {self.generation}, "
            "which crashed"
        )
        live = getattr(_running_loop(), "txcheck_channel", None)
        if isinstance(live, Channel) and live is not self and not live.closed:
            live.refusals.append(Refused(port=label, generation=self.generation, reason=reason))
        return StalePortError(reason)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Port:
    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    async def _ask(self, label: str, request: Request) -> Any:
        return await self._channel.send(label, request)


class Tools(_Port):
    """The contract's tools, served by the simulated services."""

    def __init__(self, channel: Channel, *, call_timeout: float) -> None:
        super().__init__(channel)
        self.call_timeout = call_timeout
        """Seconds a call waits for an answer before it raises ``ToolTimeout``."""

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        call_id: str | None = None,
        compensates: str | None = None,
    ) -> ToolResult:
        """Call ``tool``: a ``ToolResult`` with status ok (committed), rejected, conflict
        (the idempotency key is in flight or was used for another request) or error
        (transient, nothing committed). No answer raises ``ToolTimeout`` (a
        ``TimeoutError``) after ``call_timeout`` seconds, unless a timer of the caller's
        fires first. ``call_id`` names the plan call this attempt belongs to (default: the
        tool's name); a compensation names the call it undoes in ``compensates``."""
        request = Invoke(
            tool=tool,
            arguments=dict(arguments),
            call_id=tool if call_id is None else call_id,
            compensates=compensates,
        )
        return await self._ask(f"tools.call {tool}", request)  # type: ignore[no-any-return]

    async def lookup(
        self, tool: str, arguments: Mapping[str, Any], *, call_id: str | None = None
    ) -> ToolResult:
        """Ask the service whether an operation with this intent committed: ok with the
        committed receipt (or ``receipt=None``), or error (transient)."""
        request = Lookup(tool=tool, arguments=dict(arguments), call_id=call_id or tool)
        return await self._ask(f"tools.lookup {tool}", request)  # type: ignore[no-any-return]

    async def key_record(self, key: str) -> dict[str, Any] | None:
        """The idempotency store's live record of ``key``, or None."""
        return await self._ask("tools.key_record", KeyLookup(key=key))  # type: ignore[no-any-return]

    async def reconcile(self, receipts: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """The receipts that match no committed operation (empty when all do)."""
        request = Reconcile(receipts=dict(receipts))
        return await self._ask("tools.reconcile", request)  # type: ignore[no-any-return]


class Journal(_Port):
    """This instance's durable journal, and the claims on operation ids."""

    async def read(self) -> tuple[dict[str, Any], ...]:
        return await self._ask("journal.read", JournalRead())  # type: ignore[no-any-return]

    async def append(self, entry: Mapping[str, Any]) -> None:
        await self._ask("journal.append", JournalAppend(entry=entry))

    async def claim(self, operation: str, entry: Mapping[str, Any]) -> str:
        """Claim ``operation`` and, if this instance owns it, append ``entry`` in the same
        transaction; answers the owner's instance name."""
        request = Claim(operation=operation, entry=entry)
        return await self._ask("journal.claim", request)  # type: ignore[no-any-return]


class Broker(_Port):
    """The message broker (it may duplicate what it is handed)."""

    async def publish(self, event: Mapping[str, Any]) -> None:
        """Send ``event`` directly (a dual write, outside any tool's transaction)."""
        await self._ask("broker.publish", Publish(event=event))

    async def send(self, event: Mapping[str, Any]) -> None:
        """The relay hands an outbox row's event to the broker."""
        await self._ask("broker.send", BrokerSend(event=event))

    async def ack(self, delivery_id: str) -> None:
        """Acknowledge a delivery (the ACK can be lost: the message comes again)."""
        await self._ask("broker.ack", Ack(delivery_id=delivery_id))


class Outbox(_Port):
    """The transactional outbox, for the relay."""

    async def fetch(self) -> dict[str, Any] | None:
        """The oldest unpublished event, or None."""
        return await self._ask("outbox.fetch", OutboxFetch())  # type: ignore[no-any-return]

    async def mark_published(self, event_id: str) -> None:
        await self._ask("outbox.mark_published", OutboxMarkPublished(event_id=event_id))


class Inbox(_Port):
    """The consumer's dedupe records and effects."""

    async def seen(self, event_id: str) -> bool:
        return await self._ask("inbox.seen", SeenCheck(event_id=event_id))  # type: ignore[no-any-return]

    async def mark_seen(self, event_id: str) -> None:
        await self._ask("inbox.mark_seen", MarkSeen(event_id=event_id))

    async def apply(
        self, event: Mapping[str, Any], *, record_seen: bool, seen_id: str | None = None
    ) -> None:
        """Apply ``event``'s effect; with ``record_seen`` the dedupe record commits with it
        (the event id, or ``seen_id``)."""
        request = ApplyEffect(event=event, record_seen=record_seen, seen_id=seen_id)
        await self._ask("inbox.apply", request)


class Model(_Port):
    """The checker's side of a scripted model (``txcheck.adapters.model``): what the
    model does after a failed call is a choice of the search, asked here."""

    async def turn(self, request: ModelTurn) -> str:
        """The decision for ``request``: ``"fresh_key"``, ``"same_arguments"`` or
        ``"stop"``."""
        return str(await self._ask(f"model.turn {request.tool}", request))


class Ports:
    """Everything an actor's code may touch: ``tools``, ``journal``, ``broker``, ``outbox``
    and ``inbox`` (and ``model``, for a scripted model's decisions). One per generation of
    an actor."""

    def __init__(self, channel: Channel, *, call_timeout: float = 30.0) -> None:
        self.tools = Tools(channel, call_timeout=call_timeout)
        self.journal = Journal(channel)
        self.broker = Broker(channel)
        self.outbox = Outbox(channel)
        self.inbox = Inbox(channel)
        self.model = Model(channel)
        self.generation = channel.generation
        """1 for the first run of this instance, one more after each crash."""

    def __repr__(self) -> str:
        return f"<ports of generation {self.generation}>"
