"""A world whose journal (with its claims) and idempotency records live in real stores.

``World`` keeps every durable record in Python. ``StoredWorld`` hands two of them to store
objects implementing ``txcheck.models.stores.protocols`` (the SQLite reference stores, or a
user's class): each orchestrator instance's journal and operation claims, and the
services' idempotency records. Everything else (services, outbox, broker, consumer) stays
in memory, exactly as in ``World``.

- **One database per world, one connection per actor.** Each world gets its own SQLite
  in-memory database (a shared-cache URI, ``file:...?mode=memory&cache=shared``, that every
  connection of the world opens: a store must pass ``uri=True`` to ``sqlite3.connect``, as
  the reference stores do for a ``file:`` path). Each actor writes through store objects of
  its own (its own connections), opened on first use; the world reads through a reader
  store of each kind that is never crashed: what it reads is what the database committed.
- **A crash** (``crashed``) closes the crashed actor's store objects without committing
  anything: an open transaction is rolled back, and whatever the store kept in Python
  (state that was never written) is gone. The actor's next request opens new ones.
- **Invariants read the store's state**: ``journals``, ``claims`` and ``store.records()``
  read through the reader stores (cached until the next write or crash).
- **Forking** copies the database with ``sqlite3.Connection.backup`` and opens the actors'
  stores anew on the copy, carrying over what each kept in Python (everything but its
  ``connection`` and ``path``), so a fork is what a replay would build.
- **Fingerprints** digest the committed rows, read back through the protocol's optional
  readers: ``records()`` (idempotency, like the model's) and ``claims()`` (journal, the owner
  of each claimed operation), plus what each actor's store keeps in Python. A store without
  ``records()`` is fingerprinted from ``lookup`` of the keys the world sent (an expired
  record then reads as none); one without ``claims()``, from the owners ``claim`` answered.
"""

from __future__ import annotations

import copy
import functools
import itertools
import os
import sqlite3
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, Protocol

import attrs

from txcheck.models.errors import ControlFlow, StoreError, raised
from txcheck.models.sim.choices import Part
from txcheck.models.sim.digest import digest, serial
from txcheck.models.sim.idempotency import DEFAULT_TTL, Begin, IdempotencyRecord
from txcheck.models.sim.world import World

__all__ = [
    "STORE_KINDS",
    "Database",
    "MemoryDatabase",
    "StoredWorld",
    "Stores",
    "memory_database",
]

STORE_KINDS = ("journal", "idempotency")
"""The records a world can keep in a real store."""

Factory = Callable[[str], Any]
"""Opens a store on a database path (a SQLite URI here)."""

_NAMES = itertools.count(1)
_KEPT = ("connection", "path")
"""A store object's attributes that belong to its database, not to what it keeps in memory."""


def memory_database() -> tuple[str, sqlite3.Connection]:
    """A fresh shared-cache SQLite in-memory database: its URI and a connection that keeps
    it alive (the database is gone when the last connection to it closes)."""
    uri = f"file:txcheck-{os.getpid()}-{next(_NAMES)}?mode=memory&cache=shared"
    return uri, sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


class MemoryDatabase:
    """A world's database: a fresh shared-cache SQLite in-memory one. ``path`` is what its
    stores are opened with; a fork is a copy (``sqlite3.Connection.backup``)."""

    forkable = True

    def __init__(self) -> None:
        self.path, self._keeper = memory_database()

    def fork(self) -> MemoryDatabase:
        twin = MemoryDatabase()
        self._keeper.backup(twin._keeper)
        return twin

    def close(self) -> None:
        self._keeper.close()


class Database(Protocol):
    """Where a world's stores live: ``path`` (a SQLite URI, a PostgreSQL DSN) opens them;
    ``fork`` copies it (only when ``forkable``: else engines replay instead)."""

    path: str
    forkable: bool

    def fork(self) -> Database: ...

    def close(self) -> None: ...


