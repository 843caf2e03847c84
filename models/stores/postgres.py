"""PostgreSQL reference implementations of the four records: code a team could adopt.

Needs psycopg 3 (``pip install 'txcheck[postgres]'``), imported when a store connects, so
importing this module needs nothing beyond the standard library. Every store opens its own
connection to the database ``dsn`` names with:

- ``autocommit=True``: psycopg never opens a transaction behind our back; each method writes
  ``BEGIN ISOLATION LEVEL SERIALIZABLE ... COMMIT`` itself, so what is atomic is visible
  here (as ``BEGIN IMMEDIATE`` is in ``txcheck.models.stores.sqlite``);
- ``SERIALIZABLE``: a check and the write that depends on it behave as one step. Under the
  default READ COMMITTED two clients could both read "no record" and both write; under
  SERIALIZABLE one of them fails with a serialization failure (nothing applied) instead;
- ``lock_timeout`` (50 ms by default): a client that meets another's row or key lock gives
  up quickly; a lock timeout, a serialization failure or a deadlock is ``StoreBusy``
  (nothing applied, retry);
- the server's defaults for durability (``synchronous_commit = on``): a committed
  transaction survives a crash of the client and of the server; a client that dies or
  disconnects in the middle of a transaction leaves nothing, the server rolls it back.

Tables are created unqualified, so they land in the first schema of the connection's
``search_path`` (``txcheck conform --dsn`` gives each history a fresh schema that way).
Reads run in autocommit, one statement each. Payloads are ``jsonb``. ``connection`` is
public so a checker can count statements (crash points, two clients).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from txcheck.models.errors import TxcheckError
from txcheck.models.sim.idempotency import DEFAULT_TTL, Begin, IdempotencyRecord, answer_to_live
from txcheck.models.stores.protocols import StoreBusy

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "BUSY_SQLSTATES",
    "PostgresIdempotencyStore",
    "PostgresInbox",
    "PostgresJournal",
    "PostgresOutbox",
    "PostgresUnavailable",
    "connect",
]

BUSY_SQLSTATES = frozenset({"55P03", "40001", "40P01"})
"""lock_not_available (``lock_timeout``), serialization_failure, deadlock_detected: the
transaction was rolled back whole, so the operation did not apply and may be retried."""


class PostgresUnavailable(TxcheckError):
    """psycopg is not installed, or the server cannot be reached (one line, no secrets)."""


def connect(dsn: str, *, lock_timeout_ms: int = 50) -> psycopg.Connection[Any]:
    """A connection set up as the module docstring says."""
    try:
        import psycopg
    except ImportError:
        raise PostgresUnavailable(
            "the PostgreSQL stores need psycopg 3: pip install 'txcheck[postgres]'"
        ) from None
    try:
        connection = psycopg.connect(dsn, autocommit=True)
    except psycopg.Error as error:
        # psycopg's message names host and port, never the password; keep its first line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PostgresUnavailable(f"cannot connect to PostgreSQL: {first}") from None
    connection.execute(f"SET lock_timeout = {max(1, int(lock_timeout_ms))}")
    # "relation already exists, skipping" on every reopen is noise, not news
    connection.execute("SET client_min_messages = warning")
    return connection


def _json(value: Any) -> str:
    """Canonical JSON text, sent as ``%s::jsonb`` (psycopg reads jsonb back as Python)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _busy(error: BaseException) -> bool:
    return getattr(error, "sqlstate", None) in BUSY_SQLSTATES


