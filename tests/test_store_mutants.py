"""Positive controls: each mutant store carries one classic bug, and conformance catches
it with the shortest failing history (the reference stores pass: tests/test_conform.py).

Each run allows only what its bug needs (sequential answers, crash points or races), so
shrinking stays quick; the runs are derandomized, so the histories are fixed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

MUTANTS = "txcheck.models.stores.mutants"


def _conform(kind: str, mutant: str, *options: str) -> dict[str, Any]:
    """``txcheck conform`` on ``mutant``, in a fresh interpreter: the search is a long
    Hypothesis run, kept apart from whatever state the suite's other tests leave in this
    process (an in-process run once ran for ever in the full suite, not alone)."""
    argv = [sys.executable, "-m", "txcheck", "conform", kind, "--impl", f"{MUTANTS}:{mutant}"]
    done = subprocess.run(
        [*argv, "--steps", "3", *options, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # a mismatch
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["passed"] is False
    return report


def test_result_stored_before_the_key_is_reserved_lets_a_retry_run_again() -> None:
    report = _conform("idempotency", "ResultBeforeReservation", "--no-crashes", "--no-races")
    first, second = report["history"]
    assert first.startswith("begin(tenant='t1', key='k1'") and "'proceed'" in first
    # the key should now be held in flight; the mutant has no record of it
    assert second == "lookup('t1', 'k1', 0) -> None"
    assert "'status': 'in_flight'" in report["problem"]


def test_check_then_insert_without_a_unique_key_lets_two_clients_proceed() -> None:
    report = _conform("idempotency", "CheckThenInsert", "--no-crashes")
    (race,) = report["history"]
    assert race.startswith("two clients, schedule [1]:")
    assert race.count("'decision': 'proceed'") == 2  # both passed the check
    assert report["problem"].startswith("no order")


def test_dedupe_row_committed_after_the_effect_loses_it_at_a_crash() -> None:
    report = _conform("inbox", "DedupeAfterEffect", "--no-races")
    assert report["history"] == [
        "deliver({'id': 'e1', 'amount': 5}) with a crash at statement 5 -> crashed; reopened"
    ]
    # the effect committed, the dedupe row did not: a redelivery would apply it again
    assert "{'effects': {'e1': 1}, 'seen': []}" in report["problem"]


def test_outbox_row_in_a_second_transaction_is_caught_by_the_command(tmp_path: Path) -> None:
    impl = f"{MUTANTS}:OutboxInSecondTransaction"
    argv = [sys.executable, "-m", "txcheck", "conform", "outbox", "--impl", impl, "--steps", "3"]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"MISMATCH  {impl} (outbox)"
    # the operation committed, its event did not: it is never published
    assert "the store holds {'operations': [{'events': ['evt1'], 'id': 'op1'}], " in lines[1]
    assert lines[2] == "Shortest failing history (1 step):"
    assert lines[3] == (
        "  1. record({'id': 'op1', 'events': ['evt1']}, [{'id': 'evt1', 'op': 'op1'}]) "
        "with a crash at statement 4 -> crashed; reopened"
    )


def test_claims_kept_in_the_process_let_two_instances_own_one_operation() -> None:
    report = _conform("journal", "ClaimInMemory", "--no-crashes")
    race = report["history"][-1]
    assert race.startswith("two clients, schedule")
    # each client's process kept its own claim: both own op1
    assert "-> 'a'" in race and "-> 'b'" in race
    assert "where the model answers 'a'" in report["problem"]