@attrs.frozen(kw_only=True)
class Stores:
    """The store classes a world keeps its journal and idempotency records in (None: the
    in-memory model), and the names they were given by (``module:Class``, for traces)."""

    journal: Callable[[str], Any] | None = attrs.field(default=None, eq=False)
    idempotency: Callable[[str], Any] | None = attrs.field(default=None, eq=False)
    names: Mapping[str, str] = attrs.field(factory=dict)
    database: Callable[[], Database] = attrs.field(default=MemoryDatabase, eq=False)
    """Makes each world's database (default: a SQLite in-memory one)."""

    def world(self, **settings: Any) -> StoredWorld:
        return StoredWorld(stores=self, **settings)


def _call(kind: str, method: str, run: Callable[[], Any]) -> Any:
    """Run a store's method; what it raises is the store's error (``StoreError``)."""
    try:
        return run()
    except ControlFlow:
        raise
    except BaseException as error:  # user code: even SystemExit is reported
        raise StoreError(f"the {kind} store raised in {method}: {raised(error)}") from None


def _close(store: Any) -> None:
    """Close a store like a killed process would: no commit (a rollback by the database)."""
    connection = getattr(store, "connection", None)
    try:
        if connection is not None:
            connection.close()
        elif callable(getattr(store, "close", None)):
            store.close()
    except Exception:
        pass


def _release(database: Any, connections: list[_Connections]) -> None:
    """Close a world's stores, then its database (when the world is collected)."""
    for opened in connections:
        for store in (opened.reader, *opened.actors.values()):
            _close(store)
        opened.actors.clear()
    database.close()


def _memory_of(store: Any) -> dict[str, Any]:
    """What a store object keeps in Python: everything but its database handles."""
    held = getattr(store, "__dict__", {})
    return {k: v for k, v in sorted(held.items()) if k not in _KEPT}


class _Connections:
    """The store objects of one kind in one world: the reader and one per actor."""

    def __init__(self, kind: str, factory: Factory, uri: str) -> None:
        self.kind = kind
        self.factory = factory
        self.uri = uri
        self.reader = self.open()
        self.actors: dict[str, Any] = {}

    def open(self) -> Any:
        uri = self.uri
        return _call(self.kind, "opening", lambda: self.factory(uri))

    def of(self, actor: str) -> Any:
        store = self.actors.get(actor)
        if store is None:
            store = self.actors[actor] = self.open()
        return store

    def crash(self, actor: str) -> bool:
        store = self.actors.pop(actor, None)
        if store is None:
            return False
        _close(store)
        return True

    def memory(self) -> list[Any]:
        """What each actor's store keeps in Python, where it differs from a fresh store's
        (whether an actor's store is open yet is no part of the state)."""
        fresh = _memory_of(self.reader)
        found = ((name, _memory_of(s)) for name, s in sorted(self.actors.items()))
        return [(name, kept) for name, kept in found if kept != fresh]

    def fork(self, uri: str) -> _Connections:
        twin = _Connections.__new__(_Connections)
        twin.kind, twin.factory, twin.uri = self.kind, self.factory, uri
        twin.reader = twin.open()
        twin.actors = {}
        for name, store in self.actors.items():
            copied = twin.open()
            for attribute, value in _memory_of(store).items():
                setattr(copied, attribute, copy.deepcopy(value))
            twin.actors[name] = copied
        return twin


