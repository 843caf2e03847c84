"""Each built-in invariant passes a good world and catches a hand-made bad one.

Worlds come from real runs (``Run``) and are then broken by hand, the way a
buggy policy or service would break them; the message must name the offending record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from tests import bank_runs
from tests.checkout_runs import CONTRACT, FIXTURE, PLAN, policy, run_checked
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS, always, by_name, eventually
from txcheck.invariants.base import Invariant
from txcheck.models.errors import TxcheckError
from txcheck.models.sim.history import Attempt
from txcheck.models.sim.runner import Run, RunView

# -- good worlds --------------------------------------------------------------------------


def completed() -> Run:
    """The default guarded checkout: created, reserved, charged, confirmed, all consumed."""
    target = Target(policy=policy("guarded"), contract=CONTRACT, fixture=FIXTURE)
    return execute(target, [PLAN], stop_at_first=False).run


def rolled_back() -> Run:
    """The charge is declined: the reservation is released, then the order cancelled."""
    chooser = Deviations(
        [Deviation(action="complete", outcome="permanent_error", tool="charge_payment")]
    )
    execution = run_checked("guarded", chooser=chooser)
    assert execution.ok and not chooser.unused
    return execution.run


def rejected() -> Run:
    """A plan without its confirm step: incomplete, rejected before anything runs."""
    invalid = attrs.evolve(PLAN, calls=PLAN.calls[:3])
    target = Target(policy=policy("guarded"), contract=CONTRACT, fixture=FIXTURE)
    run = execute(target, [invalid], stop_at_first=False).run
    assert run.invalid_plans == {"orchestrator-1": ("incomplete_workflow",)}
    return run


# -- how to break them --------------------------------------------------------------------


def _checkout(run: Run) -> dict[str, Any]:
    return run.world.state["checkout"]


def second_charge(run: Run) -> None:
    _checkout(run)["charges"]["ch_9"] = {
        "order_id": "ord_1",
        "amount": 2500,
        "currency": "USD",
        "refunded": 0,
    }


def reservation_for_cancelled_order(run: Run) -> None:
    state = _checkout(run)
    state["orders"]["ord_existing"]["status"] = "cancelled"
    state["reservations"]["ord_existing"] = {"sku_pen": 1}
    state["stock"]["sku_pen"].update(available=4, reserved=1)


def reservation_for_missing_order(run: Run) -> None:
    _checkout(run)["reservations"]["ord_ghost"] = {"sku_pen": 1}
    _checkout(run)["stock"]["sku_pen"].update(available=4, reserved=1)


def leftover_reservation(run: Run) -> None:
    _checkout(run)["reservations"]["ord_existing"] = {"sku_pen": 1}
    _checkout(run)["stock"]["sku_pen"].update(available=4, reserved=1)


def unit_from_nowhere(run: Run) -> None:
    _checkout(run)["stock"]["sku_book"]["available"] += 1


def refund_beyond_charge(run: Run) -> None:
    _checkout(run)["refunds"]["re_9"] = {"charge_id": "ch_1", "amount": 3000}
    _checkout(run)["charges"]["ch_1"]["refunded"] = 3000


def effect_twice(run: Run) -> None:
    run.world.effects["evt_2"] = 2


def effect_never(run: Run) -> None:
    del run.world.effects["evt_4"]


def event_lost(run: Run) -> None:
    world = run.world
    world.outbox = [row for row in world.outbox if row["event"]["id"] != "evt_3"]
    world.broker = [d for d in world.broker if d["event"]["id"] != "evt_3"]
    del world.effects["evt_3"]


def _operation(run: Run, **fields: Any) -> dict[str, Any]:
    op = {
        "op": len(run.world.operations) + 1,
        "tool": "create_order",
        "call_id": "call_1",
        "compensates": None,
        "owner": "orchestrator-1",
        "key": "key-create-1",
        "intent": "intent",
        "resource": "ord_1",
        "receipt": {},
        "events": [],
        "at": 0,
    }
    op.update(fields)
    run.world.operations.append(op)
    return op


def bank_transfer() -> Run:
    """The bank transfer under guarded, no fault: held, credited, captured, notified."""
    execution = bank_runs.run_bank("guarded")
    assert execution.ok and execution.quiesced
    return execution.run


def credit_reversed_after_capture(run: Run) -> None:
    """The credit (call_2) undone after the capture (call_3, irreversible) committed."""
    credit = next(op for op in run.world.operations if op["call_id"] == "call_2")
    _operation(
        run,
        tool="reverse_credit",
        call_id="call_2~undo",
        compensates="call_2",
        resource=credit["resource"],
        receipt={"credit_id": "cr_2", "undoes": "eff_2"},
    )


def event_from_nowhere(run: Run) -> None:
    """The consumer applied an event no committed operation wrote."""
    run.world.effects["evt_99"] = 1


def release_aimed_elsewhere(run: Run) -> None:
    """The release of call_2's reservation was sent another order's id."""
    release = next(op for op in run.world.operations if op["compensates"] == "call_2")
    release["resource"] = "ord_other"


def commit_for_invalid_plan(run: Run) -> None:
    _operation(run)


def write_outside_plan(run: Run) -> None:
    _operation(run, tool="cancel_order", call_id="call_9", resource="ord_existing")


def retry_under_new_key(run: Run) -> None:
    run.history.attempts.append(
        Attempt(
            step=99,
            instance="orchestrator-1",
            call_id="call_3",
            tool="charge_payment",
            key="key-charge-1-retry2",
            compensates=None,
        )
    )


def attempts_over_budget(run: Run) -> None:
    first = next(a for a in run.history.attempts if a.call_id == "call_3")
    run.history.attempts.extend(attrs.evolve(first, step=99 + n) for n in range(4))


def compensations_swapped(run: Run) -> None:
    ops = run.world.operations
    undo = [i for i, op in enumerate(ops) if op["compensates"] is not None]
    assert [ops[i]["compensates"] for i in undo] == ["call_2", "call_1"]
    ops[undo[0]], ops[undo[1]] = ops[undo[1]], ops[undo[0]]


def journal_cut_short(run: Run) -> None:
    run.world.journals["orchestrator-1"].pop()


def manual_entry(run: Run) -> None:
    run.world.journals["orchestrator-1"].append(
        {"phase": "MANUAL", "diverging": ["call_3: outcome unknown"]}
    )


def manual_without_records(run: Run) -> None:
    run.world.journals["orchestrator-1"].append({"phase": "MANUAL", "diverging": []})


def confirm_never_committed(run: Run) -> None:
    ops = run.world.operations
    assert ops[-1]["tool"] == "confirm_order"
    ops.pop()


def compensation_undone_never(run: Run) -> None:
    """The order's cancellation (the undo of call_1) never happened."""
    ops = run.world.operations
    run.world.operations = [op for op in ops if op["compensates"] != "call_1"]
    entries = run.world.journals["orchestrator-1"]
    entries[:] = [
        e for e in entries if not (e.get("call") == "call_1" and e.get("event") == "compensated")
    ]


