"""The example database: the directory under ``.txcheck/`` by default, or a real Redis
server that workers and CI runners share, so a failure one of them found is the first
example the next run tries. The Redis tests start ``redis-server`` on a free loopback
port (tests/conftest.py) and are skipped, saying why, only where it is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port, redis_server
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    InMemoryExampleDatabase,
)

from txcheck.cli import main
from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.spread.example_db import (
    KEY_PREFIX,
    CacheDatabase,
    check_database,
    open_database,
)
from txcheck.models.errors import InputError
from txcheck.models.sim.policies import builtin_policy

POLICY = "control-no-saga"
"""A bug Hypothesis needs a few dozen examples to find (not the first one it tries)."""


_DATABASES = iter(range(15))  # 15 is kept empty: see _empty


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[str]:
    """A database of the test server no other test uses (a stopped share of an earlier
    test may still save its failure to its own), emptied before the test."""
    redis = pytest.importorskip("redis")
    location = f"{redis_url}/{next(_DATABASES)}"
    client = redis.Redis.from_url(location)
    client.flushdb()
    client.close()
    yield location


def _empty(location: str) -> str:
    """Database 15 of ``location``'s server, emptied."""
    redis = pytest.importorskip("redis")
    empty = location.rsplit("/", 1)[0] + "/15"
    client = redis.Redis.from_url(empty)
    client.flushdb()
    client.close()
    return empty


def _target(database: str) -> Target:
    policy = builtin_policy(POLICY)
    assert policy is not None
    return Target(
        policy=policy,
        bounds=Bounds(max_faults=2),
        budget=Budget(max_examples=400, seed=None, database=database),
    )


def _first_failure(notes: tuple[str, ...] | list[str]) -> int:
    (line,) = [n for n in notes if "first failure at example" in n]
    return int(line.rsplit(" ", 1)[1])


def test_the_default_is_the_directory_under_txcheck() -> None:
    database = open_database(".txcheck/examples")
    assert isinstance(database, DirectoryBasedExampleDatabase)
    check_database(".txcheck/examples")  # a directory needs no check


@pytest.mark.parametrize(
    "location",
    ["redis://", "redis://host:port/0", "redis://h:6379/zero", "redis://h:6379/0?x=1"],
)
def test_a_malformed_redis_url_is_a_one_line_error(location: str) -> None:
    with pytest.raises(InputError, match="not a Redis URL") as caught:
        check_database(location)
    assert "\n" not in str(caught.value)


