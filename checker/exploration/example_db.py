"""Where failures are kept between runs: a directory, or a Redis server that many share.

A location is a directory (default ``.txcheck/examples``, relative to the current
directory) or ``redis://HOST:PORT/DB``: Hypothesis' ``RedisExampleDatabase``, so the
workers of a cluster and the runners of a CI pipeline replay each other's failures first.
Keys are those Hypothesis derives from the target (``machine.target_digest``), so every
run of the same target, wherever it runs, reads and writes the same entries. The Redis
client is imported only for a ``redis://`` location.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from txcheck.models.errors import InputError

__all__ = ["KEY_PREFIX", "check_database", "is_redis", "open_database"]

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
