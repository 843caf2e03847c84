"""``guarded`` survives every single fault of the checkout run, concurrency and clock jumps.

Each test is one deterministic run, choice by choice, with every default invariant checked
after every step (``stop_at_first=False``, so a pass means nothing fired at all).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.checkout_runs import (
    PLAN,
    cancel_plan,
    default_choices,
    fault_points,
    journal_phase,
    run_checked,
)
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import Execution
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.sim.choices import TOOL_OUTCOMES as OUTCOMES
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.policies import BUILTIN_POLICIES
from txcheck.models.sim.runner import Run

WORKFLOW = ("create_order", "reserve_inventory", "charge_payment", "confirm_order")
DEFAULT = default_choices("guarded")
KINDS = [s.request.get("kind") for s in run_checked("guarded").steps]
POINTS = fault_points("guarded")


def assert_survives(execution: Execution) -> None:
    assert execution.error is None and execution.divergence is None
    assert [f.to_json() for f in execution.failures] == []
    assert execution.quiesced


def charges(execution: Execution) -> list[str]:
    return sorted(execution.run.world.state["checkout"]["charges"])


def _point_id(point: tuple[int, Choice]) -> str:
    index, choice = point
    outcome = "" if choice.outcome == "ok" else f"-{choice.outcome}"
    return f"{index}-{choice.actor}-{choice.action}{outcome}"


# -- one fault at each step -----------------------------------------------------------------


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("tool", WORKFLOW)
def test_each_outcome_of_each_workflow_call(tool: str, outcome: str) -> None:
    chooser = Deviations([Deviation(action="complete", outcome=outcome, tool=tool)])
    execution = run_checked("guarded", chooser=chooser)
    assert_survives(execution)
    assert chooser.unused == []
    answered = [s for s in execution.steps if s.choice.action == "complete"]
    assert any(s.request["tool"] == tool and s.choice.outcome == outcome for s in answered)
    state = execution.run.world.state["checkout"]
    net = sum(c["amount"] - c["refunded"] for c in state["charges"].values())
    if outcome == "permanent_error":  # declined: the saga undoes what committed before
        assert journal_phase(execution.run) == {"phase": "RECONCILED", "outcome": "rolled_back"}
        assert net == 0 and state["reservations"] == {}
    else:  # recovered: everything committed exactly once
        assert journal_phase(execution.run) == {"phase": "RECONCILED", "outcome": "completed"}
        assert charges(execution) == ["ch_1"] and net == 2500
        assert state["orders"]["ord_1"]["status"] == "confirmed"


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize(
    ("failing", "undo"),
    [
        ("charge_payment", "release_inventory"),
        ("charge_payment", "cancel_order"),
        ("confirm_order", "refund_payment"),
    ],
)
def test_each_outcome_of_a_compensation(failing: str, undo: str, outcome: str) -> None:
    chooser = Deviations(
        [
            Deviation(action="complete", outcome="permanent_error", tool=failing),
            Deviation(action="complete", outcome=outcome, tool=undo),
        ]
    )
    execution = run_checked("guarded", chooser=chooser)
    assert_survives(execution)
    assert chooser.unused == []
    phase = journal_phase(execution.run)
    assert phase is not None
    if outcome == "permanent_error":
        assert phase["phase"] == "MANUAL" and phase["diverging"]
    else:
        assert phase == {"phase": "RECONCILED", "outcome": "rolled_back"}


@pytest.mark.parametrize("point", POINTS, ids=_point_id)
def test_every_single_deviation_from_the_default_run(point: tuple[int, Choice]) -> None:
    """Crashes of every actor at each of their steps, duplicates, lost ACKs, reordered
    deliveries, interleaved relay steps, clock jumps, and each fault outcome."""
    index, choice = point
    execution = run_checked("guarded", choices=[*DEFAULT[:index], choice])
    assert_survives(execution)
    assert execution.deviations == 1


def _points(actor: str, action: str, outcome: str = "ok") -> list[int]:
    return [i for i, c in POINTS if (c.actor, c.action, c.outcome) == (actor, action, outcome)]


def _steps_of(actor: str) -> list[int]:
    return [i for i, c in enumerate(DEFAULT) if c.actor == actor]


def test_the_single_deviations_cover_every_step_of_every_actor() -> None:
    # The orchestrator can crash before each of its steps (requests and tool answers).
    assert _points("orchestrator-1", "crash") == _steps_of("orchestrator-1")
    # The relay and the consumer can crash before each step they take mid-message.
    relay = [i for i in _steps_of("relay") if KINDS[i] in ("BrokerSend", "OutboxMarkPublished")]
    assert _points("relay", "crash") == relay and len(relay) == 8
    consumer = [i for i in _steps_of("consumer") if DEFAULT[i].action == "step"]
    assert _points("consumer", "crash") == consumer and len(consumer) == 12
    # Every BrokerSend can be duplicated and every ACK lost; the clock can jump anywhere.
    assert len(_points("relay", "step", "duplicate")) == 4
    assert len(_points("consumer", "step", "ack_lost")) == 4
    assert _points("clock", "jump") == list(range(len(DEFAULT)))
    answered = [i for i, c in enumerate(DEFAULT) if c.action == "complete"]
    for outcome in OUTCOMES[1:]:
        assert _points("orchestrator-1", "complete", outcome) == answered


@pytest.mark.parametrize("index", _steps_of("orchestrator-1"))
def test_a_crash_then_a_clock_jump_at_each_orchestrator_step(index: int) -> None:
    """A restart after the key may have expired: recovery must query, not blindly replay."""
    choices = [*DEFAULT[:index], Choice("orchestrator-1", "crash"), Choice("clock", "jump")]
    execution = run_checked("guarded", choices=choices)
    assert_survives(execution)
    assert len(charges(execution)) == 1


# -- two instances at once ------------------------------------------------------------------


def _answer_ok(actor: str) -> Choice:
    return Choice(actor, "complete", "ok")


class PreferSecond:
    """After ``after`` steps, run orchestrator-2 whenever it can move (answers included)."""

    def __init__(self, after: int) -> None:
        self.after = after

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice:
        if len(run.steps) >= self.after:
            for choice in options:
                mine = choice.actor == "orchestrator-2"
                if mine and (choice.action == "step" or choice == _answer_ok(choice.actor)):
                    return choice
        return options[0]


DOUBLE = (PLAN, PLAN)
RACE = (PLAN, cancel_plan())
# A second, different plan that repeats the checkout under the same keys (the model asked
# again and added a read): a different operation, so both instances run and meet the keys.
OVERLAP = (
    PLAN,
    Plan(
        calls=(
            *PLAN.calls,
            Call(
                id="call_5",
                name="get_order",
                index=4,
                raw_arguments={"order_id": "ord_1"},
                arguments={"order_id": "ord_1"},
            ),
        )
    ),
)
INVALID = Plan(calls=PLAN.calls[:3])  # no confirm step: incomplete_workflow


@pytest.mark.parametrize(
    "plans", [DOUBLE, OVERLAP, RACE], ids=["double-click", "overlap", "checkout+cancel"]
)
@pytest.mark.parametrize("after", range(0, 26, 2))
def test_two_instances_interleaved(plans: tuple[Plan, Plan], after: int) -> None:
    execution = run_checked("guarded", plans, chooser=PreferSecond(after))
    assert_survives(execution)
    assert execution.run.history.fault_count == 0
    assert len(charges(execution)) <= 1
    phases = sorted(
        str((journal_phase(execution.run, i) or {}).get("phase"))
        for i in ("orchestrator-1", "orchestrator-2")
    )
    # A double click is one operation: whoever claims it first runs it, the other attaches.
    assert phases == (["ATTACHED", "RECONCILED"] if plans is DOUBLE else ["RECONCILED"] * 2)


def test_a_cancel_racing_the_checkout_rolls_it_back_cleanly() -> None:
    # orchestrator-1 has reserved stock when orchestrator-2 cancels the order.
    execution = run_checked("guarded", RACE, chooser=PreferSecond(12))
    assert_survives(execution)
    state = execution.run.world.state["checkout"]
    assert state["orders"]["ord_1"]["status"] == "cancelled"
    assert state["reservations"] == {} and state["stock"]["sku_book"]["reserved"] == 0
    assert journal_phase(execution.run, "orchestrator-1") == {
        "phase": "RECONCILED",
        "outcome": "rolled_back",
    }


class WhileChargeInFlight:
    """Run orchestrator-2 as long as orchestrator-1's charge is admitted and unanswered."""

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice:
        held = any(c.actor == "orchestrator-1" and c.action == "complete" for c in options)
        if held and run.current("orchestrator-1").get("tool") == "charge_payment":
            for choice in options:
                if choice.actor == "orchestrator-2" and choice.action == "step":
                    return choice
        return options[0]


