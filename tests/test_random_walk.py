"""The random engine: seeded walks, swarm testing, and failures shrunk to the fewest
deviations (delta debugging, then a systematic search below)."""

from __future__ import annotations

import random

import attrs
import pytest

from txcheck.exploration.engines.random_walk import RandomEngine, _Walk
from txcheck.exploration.engines.shrink import delta_debug
from txcheck.exploration.kernel.context import DEFAULT_TUNING, SearchContext
from txcheck.exploration.kernel.report import EngineReport
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import DESIGNATED, builtin_policy

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, DOUBLE = representative_plans(CONTRACT, FIXTURE)


def target(name: str, plans: tuple[tuple[Plan, ...], ...] = ()) -> Target:
    policy = builtin_policy(name)
    assert policy is not None
    return Target(
        policy_name=name,
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        plans=plans,
    )


def walk(name: str, *, seed: int = 0, walks: int = 200, **options: int) -> EngineReport:
    bounded = attrs.evolve(
        target(name), bounds=Bounds(max_faults=2), budget=Budget(max_examples=walks, seed=seed)
    )
    return RandomEngine(**options).explore(bounded, SearchContext())  # type: ignore[arg-type]


def test_the_same_seed_gives_the_same_walks_and_the_same_counterexample() -> None:
    first, again = walk("control-no-dedupe", seed=3), walk("control-no-dedupe", seed=3)
    assert first.to_json() == again.to_json()
    assert first.counterexample is not None and again.counterexample is not None
    assert [s.to_json() for s in first.counterexample.execution.steps] == [
        s.to_json() for s in again.counterexample.execution.steps
    ]


def test_a_clean_policy_survives_every_walk_and_coverage_is_counted() -> None:
    report = walk("guarded", walks=25)
    assert report.counterexample is None
    assert report.runs == 25 * DEFAULT_TUNING.walks_per_example
    assert report.steps > report.runs * 10  # short rejected plans are among them
    assert report.coverage["invariants"]["no_double_charge"] == report.steps
    assert sum(report.coverage["faults"].values()) > 0
    assert set(report.coverage["deviations"]) >= set(report.coverage["faults"])


@pytest.mark.parametrize(
    "name", ["control-fresh-key", "control-no-saga", "control-dual-write", "control-no-dedupe"]
)
def test_controls_fail_and_shrink_to_a_single_deviation(name: str) -> None:
    report = walk(name)
    found = report.counterexample
    assert found is not None and found.found_by == "random"
    assert found.invariant in DESIGNATED[name]
    assert found.deviations == found.execution.deviations == 1
    # proved minimal: no failure at 0 deviations, or the systematic search's own at 1
    assert any(
        "none with fewer deviations" in note or "search found one with 1 deviations" in note
        for note in report.notes
    )


def test_a_walk_only_takes_the_kinds_its_swarm_enables() -> None:
    walker = _Walk(random.Random(7), frozenset({"crash"}), 0.5, 5)
    execute(
        Target(policy=builtin_policy("guarded"), contract=CONTRACT, fixture=FIXTURE, invariants=()),
        SINGLE,
        chooser=walker,
    )
    assert walker.kinds_taken == ["crash"] * 5


def test_delta_debugging_drops_the_deviations_the_failure_does_not_need() -> None:
    noise = Deviation(action="complete", outcome="transient_error", tool="create_order")
    cause = Deviation(action="complete", outcome="permanent_error", tool="charge_payment")
    jump = Deviation(action="jump", actor="clock", after_tool="reserve_inventory")
    policy = builtin_policy("control-no-saga")
    assert policy is not None
    failing = execute(
        Target(policy=policy, contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS),
        SINGLE,
        chooser=Deviations([noise, jump, cause]),
    )
    assert failing.deviations == 3 and failing.failures
    small = delta_debug(target("control-no-saga"), failing, SearchContext())
    assert small.deviations == 1
    assert small.failures[0].name == failing.failures[0].name
    (step,) = [s for s in small.steps if s.deviation]
    assert (step.choice.outcome, step.request["tool"]) == ("permanent_error", "charge_payment")


def test_deep_walks_take_more_deviations_and_still_shrink() -> None:
    report = walk("control-no-dedupe", seed=3, walks=50, max_deviations=6)
    found = report.counterexample
    assert found is not None and found.deviations == 1
    words = report.notes[0].split()
    assert words[:3] == ["walk", "2", "failed"] and int(words[-2]) > 2  # more than max_faults
