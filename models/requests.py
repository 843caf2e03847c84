"""What actors ask of the world, and what they get back.

Policies are generators that ``yield`` these requests and are resumed with the response.
Every yield is a point where the checker may schedule another actor, inject a fault or
crash the actor, so a policy's durable progress is exactly what it wrote through requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

__all__ = [
    "Ack",
    "ApplyEffect",
    "BrokerSend",
    "Claim",
    "Delivery",
    "Invoke",
    "JournalAppend",
    "JournalRead",
    "KeyLookup",
    "Lookup",
    "MarkSeen",
    "OutboxFetch",
    "OutboxMarkPublished",
    "Publish",
    "Reconcile",
    "Request",
    "SeenCheck",
    "Sleep",
    "ToolResult",
]

ResultStatus = Literal["ok", "rejected", "conflict", "timeout", "error"]


@attrs.frozen(kw_only=True)
class Invoke:
    """Call a tool. ``call_id`` names the plan call this attempt belongs to; a compensation
    names the call it undoes in ``compensates``."""

    tool: str
    arguments: Mapping[str, Any] = attrs.field(eq=False)
    call_id: str
    compensates: str | None = None


@attrs.frozen(kw_only=True)
class ToolResult:
    """A tool's answer.

    ``ok``: committed (``replayed`` when the idempotency store returned a stored result);
    ``rejected``: a permanent business rejection; ``conflict``: the key is in flight or was
    used for another request; ``timeout``: the outcome is unknown; ``error``: a transient
    failure, nothing committed.
    """

    status: ResultStatus
    receipt: Mapping[str, Any] | None = attrs.field(default=None, eq=False)
    code: str = ""
    message: str = ""
    replayed: bool = False
    events: tuple[Mapping[str, Any], ...] = attrs.field(default=(), eq=False)

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status}
        if self.code:
            data["code"] = self.code
        if self.replayed:
            data["replayed"] = True
        if self.receipt is not None:
            data["receipt"] = dict(self.receipt)
        return data


@attrs.frozen(kw_only=True)
class Lookup:
    """Ask the service whether an operation with this intent committed (query the state).

    Answers the committed receipt, or None. It does not depend on the idempotency record,
    so it is safe after the key may have expired.
    """

    tool: str
    arguments: Mapping[str, Any] = attrs.field(eq=False)
    call_id: str


@attrs.frozen(kw_only=True)
class KeyLookup:
    """Ask the idempotency store for a key's live record: its status and stored result,
    or None. Unlike ``Lookup`` it knows nothing once the record has expired."""

    key: str


@attrs.frozen(kw_only=True)
class Reconcile:
    """Check receipts against the services' committed operations; answers the diverging
    records (an empty list when everything matches)."""

    receipts: Mapping[str, Mapping[str, Any]] = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class JournalAppend:
    """Append an entry to this orchestrator instance's durable journal."""

    entry: Mapping[str, Any] = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class Claim:
    """Claim a durable operation id and, if this instance owns it, append ``entry`` to its
    journal in the same transaction (an insert under a unique key). Answers the owner:
    this instance when the claim is new or its own, another instance when the same
    operation was submitted before (a double click)."""

    operation: str
    entry: Mapping[str, Any] = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class JournalRead:
    """Read this instance's durable journal (a tuple of entries)."""


@attrs.frozen(kw_only=True)
class Sleep:
    """Wait ``ticks`` of the logical clock (backoff)."""

    ticks: int


@attrs.frozen(kw_only=True)
class Publish:
    """Dual write: send an event to the broker directly, outside the tool's transaction."""

    event: Mapping[str, Any] = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class OutboxFetch:
    """Relay: the oldest unpublished outbox row, or None."""


@attrs.frozen(kw_only=True)
class BrokerSend:
    """Relay: hand an event to the broker."""

    event: Mapping[str, Any] = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class OutboxMarkPublished:
    """Relay: mark an outbox row as published."""

    event_id: str


@attrs.frozen(kw_only=True)
class Delivery:
    """One delivery of a message to the consumer; ``delivery_id`` is unique per delivery."""

    delivery_id: str
    event: Mapping[str, Any] = attrs.field(eq=False)

    @property
    def event_id(self) -> str:
        return str(self.event["id"])


@attrs.frozen(kw_only=True)
class SeenCheck:
    """Consumer: has this message already been processed (the dedupe table)?"""

    event_id: str


@attrs.frozen(kw_only=True)
class MarkSeen:
    """Consumer: record the message as processed, on its own."""

    event_id: str


@attrs.frozen(kw_only=True)
class ApplyEffect:
    """Consumer: apply the event's effect; with ``record_seen`` the dedupe record is written
    in the same local transaction."""

    event: Mapping[str, Any] = attrs.field(eq=False)
    record_seen: bool


@attrs.frozen(kw_only=True)
class Ack:
    """Consumer: acknowledge a delivery so the broker stops redelivering it."""

    delivery_id: str


Request = (
    Invoke
    | Lookup
    | KeyLookup
    | Reconcile
    | Claim
    | JournalAppend
    | JournalRead
    | Sleep
    | Publish
    | OutboxFetch
    | BrokerSend
    | OutboxMarkPublished
    | SeenCheck
    | MarkSeen
    | ApplyEffect
    | Ack
)
