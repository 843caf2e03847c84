"""SQLite reference implementations of the four records: code a team could adopt.

Every store opens its own connection to one database file with:

- ``isolation_level=None``: the module never opens a transaction behind our back; each
  method writes ``BEGIN IMMEDIATE ... COMMIT`` itself, so what is atomic is visible here;
- ``BEGIN IMMEDIATE``: the write lock is taken *before* the first read, so a check and the
  write that depends on it are one step (a deferred transaction would read under a shared
  lock, and two clients could both pass the check);
- WAL journal mode and ``synchronous=FULL``: a committed transaction survives a crash of
  the process (and of the machine); an uncommitted one is rolled back when the file is
  reopened;
- ``busy_timeout`` 0 by default: a client that meets another's lock raises ``StoreBusy``
  at once (nothing applied) rather than waiting; pass ``busy_timeout_ms`` to wait instead.

Reads run in autocommit and fetch every row, so no statement is left open holding a lock.
``connection`` is public so a checker can count statements (crash points, two clients).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from txcheck.models.sim.idempotency import DEFAULT_TTL, Begin, IdempotencyRecord, answer_to_live
from txcheck.models.stores.protocols import StoreBusy

__all__ = [
    "SqliteIdempotencyStore",
    "SqliteInbox",
    "SqliteJournal",
    "SqliteOutbox",
    "connect",
]


def connect(path: str, *, busy_timeout_ms: int = 0) -> sqlite3.Connection:
    """A connection set up as the module docstring says (a ``file:`` path is a URI: an
    in-memory database shared by the connections of one ``txcheck explore`` run)."""
    connection = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, uri=path.startswith("file:")
    )
    connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    return connection


def _json(value: Any) -> str:
    """Canonical JSON: equal values are equal text (receipts and entries are stored so)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


class _SqliteStore:
    """A connection, the schema, and one helper for a write transaction."""

    SCHEMA: tuple[str, ...] = ()

    def __init__(self, path: str, *, busy_timeout_ms: int = 0) -> None:
        self.path = path
        self.connection = connect(path, busy_timeout_ms=busy_timeout_ms)
        with self.transaction():
            for statement in self.SCHEMA:
                self.connection.execute(statement)

    def close(self) -> None:
        self.connection.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any error; a lock held by
        another client is ``StoreBusy``."""
        try:
            self.connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if _busy(error):
                raise StoreBusy(f"{self.path}: {error}") from None
            raise
        try:
            yield self.connection
            self.connection.execute("COMMIT")
        except BaseException as error:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            if isinstance(error, sqlite3.OperationalError) and _busy(error):
                raise StoreBusy(f"{self.path}: {error}") from None
            raise

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a read, fetched whole so no statement stays open."""
        try:
            return self.connection.execute(sql, tuple(parameters)).fetchall()
        except sqlite3.OperationalError as error:
            if _busy(error):
                raise StoreBusy(f"{self.path}: {error}") from None
            raise


_RECORD_COLUMNS = (
    "tenant_id, user_id, operation_type, resource_id, normalized_intent_hash, "
    "idempotency_key, request_hash, created_at, expires_at, status, result_receipt, owner"
)


def _record(row: Sequence[Any]) -> IdempotencyRecord:
    receipt = json.loads(row[10]) if row[10] is not None else None
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
        result_receipt=receipt,
        owner=row[11],
    )


