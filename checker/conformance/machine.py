"""The conformance state machine: the same operations on the implementation and the model,
every answer compared, crash points and two-client races where the store allows them.

A failure is shrunk by Hypothesis; the history of the last (shortest) failing run is kept
as numbered operations.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.reporting import with_reporter
from hypothesis.stateful import (
    RuleBasedStateMachine,
    precondition,
    rule,
    run_state_machine_as_test,
)

from txcheck.conformance.clients import Outcome, crash_at, crashable, race
from txcheck.conformance.linearizable import (
    DEFAULT_BUDGET,
    History,
    Operation,
    Specification,
    check,
)
from txcheck.conformance.operations import KIND_SPECS, KindSpec, Op, answer
from txcheck.conformance.postgres import Schemas
from txcheck.models.stores.protocols import StoreBusy

__all__ = ["Conformance", "Mismatch", "conform"]


class Mismatch(AssertionError):
    """The implementation answered (or was left in a state) the model does not allow."""


class Undecided(AssertionError):
    """The linearizability checker spent its budget on a race's history: not a pass."""


@attrs.define
class Conformance:
    """What a run exercised, and the shortest failing history if one was found."""

    kind: str
    examples: int = 0
    operations: int = 0
    crashes: int = 0
    crash_points: int = 0
    races: int = 0
    race_steps: int = 0
    clients: int = 2
    histories: int = 0
    history_operations: int = 0
    checker_steps: int = 0
    undecided: int = 0
    inconclusive: bool = False
    """The shortest failure is a history the checker left undecided (its budget spent):
    neither a pass nor a mismatch."""
    history: list[str] = attrs.field(factory=list)
    problem: str | None = None

    @property
    def passed(self) -> bool:
        return self.problem is None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "passed": self.passed,
            "examples": self.examples,
            "operations": self.operations,
            "crashes": self.crashes,
            "crash_points": self.crash_points,
            "races": self.races,
            "race_steps": self.race_steps,
            "clients": self.clients,
            "histories_checked": self.histories,
            "history_operations": self.history_operations,
            "checker_steps": self.checker_steps,
            "undecided": self.undecided,
            "inconclusive": self.inconclusive,
            "history": list(self.history),
            "problem": self.problem,
        }


def _call(store: Any, op: Op) -> tuple[str, Any]:
    try:
        return "ok", answer(op.apply(store))
    except StoreBusy:
        return "busy", None
    except Exception as error:
        return "raised", f"{type(error).__name__}: {error}"


def _machine(
    spec: KindSpec,
    factory: Callable[[str], Any],
    report: Conformance,
    *,
    crashes: bool,
    races: bool,
    clients: int = 2,
    budget: int = DEFAULT_BUDGET,
    schemas: Schemas | None = None,
) -> type[RuleBasedStateMachine]:
    class StoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.folder = tempfile.mkdtemp(prefix="txcheck-conform-")
            # each history on its own: a fresh SQLite file, or a fresh PostgreSQL schema
            if schemas is None:
                self.path = str(Path(self.folder) / "store.sqlite3")
            else:
                self.path = schemas.fresh()
            self.store = factory(self.path)
            self.model = spec.model(self.store)
            self.now = 0
            self.crashable = crashes and crashable(self.store)
            self.racy = races and spec.race is not None and crashable(self.store)
            report.examples += 1
            report.history = []

        def teardown(self) -> None:
            close = getattr(self.store, "close", None)
            if callable(close):
                close()
            shutil.rmtree(self.folder, ignore_errors=True)
            if schemas is not None:
                schemas.drop(self.path)

        def _note(self, line: str) -> None:
            report.history.append(line)

        def _state(self, store: Any) -> Any:
            return spec.state(store, self.model, self.now)

        @rule(data=st.data())
        def operation(self, data: st.DataObject) -> None:
            op = spec.operation(data.draw, self.model, self.now)
            report.operations += 1
            expected = ("ok", answer(op.apply(self.model)))
            got = _call(self.store, op)
            self._note(f"{op} -> {_shown(got)}")
            if got != expected:
                raise Mismatch(
                    f"{op}: the model answers {_shown(expected)}, the store {_shown(got)}"
                )

        @precondition(lambda self: spec.clock)
        @rule(ticks=st.integers(1, 50))
        def tick(self, ticks: int) -> None:
            self.now += ticks
            self._note(f"clock advances {ticks} ticks (now {self.now})")

        @precondition(lambda self: self.crashable)
        @rule(data=st.data(), k=st.integers(1, 6))
        def crash(self, data: st.DataObject, k: int) -> None:
            op = spec.operation(data.draw, self.model, self.now)
            if op.reads_only:
                return
            before = self.model.copy()
            after = self.model.copy()
            op.apply(after)
            self.store.close()
            outcome = crash_at(factory, self.path, op, k)
            self.store = factory(self.path)  # reopen: what was committed is what is there
            report.crash_points += 1
            report.crashes += outcome == "crashed"
            self._note(f"{op} with a crash at statement {k} -> {outcome}; reopened")
            if outcome.startswith("raised"):
                raise Mismatch(f"{op} {outcome}")
            state = self._state(self.store)
            # When both are allowed and read alike (opening a journal shows no entries),
            # the model takes "before": it permits fewer operations (no append to a
            # journal that may not be open), so a store is never asked for what it may
            # rightly refuse.
            if outcome == "crashed" and state == spec.state(before, before, self.now):
                self.model = before
            elif state == spec.state(after, after, self.now):
                self.model = after
            else:
                allowed = "the state after it" + (" or before it" if outcome == "crashed" else "")
                raise Mismatch(
                    f"after {op} {outcome} at statement {k}, the store holds {state}; the "
                    f"model allows only {allowed}: "
                    + " or ".join(
                        str(spec.state(m, m, self.now))
                        for m in ((after, before) if outcome == "crashed" else (after,))
                    )
                )

        @precondition(lambda self: self.racy)
        @rule(
            data=st.data(),
            schedule=st.lists(st.integers(0, clients - 1), max_size=8 * clients),
        )
        def two_clients(self, data: st.DataObject, schedule: list[int]) -> None:
            assert spec.race is not None
            counts = data.draw(_COUNTS[clients])
            ops = [
                [spec.race(data.draw, self.model, self.now) for _ in range(count)]
                for count in counts
            ]
            done = race(factory, self.path, ops, schedule)
            report.races += 1
            report.race_steps += done.steps
            shown = " | ".join(
                f"client {i}: "
                + "; ".join(
                    f"{op} -> {_outcome(o)}"
                    for op, o in zip(ops[i], done.outcomes[i], strict=False)
                )
                for i in range(clients)
            )
            self._note(f"{_clients(clients)}, schedule {schedule}: {shown}")
            if any(o.status == "raised" for outcomes in done.outcomes for o in outcomes):
                raise Mismatch(f"a client raised: {shown}")
            # the store's final state, read cell by cell, closes the history
            probes = spec.probes(self.now)
            last = max((op.ret or op.call for op in done.history.operations), default=0)
            finals = tuple(
                Operation(
                    clients,
                    probe,
                    last + 1 + 2 * j,
                    last + 2 + 2 * j,
                    answer(probe.apply(self.store)),
                )
                for j, probe in enumerate(probes)
            )
            history = History(done.history.operations + finals)
            found = check(
                history,
                Specification(initial=self.model, apply=_apply, cells=spec.cells),
                budget=budget,
            )
            report.histories += 1
            report.history_operations += len(history.operations)
            report.checker_steps += found.steps
            if found.verdict == "unknown":
                report.undecided += 1
                raise Undecided(f"{found.explanation}: {shown}")
            if not found.linearizable:
                raise Mismatch(found.explanation)
            model = self.model.copy()
            for i in found.order:
                _apply(model, history.operations[i].step)
            self.model = model

    StoreMachine.__name__ = f"{spec.name.capitalize()}Conformance"
    return StoreMachine


