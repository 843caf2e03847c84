"""Each positive control fails the invariant its missing mechanism protects; ``guarded``
passes the very same run.

A control is ``guarded`` with one mechanism removed, so a control that passed would mean
the checker cannot see the failure it claims to check.
"""

from __future__ import annotations

import attrs
import pytest

from tests.checkout_runs import PLAN, run_checked
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.policies import CONTROL_POLICIES, DESIGNATED

# No confirm step: the plan is incomplete, and must be rejected before anything runs.
INCOMPLETE = attrs.evolve(PLAN, calls=PLAN.calls[:3])


@attrs.frozen(kw_only=True)
class Scenario:
    control: str
    deviations: tuple[Deviation, ...]
    plan: Plan = PLAN


SCENARIOS = (
    Scenario(
        control="control-fresh-key",
        deviations=(
            Deviation(
                action="complete", outcome="lost_response_after_commit", tool="charge_payment"
            ),
        ),
    ),
    Scenario(
        control="control-no-saga",
        deviations=(
            Deviation(action="complete", outcome="permanent_error", tool="charge_payment"),
        ),
    ),
    Scenario(
        control="control-dual-write",
        deviations=(Deviation(action="crash", actor="orchestrator-1", after_tool="create_order"),),
    ),
    Scenario(
        control="control-no-dedupe",
        deviations=(Deviation(action="step", outcome="ack_lost", actor="consumer"),),
    ),
    Scenario(control="control-lazy-validation", deviations=(), plan=INCOMPLETE),
)


def test_every_control_has_a_scenario_and_designated_invariants() -> None:
    names = sorted(p.name for p in CONTROL_POLICIES)
    assert sorted(s.control for s in SCENARIOS) == names
    assert sorted(DESIGNATED) == names
    assert all(DESIGNATED[name] for name in names)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.control)
def test_control_fails_a_designated_invariant(scenario: Scenario) -> None:
    chooser = Deviations(scenario.deviations)
    execution = run_checked(scenario.control, (scenario.plan,), chooser=chooser)
    assert execution.error is None and chooser.unused == []
    fired = {f.name for f in execution.failures}
    assert fired & set(DESIGNATED[scenario.control])


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.control)
def test_guarded_passes_the_same_run(scenario: Scenario) -> None:
    chooser = Deviations(scenario.deviations)
    execution = run_checked("guarded", (scenario.plan,), chooser=chooser)
    assert chooser.unused == []
    assert [f.to_json() for f in execution.failures] == []
    assert execution.ok and execution.quiesced


def test_the_controls_fail_for_the_reason_they_exist() -> None:
    fresh = run_checked("control-fresh-key", chooser=Deviations(SCENARIOS[0].deviations))
    assert fresh.failed("no_double_charge") and fresh.failed("retries_reuse_key")
    state = fresh.run.world.state["checkout"]
    assert sorted(state["charges"]) == ["ch_1", "ch_2"]

    lazy = run_checked("control-lazy-validation", (INCOMPLETE,))
    assert [op["tool"] for op in lazy.run.world.operations][:1] == ["create_order"]
    first = next(f for f in lazy.failures if f.name == "rejected_plan_unchanged")
    assert first.messages[0].startswith("orchestrator-1's plan is invalid (incomplete_workflow)")

    dual = run_checked("control-dual-write", chooser=Deviations(SCENARIOS[2].deviations))
    lost = next(f for f in dual.failures if f.name == "consumer_effect_exactly_once")
    assert lost.messages == (
        "event evt_1 (create_order on 'ord_1') consumed 0 times, expected exactly once",
    )
