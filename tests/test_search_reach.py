"""What the search reaches: the plan shapes bugs hide in, repeated faults on one retried
call at the cost of one deviation, time shifts that are no new state, per-plan bounds,
and a compact visited set. The regression mutants of tests/blind_spots.py are positive
controls: each was missed before, and must be caught now."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.blind_spots import (
    CATCHES,
    HOTEL_CATCHES,
    DedupeOnTypeAndOrder,
    FailedLookupNotCommitted,
    KeyFromCallId,
    PublishBeforeCall,
    RetryTimeoutsForever,
    SkipValidationForOneCall,
    UndoResolvedByForwardCall,
)
from txcheck.cli import main
from txcheck.exploration.engines.systematic import SystematicEngine, plan_sets_of
from txcheck.exploration.engines.visited import FingerprintTable, collision_odds
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.session import Session, execute
from txcheck.exploration.kernel.target import Bounds, Deadline, Target
from txcheck.exploration.plansets.representative import representative_plans, search_plans
from txcheck.invariants import DEFAULT_INVARIANTS, always
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.plan.validation import validate
from txcheck.models.sim.choices import Action, Choice, Outcome, Part
from txcheck.models.sim.deviation_cost import REPEAT_LIMIT, deviation_count
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded, builtin_policy
from txcheck.models.sim.runner import CLOCK, Step
from txcheck.models.sim.world_rules import WorldBusinessCheck

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE = representative_plans(CONTRACT, FIXTURE)[0]
HOTEL = Path(__file__).resolve().parent.parent / "examples" / "contracts" / "hotel.json"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


# -- plan shapes --------------------------------------------------------------------------------


def test_search_plans_cover_one_call_near_valid_two_resource_and_double_click_shapes() -> None:
    sets = search_plans(CONTRACT, FIXTURE)
    labels = [s.label for s in sets]
    writes = sorted(n for n, t in CONTRACT.tools.items() if t.has_side_effect)
    assert labels[0] == "checkout"
    assert [f"{w} alone" for w in writes] == [label for label in labels if label.endswith("alone")]
    assert sum("with one mistake" in label for label in labels) == 4
    assert "checkout on two resources" in labels and "checkout, submitted twice" in labels
    assert labels[-3:] == [
        "checkout, two at once",
        "checkout, two at once sharing keys",
        "checkout, two at once on the same resources",
    ]
    two = next(s for s in sets if s.label == "checkout on two resources").plans[0]
    orders = {c.arguments["order_id"] for c in two.calls if c.arguments is not None}
    assert len(two.calls) == 8 and len(orders) == 2
    business = WorldBusinessCheck(fixture=FIXTURE)
    assert validate(CONTRACT, two, business=business).valid
    for entry in sets:
        if "mistake" in entry.label or entry.label == "create_order alone":
            assert not validate(CONTRACT, entry.plans[0]).valid
    again = search_plans(CONTRACT, FIXTURE)
    assert [s.label for s in again] == labels  # deterministic


def _keys(plan: Plan) -> list[str]:
    return [c.arguments["idempotency_key"] for c in plan.calls if c.arguments]


def _orders(plan: Plan) -> set[str]:
    return {c.arguments["order_id"] for c in plan.calls if c.arguments}


def test_search_plans_put_two_different_plans_side_by_side() -> None:
    sets = {s.label: s for s in search_plans(CONTRACT, FIXTURE)}
    business = WorldBusinessCheck(fixture=FIXTURE)
    first, second = sets["checkout, two at once"].plans
    assert not _orders(first) & _orders(second)
    assert not set(_keys(first)) & set(_keys(second))
    for plan in (first, second):  # each valid alone: a failure is the policy's
        assert validate(CONTRACT, plan, business=business).valid
    same, clashing = sets["checkout, two at once sharing keys"].plans
    assert plan_to_json(same) == plan_to_json(first) and _keys(clashing) == _keys(first)
    assert _orders(clashing) == _orders(second)
    same, rival = sets["checkout, two at once on the same resources"].plans
    assert plan_to_json(same) == plan_to_json(first) and _orders(rival) == _orders(first)
    assert _keys(rival) == _keys(second)


# -- repeated faults -----------------------------------------------------------------------------


def _fault_step(index: int, call: str, outcome: str = "timeout_before_commit") -> Step:
    return Step(
        index=index,
        choice=Choice("orchestrator-1", Action.COMPLETE, Outcome(outcome)),
        deviation=True,
        request={"kind": "Invoke", "call": call, "tool": "charge_payment"},
    )


def test_the_same_fault_on_the_same_retried_call_costs_one_deviation() -> None:
    same = [_fault_step(i, "call_3") for i in range(4)]
    assert deviation_count(same) == 1
    assert deviation_count([*same[:2], _fault_step(2, "call_4")]) == 2
    other = [_fault_step(0, "call_3"), _fault_step(1, "call_3", "transient_error")]
    assert deviation_count(other) == 2
    long = [_fault_step(i, "call_3") for i in range(REPEAT_LIMIT + 2)]
    assert deviation_count(long) == 2  # free repeats are bounded


def test_a_retry_forever_policy_is_caught_at_one_deviation() -> None:
    target = Target(policy=RetryTimeoutsForever(), plans=(SINGLE,), bounds=Bounds(max_faults=1))
    report = SystematicEngine().explore(target, SearchContext(deadline=Deadline(300)))
    found = report.counterexample
    assert found is not None and found.invariant == "retry_budget"
    assert found.deviations == 1
    timeouts = [s for s in found.execution.steps if s.deviation]
    assert len(timeouts) == 4  # max_attempts 4: the fifth attempt breaks the budget
    # guarded, the control, survives the same search
    clean = SystematicEngine().explore(
        attrs.evolve(target, policy=Guarded()), SearchContext(deadline=Deadline(300))
    )
    assert clean.counterexample is None and clean.complete


def test_retry_forever_is_caught_without_the_scenario_seeds(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    spec = "tests.blind_spots:RetryTimeoutsForever"
    argv = ["explore", "--policy", spec, "--no-seeds", "--seed", "1", "--json"]
    assert main(argv) == 1  # no wall-clock budget: the machine's load must not decide
    found = json.loads(capsys.readouterr().out)["counterexample"]
    # without a single fault: the second of two plans sharing keys is refused as a
    # conflict, and the mutant retries that refusal for ever (the budget broken, then no
    # quiescence)
    assert found["invariant"] == "quiescence" and found["found_by"] == "systematic"
    assert found["deviations"] == 0
    assert [v["invariant"] for v in found["violations"]] == ["retry_budget", "quiescence"]


# -- the blind spots ---------------------------------------------------------------------------


def _first(policy: Guarded, max_faults: int) -> Any:
    target = Target(policy=policy, bounds=Bounds(max_faults=max_faults))
    return SystematicEngine().explore(target, SearchContext(deadline=Deadline(600))).counterexample


def test_a_one_call_plan_reaches_a_policy_that_skips_validation_for_it() -> None:
    found = _first(SkipValidationForOneCall(), 0)
    assert found is not None and found.invariant == "no_orphaned_effect"
    assert found.execution.failed("rejected_plan_unchanged")
    assert found.deviations == 0 and len(found.plans[0].calls) == 1


def test_two_refunds_reach_a_consumer_that_dedupes_on_type_and_order() -> None:
    found = _first(DedupeOnTypeAndOrder(), 1)
    assert found is not None and found.invariant == "consumer_effect_exactly_once"
    assert found.deviations == 1
    refunds = found.execution.run.world.state["checkout"]["refunds"]
    assert len(refunds) == 2  # both charges refunded: two events with no order
    assert len({c.arguments["order_id"] for c in found.plans[0].calls if c.arguments}) == 2


def _plan_set(label: str) -> tuple[Plan, ...]:
    return next(s.plans for s in search_plans(CONTRACT, FIXTURE) if s.label == label)


def test_two_checkouts_at_once_reach_keys_made_from_call_ids() -> None:
    """Alone, or submitted twice, the plan runs clean: only a second, different plan
    sends the same key for another intent."""
    target = Target(policy=KeyFromCallId(), plans=(SINGLE,), bounds=Bounds(max_faults=0))
    assert (
        SystematicEngine().explore(target, SearchContext(deadline=Deadline(300))).counterexample
        is None
    )
    pair = _plan_set("checkout, two at once")
    target = attrs.evolve(target, plans=(pair,))
    found = SystematicEngine().explore(target, SearchContext(deadline=Deadline(300))).counterexample
    assert found is not None and found.invariant == "fault_free_completion"
    assert found.deviations == 0
    # guarded, the control, completes both checkouts
    clean = SystematicEngine().explore(
        attrs.evolve(target, policy=Guarded()), SearchContext(deadline=Deadline(300))
    )
    assert clean.counterexample is None and clean.complete


def test_an_event_published_before_its_call_is_caught_when_consumed() -> None:
    found = _first(PublishBeforeCall(), 0)
    assert found is not None and found.execution.failed("consumed_effect_committed")
    assert found.deviations == 0


def test_an_undo_resolved_by_asking_about_the_forward_call_is_not_a_compensation() -> None:
    target = Target(
        policy=UndoResolvedByForwardCall(), plans=(SINGLE,), bounds=Bounds(max_faults=2)
    )
    found = SystematicEngine().explore(target, SearchContext(deadline=Deadline(600))).counterexample
    assert found is not None and found.invariant in CATCHES["UndoResolvedByForwardCall"]
    assert found.deviations == 2
    # the journal says the order was cancelled: the world says it never was
    journal = found.execution.run.world.journals["orchestrator-1"]
    assert any(e.get("event") == "compensated" and e.get("call") == "call_1" for e in journal)
    order = found.execution.run.world.state["checkout"]["orders"]["ord_rep_1"]
    assert order["status"] != "cancelled"
    assert found.execution.failed("no_orphaned_effect")


def test_an_undo_aimed_beside_its_booking_is_caught_on_generic_services(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    argv = ["explore", "--contract", str(HOTEL), "--engine", "systematic", "--no-seeds"]
    argv += ["--max-faults", "1", "--seed", "1", "--json"]
    assert main([*argv, "--policy", "tests.blind_spots:UndoAimedAside"]) == 1
    found = json.loads(capsys.readouterr().out)["counterexample"]
    assert found["invariant"] == "compensation_matches_its_call"
    assert main([*argv, "--policy", "guarded"]) == 0  # the control
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_default_explore_kills_each_blind_spot_mutant(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    assert len(CATCHES) == 7 and len(HOTEL_CATCHES) == 1
    runs = [(name, expected, ()) for name, expected in CATCHES.items()]
    runs += [(n, e, ("--contract", str(HOTEL))) for n, e in HOTEL_CATCHES.items()]
    for name, expected, where in runs:
        argv = ["explore", *where, "--policy", f"tests.blind_spots:{name}", "--seed", str(seed)]
        assert main([*argv, "--json"]) == 1, name  # no wall-clock budget, as by default
        found = json.loads(capsys.readouterr().out)["counterexample"]
        assert found["invariant"] in expected, (name, found["invariant"])


def test_the_failed_lookup_mutant_is_a_three_deviation_bug() -> None:
    """It survives two deviations: what makes it a blind spot for small bounds."""
    target = Target(policy=FailedLookupNotCommitted(), plans=(SINGLE,), bounds=Bounds(max_faults=1))
    report = SystematicEngine().explore(target, SearchContext(deadline=Deadline(300)))
    assert report.counterexample is None and report.complete


# -- time shifts ----------------------------------------------------------------------------------


def test_a_jump_with_nothing_live_is_no_new_state() -> None:
    target = Target(policy=Guarded(), plans=(SINGLE,))
    assert target.time_blind
    session = Session(target, SINGLE, track_positions=True)
    before = session.run.fingerprint()
    assert not session.run.time_matters()
    session.apply(Choice(CLOCK, Action.JUMP), check=False)
    assert session.run.world.clock > 0
    # the fault count moved, nothing else: the same state up to the history of faults
    shifted = Session(target, SINGLE, track_positions=True)
    shifted.run.world.clock = 41
    assert (
        shifted.run.world.fingerprint()
        == Session(target, SINGLE, track_positions=True).run.world.fingerprint()
    )
    assert before != session.run.fingerprint()  # a jump is still a fault the history counts


def test_a_live_record_makes_time_matter() -> None:
    target = Target(policy=Guarded(), plans=(SINGLE,))
    session = Session(target, SINGLE, track_positions=True)
    while not session.run.world.store.records() or any(
        r.status == "in_flight" for r in session.run.world.store.records()
    ):
        session.apply(session.run.choices()[0], check=False)
    assert session.run.time_matters()


@always(name="reads_the_clock", reads=(Part.CLOCK,))
def _reads_the_clock(view: Any) -> list[str]:
    """A user invariant that reads the clock (here it never fails)."""
    return []


def test_an_invariant_that_may_read_times_turns_the_time_shift_off() -> None:
    assert Target(policy=Guarded()).time_blind
    assert not Target(
        policy=Guarded(), invariants=(*DEFAULT_INVARIANTS, _reads_the_clock)
    ).time_blind
    undeclared = attrs.evolve(_reads_the_clock, reads=None)
    assert not Target(policy=Guarded(), invariants=(undeclared,)).time_blind


@always(name="at_most_one_fault", reads=(Part.HISTORY,))
def _at_most_one_fault(view: Any) -> list[str]:
    """A user invariant that counts faults (a positive control for counted states)."""
    count = view.history.fault_count
    return [f"{count} faults injected"] if count > 1 else []


@always(name="counts_nothing", reads=(Part.HISTORY,))
def _counts_nothing(view: Any) -> list[str]:
    """A user invariant that may count faults (it never fails): counts stay in states."""
    return []


def test_only_an_invariant_that_may_count_faults_keeps_fault_counts_in_a_state() -> None:
    assert Target(policy=Guarded()).count_blind
    assert Target(policy=Guarded(), invariants=(*DEFAULT_INVARIANTS, _reads_the_clock)).count_blind
    assert not Target(policy=Guarded(), invariants=(_counts_nothing,)).count_blind
    undeclared = attrs.evolve(_reads_the_clock, reads=None)
    assert not Target(policy=Guarded(), invariants=(undeclared,)).count_blind


def _single(policy: Any, invariants: Any = DEFAULT_INVARIANTS, k: int = 2) -> Any:
    target = Target(
        policy=policy, plans=(SINGLE,), invariants=invariants, bounds=Bounds(max_faults=k)
    )
    return SystematicEngine().explore(target, SearchContext(deadline=Deadline(300)))


def test_states_that_differ_only_in_fault_counts_are_one_state() -> None:
    blind = _single(Guarded())
    counted = _single(Guarded(), (*DEFAULT_INVARIANTS, _counts_nothing))
    assert blind.counterexample is None and counted.counterexample is None
    assert blind.complete and counted.complete
    assert blind.states < counted.states * 0.9  # measured: 56,379 against 69,277


def test_an_invariant_that_counts_faults_still_sees_every_count() -> None:
    found = _single(Guarded(), (_at_most_one_fault,))
    assert found.counterexample is not None
    assert found.counterexample.invariant == "at_most_one_fault"
    assert found.counterexample.deviations == 1  # the same fault again on a retry is free


@pytest.mark.parametrize("counted", [True, False])
def test_a_second_restart_where_it_stands_moves_only_the_fault_count(counted: bool) -> None:
    invariants = (_counts_nothing,) if counted else DEFAULT_INVARIANTS
    target = Target(policy=Guarded(), invariants=invariants)
    once, twice = (target.run(SINGLE, track_positions=True) for _ in range(2))
    crash = Choice(actor="orchestrator-1", action=Action.CRASH)
    for run, crashes in ((once, 1), (twice, 2)):
        for _ in range(crashes):
            assert run.fresh("orchestrator-1")
            run.apply(crash)
    assert (once.history.fault_count, twice.history.fault_count) == (1, 2)
    assert twice.world.snapshot() == once.world.snapshot()
    assert (twice.fingerprint() != once.fingerprint()) is counted


def _proved(report: Any) -> tuple[Any, ...]:
    found = report.counterexample
    minimal = (
        None if found is None else (found.invariant, found.deviations, len(found.execution.steps))
    )
    return minimal, report.exhaustive_bound, report.complete


@pytest.mark.slow
@pytest.mark.parametrize("name", ["guarded", "naive", *(m.name for m in MUTANTS)])
def test_forgetting_fault_counts_changes_no_verdict_at_two_deviations(name: str) -> None:
    policy = builtin_policy(name) or next(m.policy() for m in MUTANTS if m.name == name)
    for plans in representative_plans(CONTRACT, FIXTURE):
        target = Target(policy=policy, plans=(plans,), bounds=Bounds(max_faults=2))
        counted = attrs.evolve(target, invariants=(*DEFAULT_INVARIANTS, _counts_nothing))
        blind = SystematicEngine().explore(target, SearchContext())
        assert _proved(blind) == _proved(SystematicEngine().explore(counted, SearchContext()))


# -- per-plan bounds and the visited set -----------------------------------------------------------


def test_each_plan_set_reports_the_bound_it_reached_and_the_budget_is_shared_out() -> None:
    target = Target(policy=Guarded(), bounds=Bounds(max_faults=3, max_states=3000))
    report = SystematicEngine().explore(target, SearchContext(deadline=Deadline(300)))
    assert report.counterexample is None and not report.complete
    bounds = {p.label: p.reached for p in report.plans}
    assert bounds["create_order alone"] == 3  # small plans go all the way
    assert bounds["checkout, submitted twice"] is not None
    assert bounds["checkout, submitted twice"] < 3
    assert report.exhaustive_bound == min(v for v in bounds.values() if v is not None)
    assert 3000 <= report.states <= 3000 + len(bounds) * 60  # the budget is used, not left


def test_the_fingerprint_table_keeps_the_least_and_grows() -> None:
    table = FingerprintTable(capacity=4)
    digests = [bytes([i]) * 16 for i in range(1, 200)]
    for i, digest in enumerate(digests):
        table.put(digest, i % 4, i)
    assert len(table) == len(digests)
    assert all(table.get(d) == (i % 4, i) for i, d in enumerate(digests))
    assert table.get(b"\xff" * 16) is None
    table.put(digests[0], 0, 0)
    assert table.get(digests[0]) == (0, 0) and len(table) == len(digests)
    assert table.nbytes() <= 12 * 4 * len(digests)
    with pytest.raises(ValueError, match="cannot pack"):
        table.put(digests[0], 300, 0)
    assert collision_odds(1_000_000) < 3e-8


def test_pruned_and_unpruned_agree_with_free_repeats_and_time_shifts() -> None:
    for policy in (RetryTimeoutsForever(), Guarded()):
        target = Target(policy=policy, plans=(SINGLE,), bounds=Bounds(max_faults=1))
        pruned = SystematicEngine().explore(target, SearchContext(deadline=Deadline(300)))
        full = SystematicEngine(prune=False).explore(target, SearchContext(deadline=Deadline(300)))
        assert (pruned.counterexample is None) == (full.counterexample is None)
        assert pruned.exhaustive_bound == full.exhaustive_bound
        if pruned.counterexample is not None and full.counterexample is not None:
            assert pruned.counterexample.invariant == full.counterexample.invariant
            assert pruned.counterexample.deviations == full.counterexample.deviations
            assert len(pruned.counterexample.execution.steps) == len(
                full.counterexample.execution.steps
            )


def test_execute_counts_a_run_of_repeats_once() -> None:
    choices: list[Choice] = []
    run = execute(Target(policy=RetryTimeoutsForever()), SINGLE).run
    first = next(i for i, s in enumerate(run.steps) if s.choice.action is Action.COMPLETE)
    choices = [s.choice for s in run.steps[:first]]
    timeout = Choice("orchestrator-1", Action.COMPLETE, Outcome.TIMEOUT_BEFORE_COMMIT)
    session = Session(Target(policy=RetryTimeoutsForever()), SINGLE)
    for choice in choices:
        session.apply(choice)
    session.apply(timeout)
    while not session.run.free_repeat(timeout):
        session.apply(session.run.choices()[0])
    session.apply(timeout)
    assert session.execution().deviations == 1


def test_a_budget_that_covers_the_lowest_level_everywhere_proves_it_everywhere() -> None:
    """The two-resource checkout needs about 7,900 states for its first level, the single
    checkout 2,300: 12,000 cover both. A plan set that finishes its level early must not
    spend what the other still needs on its next level (the bound proved was 0 here)."""
    sets = {entry.label: entry.plans for entry in plan_sets_of(Target(policy=Guarded()))}
    plans = (sets["checkout on two resources"], sets["checkout"])
    target = Target(policy=Guarded(), plans=plans, bounds=Bounds(max_faults=2, max_states=12_000))
    report = SystematicEngine().explore(target, SearchContext(deadline=Deadline(300)))
    assert report.counterexample is None and not report.complete
    assert [p.reached for p in report.plans] == [1, 1]
    assert report.exhaustive_bound == 1
    assert 12_000 <= report.states <= 12_100  # what is left past the level still goes deeper