class _RoutedIdempotency:
    """The world's ``store``: each request goes through the store of the actor it is for
    (``actor``, set by the world before each call); reads go through the reader."""

    def __init__(self, stores: _Connections, tenant: str) -> None:
        self.stores = stores
        self.tenant = tenant
        self.actor = ""
        self.now = 0
        """The world's clock, set before a read of every record (fallback ``lookup``)."""
        reader = stores.reader
        self.ttl = int(getattr(reader, "ttl", DEFAULT_TTL))
        self.check_request_hash = bool(getattr(reader, "check_request_hash", True))
        self.keys: dict[tuple[str, str], None] = {}  # keys sent, in order (fallback reads)

    def copy(self) -> _RoutedIdempotency:
        """Itself: ``StoredWorld.fork`` routes the fork through stores of its own."""
        return self

    def begin(self, **request: Any) -> Begin:
        self.keys[(request["tenant"], request["key"])] = None
        store = self.stores.of(self.actor)
        return _call("idempotency", "begin", lambda: store.begin(**request))  # type: ignore[no-any-return]

    def finish(
        self,
        tenant: str,
        key: str,
        *,
        status: Literal["committed", "rejected"],
        receipt: Mapping[str, Any],
        now: int,
    ) -> None:
        store = self.stores.of(self.actor)
        _call(
            "idempotency",
            "finish",
            lambda: store.finish(tenant, key, status=status, receipt=receipt, now=now),
        )

    def abort(self, tenant: str, key: str) -> None:
        store = self.stores.of(self.actor)
        _call("idempotency", "abort", lambda: store.abort(tenant, key))

    def lookup(self, tenant: str, key: str, now: int) -> IdempotencyRecord | None:
        reader = self.stores.reader
        return _call("idempotency", "lookup", lambda: reader.lookup(tenant, key, now))  # type: ignore[no-any-return]

    def records(self) -> list[IdempotencyRecord]:
        """Every record the database holds, sorted by (tenant, key) (without ``records()``
        on the store: the live ones among the keys sent, at ``now``)."""
        now = self.now
        reader = self.stores.reader
        if callable(getattr(reader, "records", None)):
            found = _call("idempotency", "records", reader.records)
            return sorted(found, key=lambda r: (r.tenant_id, r.idempotency_key))
        live = [
            _call("idempotency", "lookup", functools.partial(reader.lookup, t, k, now))
            for t, k in sorted(self.keys)
        ]
        return [r for r in live if r is not None]

    def snapshot(self) -> dict[str, Any]:
        return {f"{r.tenant_id}/{r.idempotency_key}": r.to_json() for r in self.records()}


