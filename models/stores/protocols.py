"""The four durable records as protocols: small enough for a production store to implement.

Each method is one transaction: it either happens whole or not at all, and a crash in the
middle leaves the state as before or as after (never in between). A store that meets another
client's lock may raise ``StoreBusy``: the operation did not apply and may be retried.

The reference semantics are the in-memory models: ``txcheck.models.sim.idempotency.
IdempotencyStore`` (the same one the model checker's world uses) and ``MemoryJournal``,
``MemoryOutbox`` and ``MemoryInbox`` in ``txcheck.models.stores.memory``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from txcheck.models.errors import TxcheckError
from txcheck.models.sim.idempotency import Begin, IdempotencyRecord

__all__ = [
    "KINDS",
    "IdempotencyStoreProtocol",
    "InboxProtocol",
    "JournalProtocol",
    "OutboxProtocol",
    "StoreBusy",
]

KINDS = ("idempotency", "journal", "outbox", "inbox")
"""The kinds ``txcheck conform`` checks."""


class StoreBusy(TxcheckError):
    """Another client holds the lock: nothing was applied, the caller may retry."""


@runtime_checkable
class IdempotencyStoreProtocol(Protocol):
    """One record per ``(tenant, key)``: see ``txcheck.models.sim.idempotency`` for the rules."""

    def begin(
        self,
        *,
        tenant: str,
        key: str,
        user_id: str,
        operation_type: str,
        resource_id: str,
        intent_hash: str,
        request_hash: str,
        now: int,
        owner: str,
    ) -> Begin:
        """Reserve ``key`` (``proceed``), or answer ``replay`` or ``conflict``."""

    def finish(
        self,
        tenant: str,
        key: str,
        *,
        status: Literal["committed", "rejected"],
        receipt: Mapping[str, Any],
        now: int,
    ) -> None:
        """Store the outcome of the request holding ``key`` in flight."""

    def abort(self, tenant: str, key: str) -> None:
        """Drop ``key``'s in-flight marker (nothing committed); any other record stays."""

    def lookup(self, tenant: str, key: str, now: int) -> IdempotencyRecord | None:
        """The live record of ``key`` at ``now`` (None when absent or expired)."""


@runtime_checkable
class JournalProtocol(Protocol):
    """Each orchestrator instance's append-only journal, and unique operation claims."""

    def open(self, instance: str) -> None:
        """Create ``instance``'s empty journal (nothing happens if it exists)."""

    def append(self, instance: str, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` to an open journal."""

    def entries(self, instance: str) -> list[dict[str, Any]]:
        """An open journal's entries, oldest first."""

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        """The owner of ``operation``: ``instance`` when the claim is new (its journal gets
        ``entry`` in the same transaction) or when it is its own already; else the owner."""


@runtime_checkable
class OutboxProtocol(Protocol):
    """A state change and the events it publishes, written in one transaction."""

    def record(self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        """Commit ``operation`` (a row with an ``id``) and one outbox row per event (each
        with an ``id``), all or nothing."""

    def operations(self) -> list[dict[str, Any]]:
        """Every committed operation, in commit order."""

    def pending(self) -> list[dict[str, Any]]:
        """The events not yet published, oldest first (the relay publishes the first)."""

    def mark_published(self, event_id: str) -> None:
        """The relay published ``event_id``: it leaves ``pending``."""


@runtime_checkable
class InboxProtocol(Protocol):
    """A consumer's dedupe record, committed in the same transaction as the effect."""

    def deliver(self, event: Mapping[str, Any]) -> bool:
        """Apply ``event``'s effect unless its ``id`` was seen: True when applied now."""

    def seen(self, event_id: str) -> bool:
        """Whether the dedupe table holds ``event_id``."""

    def effects(self) -> dict[str, int]:
        """How many times each event's effect was applied (exactly once is right)."""
