"""PostgreSQL for ``txcheck conform --dsn``: a fresh schema per history, and statements
counted through a thin wrapper around the store's psycopg connection.

psycopg has no per-statement trace hook like ``sqlite3.Connection.set_trace_callback``, so
``trace`` swaps the store's ``connection`` for a ``CountedConnection`` that calls the
callback as each ``execute`` starts (on the connection or on a cursor it made), then hands
the statement to psycopg. A store takes part when it exposes its ``psycopg.Connection`` as
``connection`` and runs its statements through it (``BEGIN`` and ``COMMIT`` included, as
the reference stores do; the ones psycopg's ``transaction()`` sends itself are not seen).

Imported only when a DSN is given or a psycopg store is checked.
"""

from __future__ import annotations

import contextlib
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from txcheck.models.errors import StoreError

__all__ = [
    "CountedConnection",
    "Schemas",
    "backend_pid",
    "is_psycopg",
    "settle",
    "trace",
]

Callback = Callable[[str], None]
SCHEMA_PREFIX = "txcheck_conform_"
"""Every schema conform creates starts so: one left by a killed run is easy to find."""


def is_psycopg(connection: Any) -> bool:
    """Whether ``connection`` is a psycopg 3 connection (psycopg is never imported here:
    a store that made one has imported it already)."""
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(connection, (psycopg.Connection, CountedConnection))


class CountedCursor:
    """A psycopg cursor whose ``execute`` and ``executemany`` are counted first."""

    def __init__(self, inner: Any, callback: Callback) -> None:
        self._inner = inner
        self._callback = callback

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> CountedCursor:
        self._callback(str(query))
        self._inner.execute(query, *args, **kwargs)
        return self

    def executemany(self, query: Any, *args: Any, **kwargs: Any) -> None:
        self._callback(str(query))
        self._inner.executemany(query, *args, **kwargs)

    def __enter__(self) -> CountedCursor:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.__exit__(*exc)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._inner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CountedConnection:
    """A psycopg connection whose statements are announced to ``callback`` as they start;
    everything else is the connection's own."""

    def __init__(self, inner: Any, callback: Callback) -> None:
        self.inner = inner
        self._callback = callback

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> CountedCursor:
        cursor = CountedCursor(self.inner.cursor(), self._callback)
        return cursor.execute(query, *args, **kwargs)

    def cursor(self, *args: Any, **kwargs: Any) -> CountedCursor:
        return CountedCursor(self.inner.cursor(*args, **kwargs), self._callback)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def trace(store: Any, callback: Callback | None) -> None:
    """Count ``store``'s statements with ``callback`` (None: stop counting)."""
    connection = store.connection
    inner = connection.inner if isinstance(connection, CountedConnection) else connection
    store.connection = inner if callback is None else CountedConnection(inner, callback)


def backend_pid(store: Any) -> int:
    """The server process serving ``store``'s connection."""
    return int(store.connection.info.backend_pid)


def settle(dsn: str, pid: int, *, timeout: float = 10.0) -> None:
    """Wait until the server process ``pid`` (a crashed client's) has gone: it rolls the
    client's transaction back and releases its locks as it notices the closed socket, and
    the next operation must not meet them. ``dsn`` is the one the store was opened with."""
    import psycopg

    deadline = time.monotonic() + timeout
    try:
        connection = psycopg.connect(dsn, autocommit=True)
    except psycopg.Error:  # a store on its own database, checked without --dsn
        time.sleep(0.05)  # the best that can be done: give the server a moment
        return
    with connection:
        while time.monotonic() < deadline:
            found = connection.execute(
                "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchall()
            if not found:
                return
            time.sleep(0.002)


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class Schemas:
    """One admin connection to ``dsn``; ``fresh()`` creates a schema and gives a DSN whose
    ``search_path`` starts with it, ``drop`` removes it with everything in it. Connection
    failures are ``StoreError`` in one line (the DSN, which may hold a password, is never
    repeated)."""

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict, make_conninfo
        except ImportError:
            raise StoreError("--dsn needs psycopg 3: pip install 'txcheck[postgres]'") from None
        self._make = make_conninfo
        try:
            self._params = conninfo_to_dict(dsn)
        except psycopg.Error as error:
            raise StoreError(
                f"--dsn is not a PostgreSQL connection string: {_one_line(error)}"
            ) from None
        try:
            self.connection = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as error:
            raise StoreError(f"cannot connect to PostgreSQL (--dsn): {_one_line(error)}") from None
        self.connection.execute("SET client_min_messages = warning")
        self.connection.execute("SET lock_timeout = '10s'")
        self.made: list[str] = []

    def dsn_for(self, schema: str) -> str:
        """The DSN with ``schema`` first on its ``search_path`` (other options kept; public
        stays second, so types and functions of extensions installed there still resolve,
        while tables created unqualified land in ``schema`` and shadow any in public)."""
        params = dict(self._params)
        options = str(params.get("options") or "")
        params["options"] = f"{options} -c search_path={schema},public".strip()
        return str(self._make("", **{k: v for k, v in params.items() if v is not None}))

    def fresh(self) -> str:
        schema = f"{SCHEMA_PREFIX}{uuid.uuid4().hex[:16]}"
        self.connection.execute(f"CREATE SCHEMA {schema}")
        self.made.append(schema)
        return self.dsn_for(schema)

    def drop(self, dsn: str) -> None:
        schema = self.schema_of(dsn)
        if schema in self.made:
            self.made.remove(schema)
            self.connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    def schema_of(self, dsn: str) -> str:
        from psycopg.conninfo import conninfo_to_dict

        options = str(conninfo_to_dict(dsn).get("options") or "")
        path = options.rsplit("search_path=", 1)[-1].split(maxsplit=1)[0]
        return path.partition(",")[0]

    def close(self) -> None:
        """Drop what is left, then close."""
        for schema in list(self.made):
            with contextlib.suppress(Exception):
                self.connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        self.made.clear()
        self.connection.close()