class StoredWorld(World):
    """A ``World`` whose journals, claims and (with an idempotency store) idempotency records
    live in the stores ``stores`` opens (see the module docstring)."""

    def __init__(self, *, stores: Stores, **settings: Any) -> None:
        self._stores_spec = stores
        self._database = stores.database()
        self._uri = self._database.path
        self.forkable = self._database.forkable  # PostgreSQL: no, and engines replay
        self._journal: _Connections | None = None
        self._idempotency: _Connections | None = None
        opened: list[_Connections] = []
        self._release = weakref.finalize(self, _release, self._database, opened)
        if stores.journal is not None:
            self._journal = _Connections("journal", stores.journal, self._uri)
            opened.append(self._journal)
        if stores.idempotency is not None:
            self._idempotency = _Connections("idempotency", stores.idempotency, self._uri)
            opened.append(self._idempotency)
        self._instances: dict[str, None] = {}
        self._answered: dict[str, str] = {}  # claim answers (fallback when no claims())
        self._view: dict[str, list[dict[str, Any]]] | None = None
        super().__init__(**settings)
        if self._idempotency is not None:
            self.store = _RoutedIdempotency(self._idempotency, self.tenant)  # type: ignore[assignment]

    # -- the views invariants read -----------------------------------------------------------

    @property
    def journals(self) -> dict[str, list[dict[str, Any]]]:
        """Each opened instance's journal, as the database committed it."""
        if self._journal is None:
            return self._memory_journals
        if self._view is None:
            reader = self._journal.reader
            self._view = {
                name: _call("journal", "entries", functools.partial(reader.entries, name))
                for name in self._instances
            }
        return self._view

    @journals.setter
    def journals(self, value: dict[str, list[dict[str, Any]]]) -> None:
        self._memory_journals = value  # World's own (unused with a journal store)

    @property
    def claims(self) -> dict[str, str]:
        """The owner of each claimed operation, as the database committed it."""
        if self._journal is None:
            return self._memory_claims
        reader = self._journal.reader
        if callable(getattr(reader, "claims", None)):
            return dict(_call("journal", "claims", reader.claims))
        return dict(self._answered)

    @claims.setter
    def claims(self, value: dict[str, str]) -> None:
        self._memory_claims = value

    def _touch(self, *parts: Part) -> None:
        super()._touch(*parts)
        if Part.JOURNALS in parts or Part.CLAIMS in parts:
            self._view = None

    # -- requests: through the actor's own store -------------------------------------------

    def _route(self, actor: str) -> None:
        if self._idempotency is not None:
            self.store.actor = actor  # type: ignore[attr-defined]

    def send(self, owner: str, invoke: Any) -> Any:
        self._route(owner)
        return super().send(owner, invoke)

    def complete(self, pending: Any, outcome: Any) -> Any:
        self._route(pending.owner)
        return super().complete(pending, outcome)

    def abort(self, pending: Any) -> None:
        self._route(pending.owner)
        super().abort(pending)

    def open_journal(self, instance: str) -> None:
        if self._journal is None:
            super().open_journal(instance)
            return
        store = self._journal.of(instance)
        _call("journal", "open", lambda: store.open(instance))
        self._instances[instance] = None
        self._touch(Part.JOURNALS)

    def journal(self, instance: str) -> tuple[dict[str, Any], ...]:
        if self._journal is None:
            return super().journal(instance)
        store = self._journal.of(instance)
        return tuple(dict(e) for e in _call("journal", "entries", lambda: store.entries(instance)))

    def append_journal(self, instance: str, entry: Mapping[str, Any]) -> None:
        if self._journal is None:
            super().append_journal(instance, entry)
            return
        store = self._journal.of(instance)
        self._touch(Part.JOURNALS)
        _call("journal", "append", lambda: store.append(instance, dict(entry)))

    def claim(self, operation: str, instance: str, entry: Mapping[str, Any]) -> str:
        if self._journal is None:
            return super().claim(operation, instance, entry)
        store = self._journal.of(instance)
        self._touch(Part.JOURNALS, Part.CLAIMS)
        owner = str(_call("journal", "claim", lambda: store.claim(operation, instance, entry)))
        self._answered.setdefault(operation, owner)
        return owner

    def crashed(self, actor: str) -> None:
        """``actor`` crashed: its connections close without a commit."""
        touched: list[Part] = []
        if self._journal is not None and self._journal.crash(actor):
            touched += [Part.JOURNALS, Part.CLAIMS]
        if self._idempotency is not None and self._idempotency.crash(actor):
            touched.append(Part.STORE)
        if touched:
            self._touch(*touched)

    # -- forks and fingerprints --------------------------------------------------------------

    def fork(self) -> StoredWorld:
        twin = super().fork()
        assert isinstance(twin, StoredWorld)
        twin._database = self._database.fork()
        twin._uri = twin._database.path
        opened: list[_Connections] = []
        twin._release = weakref.finalize(twin, _release, twin._database, opened)
        twin._instances = dict(self._instances)
        twin._answered = dict(self._answered)
        twin._view = None
        if self._journal is not None:
            twin._journal = self._journal.fork(twin._uri)
            opened.append(twin._journal)
        if self._idempotency is not None:
            twin._idempotency = self._idempotency.fork(twin._uri)
            opened.append(twin._idempotency)
            routed = _RoutedIdempotency(twin._idempotency, twin.tenant)
            routed.keys = dict(self.store.keys)  # type: ignore[attr-defined]
            twin.store = routed  # type: ignore[assignment]
        return twin

    def _digest_part(self, part: Part) -> bytes:
        if part is Part.JOURNALS and self._journal is not None:
            rows = sorted(self.journals.items())
            return digest(serial((rows, self._journal.memory())))
        if part is Part.STORE and self._idempotency is not None:
            self.store.now = self.clock  # type: ignore[attr-defined]
            return digest(serial((self._part_data(part), self._idempotency.memory())))
        return super()._digest_part(part)

    def time_matters(self) -> bool:
        if self._idempotency is not None:
            self.store.now = self.clock  # type: ignore[attr-defined]
        return super().time_matters()

    def stores(self) -> Iterator[tuple[str, Any]]:
        """The reader store of each kind kept in a real store."""
        if self._journal is not None:
            yield "journal", self._journal.reader
        if self._idempotency is not None:
            yield "idempotency", self._idempotency.reader
