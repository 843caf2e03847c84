"""The systematic engine: fewest deviations first, exhaustive within a bound, and pruning
that changes no invariant's verdict or minimal counterexample length."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pytest

from txcheck.exploration.engines.independence import Moment
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import EngineReport
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.checkout import CHECKOUT as CHECKOUT_SERVICES
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import DESIGNATED, Guarded, builtin_policy
from txcheck.models.sim.policies.base import ActorGen, Policy
from txcheck.models.sim.requests import Delivery, SeenCheck
from txcheck.models.sim.runner import Run
from txcheck.traces.document import trace_of

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, DOUBLE = representative_plans(CONTRACT, FIXTURE)
CHECKOUT = SINGLE[0]
_CALLS = list(CHECKOUT.calls)
# The reservation's order id is a number: the plan is invalid, but not at its first call.
SECOND_CALL_INVALID = Plan(
    calls=(
        _CALLS[0],
        attrs.evolve(_CALLS[1], arguments={"order_id": 5, "idempotency_key": "key-reserve-1"}),
        *_CALLS[2:],
    )
)


def target(
    policy: Policy | str,
    plans: tuple[Plan, ...] = SINGLE,
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
) -> Target:
    chosen = builtin_policy(policy) if isinstance(policy, str) else policy
    assert chosen is not None
    return Target(
        policy_name=chosen.name,
        policy=chosen,
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=tuple(invariants),
        plans=(plans,),
    )


def explore(t: Target, k: int, *, prune: bool = True, states: int = 10**6) -> EngineReport:
    bounded = attrs.evolve(t, bounds=Bounds(max_faults=k, max_states=states))
    return SystematicEngine(prune=prune).explore(bounded, SearchContext())


def outcome(report: EngineReport) -> tuple[str, int, int] | None:
    found = report.counterexample
    if found is None:
        return None
    return (found.invariant, found.deviations, len(found.execution.steps))


# -- fewest deviations first --------------------------------------------------------------

SHORTEST = {
    # control: (plans, invariant, deviations, the deviation)
    # the fresh key after a lost response is hygiene; the order it leaves half done is harm
    "control-fresh-key": (
        SINGLE,
        "acceptable_outcome",
        1,
        ("complete", "lost_response_after_commit"),
    ),
    "control-no-saga": (SINGLE, "acceptable_outcome", 1, ("complete", "permanent_error")),
    "control-dual-write": (
        SINGLE,
        "consumer_effect_exactly_once",
        1,
        ("complete", "lost_response_after_commit"),
    ),
    "control-no-dedupe": (SINGLE, "consumer_effect_at_most_once", 1, ("step", "duplicate")),
    "control-lazy-validation": ((SECOND_CALL_INVALID,), "rejected_plan_unchanged", 0, None),
}


@pytest.mark.parametrize("name", sorted(SHORTEST))
def test_each_control_fails_its_designated_invariant_with_the_fewest_deviations(
    name: str,
) -> None:
    plans, invariant, deviations, deviation = SHORTEST[name]
    report = explore(target(name, plans), 2)
    found = report.counterexample
    assert found is not None and found.found_by == "systematic"
    assert found.invariant == invariant and invariant in DESIGNATED[name]
    assert found.deviations == found.execution.deviations == deviations
    # Minimal by construction: every level below was explored and found nothing.
    assert report.exhaustive_bound == (deviations - 1 if deviations else None)
    assert not report.complete
    taken = [(s.choice.action, s.choice.outcome) for s in found.execution.steps if s.deviation]
    assert taken == ([deviation] if deviation else [])


def test_the_counterexample_is_a_replayable_trace() -> None:
    found = explore(target("control-no-dedupe"), 1).counterexample
    assert found is not None
    trace = trace_of(
        found.execution,
        policy="control-no-dedupe",
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=found.plans,
    )
    assert [v["invariant"] for v in trace["violations"]] == ["consumer_effect_at_most_once"]
    again = execute(
        Target(
            policy=builtin_policy("control-no-dedupe"),
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        found.plans,
        choices=[Choice.from_json(s) for s in trace["steps"]],
    )
    assert [s.to_json() for s in again.steps] == trace["steps"]
    assert again.failed("consumer_effect_at_most_once")


# -- exhaustive within a bound ------------------------------------------------------------


def test_bound_zero_is_the_default_run_alone() -> None:
    report = explore(target("guarded"), 0)
    assert (report.runs, report.exhaustive_bound, report.complete) == (1, 0, True)
    assert report.counterexample is None
    assert report.coverage["faults"] == {} and report.coverage["deviations"] == {}


def test_guarded_checkout_is_exhaustively_clean_with_one_deviation() -> None:
    report = explore(target("guarded"), 1)
    assert report.counterexample is None
    assert (report.exhaustive_bound, report.complete) == (1, True)
    kinds = report.coverage["deviations"]
    assert {"crash", "jump", "timeout_before_commit", "lost_response_after_commit"} <= set(kinds)
    assert report.coverage["invariants"]["no_double_charge"] > 0


@pytest.mark.slow
def test_guarded_checkout_is_exhaustively_clean_with_two_deviations() -> None:
    report = explore(target("guarded", SINGLE), 2)
    assert report.counterexample is None, outcome(report)
    assert (report.exhaustive_bound, report.complete) == (2, True)


@pytest.mark.slow
def test_guarded_double_click_is_exhaustively_clean_with_two_deviations() -> None:
    # This found guarded charging twice for a double click (a transient error, the other
    # instance charges, a clock jump expires the key, the retry charges again); guarded
    # now claims a durable operation id, so the second submission attaches instead.
    report = explore(target("guarded", DOUBLE), 2)
    assert report.counterexample is None, outcome(report)
    assert (report.exhaustive_bound, report.complete) == (2, True)


def test_the_state_budget_stops_the_search_and_says_so() -> None:
    report = explore(target("guarded"), 2, states=200)
    assert not report.complete and report.exhaustive_bound == 0
    assert any("state budget" in note for note in report.notes)


def test_reports_are_deterministic() -> None:
    first = explore(target("control-fresh-key", DOUBLE), 1)
    again = explore(target("control-fresh-key", DOUBLE), 1)
    assert first.to_json() == again.to_json()
    assert first.counterexample is not None and again.counterexample is not None
    assert [s.to_json() for s in first.counterexample.execution.steps] == [
        s.to_json() for s in again.counterexample.execution.steps
    ]


# -- pruning keeps every verdict ----------------------------------------------------------


def agree(t: Target, k: int) -> tuple[EngineReport, EngineReport]:
    pruned, full = explore(t, k), explore(t, k, prune=False)
    assert outcome(pruned) == outcome(full)
    assert (pruned.exhaustive_bound, pruned.complete) == (full.exhaustive_bound, full.complete)
    return pruned, full


@pytest.mark.parametrize(
    ("policy", "plans"),
    [("naive", DOUBLE), ("control-fresh-key", DOUBLE), ("control-no-saga", SINGLE)],
)
def test_pruned_and_unpruned_search_agree_with_one_deviation(
    policy: str, plans: tuple[Plan, ...]
) -> None:
    pruned, full = agree(target(policy, plans), 1)
    assert pruned.runs <= full.runs


def test_pruned_and_unpruned_agree_on_each_invariant_alone() -> None:
    verdicts = {}
    for invariant in DEFAULT_INVARIANTS:
        pruned, _ = agree(target("naive", SINGLE, [invariant]), 1)
        verdicts[invariant.name] = outcome(pruned)
    assert verdicts["consumer_effect_at_most_once"] is not None  # some fail, some do not
    assert verdicts["rejected_plan_unchanged"] is None


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["guarded", *sorted(DESIGNATED), "naive"])
def test_pruned_and_unpruned_agree_on_every_invariant(policy: str) -> None:
    for plans in (SINGLE, DOUBLE):
        for invariant in DEFAULT_INVARIANTS:
            agree(target(policy, plans, [invariant]), 1)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("policy", "plans"),
    [
        ("guarded", SINGLE),  # the whole of level 2, unpruned: about half a minute
        ("naive", DOUBLE),
        ("control-lazy-validation", (SECOND_CALL_INVALID,)),
        *[
            (name, plans)
            for name in sorted(DESIGNATED)
            if name != "control-lazy-validation"  # on a valid plan it is guarded
            for plans in (SINGLE, DOUBLE)
        ],
    ],
)
def test_pruned_and_unpruned_agree_with_two_deviations(
    policy: str, plans: tuple[Plan, ...]
) -> None:
    agree(target(policy, plans), 2)


class EndsWithoutAck(Guarded):
    """A consumer that never acknowledges: the broker hands the delivery back forever."""

    name = "ends-without-ack"

    def consume(self, delivery: Delivery) -> ActorGen:
        yield SeenCheck(event_id=delivery.event_id)


def test_a_default_schedule_that_loops_is_a_failure_to_quiesce() -> None:
    pruned, full = agree(target(EndsWithoutAck()), 1)
    assert outcome(pruned) == ("quiescence", 0, 2000)
    assert pruned.steps < full.steps // 10  # the loop is seen, not walked 2000 steps


# -- the pieces pruning stands on ---------------------------------------------------------


def tracked(choices: Sequence[Choice] = ()) -> Run:
    run = Target(policy=Guarded(), contract=CONTRACT, fixture=FIXTURE).run(
        SINGLE, track_positions=True
    )
    for choice in choices:
        run.apply(choice)
    return run


def default_steps(run: Run, n: int) -> Iterator[Choice]:
    for _ in range(n):
        choice = run.choices()[0]
        run.apply(choice)
        yield choice


def test_a_fingerprint_sees_an_actor_s_position_not_just_the_world() -> None:
    run = tracked()
    before = run.fingerprint()
    world = run.world.snapshot()
    first = run.choices()[0]
    assert run.current(first.actor)["kind"] == "JournalRead"
    run.apply(first)  # reading the journal changes nothing durable
    assert run.world.snapshot() == world
    assert run.fingerprint() != before


def test_tracking_resumed_after_a_replay_gives_the_same_fingerprints() -> None:
    reference = tracked()
    choices = list(default_steps(reference, 20))
    replayed = Target(policy=Guarded(), contract=CONTRACT, fixture=FIXTURE).run(SINGLE)
    for choice in choices[:12]:
        replayed.apply(choice)
    partial = tracked(choices[:12])
    replayed.track(partial.positions())
    for choice in choices[12:]:
        replayed.apply(choice)
    assert replayed.fingerprint() == reference.fingerprint()


def test_a_relay_step_commutes_with_a_journal_append_but_a_jump_not_with_a_send() -> None:
    run = tracked()
    while not (
        any(c.actor == "relay" for c in run.choices()[1:])
        and run.current("orchestrator-1").get("kind") == "JournalAppend"
    ):
        run.apply(run.choices()[0])
    options = run.choices()
    relay = next(c for c in options if c.actor == "relay")
    assert Moment(run, options).commutes(relay)
    prefix = [s.choice for s in run.steps]
    relay_first, default_first = tracked(prefix), tracked(prefix)
    relay_first.apply(relay)
    assert relay_first.choices()[0] == options[0]  # the default stays the default
    relay_first.apply(options[0])
    default_first.apply(options[0])
    default_first.apply(relay)
    assert relay_first.fingerprint() == default_first.fingerprint()
    while run.current("orchestrator-1").get("kind") != "Invoke":
        run.apply(run.choices()[0])
    assert not Moment(run, run.choices()).commutes(Choice("clock", "jump"))


def test_a_user_service_set_reaches_the_systematic_engine() -> None:
    path = Path(__file__).resolve().parent.parent / "examples" / "custom_service" / "gift_cards.py"
    spec = importlib.util.spec_from_file_location("gift_cards_for_systematic", path)
    assert spec is not None and spec.loader is not None
    gift_cards = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gift_cards)
    naive = builtin_policy("naive")
    assert naive is not None
    user = Target(
        policy_name="naive",
        policy=naive,
        contract=gift_cards.contract(),
        fixture=gift_cards.fixture(),
        services=(CHECKOUT_SERVICES, gift_cards.GIFT_CARDS),
        invariants=(gift_cards.one_gift_card_per_order,),
        plans=((gift_cards.PLAN,),),
        bounds=Bounds(max_faults=1),
    )
    found = SystematicEngine().explore(user, SearchContext()).counterexample
    assert found is not None
    assert (found.invariant, found.deviations) == ("one_gift_card_per_order", 1)
    assert "gift_cards" in found.execution.run.world.state
