"""The linearizability checker (``txcheck.conformance.linearizable``): hand-written
histories of the idempotency store that are and are not linearizable (the classic register
examples, a key's record standing for the register), an operation that never returned
taken both ways, per-key parts, a spent budget reported as unknown, and a property: a
history made by running operations serially on the model is linearizable however its
intervals overlap, and one outcome tampered in a serial history is not."""

from __future__ import annotations

import contextlib
import io
import itertools
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txcheck.conformance import conform
from txcheck.conformance.clients import race
from txcheck.conformance.linearizable import (
    UNKNOWN,
    History,
    Operation,
    Recorder,
    Specification,
    check,
)
from txcheck.conformance.operations import KIND_SPECS, Op, answer
from txcheck.models.sim.idempotency import IdempotencyStore
from txcheck.models.stores.memory import MemoryInbox
from txcheck.models.stores.sqlite import SqliteIdempotencyStore, SqliteInbox

PROCEED = {"decision": "proceed", "record": None}


def begin(key: str = "k1", *, owner: str = "a", intent: str = "i1") -> Op:
    return Op(
        "begin",
        kwargs=(
            ("tenant", "t1"),
            ("key", key),
            ("user_id", "u1"),
            ("operation_type", "charge"),
            ("resource_id", "r1"),
            ("intent_hash", intent),
            ("request_hash", f"charge:{intent}"),
            ("now", 0),
            ("owner", owner),
        ),
    )


def lookup(key: str = "k1") -> Op:
    return Op("lookup", ("t1", key, 0))


def _apply(model: Any, step: Any) -> Any:
    return answer(step.apply(model))


def idempotency(*, parts: bool = True) -> Specification:
    spec = KIND_SPECS["idempotency"]
    return Specification(
        initial=IdempotencyStore(), apply=_apply, cells=spec.cells if parts else None
    )


def held(key: str = "k1", owner: str = "a") -> Any:
    """What ``lookup`` answers once ``begin(key)`` by ``owner`` proceeded."""
    model = IdempotencyStore()
    model.begin(**dict(begin(key, owner=owner).kwargs))
    return answer(model.lookup("t1", key, 0))


def history(*ops: tuple[int, Op, int, int | None, Any]) -> History:
    return History(tuple(Operation(c, op, call, ret, out) for c, op, call, ret, out in ops))


# -- hand-written histories ---------------------------------------------------------------


def test_overlapping_begins_linearize_in_the_order_their_answers_need() -> None:
    # client 1's begin is called later and returns first, yet it must go second (it saw
    # client 0's key in flight): the checker finds the order, not the order of returns
    model = IdempotencyStore()
    model.begin(**dict(begin(owner="a").kwargs))
    conflict = answer(model.begin(**dict(begin(owner="b").kwargs)))
    assert conflict["decision"] == "conflict"
    found = check(
        history((0, begin(owner="a"), 1, 4, PROCEED), (1, begin(owner="b"), 2, 3, conflict)),
        idempotency(),
    )
    assert found.verdict == "linearizable" and found.linearizable
    assert found.order == (0, 1)
    assert found.explanation == "" and found.failing == ()


def test_two_clients_both_proceeding_on_one_key_is_not_linearizable() -> None:
    found = check(
        history((0, begin(owner="a"), 1, 3, PROCEED), (1, begin(owner="b"), 2, 4, PROCEED)),
        idempotency(),
    )
    assert found.verdict == "not linearizable" and not found.linearizable
    assert found.failing == (0, 1)
    assert found.explanation.startswith("no order of these 2 operations")
    assert "[1] answered {'decision': 'proceed', 'record': None}, where the model answers" in (
        found.explanation
    )
    assert "'decision': 'conflict'" in found.explanation


def test_a_read_concurrent_with_the_write_may_see_either_value() -> None:
    for seen in (None, held()):
        found = check(
            history((0, begin(), 1, 4, PROCEED), (1, lookup(), 2, 3, seen)), idempotency()
        )
        assert found.linearizable, seen


def test_a_stale_read_after_the_write_returned_is_not_linearizable() -> None:
    found = check(history((0, begin(), 1, 2, PROCEED), (1, lookup(), 3, 4, None)), idempotency())
    assert found.verdict == "not linearizable"
    assert "[1] answered None, where the model answers {" in found.explanation