def charge_committed_twice(run: Run) -> None:
    charge = next(op for op in run.world.operations if op["tool"] == "charge_payment")
    _operation(run, **{k: v for k, v in charge.items() if k != "op"})


def charge_charged_again(run: Run) -> None:
    """The charge's operation committed a second time, with a second charge id."""
    charge = next(op for op in run.world.operations if op["tool"] == "charge_payment")
    again = {k: v for k, v in charge.items() if k != "op"}
    _operation(run, **{**again, "receipt": {**charge["receipt"], "charge_id": "ch_2"}})


@attrs.frozen(kw_only=True)
class Case:
    invariant: str
    kind: str
    good: Callable[[], Run]
    breaks: Callable[[Run], None]
    expect: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.invariant}-{self.breaks.__name__}"


CASES = (
    Case(
        invariant="no_double_charge",
        kind="always",
        good=completed,
        breaks=second_charge,
        expect=("order ord_1 charged 2 times", "ch_1 (2500 USD)", "ch_9 (2500 USD)"),
    ),
    Case(
        invariant="no_orphan_reservation",
        kind="always",
        good=completed,
        breaks=reservation_for_cancelled_order,
        expect=("reservation {'sku_pen': 1} held for order ord_existing, which is cancelled",),
    ),
    Case(
        invariant="no_orphan_reservation",
        kind="always",
        good=rolled_back,
        breaks=reservation_for_missing_order,
        expect=("held for order ord_ghost, which is missing",),
    ),
    Case(
        invariant="stock_and_money_conserved",
        kind="always",
        good=completed,
        breaks=unit_from_nowhere,
        expect=("stock of sku_book", "total 11, was 10"),
    ),
    Case(
        invariant="stock_and_money_conserved",
        kind="always",
        good=completed,
        breaks=refund_beyond_charge,
        expect=("charge ch_1 of 2500 has refunds totalling 3000",),
    ),
    Case(
        invariant="consumer_effect_at_most_once",
        kind="always",
        good=completed,
        breaks=effect_twice,
        expect=("event evt_2 applied 2 times",),
    ),
    Case(
        invariant="state_and_event_together",
        kind="always",
        good=completed,
        breaks=event_lost,
        expect=("event evt_3 (charge_payment on 'ord_1') is committed but lost",),
    ),
    Case(
        invariant="rejected_plan_unchanged",
        kind="always",
        good=rejected,
        breaks=commit_for_invalid_plan,
        expect=(
            "orchestrator-1's plan is invalid (incomplete_workflow)",
            "committed create_order on 'ord_1' (op 1)",
        ),
    ),
    Case(
        invariant="writes_within_plan",
        kind="always",
        good=rolled_back,
        breaks=write_outside_plan,
        expect=("orchestrator-1 wrote cancel_order on 'ord_existing'", "resources ['ord_1']"),
    ),
    Case(
        invariant="retries_reuse_key",
        kind="always",
        good=completed,
        breaks=retry_under_new_key,
        expect=("orchestrator-1 retried call_3 under 2 keys", "'key-charge-1-retry2'"),
    ),
    Case(
        invariant="retry_budget",
        kind="always",
        good=completed,
        breaks=attempts_over_budget,
        expect=("orchestrator-1 attempted call_3 5 times (budget 4)",),
    ),
    Case(
        invariant="compensation_reverse_order",
        kind="always",
        good=rolled_back,
        breaks=compensations_swapped,
        expect=("orchestrator-1 compensated ['call_1', 'call_2']", "order ['call_1', 'call_2']"),
    ),
    Case(
        invariant="consumer_effect_exactly_once",
        kind="eventually",
        good=completed,
        breaks=effect_never,
        expect=("event evt_4 (confirm_order on 'ord_1') consumed 0 times",),
    ),
    Case(
        invariant="consumer_effect_exactly_once",
        kind="eventually",
        good=rolled_back,
        breaks=effect_twice,
        expect=("event evt_2 (reserve_inventory on 'ord_1') consumed 2 times",),
    ),
    Case(
        invariant="no_leftover_reservation",
        kind="eventually",
        good=rolled_back,
        breaks=leftover_reservation,
        expect=("reservation {'sku_pen': 1} left behind for order ord_existing (created)",),
    ),
    Case(
        invariant="journal_terminal",
        kind="eventually",
        good=completed,
        breaks=journal_cut_short,
        expect=("orchestrator-1's journal ends in EXECUTING",),
    ),
    Case(
        invariant="no_manual_without_fault",
        kind="eventually",
        good=completed,
        breaks=manual_entry,
        expect=("orchestrator-1 ended in MANUAL although no fault was injected",),
    ),
    Case(
        invariant="acceptable_outcome",
        kind="eventually",
        good=completed,
        breaks=confirm_never_committed,
        expect=(
            "plan of orchestrator-1: half done",
            "call_1, call_2, call_3 committed and not undone, call_4 never committed",
        ),
    ),
    Case(
        invariant="acceptable_outcome",
        kind="eventually",
        good=completed,
        breaks=charge_committed_twice,
        expect=("plan of orchestrator-1: call_3 committed more than once",),
    ),
    Case(
        invariant="acceptable_outcome",
        kind="eventually",
        good=completed,
        breaks=manual_without_records,
        expect=("orchestrator-1 handed over to MANUAL without listing diverging records",),
    ),
    Case(
        invariant="no_double_effect",
        kind="always",
        good=completed,
        breaks=charge_charged_again,
        expect=("charge_payment on 'ord_1' committed 2 times for one operation (op 3, op 5)",),
    ),
    Case(
        invariant="no_orphaned_effect",
        kind="eventually",
        good=completed,
        breaks=confirm_never_committed,
        expect=(
            "create_order (call_1) of orchestrator-1 committed and was neither completed by "
            "its workflow nor undone",
            "charge_payment (call_3) of orchestrator-1 committed",
        ),
    ),
    Case(
        invariant="no_orphaned_effect",
        kind="eventually",
        good=rolled_back,
        breaks=compensation_undone_never,
        expect=("create_order (call_1) of orchestrator-1 committed and was neither",),
    ),
    Case(
        invariant="consumed_effect_committed",
        kind="always",
        good=completed,
        breaks=event_from_nowhere,
        expect=("event evt_99 was applied by the consumer, but no committed operation wrote it",),
    ),
    Case(
        invariant="compensation_matches_its_call",
        kind="always",
        good=rolled_back,
        breaks=release_aimed_elsewhere,
        expect=(
            "orchestrator-1's compensation of call_2 (release_inventory, op 3) was aimed at "
            "order_id='ord_other', not at 'ord_1' as that call's compensation takes",
        ),
    ),
    Case(
        invariant="no_compensation_past_pivot",
        kind="always",
        good=bank_transfer,
        breaks=credit_reversed_after_capture,
        expect=(
            "orchestrator-1 undid call_2 (credit_account on 'tr_7', op 5) after call_3 "
            "(capture_hold, op 3) committed on it and cannot be undone",
        ),
    ),
    Case(
        invariant="amounts_conserved",
        kind="eventually",
        good=bank_transfer,
        breaks=credit_reversed_after_capture,
        expect=(
            "plan of orchestrator-1 destroyed 15000: its credits minus debits still applied "
            "sum to -15000, not 0",
        ),
    ),
    Case(
        invariant="fault_free_completion",
        kind="eventually",
        good=completed,
        breaks=confirm_never_committed,
        expect=(
            "plan of orchestrator-1 is valid and no fault was injected, but it did not "
            "complete: call_4 never committed",
        ),
    ),
)


