"""Positive controls on PostgreSQL: the four classic bugs of tests/test_store_mutants.py, on
the PostgreSQL reference stores (``txcheck.models.stores.postgres_mutants``), are caught by
``txcheck conform --dsn`` with the shortest failing history (the reference stores pass:
tests/test_conform_postgres.py). Same structure as the SQLite tests: each run allows only
what its bug needs, in a fresh interpreter, derandomized. The race (check then insert) is in
the slow tier: it takes about 800 examples here, and the SQLite test finds it too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MUTANTS = "txcheck.models.stores.postgres_mutants"


def _argv(kind: str, mutant: str, dsn: str, *options: str) -> list[str]:
    impl = f"{MUTANTS}:{mutant}"
    return [sys.executable, "-m", "txcheck", "conform", kind, "--impl", impl, "--dsn", dsn,
            "--steps", "3", *options]  # fmt: skip


def _conform(kind: str, mutant: str, dsn: str, *options: str) -> dict[str, Any]:
    done = subprocess.run(
        [*_argv(kind, mutant, dsn, *options), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # a mismatch
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["passed"] is False
    return report


def test_result_stored_before_the_key_is_reserved_lets_a_retry_run_again(
    postgres_dsn: str,
) -> None:
    report = _conform(
        "idempotency", "ResultBeforeReservation", postgres_dsn, "--no-crashes", "--no-races"
    )
    first, second = report["history"]
    assert first.startswith("begin(tenant='t1', key='k1'") and "'proceed'" in first
    # the key should now be held in flight; the mutant has no record of it
    assert second == "lookup('t1', 'k1', 0) -> None"
    assert "'status': 'in_flight'" in report["problem"]


@pytest.mark.slow  # 22 s: the race takes about 800 examples; the SQLite test finds it too
def test_check_then_insert_without_a_unique_key_lets_two_clients_proceed(
    postgres_dsn: str,
) -> None:
    report = _conform("idempotency", "CheckThenInsert", postgres_dsn, "--no-crashes")
    (race,) = report["history"]
    assert race.startswith("two clients, schedule [1]:")
    assert race.count("'decision': 'proceed'") == 2  # both passed the check
    assert report["problem"].startswith("no order")


def test_dedupe_row_committed_after_the_effect_loses_it_at_a_crash(postgres_dsn: str) -> None:
    report = _conform("inbox", "DedupeAfterEffect", postgres_dsn, "--no-races")
    assert report["history"] == [
        "deliver({'id': 'e1', 'amount': 5}) with a crash at statement 5 -> crashed; reopened"
    ]
    # the effect committed, the dedupe row did not: a redelivery would apply it again
    assert "{'effects': {'e1': 1}, 'seen': []}" in report["problem"]


def test_outbox_row_in_a_second_transaction_is_caught_by_the_command(
    postgres_dsn: str, tmp_path: Path
) -> None:
    argv = _argv("outbox", "OutboxInSecondTransaction", postgres_dsn)
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"MISMATCH  {MUTANTS}:OutboxInSecondTransaction (outbox)"
    # the operation committed, its event did not: it is never published
    assert "the store holds {'operations': [{'id': 'op1', 'events': ['evt1']}], " in lines[1]
    assert "'pending': []}" in lines[1]
    assert lines[2] == "Shortest failing history (1 step):"
    assert lines[3] == (
        "  1. record({'id': 'op1', 'events': ['evt1']}, [{'id': 'evt1', 'op': 'op1'}]) "
        "with a crash at statement 4 -> crashed; reopened"
    )
