"""Representative plans: one business-consistent plan per workflow, and its double click."""

from __future__ import annotations

from txcheck.exploration.plansets.representative import representative_plans
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract, parse_contract
from txcheck.models.plan.proposal import plan_to_json
from txcheck.models.plan.validation import validate
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.world_rules import WorldBusinessCheck

CONTRACT = default_contract()
FIXTURE = default_fixture()


def test_one_plan_per_workflow_then_the_same_plan_twice() -> None:
    plans = representative_plans(CONTRACT, FIXTURE)
    assert [len(p) for p in plans] == [1, 2]
    single, double = plans
    assert double[0] is single[0] and double[1] is single[0]
    assert [c.name for c in single[0].calls] == list(CONTRACT.workflows[0].steps)


def test_the_checkout_plan_is_valid_at_every_level_including_business() -> None:
    (plan,) = representative_plans(CONTRACT, FIXTURE)[0]
    verdict = validate(CONTRACT, plan, business=WorldBusinessCheck(fixture=FIXTURE))
    assert verdict.valid, verdict.violations
    assert "business" in verdict.levels_checked


def test_the_checkout_plan_uses_a_new_order_one_key_per_call_and_the_total() -> None:
    (plan,) = representative_plans(CONTRACT, FIXTURE)[0]
    args = [dict(c.arguments or {}) for c in plan.calls]
    orders = {a["order_id"] for a in args}
    assert len(orders) == 1
    assert orders.isdisjoint(FIXTURE.document["orders"])
    keys = [a["idempotency_key"] for a in args]
    assert len(set(keys)) == len(keys) == 4
    catalog = FIXTURE.document["catalog"]
    total = sum(catalog[i["sku"]]["price"] * i["quantity"] for i in args[0]["items"])
    assert args[2]["amount"] == total
    assert args[0]["currency"] == args[2]["currency"]


def test_plans_are_deterministic() -> None:
    first = [[plan_to_json(p) for p in ps] for ps in representative_plans(CONTRACT, FIXTURE)]
    again = [[plan_to_json(p) for p in ps] for ps in representative_plans(CONTRACT, FIXTURE)]
    assert first == again


def _contract_without_workflows() -> Contract:
    schema = {
        "type": "object",
        "properties": {
            "account": {"type": "string", "minLength": 3},
            "points": {"type": "integer", "minimum": 5},
            "key": {"type": "string", "minLength": 12},
        },
        "required": ["account", "points"],
        "additionalProperties": False,
    }
    tool = {
        "name": "grant_points",
        "description": "Grant loyalty points.",
        "input_schema": schema,
        "x-txcheck": {"effect": "write", "resource": "account", "idempotency_key": "key"},
    }
    reader = {
        "name": "read_points",
        "description": "Read points.",
        "input_schema": {"type": "object", "properties": {}},
        "x-txcheck": {"effect": "read"},
    }
    return parse_contract({"tools": [tool, reader], "workflows": []})


def test_a_contract_without_workflows_gets_one_plan_per_write_tool() -> None:
    contract = _contract_without_workflows()
    plans = representative_plans(contract, FIXTURE)
    assert [[c.name for c in p[0].calls] for p in plans] == [["grant_points"], ["grant_points"]]
    plan = plans[0][0]
    assert validate(contract, plan).valid, validate(contract, plan).violations
    arguments = dict(plan.calls[0].arguments or {})
    assert arguments["points"] == 5 and len(arguments["key"]) >= 12
