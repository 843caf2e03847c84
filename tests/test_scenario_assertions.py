"""The scenario assertion vocabulary: each records name, expected, actual and passed."""

from __future__ import annotations

import pytest

from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS as INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.scenarios.assertions import (
    Evidence,
    charges,
    compensation_order,
    no_side_effects,
    verdict_codes,
)
from txcheck.scenarios.plans import CHARGE_WITHOUT_AMOUNT, CHECKOUT


def _evidence(policy: str, plan: Plan, *deviations: Deviation) -> Evidence:
    found = builtin_policy(policy)
    assert found is not None
    execution = execute(
        Target(
            policy=found,
            contract=default_contract(),
            fixture=default_fixture(),
            invariants=INVARIANTS,
        ),
        [plan],
        chooser=Deviations(deviations),
        stop_at_first=False,
    )
    return Evidence(execution=execution, before={})


@pytest.fixture(scope="module")
def declined() -> Evidence:
    return _evidence(
        "guarded",
        CHECKOUT,
        Deviation(action="complete", outcome="permanent_error", tool="charge_payment"),
    )


def test_a_passing_assertion_records_its_values(declined: Evidence) -> None:
    result = compensation_order(["reserve_inventory", "create_order"]).evaluate(declined)
    assert result.to_json() == {
        "name": "compensation_order",
        "op": "==",
        "expected": ["reserve_inventory", "create_order"],
        "actual": ["reserve_inventory", "create_order"],
        "passed": True,
    }


def test_a_wrong_order_fails_and_shows_the_actual_one(declined: Evidence) -> None:
    result = compensation_order(("create_order", "reserve_inventory")).evaluate(declined)
    assert not result.passed
    assert result.expected == ["create_order", "reserve_inventory"]  # tuples become lists
    assert result.actual == ["reserve_inventory", "create_order"]


def test_no_side_effects_lists_what_was_committed(declined: Evidence) -> None:
    result = no_side_effects().evaluate(declined)
    assert not result.passed
    assert result.actual == [
        "op 1: create_order on 'ord_1'",
        "op 2: reserve_inventory on 'ord_1'",
        "op 3: release_inventory on 'ord_1'",
        "op 4: cancel_order on 'ord_1'",
        "the services' state changed",
    ]


def test_includes_is_a_superset_check() -> None:
    lazy = _evidence("control-lazy-validation", CHARGE_WITHOUT_AMOUNT)
    assert verdict_codes("missing_required").evaluate(lazy).passed
    missing = verdict_codes("missing_required", "cycle").evaluate(lazy)
    assert not missing.passed and missing.actual == ["missing_required"]
    assert charges(0).evaluate(lazy).passed
