"""A PostgreSQL database for the tests: the one ``$TXCHECK_TEST_PG_DSN`` names (``.ci/run``
starts a throwaway cluster and sets it), else a throwaway cluster started here from the
installed binaries (so a developer's plain ``pytest`` runs the PostgreSQL tests too), else
a skip that says what is missing."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ENV = "TXCHECK_TEST_PG_DSN"


def _version(bindir: str) -> tuple[int, ...]:
    name = Path(bindir).parent.name  # /usr/lib/postgresql/15/bin -> 15
    return tuple(int(p) for p in name.split(".") if p.isdigit())


def bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: Debian's newest ``/usr/lib/postgresql/*/bin``,
    else ``PATH``."""
    debian = sorted(
        (str(Path(p).parent) for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")), key=_version
    )
    if debian:
        return Path(debian[-1])
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    """A loopback TCP port nothing listens on (now); conftest's twin, kept here so this
    module and conftest need not import each other."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        pytest.fail(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout)[-2000:]}")


@contextlib.contextmanager
def cluster(binaries: Path) -> Iterator[str]:
    """initdb in a temporary folder, started with pg_ctl on a free loopback port (as the
    ``postgres`` user when running as root: initdb refuses root), stopped and removed on
    exit. fsync is off: the tests crash clients, never the server."""
    folder = Path(tempfile.mkdtemp(prefix="txcheck-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(folder, ignore_errors=True)
            pytest.skip("running as root, which initdb refuses, and there is no postgres user")
        os.chown(folder, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"
    try:
        _run(
            [
                *prefix,
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            "initdb",
        )
        port = free_port()
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off "
            "-c full_page_writes=off -c max_connections=50"
        )
        _run(
            [
                *prefix,
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(folder / "log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ],
            "pg_ctl start",
        )
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [
                    *prefix,
                    str(binaries / "pg_ctl"),
                    "-D",
                    str(data),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
                capture_output=True,
                timeout=60,
                check=False,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_dsn() -> Iterator[str]:
    """``$TXCHECK_TEST_PG_DSN`` when set (the tests must then run: no skip), else a
    throwaway cluster, else a skip naming what is missing."""
    given = os.environ.get(ENV)
    if given:
        yield given
        return
    binaries = bindir()
    if binaries is None:
        pytest.skip(
            f"PostgreSQL binaries are absent (no /usr/lib/postgresql/*/bin/initdb, no initdb "
            f"on PATH; Debian: apt-get install postgresql) and {ENV} is not set"
        )
    with cluster(binaries) as dsn:
        yield dsn
