"""The example database: the directory under ``.txcheck/`` by default, or a real Redis
server that workers and CI runners share, so a failure one of them found is the first
example the next run tries. The Redis tests start ``redis-server`` on a free loopback
port (tests/conftest.py) and are skipped, saying why, only where it is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port
from hypothesis.database import DirectoryBasedExampleDatabase

from txcheck.cli import main
from txcheck.exploration.example_db import KEY_PREFIX, check_database, open_database
from txcheck.exploration.hypothesis_engine import HypothesisEngine
from txcheck.exploration.target import Bounds, Budget, Deadline, Target
from txcheck.models.errors import InputError
from txcheck.models.policies import builtin_policy

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
    first = HypothesisEngine().explore(target, Deadline(), workers=dask_workers)
    assert first.counterexample is not None
    assert "unseeded, sharing the example database" in first.notes[0]
    # (Its own shares share too: one that starts after another saved a failure replays it.)
    # Another run (in this process: another machine, as far as Redis can tell) replays it.
    again = HypothesisEngine().explore(target, Deadline())
    assert again.counterexample is not None
    assert _first_failure(again.notes) == 1
    assert again.counterexample.invariant == first.counterexample.invariant
    # ...and with an empty database the same search needs a few dozen examples.
    fresh = HypothesisEngine().explore(_target(_empty(redis_db)), Deadline())
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
