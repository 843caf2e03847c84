"""``txcheck conform --dsn``: each PostgreSQL reference store agrees with the model on every
answer, after every crash point it reaches and after every two-client race; each history
runs in a fresh schema that is dropped afterwards; a bad DSN or a server that is down is one
line, exit 2. The server is ``postgres_dsn`` (conftest): CI's cluster or one started here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from postgres_cluster import free_port

from txcheck.cli import main
from txcheck.conformance import conform
from txcheck.conformance.postgres import Schemas
from txcheck.models.stores import StoreBusy
from txcheck.models.stores.postgres import (
    PostgresIdempotencyStore,
    PostgresInbox,
    PostgresJournal,
    PostgresOutbox,
)

REFERENCES = {
    "idempotency": PostgresIdempotencyStore,
    "journal": PostgresJournal,
    "outbox": PostgresOutbox,
    "inbox": PostgresInbox,
}


def _conform_schemas(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as connection:
        found = connection.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'txcheck_conform_%'"
        ).fetchall()
    return [str(row[0]) for row in found]


@pytest.mark.parametrize("kind", sorted(REFERENCES))
def test_the_reference_store_conforms_through_crashes_and_races(
    kind: str, postgres_dsn: str
) -> None:
    report = conform(kind, REFERENCES[kind], examples=30, steps=8, dsn=postgres_dsn)
    assert report.passed, (report.problem, report.history)
    assert report.examples >= 30 and report.operations > 0
    assert report.crashes > 0  # some crash fell inside an operation, not after it
    assert report.crash_points > report.crashes  # and some after it had completed
    if kind != "outbox":  # the outbox has no operation two clients race on
        assert report.races > 0 and report.race_steps > 2 * report.races
    assert _conform_schemas(postgres_dsn) == []  # every history's schema was dropped


@pytest.mark.parametrize("kind", ["idempotency", "journal", "inbox"])
def test_three_clients_race_each_reference_store_and_every_history_linearizes(
    kind: str, postgres_dsn: str
) -> None:
    report = conform(
        kind, REFERENCES[kind], examples=15, steps=6, crashes=False, clients=3, dsn=postgres_dsn
    )
    assert report.passed, (report.problem, report.history)
    assert report.races > 0 and report.histories == report.races
    assert report.checker_steps >= report.history_operations > report.races * 2
    assert _conform_schemas(postgres_dsn) == []


def test_each_history_has_its_own_schema(postgres_dsn: str) -> None:
    # Rows in the DSN's own schema: a history that saw them would answer False to the
    # first delivery of e1, e2 or e3, where the model answers True.
    outside = PostgresInbox(postgres_dsn)
    try:
        for event in ("e1", "e2", "e3"):
            assert outside.deliver({"id": event, "amount": 5})
        report = conform("inbox", PostgresInbox, examples=8, steps=6, dsn=postgres_dsn)
        assert report.passed, (report.problem, report.history)
        assert report.operations > 0
        assert outside.effects() == {"e1": 1, "e2": 1, "e3": 1}  # untouched
    finally:
        outside.connection.execute("DROP TABLE IF EXISTS inbox_seen, inbox_effects")
        outside.close()


def test_a_lock_held_by_another_client_is_store_busy_and_applies_nothing(
    postgres_dsn: str,
) -> None:
    schemas = Schemas(postgres_dsn)
    dsn = schemas.fresh()
    holder, other = PostgresInbox(dsn), PostgresInbox(dsn)
    try:
        holder.connection.execute("BEGIN")
        holder.connection.execute("INSERT INTO inbox_seen (event_id) VALUES ('e1')")
        with pytest.raises(StoreBusy, match="lock timeout"):
            other.deliver({"id": "e1", "amount": 5})  # waits lock_timeout, not for ever
        holder.connection.execute("ROLLBACK")
        assert other.deliver({"id": "e1", "amount": 5}) is True
        assert other.effects() == {"e1": 1}  # the busy attempt left nothing behind
    finally:
        holder.close()
        other.close()
        schemas.close()


def test_the_command_with_a_dsn_says_what_it_exercised(
    postgres_dsn: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    impl = "txcheck.models.stores.postgres:PostgresJournal"
    argv = ["conform", "journal", "--impl", impl, "--dsn", postgres_dsn, "--examples", "5"]
    code = main([*argv, "--steps", "5"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith(f"CONFORMS  {impl} (journal)")
    code = main([*argv, "--json"])
    found = json.loads(capsys.readouterr().out)
    assert code == 0 and found["passed"] and found["crash_points"] > 0 and found["races"] > 0


def test_importing_the_postgres_stores_needs_no_psycopg() -> None:
    script = (
        "import sys\n"
        "import txcheck.models.stores.postgres, txcheck.models.stores.postgres_mutants\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'psycopg'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


@pytest.mark.parametrize(
    ("dsn", "message"),
    [
        (
            "postgresql://someone:s3cret@127.0.0.1:{port}/db",
            "cannot connect to PostgreSQL (--dsn): connection failed:",
        ),
        ("host=127.0.0.1 port={port} nonsense", "--dsn is not a PostgreSQL connection string"),
    ],
)
def test_a_bad_dsn_or_a_server_down_is_one_line_and_exit_2(
    dsn: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    impl = "txcheck.models.stores.postgres:PostgresInbox"
    argv = ["conform", "inbox", "--impl", impl, "--dsn", dsn.format(port=free_port())]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert "Traceback" not in captured.err and "s3cret" not in captured.err


def test_without_psycopg_a_dsn_says_what_to_install(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "sys.modules['psycopg'] = None  # as if not installed\n"
        "from txcheck.cli import main\n"
        "sys.exit(main(['conform', 'inbox', '--impl', "
        "'txcheck.models.stores.postgres:PostgresInbox', '--dsn', 'host=127.0.0.1']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "--dsn needs psycopg 3: pip install 'txcheck[postgres]'" in done.stderr