def test_two_reads_that_see_the_new_value_then_the_old_are_not_linearizable() -> None:
    # Herlihy & Wing's register: each read alone overlaps the write, so each alone could
    # see either value, but the later read cannot see the old one after the earlier saw
    # the new one
    found = check(
        history(
            (0, begin(), 1, 6, PROCEED),
            (1, lookup(), 2, 3, held()),
            (2, lookup(), 4, 5, None),
        ),
        idempotency(),
    )
    assert found.verdict == "not linearizable"
    assert found.failing == (0, 1, 2)
    # the shortest failing prefix ends at the second read's return: the write is still in
    # flight there, so it is shown as never returned
    assert "[0] client 0: begin(" in found.explanation
    assert "-> unknown (in flight)" in found.explanation
    assert "[2] answered None" in found.explanation


def test_the_shortest_failing_sub_history_drops_later_operations_and_unneeded_reads() -> None:
    found = check(
        history(
            (0, lookup(), 1, 2, None),  # a read the failure does not need
            (0, begin(owner="a"), 3, 5, PROCEED),
            (1, begin(owner="b"), 4, 6, PROCEED),  # the failure is complete here
            (2, lookup(), 7, 8, held()),  # later: not part of the shortest prefix
            (2, Op("abort", ("t1", "k1")), 9, 10, None),
        ),
        idempotency(),
    )
    assert found.verdict == "not linearizable"
    assert found.failing == (1, 2)


def test_an_operation_that_never_returned_may_have_taken_effect_or_not() -> None:
    crashed = (0, begin(), 1, None, UNKNOWN)
    for seen in (None, held()):
        found = check(history(crashed, (1, lookup(), 2, 3, seen)), idempotency())
        assert found.linearizable, seen
    took = check(history(crashed, (1, lookup(), 2, 3, held())), idempotency())
    assert took.order == (0, 1)  # it took effect before the read
    left = check(history(crashed, (1, lookup(), 2, 3, None)), idempotency())
    assert left.order == (1,)  # it never took effect (or only after the history)
    # but not both: once seen, its effect stays (nothing aborts it)
    both = check(
        history(crashed, (1, lookup(), 2, 3, held()), (1, lookup(), 4, 5, None)), idempotency()
    )
    assert both.verdict == "not linearizable"


def test_a_determinate_answer_the_model_never_gives_is_not_excused_by_a_crash() -> None:
    found = check(
        history((0, begin(), 1, None, UNKNOWN), (1, lookup(), 2, 3, {"status": "bogus"})),
        idempotency(),
    )
    assert found.verdict == "not linearizable"


def test_keys_are_checked_as_separate_parts_and_the_failure_names_its_key() -> None:
    ops = history(
        (0, begin("k1", owner="a"), 1, 5, PROCEED),
        (1, begin("k2", owner="a"), 2, 6, PROCEED),
        (2, begin("k2", owner="b"), 3, 7, PROCEED),  # k2 proceeds twice
        (3, lookup("k1"), 8, 9, held("k1")),
    )
    found = check(ops, idempotency())
    assert [(p.cells, p.operations, p.verdict) for p in found.parts] == [
        (("t1/k1",), (0, 3), "linearizable"),
        (("t1/k2",), (1, 2), "not linearizable"),
    ]
    assert found.verdict == "not linearizable" and found.failing == (1, 2)
    whole = check(ops, idempotency(parts=False))  # one part: the same verdict
    assert whole.verdict == "not linearizable" and len(whole.parts) == 1
    good = check(History(tuple(op for i, op in enumerate(ops.operations) if i != 2)), idempotency())
    assert good.linearizable and [p.order for p in good.parts] == [(0, 2), (1,)]


def test_parts_cut_the_search_for_many_independent_keys() -> None:
    # 12 begins on 12 keys, all overlapping: 12! orders as one part, 12 steps as parts
    keys = [f"k{i}" for i in range(12)]
    ops = History(
        tuple(Operation(i, begin(key), i + 1, 100 + i, PROCEED) for i, key in enumerate(keys))
    )
    found = check(ops, idempotency())
    assert found.linearizable and len(found.parts) == 12 and found.steps == 12


def test_a_spent_budget_is_unknown_never_a_pass() -> None:
    ops = history(
        (0, begin(), 1, 6, PROCEED),
        (1, lookup(), 2, 3, held()),
        (2, lookup(), 4, 5, None),
    )
    found = check(ops, idempotency(), budget=2)
    assert found.verdict == "unknown" and not found.linearizable
    assert found.steps <= 2 and found.order == ()
    assert found.explanation.startswith("unknown: budget spent (2 model steps)")
    assert "not a pass" in found.explanation
    assert check(ops, idempotency(), budget=100).verdict == "not linearizable"