def test_every_default_invariant_has_a_case() -> None:
    assert sorted({c.invariant for c in CASES}) == sorted(i.name for i in DEFAULT_INVARIANTS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_good_world_passes(case: Case) -> None:
    invariant = by_name(case.invariant)
    assert invariant.kind == case.kind
    assert invariant(case.good().view()) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_world_is_caught(case: Case) -> None:
    run = case.good()
    case.breaks(run)
    view = run.view()
    fired = {i.name for i in DEFAULT_INVARIANTS if i(view)}
    assert case.invariant in fired
    text = "\n".join(by_name(case.invariant)(view))
    for fragment in case.expect:
        assert fragment in text


def test_good_runs_pass_every_invariant() -> None:
    for build in (completed, rolled_back, rejected):
        view = build().view()
        assert {i.name: i(view) for i in DEFAULT_INVARIANTS if i(view)} == {}


def test_manual_excuses_a_leftover_reservation() -> None:
    run = rolled_back()
    leftover_reservation(run)
    manual_entry(run)
    assert by_name("no_leftover_reservation")(run.view()) == []


def test_an_injected_fault_excuses_manual() -> None:
    run = completed()
    manual_entry(run)
    run.history.record_fault("crash")
    assert by_name("no_manual_without_fault")(run.view()) == []


def test_dual_write_mode_is_not_held_to_the_outbox() -> None:
    run = Target(policy=policy("naive"), contract=CONTRACT, fixture=FIXTURE).run([PLAN])
    run.apply(run.choices()[0])  # create_order admitted
    run.apply(run.choices()[0])  # ... and committed; its event is not yet published
    assert not run.world.outbox_mode and run.world.committed_events() == ["evt_1"]
    assert by_name("state_and_event_together")(run.view()) == []


def test_state_and_event_together_catches_a_mid_run_loss() -> None:
    run = Target(policy=policy("guarded"), contract=CONTRACT, fixture=FIXTURE).run([PLAN])
    while not run.world.operations:
        run.apply(run.choices()[0])
    assert by_name("state_and_event_together")(run.view()) == []
    run.world.outbox.clear()
    assert by_name("state_and_event_together")(run.view()) == [
        "event evt_1 (create_order on 'ord_1') is committed but lost"
    ]


# -- user invariants ------------------------------------------------------------------------


def test_decorators_name_and_kind_a_user_invariant() -> None:
    @always
    def no_lamp_sold(view: RunView) -> Iterator[str]:
        """The lamp is display-only."""
        if view.world.state["checkout"]["stock"]["sku_lamp"]["sold"]:
            yield "the lamp was sold"

    @eventually(name="order_confirmed")
    def confirmed(view: RunView) -> Iterator[str]:
        """The order ends confirmed."""
        if view.world.state["checkout"]["orders"]["ord_1"]["status"] != "confirmed":
            yield "ord_1 is not confirmed"

    assert isinstance(no_lamp_sold, Invariant)
    assert (no_lamp_sold.name, no_lamp_sold.kind) == ("no_lamp_sold", "always")
    assert (confirmed.name, confirmed.kind) == ("order_confirmed", "eventually")
    execution = run_checked("guarded", chooser=None)
    assert no_lamp_sold(execution.run.view()) == [] and confirmed(execution.run.view()) == []


def test_decorators_refuse_bad_names_and_missing_docstrings() -> None:
    def undocumented(view: RunView) -> Iterator[str]:
        yield from ()

    with pytest.raises(TxcheckError, match="needs a docstring"):
        always(undocumented)
    with pytest.raises(TxcheckError, match=r"snake_case \(got 'Bad-Name'\)"):
        eventually(name="Bad-Name")(completed_doc)


def completed_doc(view: RunView) -> Iterator[str]:
    """Documented."""
    yield from ()


def test_by_name_lists_known_names_when_unknown() -> None:
    with pytest.raises(KeyError, match=r"no invariant named 'nope'.*no_double_charge"):
        by_name("nope")


def test_a_repeat_answered_with_the_same_result_is_not_a_double_effect() -> None:
    run = completed()
    charge = next(op for op in run.world.operations if op["tool"] == "charge_payment")
    _operation(run, **{k: v for k, v in charge.items() if k != "op"})  # the same receipt
    assert by_name("no_double_effect")(run.view()) == []


def test_manual_listing_a_record_excuses_it_from_being_orphaned() -> None:
    run = completed()
    confirm_never_committed(run)
    run.world.journals["orchestrator-1"].append(
        {"phase": "MANUAL", "diverging": ["call_1: x", "call_2: x", "call_3: x"]}
    )
    assert by_name("no_orphaned_effect")(run.view()) == []


def test_an_injected_fault_excuses_an_incomplete_plan_from_fault_free_completion() -> None:
    run = completed()
    confirm_never_committed(run)
    run.history.record_fault("timeout_before_commit")
    assert by_name("fault_free_completion")(run.view()) == []


def test_manual_on_a_key_another_plan_holds_is_no_policy_bug() -> None:
    """Two plans under shared keys, no fault: the second plan's key is bound to the first
    plan's intent and is refused; a careful policy hands it to a person. That MANUAL is
    exempt (the plans contend), while the same MANUAL on a lone plan is flagged (the
    ``no_manual_without_fault`` case above)."""
    from examples.policies.my_policy import Careful  # noqa: PLC0415
    from txcheck.exploration.plansets.representative import search_plans  # noqa: PLC0415

    plans = next(
        s.plans
        for s in search_plans(CONTRACT, FIXTURE)
        if s.label == "checkout, two at once sharing keys"
    )
    run = execute(
        Target(policy=Careful(), contract=CONTRACT, fixture=FIXTURE), plans, stop_at_first=False
    ).run
    ended = {
        i: [e["phase"] for e in run.world.journals[i] if "phase" in e][-1] for i in run.instances
    }
    assert "MANUAL" in ended.values() and run.history.fault_count == 0
    assert by_name("no_manual_without_fault")(run.view()) == []
    assert by_name("fault_free_completion")(run.view()) == []
