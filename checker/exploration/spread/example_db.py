"""Where failures are kept between runs: a directory, or a Redis server that many share.

A location is a directory (default ``.txcheck/examples``, relative to the current
directory) or ``redis://HOST:PORT/DB``: Hypothesis' ``RedisExampleDatabase``, so the
workers of a cluster and the runners of a CI pipeline replay each other's failures first.
Keys are those Hypothesis derives from the target (``machine.target_digest``), so every
run of the same target, wherever it runs, reads and writes the same entries. The Redis
client is imported only for a ``redis://`` location.

The database is a cache: it only changes which examples are tried first, never a
verdict. So a search holds it through ``CacheDatabase``: when it fails mid-run (a Redis
server that dies, a full disk), one warning goes to stderr and the search goes on without
it; the counterexample found, its trace and the exit code are what they would have been.
The default directory (``DEFAULT_DATABASE``) is not used through a symbolic link planted in
its path (a ``.txcheck`` that points elsewhere): ``planted_database_link`` finds it, and the
search warns once and runs without an example database.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from urllib.parse import urlsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from txcheck.cli.safe_text import one_line
from txcheck.exploration.kernel.target import DEFAULT_DATABASE
from txcheck.models.errors import InputError
from txcheck.traces.destination import planted_link

__all__ = [
    "KEY_PREFIX",
    "CacheDatabase",
    "check_database",
    "forget_warnings",
    "is_redis",
    "open_database",
    "planted_database_link",
    "warn_once",
]

KEY_PREFIX = b"txcheck-example:"
"""What txcheck's keys in a shared Redis start with."""
CONNECT_SECONDS = 5.0


def is_redis(location: str) -> bool:
    return location.startswith("redis://")


def _redis_url(location: str) -> str:
    """``location`` if it is ``redis://HOST[:PORT][/DB]``, else a one-line error."""
    try:
        parts = urlsplit(location)
        port = parts.port
    except ValueError as error:
        raise InputError(
            f"not a Redis URL redis://HOST:PORT/DB ({error})", source="--example-db"
        ) from None
    db = parts.path.lstrip("/")
    wrong_port = port is not None and port <= 0
    if not parts.hostname or wrong_port or (db and not db.isdigit()) or parts.query:
        raise InputError(
            f"not a Redis URL redis://HOST:PORT/DB (got {location!r})", source="--example-db"
        )
    return location


def open_database(location: str) -> ExampleDatabase:
    """The example database at ``location`` (a directory or a ``redis://`` URL)."""
    if not is_redis(location):
        return DirectoryBasedExampleDatabase(location)
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise InputError(
            "a redis:// example database needs the Redis client: "
            "pip install 'txcheck[distributed]' (or pip install redis)",
            source="--example-db",
        ) from None
    client = redis.Redis.from_url(
        _redis_url(location),
        socket_connect_timeout=CONNECT_SECONDS,
        socket_timeout=CONNECT_SECONDS,
    )
    return RedisExampleDatabase(client, key_prefix=KEY_PREFIX)


def check_database(location: str) -> None:
    """Fail in one line, before any search, when ``location`` cannot be used: a Redis
    server that does not answer (a directory is made when first written to)."""
    if not is_redis(location):
        return
    database = open_database(location)
    client = getattr(database, "redis", None)
    try:
        if client is not None:
            client.ping()
    except Exception as error:  # redis.ConnectionError, a refused AUTH, a timeout
        raise InputError(
            f"cannot reach the Redis example database at {location}: {error}",
            source="--example-db",
        ) from None


_WARNED: set[str] = set()


def forget_warnings() -> None:
    """Warn again: each command (``main`` may run several in one process) warns once."""
    _WARNED.clear()


def warn_once(message: str) -> None:
    """``message`` as one warning line on stderr, the first time it is given."""
    if message in _WARNED:
        return
    _WARNED.add(message)
    print(f"txcheck: warning: {one_line(message, None)}", file=sys.stderr, flush=True)


def planted_database_link(location: str) -> str | None:
    """The symbolic link in the default database directory's path (``.txcheck`` or
    ``.txcheck/examples``), if there is one: the search must not write through it. Any
    other location is the user's own choice and is used as it is."""
    return planted_link(location) if location == DEFAULT_DATABASE else None


class CacheDatabase(ExampleDatabase):
    """``inner`` used as a cache: its first failure is warned about once, and from then on
    it is neither read nor written (an empty database that keeps nothing)."""

    def __init__(self, inner: ExampleDatabase, location: str) -> None:
        super().__init__()
        self.inner = inner
        self.location = location
        self.failure: str | None = None

    def __repr__(self) -> str:
        return f"CacheDatabase({self.inner!r})"

    def _failed(self, error: Exception) -> None:
        if self.failure is None:
            self.failure = f"{type(error).__name__}: {error}"
            warn_once(
                f"the example database {self.location} failed ({self.failure}); the search "
                "goes on without it (nothing more is read from it or saved to it)"
            )

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return iter(self._fetched(key))

    def _fetched(self, key: bytes) -> list[bytes]:
        if self.failure is not None:
            return []
        try:
            return list(self.inner.fetch(key))
        except Exception as error:  # redis.ConnectionError, OSError: a cache may fail
            self._failed(error)
            return []

    def save(self, key: bytes, value: bytes) -> None:
        if self.failure is None:
            try:
                self.inner.save(key, value)
            except Exception as error:
                self._failed(error)

    def delete(self, key: bytes, value: bytes) -> None:
        if self.failure is None:
            try:
                self.inner.delete(key, value)
            except Exception as error:
                self._failed(error)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if self.failure is None:
            try:
                self.inner.move(src, dest, value)
            except Exception as error:
                self._failed(error)

    def _start_listening(self) -> None:
        """Nobody listens to a cache (Hypothesis' search does not)."""

    def _stop_listening(self) -> None:
        """See ``_start_listening``."""