def test_an_overlapping_plan_meets_the_key_in_flight() -> None:
    execution = run_checked("guarded", OVERLAP, chooser=WhileChargeInFlight())
    assert_survives(execution)
    conflicts = [s for s in execution.steps if s.observed.get("code") == "idempotency_conflict"]
    assert [(s.choice.actor, s.request["tool"]) for s in conflicts] == [
        ("orchestrator-2", "charge_payment")
    ]
    replays = [s for s in execution.steps if s.observed.get("replayed")]
    assert {s.choice.actor for s in replays} == {"orchestrator-2"}
    assert charges(execution) == ["ch_1"]
    assert execution.run.world.state["checkout"]["orders"]["ord_1"]["status"] == "confirmed"


def test_an_overlapping_plan_replays_every_write() -> None:
    execution = run_checked("guarded", OVERLAP)
    assert_survives(execution)
    second = [s for s in execution.steps if s.choice.actor == "orchestrator-2"]
    replayed = [s.request["tool"] for s in second if s.observed.get("replayed")]
    assert replayed == list(WORKFLOW)
    assert charges(execution) == ["ch_1"]


def test_a_double_click_attaches_to_the_first_submission() -> None:
    execution = run_checked("guarded", DOUBLE, chooser=PreferSecond(3))
    assert_survives(execution)
    second = [s for s in execution.steps if s.choice.actor == "orchestrator-2"]
    assert [s.request.get("kind") for s in second] == ["JournalRead", "Claim", "JournalAppend"]
    assert second[1].observed == {"owner": "orchestrator-1"}
    assert journal_phase(execution.run, "orchestrator-2") == {
        "phase": "ATTACHED",
        "operation": execution.run.world.journals["orchestrator-1"][0]["operation"],
        "owner": "orchestrator-1",
    }
    assert charges(execution) == ["ch_1"]