def test_a_failing_part_is_definite_even_when_another_part_was_left_undecided() -> None:
    ops = history(
        (0, begin("k1", owner="a"), 1, 3, PROCEED),
        (1, begin("k1", owner="b"), 2, 4, PROCEED),  # k1: decided (not) in 4 steps
        (2, begin("k2"), 5, 9, PROCEED),
        (3, lookup("k2"), 6, 10, held("k2")),
        (4, lookup("k2"), 7, 11, held("k2")),
    )
    found = check(ops, idempotency(), budget=5)
    assert [p.verdict for p in found.parts] == ["not linearizable", "unknown"]
    assert found.verdict == "not linearizable" and found.failing == (0, 1)


def test_the_recorder_numbers_events_and_leaves_the_unreturned_indeterminate() -> None:
    recorder = Recorder()
    first = recorder.invoke(0, begin(owner="a"))
    second = recorder.invoke(1, begin(owner="b"))
    busy = recorder.invoke(2, begin(owner="c"))
    recorder.returned(first, PROCEED)
    recorder.forget(busy)  # the store said busy: it did not take effect
    done = recorder.history()
    assert [(op.client, op.call, op.ret) for op in done.operations] == [(0, 1, 4), (1, 2, None)]
    assert done.operations[1].outcome is UNKNOWN and done.operations[1].indeterminate
    assert done.events()[-1].startswith("client 1 info begin(")
    assert second == 2


# -- the property -------------------------------------------------------------------------

KINDS = ("idempotency", "journal", "inbox", "outbox")


@st.composite
def serial_runs(draw: st.DrawFn, kind: str) -> tuple[History, Specification]:
    """Operations applied one at a time to the model, each at its own point in time, and
    given an interval around that point (intervals overlap at random); some never return
    (crashed): those took effect at their point or not at all."""
    spec = KIND_SPECS[kind]
    initial = spec.model(object())
    model = initial.copy()
    now = 0
    points: list[tuple[float, float, bool, Op, Any]] = []
    for point in range(draw(st.integers(1, 8))):
        if spec.clock and draw(st.booleans()):
            now += draw(st.integers(1, 50))
        op = spec.operation(draw, model, now)
        crashed = not op.reads_only and draw(st.integers(0, 4)) == 0
        took_effect = not crashed or draw(st.booleans())
        outcome = _apply(model, op) if took_effect else None
        call = point - draw(st.floats(0.01, 3.0))
        ret = None if crashed else point + draw(st.floats(0.01, 3.0))
        points.append((call, ret if ret is not None else float("inf"), crashed, op, outcome))
    times = sorted({t for call, ret, *_ in points for t in (call, ret) if t != float("inf")})
    rank = {t: i + 1 for i, t in enumerate(times)}
    ops = tuple(
        Operation(i, op, rank[call], None if crashed else rank[ret], UNKNOWN if crashed else out)
        for i, (call, ret, crashed, op, out) in enumerate(points)
    )
    specification = Specification(initial=initial, apply=_apply, cells=spec.cells)
    return History(tuple(sorted(ops, key=lambda op: op.call))), specification


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_serial_run_of_the_model_is_linearizable(kind: str, data: st.DataObject) -> None:
    ops, spec = data.draw(serial_runs(kind))
    found = check(ops, spec)
    assert found.linearizable, (found.explanation, ops.events())
    # the linearization found gives every determinate outcome again
    model = spec.initial.copy()
    for i in found.order:
        op = ops.operations[i]
        got = _apply(model, op.step)
        assert op.indeterminate or got == op.outcome


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_one_outcome_tampered_in_a_serial_history_is_not_linearizable(
    kind: str, data: st.DataObject
) -> None:
    # no two intervals overlap: the only order is the serial one, and the model is
    # deterministic, so any other answer for any operation is wrong
    spec = KIND_SPECS[kind]
    initial = spec.model(object())
    model = initial.copy()
    ops: list[Operation] = []
    for i in range(data.draw(st.integers(1, 6))):
        op = spec.operation(data.draw, model, 0)
        ops.append(Operation(0, op, 2 * i + 1, 2 * i + 2, _apply(model, op)))
    victim = data.draw(st.integers(0, len(ops) - 1))
    others = [op.outcome for op in ops if op.outcome != ops[victim].outcome]
    wrong = data.draw(st.sampled_from([*others, "tampered"]))
    ops[victim] = Operation(0, ops[victim].step, ops[victim].call, ops[victim].ret, wrong)
    specification = Specification(initial=initial, apply=_apply, cells=spec.cells)
    found = check(History(tuple(ops)), specification)
    assert found.verdict == "not linearizable", ops
    assert victim in found.failing


# -- in conformance -----------------------------------------------------------------------