def test_a_redis_server_that_does_not_answer_is_refused_before_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    location = f"redis://127.0.0.1:{free_port()}/0"
    assert main(["explore", "--example-db", location]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the Redis example database" in err


def test_example_db_with_seed_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--seed", "1", "--example-db", "redis://127.0.0.1:1/0"]) == 2
    assert "--example-db: cannot be combined with --seed" in capsys.readouterr().err


def test_redis_keeps_what_is_saved(redis_db: str) -> None:
    database = open_database(redis_db)
    database.save(b"key", b"value")
    assert list(database.fetch(b"key")) == [b"value"]
    redis = pytest.importorskip("redis")
    keys = redis.Redis.from_url(redis_db).keys()
    assert keys and all(k.startswith(KEY_PREFIX) for k in keys)


def test_a_failure_found_on_workers_is_the_first_example_of_the_next_run(
    redis_db: str, dask_workers: Any
) -> None:
    target = _target(redis_db)
    first = HypothesisEngine().explore(target, SearchContext(workers=dask_workers))
    assert first.counterexample is not None
    assert "unseeded, sharing the example database" in first.notes[0]
    # (Its own shares share too: one that starts after another saved a failure replays it.)
    # Another run (in this process: another machine, as far as Redis can tell) replays it.
    again = HypothesisEngine().explore(target, SearchContext())
    assert again.counterexample is not None
    assert _first_failure(again.notes) == 1
    assert again.counterexample.invariant == first.counterexample.invariant
    # ...and with an empty database the same search needs a few dozen examples.
    fresh = HypothesisEngine().explore(_target(_empty(redis_db)), SearchContext())
    assert _first_failure(fresh.notes) > 1


def _explore(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "txcheck", "explore", *argv],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_two_commands_share_a_counterexample_through_redis(tmp_path: Path, redis_db: str) -> None:
    argv = ["--policy", POLICY, "--engine", "hypothesis", "--no-seeds", "--max-faults", "2"]
    argv += ["--max-examples", "400", "--example-db", redis_db, "--json"]
    one, two = tmp_path / "runner-1", tmp_path / "runner-2"  # two CI runners' checkouts
    one.mkdir()
    two.mkdir()
    first = _explore(one, *argv, "--workers", "2")
    second = _explore(two, *argv)
    assert first.returncode == second.returncode == 1, first.stderr + second.stderr
    notes = [json.loads(r.stdout)["engines"][0]["notes"] for r in (first, second)]
    assert _first_failure(notes[1]) == 1  # an empty database needs more: see above
    assert not (one / ".txcheck" / "examples").exists()  # nothing went to the directory


# -- the database is a cache: its failure never costs the result (hostile corpus) ---------

KILLER = """
import os
import signal

from txcheck.invariants import always

KILLED = [False]


@always(name="kill_redis_once")
def kill_once(view):
    \"\"\"Never fails; kills the Redis server the first time it is checked: after the search
    read the database (Hypothesis reads it first), before it saves its failure there.\"\"\"
    if not KILLED[0]:
        KILLED[0] = True
        os.kill(int(os.environ["REDIS_PID"]), signal.SIGKILL)
    return []
"""


def test_a_redis_server_that_dies_mid_run_costs_a_warning_not_the_counterexample(
    tmp_path: Path,
) -> None:
    (tmp_path / "redis_killer.py").write_text(KILLER, encoding="utf-8")
    with redis_server() as (url, server):
        argv = ["--policy", POLICY, "--engine", "hypothesis", "--no-seeds", "--max-faults", "2"]
        argv += ["--example-db", f"{url}/0", "--invariants", "redis_killer:kill_once"]
        done = subprocess.run(
            [sys.executable, "-m", "txcheck", "explore", *argv, "--json"],
            cwd=tmp_path,
            env={**os.environ, "REDIS_PID": str(server.pid)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert server.wait(timeout=30) == -9  # it was killed mid-run, as planned
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith(f"txcheck: warning: the example database {url}/0 failed (")
    assert "the search goes on without it" in warnings[0]
    found = json.loads(done.stdout)["counterexample"]
    assert found is not None and found["trace"] == "txcheck-counterexample.json"
    trace = json.loads((tmp_path / "txcheck-counterexample.json").read_text(encoding="utf-8"))
    assert trace["format"] == "txcheck-trace/1" and trace["policy"] == POLICY


class _Broken(ExampleDatabase):
    """A database whose every operation fails, as a dead server's does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _fail(self) -> None:
        self.calls += 1
        raise ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    def fetch(self, key: bytes) -> Iterable[bytes]:
        self._fail()
        return []

    def save(self, key: bytes, value: bytes) -> None:
        self._fail()

    def delete(self, key: bytes, value: bytes) -> None:
        self._fail()

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._fail()


def test_a_failing_database_warns_once_then_is_an_empty_cache(
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = _Broken()
    cache = CacheDatabase(broken, "redis://127.0.0.1:1/0")
    cache.save(b"k", b"v")
    assert list(cache.fetch(b"k")) == []
    cache.delete(b"k", b"v")
    cache.move(b"k", b"j", b"v")
    assert broken.calls == 1  # not tried again once it failed
    assert capsys.readouterr().err == (
        "txcheck: warning: the example database redis://127.0.0.1:1/0 failed "
        "(ConnectionError: Error 111 connecting to 127.0.0.1:1. Connection refused.); the "
        "search goes on without it (nothing more is read from it or saved to it)\n"
    )


def test_a_database_that_works_is_used_through_the_cache() -> None:
    inner = InMemoryExampleDatabase()
    cache = CacheDatabase(inner, "memory")
    cache.save(b"k", b"v")
    cache.move(b"k", b"j", b"v")
    assert list(cache.fetch(b"j")) == [b"v"] and list(inner.fetch(b"j")) == [b"v"]
    cache.delete(b"j", b"v")
    assert list(inner.fetch(b"j")) == [] and cache.failure is None


def test_a_planted_txcheck_link_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkout whose .txcheck points elsewhere: the search warns once and runs without
    an example database; nothing is written through the link."""
    work, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / ".txcheck").symlink_to(elsewhere)
    monkeypatch.chdir(work)
    argv = ["explore", "--policy", "naive", "--engine", "hypothesis", "--no-seeds"]
    assert main([*argv, "--max-examples", "50", "--max-faults", "1", "--json"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "txcheck: warning: .txcheck is a symbolic link; the example database "
        ".txcheck/examples is not used through it: the search runs without one (remove "
        "the link, or choose a database with --example-db)\n"
    )
    assert list(elsewhere.iterdir()) == []  # neither examples nor Hypothesis' caches
    assert (work / "txcheck-counterexample.json").exists()
