"""The conformance state machine: the same operations on the implementation and the model,
every answer compared, crash points and two-client races where the store allows them.

A failure is shrunk by Hypothesis; the history of the last (shortest) failing run is kept
as numbered operations.
"""

from __future__ import annotations

import itertools
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

from txcheck.conformance.clients import crash_at, crashable, race
from txcheck.conformance.operations import KIND_SPECS, KindSpec, Op, answer
from txcheck.conformance.postgres import Schemas
from txcheck.models.stores.protocols import StoreBusy

__all__ = ["Conformance", "Mismatch", "conform"]


class Mismatch(AssertionError):
    """The implementation answered (or was left in a state) the model does not allow."""


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
        @rule(data=st.data(), schedule=st.lists(st.integers(0, 1), max_size=16))
        def two_clients(self, data: st.DataObject, schedule: list[int]) -> None:
            assert spec.race is not None
            ops = [spec.race(data.draw, self.model, self.now) for _ in (0, 1)]
            outcomes, steps = race(factory, self.path, ops, schedule)
            report.races += 1
            report.race_steps += steps
            got = [(o.status, answer(o.value) if o.status == "ok" else o.value) for o in outcomes]
            shown = " | ".join(f"client {i}: {ops[i]} -> {_shown(g)}" for i, g in enumerate(got))
            self._note(f"two clients, schedule {schedule}: {shown}")
            if any(g[0] == "raised" for g in got):
                raise Mismatch(f"a client raised: {shown}")
            state = self._state(self.store)
            applied = [i for i, g in enumerate(got) if g[0] == "ok"]
            for order in itertools.permutations(applied):
                model = self.model.copy()
                if all(("ok", answer(ops[i].apply(model))) == got[i] for i in order) and (
                    spec.state(model, model, self.now) == state
                ):
                    self.model = model
                    return
            raise Mismatch(
                f"no order of the two clients' operations gives their answers and the "
                f"store's state {state} under the model: {shown}"
            )

    StoreMachine.__name__ = f"{spec.name.capitalize()}Conformance"
    return StoreMachine


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
    dsn: str | None = None,
) -> Conformance:
    """Check ``factory(path)`` stores of ``kind`` against the model (deterministic: the
    same arguments explore the same histories). ``crashes`` and ``races`` allow the crash
    points and the two-client races (both need a store with a ``sqlite3`` or ``psycopg``
    ``connection``). With ``dsn`` (PostgreSQL), each history gets a fresh schema, dropped
    afterwards, and the store is opened with ``factory(DSN)``, a DSN whose ``search_path``
    starts with that schema; a DSN that cannot be reached is ``StoreError``."""
    spec = KIND_SPECS[kind]
    report = Conformance(kind=kind)
    schemas = None
    if dsn is not None:
        schemas = Schemas(dsn)
    machine = _machine(spec, factory, report, crashes=crashes, races=races, schemas=schemas)
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
    except Flaky as found:
        report.problem = f"the failure did not reproduce: {found}"
    else:
        report.history = []
    finally:
        if schemas is not None:
            schemas.close()
    return report
