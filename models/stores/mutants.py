"""Mutant stores: the reference SQLite stores with one classic bug each (positive controls).

``txcheck conform`` must catch every one of them; tests/test_stores_conform.py holds it to
that, with the shortest failing history. Never adopt these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from txcheck.models.sim.idempotency import Begin, answer_to_live
from txcheck.models.stores.sqlite import (
    _RECORD_COLUMNS,
    SqliteIdempotencyStore,
    SqliteInbox,
    SqliteJournal,
    SqliteOutbox,
    _json,
)

__all__ = [
    "CheckThenInsert",
    "ClaimInMemory",
    "DedupeAfterEffect",
    "OutboxInSecondTransaction",
    "ResultBeforeReservation",
]


class CheckThenInsert(SqliteIdempotencyStore):
    """Checks for the key, then inserts, in two autocommit statements, and the table has
    no unique key: two clients can both pass the check and both proceed."""

    SCHEMA = (
        SqliteIdempotencyStore.SCHEMA[0]
        .replace("PRIMARY KEY (tenant_id, idempotency_key)", "seq INTEGER")
        .replace(
            "-- one record per key and tenant: a second writer of the same key fails here\n"
            "            -- even if a bug let it past the check\n",
            "",
        ),
    )

    def begin(self, **request: Any) -> Begin:
        record = self._live(request["tenant"], request["key"], request["now"])  # the check
        if record is not None:
            return answer_to_live(
                record,
                key=request["key"],
                operation_type=request["operation_type"],
                intent_hash=request["intent_hash"],
                check_request_hash=self.check_request_hash,
            )
        self._reserve(**request)  # the insert, in autocommit statements of its own
        return Begin(decision="proceed")


class ResultBeforeReservation(SqliteIdempotencyStore):
    """Reserves nothing when a request begins and writes the record only with its result:
    a retry while the first attempt is in flight executes again."""

    def begin(self, **request: Any) -> Begin:
        answer = super().begin(**request)
        if answer.decision == "proceed":  # undo the reservation: the bug
            with self.transaction():
                self.connection.execute(
                    "DELETE FROM idempotency WHERE tenant_id = ? AND idempotency_key = ?",
                    (request["tenant"], request["key"]),
                )
            self._pending[(request["tenant"], request["key"])] = request
        return answer

    def __init__(self, path: str, **options: Any) -> None:
        super().__init__(path, **options)
        self._pending: dict[tuple[str, str], dict[str, Any]] = {}

    def finish(
        self,
        tenant: str,
        key: str,
        *,
        status: Literal["committed", "rejected"],
        receipt: Mapping[str, Any],
        now: int,
    ) -> None:
        request = self._pending.pop((tenant, key), None)
        if request is None:
            super().finish(tenant, key, status=status, receipt=receipt, now=now)
            return
        with self.transaction():
            self.connection.execute(
                f"INSERT OR REPLACE INTO idempotency ({_RECORD_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    tenant,
                    request["user_id"],
                    request["operation_type"],
                    request["resource_id"],
                    request["intent_hash"],
                    key,
                    request["request_hash"],
                    request["now"],
                    now + self.ttl,
                    status,
                    _json(dict(receipt)),
                    request["owner"],
                ),
            )


class OutboxInSecondTransaction(SqliteOutbox):
    """Commits the operation, then writes its outbox rows in a second transaction: a crash
    between the two loses the events of a committed change."""

    def record(self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO operations (id, body) VALUES (?, ?)",
                (str(operation["id"]), _json(dict(operation))),
            )
        with self.transaction():
            self._write_events(operation, events)


class DedupeAfterEffect(SqliteInbox):
    """Applies the effect and commits, then records the event as seen: a crash between the
    two leaves an effect whose redelivery applies it again."""

    def deliver(self, event: Mapping[str, Any]) -> bool:
        if self.seen(str(event["id"])):
            return False
        with self.transaction() as connection:
            self.apply_effect(connection, event)
        with self.transaction() as connection:
            connection.execute(
                "INSERT INTO inbox_seen (event_id) VALUES (?) ON CONFLICT DO NOTHING",
                (str(event["id"]),),
            )
        return True


class ClaimInMemory(SqliteJournal):
    """Keeps the operation claims in a dict of the process (a cache that was never written
    through): another instance, on its own connection, never sees a claim, and a crash
    forgets it. The journal entries themselves are committed as they should be."""

    def __init__(self, path: str, **options: Any) -> None:
        super().__init__(path, **options)
        self._claims: dict[str, str] = {}

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        owner = self._claims.setdefault(operation, instance)
        if owner == instance:
            self.append(instance, entry)
        return owner
