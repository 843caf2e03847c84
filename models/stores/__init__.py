"""Durable records a policy relies on, as small protocols, their reference semantics (the
in-memory model) and SQLite reference implementations a team can adopt.

``txcheck conform KIND --impl module:Class`` checks any implementation against the model.
"""

from txcheck.models.stores.memory import MemoryInbox, MemoryJournal, MemoryOutbox
from txcheck.models.stores.protocols import (
    KINDS,
    IdempotencyStoreProtocol,
    InboxProtocol,
    JournalProtocol,
    OutboxProtocol,
    StoreBusy,
)

__all__ = [
    "KINDS",
    "IdempotencyStoreProtocol",
    "InboxProtocol",
    "JournalProtocol",
    "MemoryInbox",
    "MemoryJournal",
    "MemoryOutbox",
    "OutboxProtocol",
    "StoreBusy",
]