class SqliteIdempotencyStore(_SqliteStore):
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
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            -- only these three: a timeout or transient error is never stored (abort
            -- deletes the in-flight marker instead)
            status TEXT NOT NULL CHECK (status IN ('in_flight', 'committed', 'rejected')),
            -- a result exists exactly when the request finished: never before the key is
            -- reserved, never missing after
            result_receipt TEXT CHECK ((status = 'in_flight') = (result_receipt IS NULL)),
            owner TEXT NOT NULL,
            -- one record per key and tenant: a second writer of the same key fails here
            -- even if a bug let it past the check
            PRIMARY KEY (tenant_id, idempotency_key)
        )""",
    )

    def __init__(
        self,
        path: str,
        *,
        ttl: int = DEFAULT_TTL,
        check_request_hash: bool = True,
        busy_timeout_ms: int = 0,
    ) -> None:
        self.ttl = ttl
        self.check_request_hash = check_request_hash
        super().__init__(path, busy_timeout_ms=busy_timeout_ms)

    def _live(self, tenant: str, key: str, now: int) -> IdempotencyRecord | None:
        found = self.rows(
            f"SELECT {_RECORD_COLUMNS} FROM idempotency "
            "WHERE tenant_id = ? AND idempotency_key = ?",
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
            "DELETE FROM idempotency WHERE tenant_id = ? AND idempotency_key = ?",
            (tenant, key),
        )
        self.connection.execute(
            f"INSERT INTO idempotency ({_RECORD_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'in_flight', NULL, ?)",
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
                "UPDATE idempotency SET status = ?, result_receipt = ?, expires_at = ? "
                "WHERE tenant_id = ? AND idempotency_key = ?",
                (status, _json(dict(receipt)), now + self.ttl, tenant, key),
            )

    def abort(self, tenant: str, key: str) -> None:
        with self.transaction():
            self.connection.execute(
                "DELETE FROM idempotency WHERE tenant_id = ? AND idempotency_key = ? "
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


class SqliteJournal(_SqliteStore):
    """Append-only journals and a claims table whose primary key makes a claim unique."""

    SCHEMA = (
        # The journal's existence is a row of its own: an open, empty journal differs
        # from no journal.
        "CREATE TABLE IF NOT EXISTS journals (instance TEXT PRIMARY KEY)",
        """CREATE TABLE IF NOT EXISTS journal_entries (
            instance TEXT NOT NULL REFERENCES journals (instance),
            -- the position is part of the key: two appends cannot take the same place
            position INTEGER NOT NULL,
            entry TEXT NOT NULL,
            PRIMARY KEY (instance, position)
        )""",
        # One owner per operation: the unique key, not a check before the insert, is what
        # keeps two instances from both claiming it.
        "CREATE TABLE IF NOT EXISTS claims (operation TEXT PRIMARY KEY, owner TEXT NOT NULL)",
    )

    def open(self, instance: str) -> None:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO journals (instance) VALUES (?) ON CONFLICT DO NOTHING", (instance,)
            )

    def _append(self, instance: str, entry: Mapping[str, Any]) -> None:
        self.connection.execute(
            "INSERT INTO journal_entries (instance, position, entry) SELECT ?, "
            "COALESCE(MAX(position), 0) + 1, ? FROM journal_entries WHERE instance = ?",
            (instance, _json(dict(entry)), instance),
        )

    def append(self, instance: str, entry: Mapping[str, Any]) -> None:
        with self.transaction():
            self._append(instance, entry)

    def entries(self, instance: str) -> list[dict[str, Any]]:
        found = self.rows(
            "SELECT entry FROM journal_entries WHERE instance = ? ORDER BY position", (instance,)
        )
        return [json.loads(row[0]) for row in found]

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO claims (operation, owner) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (operation, instance),
            )
            owner = str(
                self.connection.execute(
                    "SELECT owner FROM claims WHERE operation = ?", (operation,)
                ).fetchall()[0][0]
            )
            if owner == instance:
                self._append(instance, entry)
        return owner

    def claims(self) -> dict[str, str]:
        """The owner of each claimed operation (a reader for ``txcheck explore``; not part
        of the protocol)."""
        return {str(r[0]): str(r[1]) for r in self.rows("SELECT operation, owner FROM claims")}


class SqliteOutbox(_SqliteStore):
    """Operations and their outbox rows, committed together."""

    SCHEMA = (
        """CREATE TABLE IF NOT EXISTS operations (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            body TEXT NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            -- every row belongs to a committed operation (the foreign key is documentation
            -- here: the single transaction is what guarantees it)
            operation_id TEXT NOT NULL REFERENCES operations (id),
            event_id TEXT NOT NULL UNIQUE,
            event TEXT NOT NULL,
            published INTEGER NOT NULL DEFAULT 0 CHECK (published IN (0, 1))
        )""",
    )

    def record(self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        with self.transaction():
            self.connection.execute(
                "INSERT INTO operations (id, body) VALUES (?, ?)",
                (str(operation["id"]), _json(dict(operation))),
            )
            self._write_events(operation, events)

    def _write_events(
        self, operation: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
    ) -> None:
        for event in events:
            self.connection.execute(
                "INSERT INTO outbox (operation_id, event_id, event) VALUES (?, ?, ?)",
                (str(operation["id"]), str(event["id"]), _json(dict(event))),
            )

    def operations(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.rows("SELECT body FROM operations ORDER BY seq")]

    def pending(self) -> list[dict[str, Any]]:
        found = self.rows("SELECT event FROM outbox WHERE published = 0 ORDER BY seq")
        return [json.loads(r[0]) for r in found]

    def mark_published(self, event_id: str) -> None:
        with self.transaction():
            self.connection.execute(
                "UPDATE outbox SET published = 1 WHERE event_id = ?", (event_id,)
            )


class SqliteInbox(_SqliteStore):
    """The consumer's dedupe table and its effect, in one transaction.

    ``apply_effect`` stands for the consumer's business write (here a counter per event);
    override it with your own, keeping it on the cursor it is given."""

    SCHEMA = (
        # The primary key is the dedupe: a second insert of the same event id fails.
        "CREATE TABLE IF NOT EXISTS inbox_seen (event_id TEXT PRIMARY KEY)",
        """CREATE TABLE IF NOT EXISTS inbox_effects (
            event_id TEXT PRIMARY KEY,
            applied INTEGER NOT NULL CHECK (applied > 0)
        )""",
    )

    def apply_effect(self, connection: sqlite3.Connection, event: Mapping[str, Any]) -> None:
        connection.execute(
            "INSERT INTO inbox_effects (event_id, applied) VALUES (?, 1) "
            "ON CONFLICT (event_id) DO UPDATE SET applied = applied + 1",
            (str(event["id"]),),
        )

    def deliver(self, event: Mapping[str, Any]) -> bool:
        with self.transaction() as connection:
            inserted = connection.execute(
                "INSERT INTO inbox_seen (event_id) VALUES (?) ON CONFLICT DO NOTHING",
                (str(event["id"]),),
            ).rowcount
            if inserted == 0:
                return False  # seen: the effect is already there
            self.apply_effect(connection, event)
        return True

    def seen(self, event_id: str) -> bool:
        return bool(self.rows("SELECT 1 FROM inbox_seen WHERE event_id = ?", (event_id,)))

    def effects(self) -> dict[str, int]:
        found = self.rows("SELECT event_id, applied FROM inbox_effects ORDER BY event_id")
        return {str(r[0]): int(r[1]) for r in found}