@pytest.mark.parametrize("store", [SqliteIdempotencyStore, SqliteInbox])
def test_three_clients_race_the_reference_stores_and_every_history_linearizes(
    store: Any,
) -> None:
    kind = "idempotency" if store is SqliteIdempotencyStore else "inbox"
    report = conform(kind, store, examples=10, steps=6, crashes=False, clients=3)
    assert report.passed, (report.problem, report.history)
    assert report.races > 0 and report.histories == report.races
    # each history closes with the reads of every cell (4 records, 3 events' rows)
    probes = 4 if kind == "idempotency" else 3
    assert report.history_operations > report.races * probes
    assert report.checker_steps >= report.history_operations
    assert report.to_json()["clients"] == 3 and report.undecided == 0


def test_a_budget_too_small_for_a_race_is_inconclusive_not_a_pass() -> None:
    report = conform("inbox", SqliteInbox, examples=5, steps=4, crashes=False, budget=1)
    assert not report.passed and report.inconclusive and report.undecided > 0
    assert report.problem is not None and report.problem.startswith("unknown: budget spent")


def test_the_example_in_docs_stores_md_prints_what_the_page_shows() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "stores.md").read_text("utf-8")
    section = text.split("## Linearizability", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("```python\n", 1)[1].split("```\n\n```\n", 1)[1].split("```", 1)[0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/stores.md", "exec"), {})
    assert printed.getvalue() == shown


def _brute_force(history: History, spec: Specification) -> bool:
    """Linearizability by enumeration: every subset of the operations that never returned,
    with every determinate one, in every order that respects real time."""
    ops = history.operations
    sure = [op for op in ops if not op.indeterminate]
    maybe = [op for op in ops if op.indeterminate]
    for mask in range(1 << len(maybe)):
        chosen = sure + [op for j, op in enumerate(maybe) if mask >> j & 1]
        for order in itertools.permutations(chosen):
            if any(
                later.ret is not None and later.ret < earlier.call
                for k, earlier in enumerate(order)
                for later in order[k + 1 :]
            ):
                continue
            model = spec.initial.copy()
            if all(
                (got := _try(model, op.step)) is not _REFUSED
                and (op.indeterminate or got == op.outcome)
                for op in order
            ):
                return True
    return False


_REFUSED = object()


def _try(model: Any, step: Any) -> Any:
    try:
        return _apply(model, step)
    except Exception:
        return _REFUSED


@pytest.mark.parametrize("kind", ["idempotency", "inbox", "journal"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_search_agrees_with_enumeration_on_small_histories(
    kind: str, data: st.DataObject
) -> None:
    # outcomes from a serial run, some moved to another operation or dropped (never
    # returned), intervals at random: both verdicts occur, and the checker (memoised, per
    # part) must give enumeration's
    ops, spec = data.draw(serial_runs(kind))
    operations = list(ops.operations)
    answers = [op.outcome for op in operations if not op.indeterminate]
    for i, op in enumerate(operations):
        if answers and not op.indeterminate and data.draw(st.integers(0, 5)) == 0:
            operations[i] = attrs.evolve(op, outcome=data.draw(st.sampled_from(answers)))
    history = History(tuple(operations[:5]))
    found = check(history, spec)
    assert found.verdict != "unknown"
    assert found.linearizable == _brute_force(history, spec), history.events()


def _deliver(event: str) -> Op:
    return Op("deliver", ({"id": event, "amount": 5},))


def test_a_race_records_real_time_and_leaves_busy_calls_out(tmp_path: Path) -> None:
    path = str(tmp_path / "inbox.sqlite3")
    SqliteInbox(path).close()
    ops = [[_deliver("e1"), Op("seen", ("e1",))], [_deliver("e1")]]
    # schedule []: client 0 runs every statement first, client 1 only once it is done
    done = race(SqliteInbox, path, ops, [])
    assert [[o.status for o in client] for client in done.outcomes] == [["ok", "ok"], ["ok"]]
    first, second, late = sorted(done.history.operations, key=lambda op: (op.client, op.call))
    assert (first.outcome, second.outcome, late.outcome) == (True, True, False)
    assert second.call > first.ret  # a client's second call follows its first return
    assert late.call < first.ret  # client 1 was called before client 0 returned
    spec = Specification(initial=MemoryInbox(), apply=_apply, cells=KIND_SPECS["inbox"].cells)
    assert check(done.history, spec).linearizable
    # schedule [0, 1]: client 0 takes the write lock, then client 1 meets it: busy, and a
    # busy call is not in the history (it took no effect)
    path = str(tmp_path / "busy.sqlite3")
    SqliteInbox(path).close()
    done = race(SqliteInbox, path, [[_deliver("e1")], [_deliver("e2")]], [0, 1])
    assert [[o.status for o in client] for client in done.outcomes] == [["ok"], ["busy"]]
    assert [op.client for op in done.history.operations] == [0]
