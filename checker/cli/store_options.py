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

from collections.abc import Mapping, Sequence
from typing import Any

from txcheck.exploration.usercode.loading import _resolve, _spec
from txcheck.models.errors import InputError, StoreError
from txcheck.models.sim.stored import STORE_KINDS, Stores, memory_database

__all__ = [
    "BUILT_IN_STORES",
    "STORE_HELP",
    "add_store_option",
    "load_stores",
    "stores_record",
    "untrusted",
]

BUILT_IN_STORES = {
    "journal": "txcheck.models.stores.sqlite:SqliteJournal",
    "idempotency": "txcheck.models.stores.sqlite:SqliteIdempotencyStore",
}
"""What ``sqlite`` names, by kind."""

STORE_HELP = (
    "keep a record in a real store: KIND is journal or idempotency, SPEC is sqlite (the "
    "reference store) or package.module:Class; repeatable"
)

_PROTOCOL_METHODS = {
    "journal": ("open", "append", "entries", "claim"),
    "idempotency": ("begin", "finish", "abort", "lookup"),
}


def add_store_option(parser: Any) -> None:
    parser.add_argument(
        "--store", action="append", default=[], metavar="KIND=SPEC", help=STORE_HELP
    )


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
        spec = BUILT_IN_STORES[kind] if spec == "sqlite" else _spec(spec, "--store", "a store")
        chosen[kind] = spec
    return chosen


def load_stores(values: Sequence[str] | Mapping[str, str]) -> Stores | None:
    """The stores ``--store`` values (or a trace's record of them) name, each opened once
    on a scratch database to check it (a failure is one line, ``StoreError``); None when
    there are none."""
    chosen = dict(values) if isinstance(values, Mapping) else _parse(values)
    if not chosen:
        return None
    factories: dict[str, Any] = {}
    for kind, spec in sorted(chosen.items()):
        if kind not in STORE_KINDS:
            raise InputError(f"unknown store kind {kind!r}", source="--store")
        found = _resolve(spec, "store", StoreError)
        if not callable(found):
            raise StoreError(f"{spec} is not a class or a callable")
        factories[kind] = found
    stores = Stores(
        journal=factories.get("journal"), idempotency=factories.get("idempotency"), names=chosen
    )
    _check(stores)
    return stores


def _check(stores: Stores) -> None:
    """Open each store once and look for its protocol's methods."""
    uri, keeper = memory_database()
    try:
        for kind, factory in (("journal", stores.journal), ("idempotency", stores.idempotency)):
            if factory is None:
                continue
            try:
                store = factory(uri)
            except Exception as error:
                raise StoreError(
                    f"{stores.names[kind]}(path) raised {type(error).__name__}: {error}"
                ) from None
            missing = [m for m in _PROTOCOL_METHODS[kind] if not callable(getattr(store, m, None))]
            connection = getattr(store, "connection", None)
            if connection is not None:
                connection.close()
            if missing:
                raise StoreError(
                    f"{stores.names[kind]} is not a {kind} store: it has no {', '.join(missing)}"
                )
    finally:
        keeper.close()


def stores_record(stores: Stores | None) -> dict[str, Any]:
    """What a trace records of the stores (nothing for the in-memory world)."""
    return {} if stores is None else {"stores": dict(sorted(stores.names.items()))}


def untrusted(names: Mapping[str, str]) -> list[str]:
    """The stores a trace names that are user code (outside ``txcheck.models.stores``)."""
    return sorted(s for s in names.values() if not s.startswith("txcheck.models.stores."))
