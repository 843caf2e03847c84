"""The SQLite reference stores keep the model's rules and survive a reopen: what committed
is there, the constraints the comments name refuse what the model refuses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from txcheck.models.sim.idempotency import IdempotencyStore
from txcheck.models.stores import (
    IdempotencyStoreProtocol,
    InboxProtocol,
    JournalProtocol,
    MemoryInbox,
    MemoryJournal,
    MemoryOutbox,
    OutboxProtocol,
    StoreBusy,
)
from txcheck.models.stores.sqlite import (
    SqliteIdempotencyStore,
    SqliteInbox,
    SqliteJournal,
    SqliteOutbox,
)

REQUEST = {
    "tenant": "t1",
    "key": "k1",
    "user_id": "u1",
    "operation_type": "charge",
    "resource_id": "r1",
    "intent_hash": "i1",
    "request_hash": "h1",
    "owner": "a",
}


def test_the_models_and_the_reference_stores_implement_their_protocols(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    pairs = [
        (IdempotencyStoreProtocol, IdempotencyStore(), SqliteIdempotencyStore(db)),
        (JournalProtocol, MemoryJournal(), SqliteJournal(db)),
        (OutboxProtocol, MemoryOutbox(), SqliteOutbox(db)),
        (InboxProtocol, MemoryInbox(), SqliteInbox(db)),
    ]
    for protocol, model, store in pairs:
        assert isinstance(model, protocol) and isinstance(store, protocol)


def test_idempotency_answers_survive_a_reopen_like_the_model(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    store, model = SqliteIdempotencyStore(db), IdempotencyStore()
    for s in (store, model):
        assert s.begin(**REQUEST, now=0).decision == "proceed"
        assert s.begin(**REQUEST, now=1).decision == "conflict"  # in flight
        s.finish("t1", "k1", status="committed", receipt={"id": "ch_1"}, now=2)
    store.close()
    store = SqliteIdempotencyStore(db)
    for s in (store, model):
        again = s.begin(**REQUEST, now=3)
        assert again.decision == "replay" and again.record is not None
        assert dict(again.record.result_receipt or {}) == {"id": "ch_1"}
        other = s.begin(**{**REQUEST, "intent_hash": "i2"}, now=3)
        assert other.decision == "conflict"
        assert s.lookup("t1", "k1", 42) is None  # expired: 2 + 40 ticks
        assert s.begin(**REQUEST, now=42).decision == "proceed"


def test_the_primary_key_refuses_a_second_record_for_a_key(tmp_path: Path) -> None:
    store = SqliteIdempotencyStore(str(tmp_path / "s.db"))
    store.begin(**REQUEST, now=0)
    with pytest.raises(sqlite3.IntegrityError):
        store.connection.execute(
            "INSERT INTO idempotency SELECT * FROM idempotency"  # the same key again
        )


def test_a_second_writer_is_busy_at_once_and_nothing_applies(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    first, second = SqliteInbox(db), SqliteInbox(db)
    first.connection.execute("BEGIN IMMEDIATE")  # another client holds the write lock
    with pytest.raises(StoreBusy):
        second.deliver({"id": "e1"})
    first.connection.execute("ROLLBACK")
    assert second.effects() == {} and not second.seen("e1")
    assert second.deliver({"id": "e1"}) and not second.deliver({"id": "e1"})
    assert first.effects() == {"e1": 1}


def test_journal_claims_and_outbox_rows_read_back_as_the_model_has_them(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    journal, journal_model = SqliteJournal(db), MemoryJournal()
    outbox, outbox_model = SqliteOutbox(db), MemoryOutbox()
    for j in (journal, journal_model):
        j.open("a")
        j.open("b")
        assert j.claim("op1", "a", {"step": 1}) == "a"
        assert j.claim("op1", "b", {"step": 1}) == "a"  # b's journal gets nothing
        j.append("b", {"step": 2})
    for o in (outbox, outbox_model):
        o.record({"id": "op1"}, [{"id": "evt1"}, {"id": "evt2"}])
        o.mark_published("evt1")
    journal.close()
    outbox.close()
    journal, outbox = SqliteJournal(db), SqliteOutbox(db)
    assert journal.entries("a") == journal_model.entries("a") == [{"step": 1}]
    assert journal.entries("b") == journal_model.entries("b") == [{"step": 2}]
    assert outbox.pending() == outbox_model.pending() == [{"id": "evt2"}]
    assert outbox.operations() == outbox_model.operations() == [{"id": "op1"}]