_COUNTS = {n: st.lists(st.integers(1, 2), min_size=n, max_size=n) for n in range(2, 17)}
"""How many operations each client runs, one after the other: a client's second operation
is called after its first returned, so real time orders it after whatever returned before
(with one operation each, every order of the race is allowed)."""


def _apply(model: Any, step: Any) -> Any:
    return answer(step.apply(model))


def _outcome(outcome: Outcome) -> str:
    value = answer(outcome.value) if outcome.status == "ok" else outcome.value
    return _shown((outcome.status, value))


def _clients(count: int) -> str:
    return "two clients" if count == 2 else f"{count} clients"


def _shown(result: tuple[str, Any]) -> str:
    status, value = result
    return repr(value) if status == "ok" else status if status == "busy" else f"raised {value}"


def conform(
    kind: str,
    factory: Callable[[str], Any],
    *,
    examples: int = 100,
    steps: int = 20,
    crashes: bool = True,
    races: bool = True,
    clients: int = 2,
    budget: int = DEFAULT_BUDGET,
    dsn: str | None = None,
) -> Conformance:
    """Check ``factory(path)`` stores of ``kind`` against the model (deterministic: the
    same arguments explore the same histories). ``crashes`` and ``races`` allow the crash
    points and the two-client races (both need a store with a ``sqlite3`` or ``psycopg``
    ``connection``). With ``dsn`` (PostgreSQL), each history gets a fresh schema, dropped
    afterwards, and the store is opened with ``factory(DSN)``, a DSN whose ``search_path``
    starts with that schema; a DSN that cannot be reached is ``StoreError``. A race has
    ``clients`` clients (2 to 16); its history is checked for linearizability within
    ``budget`` model steps, and a history left undecided makes the run undecided, never
    a pass."""
    if not 2 <= clients <= 16:
        raise ValueError(f"clients must be 2 to 16, not {clients}")
    spec = KIND_SPECS[kind]
    report = Conformance(kind=kind, clients=clients)
    schemas = None
    if dsn is not None:
        schemas = Schemas(dsn)
    machine = _machine(
        spec,
        factory,
        report,
        crashes=crashes,
        races=races,
        clients=clients,
        budget=budget,
        schemas=schemas,
    )
    options = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )
    try:
        with with_reporter(lambda _text: None):  # the history is ours to print
            run_state_machine_as_test(machine, settings=options)
    except Mismatch as found:
        report.problem = str(found)
    except Undecided as found:
        report.problem, report.inconclusive = str(found), True
    except Flaky as found:
        report.problem = f"the failure did not reproduce: {found}"
    else:
        report.history = []
        if not report.operations:  # a pass must rest on something compared
            report.problem, report.inconclusive = "no operation was compared", True
    finally:
        if schemas is not None:
            schemas.close()
    return report