# -- the clock jumps past the key's TTL -----------------------------------------------------


@pytest.mark.parametrize("tool", WORKFLOW)
def test_a_jump_after_a_lost_response_does_not_commit_twice(tool: str) -> None:
    chooser = Deviations(
        [
            Deviation(action="complete", outcome="lost_response_after_commit", tool=tool),
            Deviation(action="jump", actor="clock"),
        ]
    )
    execution = run_checked("guarded", chooser=chooser)
    assert_survives(execution)
    assert chooser.unused == []
    run = execution.run
    jump = next(s for s in execution.steps if s.choice.action == "jump")
    assert execution.steps[jump.index - 1].choice.outcome == "lost_response_after_commit"
    assert run.world.clock > run.world.store.ttl  # every key record has expired
    assert [op["tool"] for op in run.world.operations] == list(WORKFLOW)
    assert charges(execution) == ["ch_1"]
    lookups = [s for s in execution.steps if s.request.get("kind") == "Lookup"]
    assert lookups and lookups[0].observed["receipt"]


def test_the_same_jump_does_double_charge_a_policy_that_replays_blindly() -> None:
    chooser = Deviations(
        [
            Deviation(
                action="complete", outcome="lost_response_after_commit", tool="charge_payment"
            ),
            Deviation(action="jump", actor="clock"),
        ]
    )
    execution = run_checked("control-fresh-key", chooser=chooser)
    assert execution.failed("no_double_charge")


# -- no fault, no MANUAL --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILTIN_POLICIES))
@pytest.mark.parametrize(
    "plans",
    [(PLAN,), DOUBLE, RACE, (INVALID,)],
    ids=["checkout", "double-click", "checkout+cancel", "invalid"],
)
def test_a_run_without_faults_never_ends_in_manual(name: str, plans: tuple[Plan, ...]) -> None:
    execution = run_checked(name, plans)
    assert execution.quiesced and execution.run.history.fault_count == 0
    assert not execution.failed("no_manual_without_fault")
    for journal in execution.run.world.journals.values():
        phases = [e["phase"] for e in journal if "phase" in e]
        assert "MANUAL" not in phases


def test_guarded_default_runs_pass_everything() -> None:
    for plans in [(PLAN,), DOUBLE, RACE, (INVALID,)]:
        assert_survives(run_checked("guarded", plans))
