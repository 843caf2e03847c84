"""Positive controls: each mutant store carries one classic bug, and conformance catches
it with the shortest failing history (the reference stores pass: tests/test_conform.py).

Each run allows only what its bug needs (sequential answers, crash points or races), so
shrinking stays quick; the runs are derandomized, so the histories are fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from txcheck.cli import main
from txcheck.conformance import conform
from txcheck.models.stores.mutants import (
    CheckThenInsert,
    DedupeAfterEffect,
    ResultBeforeReservation,
)


def test_result_stored_before_the_key_is_reserved_lets_a_retry_run_again() -> None:
    report = conform("idempotency", ResultBeforeReservation, steps=3, crashes=False, races=False)
    assert not report.passed
    first, second = report.history
    assert first.startswith("begin(tenant='t1', key='k1'") and "'proceed'" in first
    # the key should now be held in flight; the mutant has no record of it
    assert second == "lookup('t1', 'k1', 0) -> None"
    assert report.problem is not None and "'status': 'in_flight'" in report.problem


def test_check_then_insert_without_a_unique_key_lets_two_clients_proceed() -> None:
    report = conform("idempotency", CheckThenInsert, steps=3, crashes=False)
    assert not report.passed
    (race,) = report.history
    assert race.startswith("two clients, schedule [1]:")
    assert race.count("'decision': 'proceed'") == 2  # both passed the check
    assert report.problem is not None and report.problem.startswith("no order")


def test_dedupe_row_committed_after_the_effect_loses_it_at_a_crash() -> None:
    report = conform("inbox", DedupeAfterEffect, steps=3, races=False)
    assert not report.passed
    assert report.history == [
        "deliver({'id': 'e1', 'amount': 5}) with a crash at statement 5 -> crashed; reopened"
    ]
    # the effect committed, the dedupe row did not: a redelivery would apply it again
    assert report.problem is not None
    assert "{'effects': {'e1': 1}, 'seen': []}" in report.problem


def test_outbox_row_in_a_second_transaction_is_caught_by_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    impl = "txcheck.models.stores.mutants:OutboxInSecondTransaction"
    assert main(["conform", "outbox", "--impl", impl, "--steps", "3"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"MISMATCH  {impl} (outbox)"
    # the operation committed, its event did not: it is never published
    assert "the store holds {'operations': [{'events': ['evt1'], 'id': 'op1'}], " in lines[1]
    assert lines[2] == "Shortest failing history (1 step):"
    assert lines[3] == (
        "  1. record({'id': 'op1', 'events': ['evt1']}, [{'id': 'evt1', 'op': 'op1'}]) "
        "with a crash at statement 4 -> crashed; reopened"
    )