class _PostgresStore:
    """A connection, the schema, and one helper for a write transaction."""

    SCHEMA: tuple[str, ...] = ()

    def __init__(self, dsn: str, *, lock_timeout_ms: int = 50) -> None:
        self.dsn = dsn
        self.connection = connect(dsn, lock_timeout_ms=lock_timeout_ms)
        # One transaction, so a concurrent first opener cannot see half a schema; two
        # first openers racing on CREATE TABLE IF NOT EXISTS can still collide, so open
        # the stores once before the clients start (as conform does).
        with self.transaction():
            for statement in self.SCHEMA:
                self.connection.execute(statement)

    def close(self) -> None:
        self.connection.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """``BEGIN ISOLATION LEVEL SERIALIZABLE`` ... ``COMMIT``; rolled back on any error
        (a failed ``COMMIT`` included); a lock or serialization conflict is ``StoreBusy``."""
        self.connection.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
        try:
            yield self.connection
            self.connection.execute("COMMIT")
        except BaseException as error:
            if not (self.connection.closed or self.connection.broken):
                self.connection.execute("ROLLBACK")  # a no-op after a failed COMMIT
            if _busy(error):
                raise StoreBusy(f"PostgreSQL: {str(error).strip()}") from None
            raise

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a read (one autocommit statement)."""
        try:
            return self.connection.execute(sql, tuple(parameters)).fetchall()
        except Exception as error:
            if _busy(error):
                raise StoreBusy(f"PostgreSQL: {str(error).strip()}") from None
            raise


_RECORD_COLUMNS = (
    "tenant_id, user_id, operation_type, resource_id, normalized_intent_hash, "
    "idempotency_key, request_hash, created_at, expires_at, status, result_receipt, owner"
)


def _record(row: Sequence[Any]) -> IdempotencyRecord:
    return IdempotencyRecord(
        tenant_id=row[0],
        user_id=row[1],
        operation_type=row[2],
        resource_id=row[3],
        normalized_intent_hash=row[4],
        idempotency_key=row[5],
        request_hash=row[6],
        created_at=row[7],
        expires_at=row[8],
        status=row[9],
        result_receipt=row[10],
        owner=row[11],
    )


class PostgresIdempotencyStore(_PostgresStore):
    """The idempotency store (rules: ``txcheck.models.sim.idempotency``) in one table."""

    SCHEMA = (
        """CREATE TABLE IF NOT EXISTS idempotency (
            tenant_id TEXT NOT NULL,
            idempotency_key TEXT NOT NULL,
            user_id TEXT NOT NULL,
            operation_type TEXT NOT NULL,
            resource_id TEXT NOT NULL,
            normalized_intent_hash TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            -- only these three: a timeout or transient error is never stored (abort
            -- deletes the in-flight marker instead)
            status TEXT NOT NULL CHECK (status IN ('in_flight', 'committed', 'rejected')),
            -- a result exists exactly when the request finished: never before the key is
            -- reserved, never missing after
            result_receipt JSONB CHECK ((status = 'in_flight') = (result_receipt IS NULL)),
            owner TEXT NOT NULL,
            -- one record per key and tenant: a second writer of the same key fails here
            -- (or waits for the first and then fails) even if a bug let it past the check
            PRIMARY KEY (tenant_id, idempotency_key)
        )""",
    )

    def __init__(
        self,
        dsn: str,
        *,
        ttl: int = DEFAULT_TTL,
        check_request_hash: bool = True,
        lock_timeout_ms: int = 50,
    ) -> None:
        self.ttl = ttl
        self.check_request_hash = check_request_hash
        super().__init__(dsn, lock_timeout_ms=lock_timeout_ms)

    def _live(self, tenant: str, key: str, now: int) -> IdempotencyRecord | None:
        found = self.rows(
            f"SELECT {_RECORD_COLUMNS} FROM idempotency "
            "WHERE tenant_id = %s AND idempotency_key = %s",
            (tenant, key),
        )
        if not found:
            return None
        record = _record(found[0])
        if record.status != "in_flight" and record.expires_at <= now:
            return None
        return record

    def lookup(self, tenant: str, key: str, now: int) -> IdempotencyRecord | None:
        return self._live(tenant, key, now)

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
        with self.transaction():
            record = self._live(tenant, key, now)
            if record is not None:
                return answer_to_live(
                    record,
                    key=key,
                    operation_type=operation_type,
                    intent_hash=intent_hash,
                    check_request_hash=self.check_request_hash,
                )
            self._reserve(
                tenant=tenant,
                key=key,
                user_id=user_id,
                operation_type=operation_type,
                resource_id=resource_id,
                intent_hash=intent_hash,
                request_hash=request_hash,
                now=now,
                owner=owner,
            )
        return Begin(decision="proceed")

    def _reserve(
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
    ) -> None:
        """Hold the key in flight: an expired record makes way for the new request. The
        caller gives the transaction (``begin``: the same one as the check)."""
        self.connection.execute(
            "DELETE FROM idempotency WHERE tenant_id = %s AND idempotency_key = %s",
            (tenant, key),
        )
        self.connection.execute(
            f"INSERT INTO idempotency ({_RECORD_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'in_flight', NULL, %s)",
            (
                tenant,
                user_id,
                operation_type,
                resource_id,
                intent_hash,
                key,
                request_hash,
                now,
                now + self.ttl,
                owner,
            ),
        )

    def finish(
        self,
        tenant: str,
        key: str,
        *,
        status: Literal["committed", "rejected"],
        receipt: Mapping[str, Any],
        now: int,
    ) -> None:
        with self.transaction():
            self.connection.execute(
                "UPDATE idempotency SET status = %s, result_receipt = %s::jsonb, "
                "expires_at = %s WHERE tenant_id = %s AND idempotency_key = %s",
                (status, _json(dict(receipt)), now + self.ttl, tenant, key),
            )

    def abort(self, tenant: str, key: str) -> None:
        with self.transaction():
            self.connection.execute(
                "DELETE FROM idempotency WHERE tenant_id = %s AND idempotency_key = %s "
                "AND status = 'in_flight'",
                (tenant, key),
            )

    def records(self) -> list[IdempotencyRecord]:
        """Every record, expired ones too, by tenant and key (a reader for ``txcheck
        explore``'s fingerprints and invariants; not part of the protocol)."""
        found = self.rows(
            f"SELECT {_RECORD_COLUMNS} FROM idempotency ORDER BY tenant_id, idempotency_key"
        )
        return [_record(row) for row in found]


class PostgresJournal(_PostgresStore):
    """Append-only journals and a claims table whose primary key makes a claim unique."""

    SCHEMA = (
        # The journal's existence is a row of its own: an open, empty journal differs
        # from no journal.
        "CREATE TABLE IF NOT EXISTS journals (instance TEXT PRIMARY KEY)",
        """CREATE TABLE IF NOT EXISTS journal_entries (
            -- an entry belongs to an open journal (PostgreSQL enforces the reference)
            instance TEXT NOT NULL REFERENCES journals (instance),
            -- the position is part of the key: two appends cannot take the same place
            position INTEGER NOT NULL,
            entry JSONB NOT NULL,
            PRIMARY KEY (instance, position)
        )""",
        # One owner per operation: the unique key, not a check before the insert, is what
        # keeps two instances from both claiming it.
        "CREATE TABLE IF NOT EXISTS claims (operation TEXT PRIMARY KEY, owner TEXT NOT NULL)",
    )

    def open(self, instance: str) -> None:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO journals (instance) VALUES (%s) ON CONFLICT DO NOTHING",
                (instance,),
            )

    def _append(self, instance: str, entry: Mapping[str, Any]) -> None:
        self.connection.execute(
            "INSERT INTO journal_entries (instance, position, entry) SELECT %s, "
            "COALESCE(MAX(position), 0) + 1, %s::jsonb FROM journal_entries WHERE instance = %s",
            (instance, _json(dict(entry)), instance),
        )

    def append(self, instance: str, entry: Mapping[str, Any]) -> None:
        with self.transaction():
            self._append(instance, entry)

    def entries(self, instance: str) -> list[dict[str, Any]]:
        found = self.rows(
            "SELECT entry FROM journal_entries WHERE instance = %s ORDER BY position",
            (instance,),
        )
        return [dict(row[0]) for row in found]

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO claims (operation, owner) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (operation, instance),
            )
            owner = str(
                self.connection.execute(
                    "SELECT owner FROM claims WHERE operation = %s", (operation,)
                ).fetchall()[0][0]
            )
            if owner == instance:
                self._append(instance, entry)
        return owner

    def claims(self) -> dict[str, str]:
        """The owner of each claimed operation (a reader for ``txcheck explore``; not part
        of the protocol)."""
        return {str(r[0]): str(r[1]) for r in self.rows("SELECT operation, owner FROM claims")}


