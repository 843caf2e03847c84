"""``--store KIND=SPEC``: the real stores ``explore`` and ``replay`` keep records in.

``KIND`` is ``journal`` (each orchestrator's journal and its operation claims) or
``idempotency`` (the services' idempotency records); ``SPEC`` is ``sqlite`` (the reference
SQLite store of that kind) or ``package.module:Class``, a class that implements the kind's
protocol and opens a store with ``Class(path)`` (a SQLite URI, see
``txcheck.models.sim.stored``). A trace records the stores by name, so ``replay`` reruns a
counterexample on the same stores; a trace's store outside ``txcheck.models.stores`` is
user code, imported only when named again or with ``--trust-trace``.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from txcheck.exploration.usercode.loading import check_import_path, resolve_import_path
from txcheck.models.errors import InputError, StoreError
from txcheck.models.sim.stored import STORE_KINDS, Database, MemoryDatabase, Stores

__all__ = [
    "BUILT_IN_STORES",
    "STORE_HELP",
    "add_store_option",
    "load_stores",
    "untrusted",
]

BUILT_IN_STORES = {
    "sqlite": {
        "journal": "txcheck.models.stores.sqlite:SqliteJournal",
        "idempotency": "txcheck.models.stores.sqlite:SqliteIdempotencyStore",
    },
    "postgres": {
        "journal": "txcheck.models.stores.postgres:PostgresJournal",
        "idempotency": "txcheck.models.stores.postgres:PostgresIdempotencyStore",
    },
}
"""What ``sqlite`` and ``postgres`` name, by kind."""

STORE_HELP = (
    "keep a record in a real store: KIND is journal or idempotency, SPEC is sqlite or "
    "postgres (the reference store; postgres needs --dsn) or package.module:Class; repeatable"
)
DSN_HELP = (
    "open the stores on this PostgreSQL database, each run in a schema of its own (runs "
    "are replayed, never forked); needs txcheck[postgres]"
)

_PROTOCOL_METHODS = {
    "journal": ("open", "append", "entries", "claim"),
    "idempotency": ("begin", "finish", "abort", "lookup"),
}


def add_store_option(parser: Any) -> None:
    parser.add_argument(
        "--store", action="append", default=[], metavar="KIND=SPEC", help=STORE_HELP
    )
    parser.add_argument("--dsn", metavar="URL", help=DSN_HELP)


def _parse(values: Sequence[str]) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for value in values:
        kind, sep, spec = value.partition("=")
        if not sep or kind not in STORE_KINDS:
            raise InputError(
                f"expected KIND=SPEC with KIND one of {', '.join(STORE_KINDS)} (got {value!r})",
                source="--store",
            )
        if kind in chosen:
            raise InputError(f"{kind} is given twice", source="--store")
        if spec in BUILT_IN_STORES:
            spec = BUILT_IN_STORES[spec][kind]
        else:
            spec = check_import_path(spec, "--store", "a store")
        chosen[kind] = spec
    return chosen


def load_stores(values: Sequence[str] | Mapping[str, str], dsn: str | None = None) -> Stores | None:
    """The stores ``--store`` values (or a trace's record of them) name, on SQLite or
    (with ``dsn``) PostgreSQL, each opened once on a scratch database to check it (a
    failure is one line, ``StoreError``); None when there are none."""
    chosen = dict(values) if isinstance(values, Mapping) else _parse(values)
    if not chosen:
        if dsn is not None:
            raise InputError("--dsn needs --store: it says where the stores are", source="--dsn")
        return None
    postgres = [k for k, s in chosen.items() if s == BUILT_IN_STORES["postgres"][k]]
    sqlite = [k for k, s in chosen.items() if s == BUILT_IN_STORES["sqlite"][k]]
    if postgres and dsn is None:
        raise InputError(f"the {postgres[0]} store is PostgreSQL's: give --dsn", source="--store")
    if sqlite and dsn is not None:
        raise InputError(
            f"the {sqlite[0]} store is SQLite's: it cannot open --dsn", source="--store"
        )
    factories: dict[str, Any] = {}
    for kind, spec in sorted(chosen.items()):
        if kind not in STORE_KINDS:
            raise InputError(f"unknown store kind {kind!r}", source="--store")
        found = resolve_import_path(spec, "store", StoreError)
        if not callable(found):
            raise StoreError(f"{spec} is not a class or a callable")
        factories[kind] = found
    database: Any = MemoryDatabase if dsn is None else _postgres(dsn)
    stores = Stores(
        journal=factories.get("journal"),
        idempotency=factories.get("idempotency"),
        names=chosen,
        database=database,
    )
    _check(stores)
    return stores


def _postgres(dsn: str) -> Callable[[], Database]:
    """Databases on PostgreSQL: a fresh schema each (dropped when its world is gone), on
    one admin connection for the process (an unreachable server: ``StoreError``)."""
    from txcheck.conformance.postgres import Schemas  # noqa: PLC0415 - psycopg, only here

    schemas = Schemas(dsn)
    atexit.register(schemas.close)

    class PostgresDatabase:
        """A schema of its own; not forkable (engines replay a run instead)."""

        forkable = False

        def __init__(self) -> None:
            # A finished run's world may wait in a reference cycle, holding its connections:
            # collect it first, or a search opens more than the server's max_connections
            # (19 worlds alive at once without this on the checkout plan, 2 with it).
            gc.collect()
            self.path = schemas.fresh()

        def fork(self) -> Database:
            raise StoreError("a world on PostgreSQL is never forked")

        def close(self) -> None:
            schemas.drop(self.path)

    return PostgresDatabase


def _check(stores: Stores) -> None:
    """Open each store once and look for its protocol's methods."""
    database = stores.database()
    uri = database.path
    try:
        for kind, factory in (("journal", stores.journal), ("idempotency", stores.idempotency)):
            if factory is None:
                continue
            try:
                store = factory(uri)
            except Exception as error:
                shown = "DSN" if not uri.startswith("file:") else "path"
                raise StoreError(
                    f"{stores.names[kind]}({shown}) raised {type(error).__name__}: "
                    f"{str(error).strip().splitlines()[0] if str(error).strip() else ''}"
                ) from None
            missing = [m for m in _PROTOCOL_METHODS[kind] if not callable(getattr(store, m, None))]
            connection = getattr(store, "connection", None)
            if connection is not None:
                connection.close()
            elif callable(getattr(store, "close", None)):
                store.close()
            if missing:
                raise StoreError(
                    f"{stores.names[kind]} is not a {kind} store: it has no {', '.join(missing)}"
                )
    finally:
        database.close()


def untrusted(names: Mapping[str, str]) -> list[str]:
    """The stores a trace names that are user code (outside ``txcheck.models.stores``)."""
    return sorted(s for s in names.values() if not s.startswith("txcheck.models.stores."))
