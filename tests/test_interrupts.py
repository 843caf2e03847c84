"""SIGINT and SIGTERM during ``score`` and ``evaluate``: what was done so far is printed
(with ``--json``, one complete object saying it was interrupted) and the exit code is 130
or 143. Before, SIGINT printed no summary (and left ``score --json`` truncated) and
SIGTERM ended the process silently.

The signal is sent by the process to itself once the second case is done (the scorer is
wrapped), so the tests do not depend on timing.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import cmd_evaluate, main
from txcheck.scoring import scorer

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
CASES = str(ROOT / "examples/audit/cases.jsonl")
SIGNALS = [("SIGINT", 130), ("SIGTERM", 143)]


def _signalling(
    original: Callable[..., Iterator[Any]], signum: int, after: int = 2
) -> Callable[..., Iterator[Any]]:
    """``original`` (a generator function), sending ``signum`` to this process once it
    has yielded ``after`` items."""

    def wrapped(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for count, item in enumerate(original(*args, **kwargs), start=1):
            if count == after:
                os.kill(os.getpid(), signum)
            yield item

    return wrapped


@pytest.mark.parametrize(("name", "code"), SIGNALS)
def test_an_interrupted_score_prints_the_summary_of_what_was_scored(
    name: str, code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        scorer, "score_cases", _signalling(scorer.score_cases, getattr(signal, name))
    )
    assert main(["score", CONTRACT, CASES]) == code
    out, err = capsys.readouterr()
    assert "audit-2-refund-no-reason" in out and "audit-3-number-for-string" not in out
    assert "2 case" in out  # the summary, of the two cases scored
    assert err == f"txcheck score: {CASES}: interrupted after 2 case(s); the summary covers them\n"


@pytest.mark.parametrize(("name", "code"), SIGNALS)
def test_an_interrupted_score_json_is_one_complete_object(
    name: str, code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        scorer, "score_cases", _signalling(scorer.score_cases, getattr(signal, name))
    )
    assert main(["score", CONTRACT, CASES, "--json"]) == code
    document = json.loads(capsys.readouterr().out)  # whole: it parses
    assert document["interrupted"] is True
    assert [c["id"] for c in document["cases"]] == [
        "audit-1-cancel-order",
        "audit-2-refund-no-reason",
    ]
    assert document["summary"]["cases"] == 2


def test_a_score_that_is_not_interrupted_says_nothing_of_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The positive control: the same run, no signal, the usual object (no new field)."""
    assert main(["score", CONTRACT, CASES, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert "interrupted" not in document and document["summary"]["cases"] == 5


@pytest.mark.parametrize(("name", "code"), SIGNALS)
@pytest.mark.parametrize("as_json", [False, True], ids=["human", "json"])
def test_an_interrupted_evaluate_prints_the_report_of_what_was_evaluated(
    name: str,
    code: int,
    as_json: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(
        cmd_evaluate,
        "evaluate_cases",
        _signalling(cmd_evaluate.evaluate_cases, getattr(signal, name)),
    )
    assert main(["evaluate", CONTRACT, CASES, *(["--json"] if as_json else [])]) == code
    out, err = capsys.readouterr()
    assert err == (
        f"txcheck evaluate: {CASES}: interrupted after 2 case(s); the report covers them\n"
    )
    if as_json:
        document = json.loads(out)
        assert document["interrupted"] is True
        assert [c["id"] for c in document["cases"]] == [
            "audit-1-cancel-order",
            "audit-2-refund-no-reason",
        ]
    else:
        assert "audit-2-refund-no-reason" in out and "audit-3-number-for-string" not in out


def test_the_signal_handlers_are_restored_afterwards(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert main(["score", CONTRACT, CASES, "--json"]) == 1
    capsys.readouterr()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