class PostgresOutbox(_PostgresStore):
    """Operations and their outbox rows, committed together."""

    SCHEMA = (
        """CREATE TABLE IF NOT EXISTS operations (
            -- the order operations were written in (identity values are taken at insert,
            -- so under concurrent writers this is close to, not exactly, commit order)
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            body JSONB NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS outbox (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            -- every row belongs to a committed operation (the foreign key is enforced,
            -- but the single transaction is what guarantees the row exists at all)
            operation_id TEXT NOT NULL REFERENCES operations (id),
            -- one row per event: a replayed record cannot publish an event twice
            event_id TEXT NOT NULL UNIQUE,
            event JSONB NOT NULL,
            published BOOLEAN NOT NULL DEFAULT FALSE
        )""",
        # The relay reads the unpublished rows oldest first: a partial index keeps that
        # read small however long the outbox grows.
        "CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (seq) WHERE NOT published",
    )

    def record(self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO operations (id, body) VALUES (%s, %s::jsonb)",
                (str(operation["id"]), _json(dict(operation))),
            )
            self._write_events(operation, events)

    def _write_events(
        self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
    ) -> None:
        for event in events:
            self.connection.execute(
                "INSERT INTO outbox (operation_id, event_id, event) VALUES (%s, %s, %s::jsonb)",
                (str(operation["id"]), str(event["id"]), _json(dict(event))),
            )

    def operations(self) -> list[dict[str, Any]]:
        return [dict(r[0]) for r in self.rows("SELECT body FROM operations ORDER BY seq")]

    def pending(self) -> list[dict[str, Any]]:
        found = self.rows("SELECT event FROM outbox WHERE NOT published ORDER BY seq")
        return [dict(r[0]) for r in found]

    def mark_published(self, event_id: str) -> None:
        with self.transaction():
            self.connection.execute(
                "UPDATE outbox SET published = TRUE WHERE event_id = %s", (event_id,)
            )


