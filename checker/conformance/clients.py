"""Crash points and two clients stepped statement by statement.

Both count SQL statements as each starts: with ``sqlite3.Connection.set_trace_callback``
for a store that exposes its ``sqlite3.Connection`` as ``connection``, and with a thin
wrapper around a ``psycopg.Connection`` there (``txcheck.conformance.postgres``).

- ``crash_at``: the operation runs in a forked child that exits (``os._exit``, no cleanup,
  like a killed process) as statement ``k`` starts; what survives is what the database
  committed (PostgreSQL rolls back the transaction of a client whose socket closed; the
  parent waits for that server process to go before it goes on).
- ``race``: two or more clients, each with its own connection in its own thread and its
  own operations run one after the other, advance one statement at a time in the order a
  schedule gives, so the window between a check and an insert is opened deterministically
  (``busy_timeout`` 0 on SQLite, a short ``lock_timeout`` on PostgreSQL: a lock makes
  ``StoreBusy``). Each call and return is recorded as an event, in the order they
  happened (only one client runs at a time), for the linearizability checker.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import attrs

from txcheck.conformance import postgres
from txcheck.conformance.linearizable import History, Recorder
from txcheck.conformance.operations import Op, answer
from txcheck.models.stores.protocols import StoreBusy

__all__ = ["CRASHED", "Outcome", "Race", "crash_at", "crashable", "race"]

_BACKEND = "backend "
"""How a child names its PostgreSQL server process to the parent (first line)."""
CRASHED = 86
"""The child's exit status when it crashed at its statement boundary."""
_STUCK = 30.0
"""Seconds a stepped client may take to reach its next statement before the race is
reported as stuck (a store that waits on a lock although busy_timeout is 0)."""


def crashable(store: Any) -> bool:
    """Whether statements of ``store`` can be counted."""
    connection = getattr(store, "connection", None)
    return isinstance(connection, sqlite3.Connection) or postgres.is_psycopg(connection)


def _trace(store: Any, callback: Callable[[str], None] | None) -> None:
    """Call ``callback`` as each of ``store``'s statements starts (None: stop)."""
    if isinstance(store.connection, sqlite3.Connection):
        store.connection.set_trace_callback(callback)
    else:
        postgres.trace(store, callback)


def _close(store: Any) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()


def crash_at(factory: Callable[[str], Any], path: str, op: Op, k: int) -> str:
    """Run ``op`` on a store opened on ``path`` in a child process that crashes as its
    ``k``-th statement (1-based) starts: ``"crashed"``, ``"completed"`` (it took fewer
    statements) or ``"raised: ..."``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        status = 1
        try:
            store = factory(path)
            if postgres.is_psycopg(store.connection):  # the parent waits for it to go
                os.write(write, f"{_BACKEND}{postgres.backend_pid(store)}\n".encode())
            count = [0]

            def trace(_sql: str) -> None:
                count[0] += 1
                if count[0] == k:
                    os._exit(CRASHED)

            _trace(store, trace)
            op.apply(store)
            status = 0
        except BaseException as error:  # reported to the parent, never raised here
            os.write(write, f"{type(error).__name__}: {error}".encode()[:2000])
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if message.startswith(_BACKEND):
        line, _, message = message.partition("\n")
        postgres.settle(path, int(line.removeprefix(_BACKEND)))
    if code == CRASHED:
        return "crashed"
    if code == 0:
        return "completed"
    return f"raised: {message or f'exit status {code}'}"


@attrs.frozen
class Outcome:
    """What one client's call came to: ``ok`` with its value, ``busy`` or ``raised``."""

    status: str
    value: Any = None


class _Stepper:
    """Lets one parked client at a time run its next statement."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.turn: int | None = None
        self.parked: set[int] = set()
        self.done: set[int] = set()

    def trace(self, client: int) -> Callable[[str], None]:
        def park(_sql: str) -> None:
            with self.cond:
                self.parked.add(client)
                self.cond.notify_all()
                self.cond.wait_for(lambda: self.turn == client, timeout=_STUCK)
                self.turn = None
                self.parked.discard(client)
                self.cond.notify_all()

        return park

    def settled(self, client: int) -> bool:
        return self.turn is None and (client in self.parked or client in self.done)


@attrs.frozen
class Race:
    """What a race came to: each client's outcomes (in its order; an operation after one
    that raised is never run), the history of the calls that may have taken effect (a
    busy one did not: it is left out) and how many statements were stepped."""

    outcomes: list[list[Outcome]]
    history: History
    steps: int


def race(
    factory: Callable[[str], Any],
    path: str,
    ops: Sequence[Sequence[Op]],
    schedule: Sequence[int],
) -> Race:
    """Run ``ops[i]`` one after the other as client ``i``, each client on its own store
    on ``path``; whenever two or more wait at a statement, the next schedule entry (an
    index into the waiting clients, modulo their number; then 0) picks who runs it."""
    stepper = _Stepper()
    opening = threading.Lock()
    recorder = Recorder()
    outcomes: list[list[Outcome]] = [[] for _ in ops]

    def client(i: int) -> None:
        try:
            with opening:
                store = factory(path)
        except BaseException as error:  # reported as a mismatch, never raised in a thread
            outcomes[i].append(Outcome("raised", f"{type(error).__name__}: {error}"))
            with stepper.cond:
                stepper.done.add(i)
                stepper.cond.notify_all()
            return
        try:
            _trace(store, stepper.trace(i))
            for op in ops[i]:
                with stepper.cond:
                    handle = recorder.invoke(i, op)
                try:
                    value = op.apply(store)
                except StoreBusy:
                    outcomes[i].append(Outcome("busy"))
                    with stepper.cond:
                        recorder.forget(handle)
                    continue
                except BaseException as error:  # a mismatch, never raised in a thread
                    outcomes[i].append(Outcome("raised", f"{type(error).__name__}: {error}"))
                    break
                outcomes[i].append(Outcome("ok", value))
                with stepper.cond:
                    recorder.returned(handle, answer(value))
        finally:
            try:
                _trace(store, None)
                _close(store)
            except BaseException as error:  # as above
                outcomes[i].append(Outcome("raised", f"{type(error).__name__}: {error}"))
            with stepper.cond:
                stepper.done.add(i)
                stepper.cond.notify_all()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(len(ops))]
    for thread in threads:
        thread.start()
    picks = iter(schedule)
    steps = 0
    with stepper.cond:
        everyone = set(range(len(ops)))
        while stepper.done != everyone:
            if not stepper.cond.wait_for(
                lambda: stepper.parked | stepper.done == everyone, timeout=_STUCK
            ):
                break
            ready = sorted(stepper.parked)
            if not ready:
                continue
            chosen = ready[next(picks, 0) % len(ready)] if len(ready) > 1 else ready[0]
            stepper.turn = chosen
            steps += 1
            stepper.cond.notify_all()
            stepper.cond.wait_for(partial(stepper.settled, chosen), timeout=_STUCK)
    for thread in threads:
        thread.join(_STUCK)
    return Race(outcomes, recorder.history(), steps)
