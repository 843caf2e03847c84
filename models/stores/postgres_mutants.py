"""Mutant stores on PostgreSQL: the reference PostgreSQL stores with one classic bug each
(positive controls), the same four as ``txcheck.models.stores.mutants`` on SQLite.

``txcheck conform --dsn`` must catch every one of them; tests/test_store_mutants_postgres.py
holds it to that. Never adopt these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from txcheck.models.sim.idempotency import Begin, answer_to_live
from txcheck.models.stores.postgres import (
    _RECORD_COLUMNS,
    PostgresIdempotencyStore,
    PostgresInbox,
    PostgresOutbox,
    _json,
)

__all__ = [
    "CheckThenInsert",
    "DedupeAfterEffect",
    "OutboxInSecondTransaction",
    "ResultBeforeReservation",
]


class CheckThenInsert(PostgresIdempotencyStore):
    """Checks for the key, then inserts, in autocommit statements, and the table has no
    unique key: two clients can both pass the check and both proceed."""

    SCHEMA = (
        PostgresIdempotencyStore.SCHEMA[0]
        .replace("PRIMARY KEY (tenant_id, idempotency_key)", "seq BIGINT")
        .replace(
            "-- one record per key and tenant: a second writer of the same key fails here\n"
            "            -- (or waits for the first and then fails) even if a bug let it past "
            "the check\n",
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


class ResultBeforeReservation(PostgresIdempotencyStore):
    """Reserves nothing when a request begins and writes the record only with its result:
    a retry while the first attempt is in flight executes again."""

    def __init__(self, dsn: str, **options: Any) -> None:
        super().__init__(dsn, **options)
        self._pending: dict[tuple[str, str], dict[str, Any]] = {}

    def begin(self, **request: Any) -> Begin:
        answer = super().begin(**request)
        if answer.decision == "proceed":  # undo the reservation: the bug
            with self.transaction():
                self.connection.execute(
                    "DELETE FROM idempotency WHERE tenant_id = %s AND idempotency_key = %s",
                    (request["tenant"], request["key"]),
                )
            self._pending[(request["tenant"], request["key"])] = request
        return answer

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
                "DELETE FROM idempotency WHERE tenant_id = %s AND idempotency_key = %s",
                (tenant, key),
            )
            self.connection.execute(
                f"INSERT INTO idempotency ({_RECORD_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)",
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


class OutboxInSecondTransaction(PostgresOutbox):
    """Commits the operation, then writes its outbox rows in a second transaction: a crash
    between the two loses the events of a committed change."""

    def record(self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO operations (id, body) VALUES (%s, %s::jsonb)",
                (str(operation["id"]), _json(dict(operation))),
            )
        with self.transaction():
            self._write_events(operation, events)


class DedupeAfterEffect(PostgresInbox):
    """Applies the effect and commits, then records the event as seen: a crash between the
    two leaves an effect whose redelivery applies it again."""

    def deliver(self, event: Mapping[str, Any]) -> bool:
        if self.seen(str(event["id"])):
            return False
        with self.transaction() as connection:
            self.apply_effect(connection, event)
        with self.transaction() as connection:
            connection.execute(
                "INSERT INTO inbox_seen (event_id) VALUES (%s) ON CONFLICT DO NOTHING",
                (str(event["id"]),),
            )
        return True
