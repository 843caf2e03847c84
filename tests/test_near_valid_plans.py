"""Near-valid plans: the representative plan one mistake away, rejected whole by guarded."""

from __future__ import annotations

import sys
from pathlib import Path

from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.representative import (
    NEAR_VALID,
    near_valid_plans,
    representative_plans,
)
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract, parse_contract
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.plan.validation import validate
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import policies

CONTRACT = default_contract()
FIXTURE = default_fixture()
(SINGLE,) = representative_plans(CONTRACT, FIXTURE)[0]


def _codes(plan_set: tuple[Plan, ...]) -> set[str]:
    (plan,) = plan_set
    return {v.code for v in validate(CONTRACT, plan).violations}


def test_one_variant_per_mistake_each_invalid_for_its_own_reason() -> None:
    variants = near_valid_plans(CONTRACT, FIXTURE)
    assert len(variants) == len(NEAR_VALID) == 4
    assert all(len(v) == 1 for v in variants)
    wrong_type, missing_key, swapped, dropped = (_codes(v) for v in variants)
    assert "type_mismatch" in wrong_type
    assert missing_key == {"missing_idempotency_key"}
    assert swapped == {"dependency_too_early"}
    assert dropped == {"incomplete_workflow"}


def test_each_variant_changes_one_thing_after_the_first_call() -> None:
    first = plan_to_json(SINGLE)["calls"]
    wrong, missing, swapped, dropped = (
        plan_to_json(p)["calls"] for (p,) in near_valid_plans(CONTRACT, FIXTURE)
    )
    assert [i for i, (a, b) in enumerate(zip(wrong, first, strict=True)) if a != b] == [1]
    assert wrong[1]["arguments"] == {**first[1]["arguments"], "order_id": 0}
    assert [i for i, (a, b) in enumerate(zip(missing, first, strict=True)) if a != b] == [3]
    assert "idempotency_key" not in missing[3]["arguments"]
    assert [c["name"] for c in swapped] == [c["name"] for c in (*first[:2], first[3], first[2])]
    assert dropped == first[:-1]


def test_variants_are_deterministic() -> None:
    first = [plan_to_json(p) for (p,) in near_valid_plans(CONTRACT, FIXTURE)]
    assert first == [plan_to_json(p) for (p,) in near_valid_plans(CONTRACT, FIXTURE)]


def test_guarded_rejects_every_variant_before_any_call() -> None:
    for plans in near_valid_plans(CONTRACT, FIXTURE):
        execution = execute(
            Target(
                policy=Guarded(), contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
            ),
            plans,
        )
        assert execution.ok and execution.run.world.operations == []
        assert execution.run.world.journals["orchestrator-1"][-1]["phase"] == "REJECTED"


def test_a_partial_validator_commits_writes_on_a_variant() -> None:
    """The positive control: the validation mutants fail on some variant at once."""
    for policy in (policies.ValidateFirstCallOnly(), policies.ValidateListOrder()):
        fired = set()
        for plans in near_valid_plans(CONTRACT, FIXTURE):
            execution = execute(
                Target(
                    policy=policy, contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
                ),
                plans,
            )
            fired |= {f.name for f in execution.failures}
        assert "rejected_plan_unchanged" in fired


def test_a_one_call_workflow_gets_no_swap_and_no_drop() -> None:
    tool = {
        "name": "grant_points",
        "description": "Grant loyalty points.",
        "input_schema": {
            "type": "object",
            "properties": {"account": {"type": "string"}, "key": {"type": "string"}},
            "required": ["account"],
            "additionalProperties": False,
        },
        "x-txcheck": {"effect": "write", "resource": "account", "idempotency_key": "key"},
    }
    contract = parse_contract(
        {"tools": [tool], "workflows": [{"name": "g", "steps": ["grant_points"]}]}
    )
    variants = near_valid_plans(contract, FIXTURE)
    codes = [{v.code for v in validate(contract, p).violations} for (p,) in variants]
    assert codes == [{"type_mismatch"}, {"missing_idempotency_key"}]
