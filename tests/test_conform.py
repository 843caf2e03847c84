"""``txcheck conform``: each SQLite reference store agrees with the model on every answer,
after every crash point it reaches and after every two-client race; the command reports
what it exercised and refuses a bad ``--impl`` in one line (exit 2)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from txcheck.cli import main
from txcheck.conformance import conform, machine
from txcheck.models.stores.sqlite import (
    SqliteIdempotencyStore,
    SqliteInbox,
    SqliteJournal,
    SqliteOutbox,
)

REFERENCES = {
    "idempotency": SqliteIdempotencyStore,
    "journal": SqliteJournal,
    "outbox": SqliteOutbox,
    "inbox": SqliteInbox,
}


@pytest.mark.parametrize("kind", sorted(REFERENCES))
def test_the_reference_store_conforms_through_crashes_and_races(kind: str) -> None:
    report = conform(kind, REFERENCES[kind], examples=15, steps=10)
    assert report.passed, (report.problem, report.history)
    assert report.examples >= 15 and report.operations > 0
    assert report.crashes > 0  # some crash fell inside an operation, not after it
    assert report.crash_points > report.crashes  # and some after it had completed
    if kind != "outbox":  # the outbox has no operation two clients race on
        assert report.races > 0 and report.race_steps > 2 * report.races


def test_the_command_says_what_it_exercised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    impl = "txcheck.models.stores.sqlite:SqliteInbox"
    code = main(["conform", "inbox", "--impl", impl, "--examples", "5", "--steps", "5"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith(f"CONFORMS  {impl} (inbox)")
    assert "examples" in out and "crash points" in out and "two-client races" in out
    code = main(["conform", "inbox", "--impl", impl, "--examples", "3", "--json"])
    found = json.loads(capsys.readouterr().out)
    assert code == 0 and found["passed"] and found["impl"] == impl and found["examples"] >= 3


def test_the_command_races_more_clients_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    impl = "txcheck.models.stores.sqlite:SqliteJournal"
    argv = ["conform", "journal", "--impl", impl, "--examples", "5", "--steps", "5"]
    assert main([*argv, "--no-crashes", "--clients", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"CONFORMS  {impl} (journal)")
    assert " 3-client races (" in out[1] and "two-client" not in out[1]
    assert main([*argv, "--no-crashes", "--clients", "4", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["clients"] == 4 and found["races"] > 0
    assert found["histories_checked"] == found["races"] and found["undecided"] == 0
    assert found["history_operations"] > found["races"] * 2  # the final reads of 2 journals


@pytest.mark.parametrize(
    ("impl", "message"),
    [
        ("nowhere:Store", "cannot import store module 'nowhere'"),
        ("not-a-path", "must be an import path"),
        (
            "txcheck.models.stores.sqlite:SqliteInbox",
            "does not implement JournalProtocol: it has no append, claim, entries, open",
        ),
        ("mystore:Broken", "mystore:Broken('"),
    ],
)
def test_a_bad_impl_is_one_line_and_exit_2(
    impl: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mystore.py").write_text(
        "class Broken:\n    def __init__(self, path):\n        raise OSError('no disk')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["conform", "journal", "--impl", impl]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err
    assert "Traceback" not in captured.err


def test_the_store_in_docs_stores_md_conforms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "stores.md").read_text("utf-8")
    code = text.split("```python\n# my_inbox.py\n", 1)[1].split("```", 1)[0]
    (tmp_path / "doc_inbox.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    store = importlib.import_module("doc_inbox").MyInbox

    report = conform("inbox", store, examples=10, steps=8)
    assert report.passed, (report.problem, report.history)
    assert report.crashes > 0 and report.races > 0


def test_a_store_without_a_sqlite_connection_is_checked_and_told_what_was_not_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain_inbox.py").write_text(
        "from txcheck.models.stores import MemoryInbox\n\n\n"
        "class PlainInbox(MemoryInbox):\n"
        "    def __init__(self, path):\n"
        "        super().__init__()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["conform", "inbox", "--impl", "plain_inbox:PlainInbox", "--examples", "5"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert "0 crash points" in out[1] and "0 two-client races" in out[1]
    assert out[2] == (
        "  no crash point or race was tried: they need the store's sqlite3.Connection "
        "(or psycopg.Connection) as its `connection` attribute"
    )


def test_a_run_that_compared_nothing_is_not_a_pass(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever keeps the state machine from running (here: it is not run at all), a
    conformance run that compared no operation is undecided, exit 3, never CONFORMS."""
    monkeypatch.setattr(machine, "run_state_machine_as_test", lambda *a, **k: None)
    report = conform("inbox", SqliteInbox, examples=5, steps=5)
    assert not report.passed and report.inconclusive and report.operations == 0
    impl = "txcheck.models.stores.sqlite:SqliteInbox"
    assert main(["conform", "inbox", "--impl", impl, "--examples", "5"]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("UNDECIDED") and out[1] == "  no operation was compared"
