"""Shared fixtures: a real local Dask cluster, a real Redis server and a PostgreSQL
database, each started once, only by the tests that ask for them; and for every test, a
check that it leaves the SIGINT and SIGTERM handlers as it found them."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import postgres_cluster
import pytest

_WATCHED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def _signal_handlers_left_as_found() -> Iterator[None]:
    """Every test leaves SIGINT's and SIGTERM's handlers as it found them: a handler left
    behind by an in-process command changes what a later test's Ctrl-C does (it once made
    the real Ctrl-C test depend on file order). The handlers are put back and the test
    that changed them fails, naming them."""
    before = {number: signal.getsignal(number) for number in _WATCHED_SIGNALS}
    yield
    changed = {
        signal.Signals(number).name: handler
        for number in _WATCHED_SIGNALS
        if (handler := signal.getsignal(number)) is not before[number]
    }
    for number, handler in before.items():
        signal.signal(number, handler)
    if changed:
        pytest.fail(f"the test left signal handlers changed: {changed!r}")


@pytest.fixture(scope="module")
def dask_workers() -> Iterator[object]:
    """Two local Dask worker processes (``txcheck.exploration.spread.cluster.local_workers``),
    per test module: a cluster kept for the whole session runs its event loop (which uses
    the ``random`` module) under later Hypothesis tests, which then fail as flaky."""
    cluster = pytest.importorskip("txcheck.exploration.spread.cluster")
    with cluster.local_workers(2) as workers:
        yield workers


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on (now)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def redis_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``redis-server`` on a free loopback port, nothing saved to disk: its URL and
    its process (a test may kill it); skipped where redis-server is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    redis = pytest.importorskip("redis")
    port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail(f"redis-server did not answer on port {port}")
        yield f"redis://127.0.0.1:{port}", server
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real ``redis-server`` shared by the session's tests (``redis_server``)."""
    with redis_server() as (url, _):
        yield url


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A PostgreSQL database for the session: ``$TXCHECK_TEST_PG_DSN`` (CI's cluster) or a
    throwaway cluster started here (``postgres_cluster.postgres_dsn``); skipped only where
    PostgreSQL's binaries are absent."""
    with postgres_cluster.postgres_dsn() as dsn:
        yield dsn