class PostgresInbox(_PostgresStore):
    """The consumer's dedupe table and its effect, in one transaction.

    ``apply_effect`` stands for the consumer's business write (here a counter per event);
    override it with your own, keeping it on the connection it is given."""

    SCHEMA = (
        # The primary key is the dedupe: a second insert of the same event id fails (and
        # a concurrent one waits for the first, then does nothing).
        "CREATE TABLE IF NOT EXISTS inbox_seen (event_id TEXT PRIMARY KEY)",
        """CREATE TABLE IF NOT EXISTS inbox_effects (
            event_id TEXT PRIMARY KEY,
            applied INTEGER NOT NULL CHECK (applied > 0)
        )""",
    )

    def apply_effect(self, connection: psycopg.Connection[Any], event: Mapping[str, Any]) -> None:
        connection.execute(
            "INSERT INTO inbox_effects (event_id, applied) VALUES (%s, 1) "
            "ON CONFLICT (event_id) DO UPDATE SET applied = inbox_effects.applied + 1",
            (str(event["id"]),),
        )

    def deliver(self, event: Mapping[str, Any]) -> bool:
        with self.transaction() as connection:
            inserted = connection.execute(
                "INSERT INTO inbox_seen (event_id) VALUES (%s) ON CONFLICT DO NOTHING",
                (str(event["id"]),),
            ).rowcount
            if inserted == 0:
                return False  # seen: the effect is already there
            self.apply_effect(connection, event)
        return True

    def seen(self, event_id: str) -> bool:
        return bool(self.rows("SELECT 1 FROM inbox_seen WHERE event_id = %s", (event_id,)))

    def effects(self) -> dict[str, int]:
        found = self.rows("SELECT event_id, applied FROM inbox_effects ORDER BY event_id")
        return {str(r[0]): int(r[1]) for r in found}
