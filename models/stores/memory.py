"""The in-memory models of the journal, the outbox and the inbox: the reference semantics
``txcheck conform`` holds an implementation to (the idempotency store's model is
``txcheck.models.sim.idempotency.IdempotencyStore`` itself). They follow the world's journals,
outbox and consumer (``txcheck.models.sim.world``): each method is one atomic step."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MemoryInbox", "MemoryJournal", "MemoryOutbox"]


class MemoryJournal:
    """Journals by instance and the owner of each claimed operation."""

    def __init__(self) -> None:
        self._journals: dict[str, list[dict[str, Any]]] = {}
        self._claims: dict[str, str] = {}

    def copy(self) -> MemoryJournal:
        twin = MemoryJournal()
        twin._journals = copy.deepcopy(self._journals)
        twin._claims = dict(self._claims)
        return twin

    def open(self, instance: str) -> None:
        self._journals.setdefault(instance, [])

    def append(self, instance: str, entry: Mapping[str, Any]) -> None:
        self._journals[instance].append(dict(entry))

    def entries(self, instance: str) -> list[dict[str, Any]]:
        return [dict(e) for e in self._journals[instance]]

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        owner = self._claims.setdefault(operation, instance)
        if owner == instance:
            self.append(instance, entry)
        return owner

    def is_open(self, instance: str) -> bool:
        return instance in self._journals


class MemoryOutbox:
    """Committed operations and the outbox rows written with them."""

    def __init__(self) -> None:
        self._operations: list[dict[str, Any]] = []
        self._rows: list[dict[str, Any]] = []  # {"event": ..., "published": bool}

    def copy(self) -> MemoryOutbox:
        twin = MemoryOutbox()
        twin._operations = copy.deepcopy(self._operations)
        twin._rows = copy.deepcopy(self._rows)
        return twin

    def record(self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        self._operations.append(dict(operation))
        self._rows.extend({"event": dict(e), "published": False} for e in events)

    def operations(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._operations)

    def pending(self) -> list[dict[str, Any]]:
        return [dict(r["event"]) for r in self._rows if not r["published"]]

    def mark_published(self, event_id: str) -> None:
        for row in self._rows:
            if row["event"]["id"] == event_id:
                row["published"] = True


class MemoryInbox:
    """The consumer's dedupe table and the effects it applied."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._effects: dict[str, int] = {}

    def copy(self) -> MemoryInbox:
        twin = MemoryInbox()
        twin._seen = set(self._seen)
        twin._effects = dict(self._effects)
        return twin

    def deliver(self, event: Mapping[str, Any]) -> bool:
        event_id = str(event["id"])
        if event_id in self._seen:
            return False
        self._effects[event_id] = self._effects.get(event_id, 0) + 1
        self._seen.add(event_id)
        return True

    def seen(self, event_id: str) -> bool:
        return event_id in self._seen

    def effects(self) -> dict[str, int]:
        return dict(sorted(self._effects.items()))
