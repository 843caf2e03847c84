"""Whole-plan validation: every code at every level, each with a valid twin."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.strategies import (
    arbitrary_plans,
    arguments_from_schema,
    call,
    checkout_calls,
    plan_of,
)
from txcheck.models.plan.business import NO_WORLD, BusinessCheck
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.plan.validation import validate
from txcheck.models.plan.verdict import Violation

CONTRACT = default_contract()


def checkout(order: str = "o1") -> list[Call]:
    return [call(f"call_{i + 1}", n, a) for i, (n, a) in enumerate(checkout_calls(order))]


def codes(*calls: Call, business: BusinessCheck | None = None) -> list[str]:
    return validate(CONTRACT, plan_of(*calls), business=business).codes()


def test_a_complete_checkout_is_valid() -> None:
    verdict = validate(CONTRACT, plan_of(*checkout()))
    assert verdict.valid
    assert verdict.levels_checked == ("json", "schema", "plan")
    assert verdict.levels_skipped == {"business": NO_WORLD}
    assert verdict.plan["order"] == ["call_1", "call_2", "call_3", "call_4"]


def test_an_empty_plan_is_valid() -> None:
    verdict = validate(CONTRACT, Plan(calls=()))
    assert verdict.valid
    assert verdict.plan == {"order": [], "parallel_groups": [], "edges": []}


# -- json ------------------------------------------------------------------------------


def test_unparsed_arguments_are_invalid_json_and_not_schema_checked() -> None:
    bad = call("r", "get_order", None, json_error="'arguments' is not valid JSON: NaN")
    verdict = validate(CONTRACT, plan_of(*checkout(), bad))
    assert [(v.level, v.code, v.call, v.message) for v in verdict.violations] == [
        ("json", "invalid_json", "r", "'arguments' is not valid JSON: NaN")
    ]
    assert codes(*checkout(), call("r", "get_order", {"order_id": "o1"})) == []


# -- schema ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"amount": "12.50"}, "type_mismatch"),
        ({"amount": True}, "type_mismatch"),
        ({"force": True}, "unknown_argument"),
        ({"currency": "GBP"}, "enum_violation"),
        ({"amount": 0}, "out_of_range"),
        ({"idempotency_key": "short"}, "out_of_range"),
    ],
)
def test_schema_codes_and_their_valid_twin(change: dict[str, Any], code: str) -> None:
    calls = checkout()
    charge = calls[2]
    calls[2] = call("call_3", "charge_payment", {**dict(charge.arguments or {}), **change})
    assert codes(*calls) == [code]
    assert codes(*checkout()) == []


def test_missing_required_and_its_twin() -> None:
    calls = checkout()
    arguments = dict(calls[2].arguments or {})
    del arguments["currency"]
    calls[2] = call("call_3", "charge_payment", arguments)
    assert codes(*calls) == ["missing_required"]


# -- plan ------------------------------------------------------------------------------


def test_unknown_tool_is_not_schema_checked_and_suggests_a_name() -> None:
    verdict = validate(CONTRACT, plan_of(call("x", "chrage_payment", {"anything": 1})))
    assert [(v.code, v.message) for v in verdict.violations] == [
        (
            "unknown_tool",
            "\"chrage_payment\" is not a tool of the contract (did you mean 'charge_payment'?)",
        )
    ]
    assert codes(call("x", "get_order", {"order_id": "o1"})) == []


def test_duplicate_call_id_and_its_twin() -> None:
    first = call("a", "get_order", {"order_id": "o1"})
    assert codes(first, call("a", "get_order", {"order_id": "o2"})) == ["duplicate_call_id"]
    assert codes(first, call("b", "get_order", {"order_id": "o2"})) == []


def test_missing_idempotency_key_even_when_the_schema_does_not_require_it() -> None:
    calls = checkout()
    arguments = dict(calls[3].arguments or {})
    del arguments["idempotency_key"]  # confirm_order's schema does not require it
    calls[3] = call("call_4", "confirm_order", arguments)
    verdict = validate(CONTRACT, plan_of(*calls))
    assert verdict.codes() == ["missing_idempotency_key"]
    assert verdict.violations[0].message.startswith(
        "confirm_order is an irreversible call without its idempotency key 'idempotency_key'"
    )
    # A read needs no key.
    assert codes(call("r", "get_order", {"order_id": "o1"})) == []


def test_a_null_key_is_a_missing_key() -> None:
    calls = checkout()
    calls[1] = call("call_2", "reserve_inventory", {"order_id": "o1", "idempotency_key": None})
    assert sorted(codes(*calls)) == ["missing_idempotency_key", "type_mismatch"]


def test_one_key_on_two_tools_is_a_different_intent() -> None:
    calls = checkout()
    calls[3] = call("call_4", "confirm_order", {"order_id": "o1", "idempotency_key": "o1-charge"})
    verdict = validate(CONTRACT, plan_of(*calls))
    assert verdict.codes() == ["duplicate_key_different_intent"]
    assert verdict.violations[0].call == "call_4"


def test_one_key_with_other_arguments_names_what_differs() -> None:
    calls = checkout()
    again = {**dict(calls[2].arguments or {}), "amount": 999}
    verdict = validate(
        CONTRACT, plan_of(*calls[:3], call("call_5", "charge_payment", again), calls[3])
    )
    assert verdict.codes() == ["duplicate_key_different_intent"]
    assert "charge_payment with different amount" in verdict.violations[0].message


def test_identical_calls_sharing_a_key_are_valid() -> None:
    calls = checkout()
    same = dict(reversed(list((calls[2].arguments or {}).items())))  # other key order
    same["amount"] = 1250.0  # the same number
    assert codes(*calls, call("call_5", "charge_payment", same)) == []


def test_keys_compare_by_type() -> None:
    # "k" keys of other types are other keys; a refund's key is its charge_id.
    refund = {"charge_id": "ch_1", "reason": "duplicate"}
    assert (
        codes(
            call("a", "refund_payment", refund),
            call("b", "refund_payment", refund),
        )
        == []
    )
    assert codes(
        call("a", "refund_payment", refund),
        call("b", "refund_payment", {**refund, "reason": "other"}),
    ) == ["duplicate_key_different_intent"]


def test_plan_graph_codes_come_through() -> None:
    create, reserve, charge, confirm = checkout()
    assert codes(create, charge, reserve, confirm) == ["dependency_too_early"]
    assert codes(create, reserve, charge) == ["incomplete_workflow"]
    looped = call("r", "get_order", {"order_id": "o1"}, depends_on=["r"])
    assert codes(create, reserve, charge, confirm, looped) == ["cycle"]


# -- all at once, in order --------------------------------------------------------------


def test_every_violation_is_listed_by_level_then_position() -> None:
    verdict = validate(
        CONTRACT,
        plan_of(
            call("a", "charge_payment", {"order_id": "o1", "amount": "1", "currency": "USD"}),
            call("b", "nope", {}),
            call("a", "get_order", None, json_error="bad"),
        ),
    )
    assert [(v.level, v.code, v.call) for v in verdict.violations] == [
        ("json", "invalid_json", "a"),
        ("schema", "type_mismatch", "a"),
        ("plan", "missing_idempotency_key", "a"),
        ("plan", "incomplete_workflow", "a"),
        ("plan", "unknown_tool", "b"),
        ("plan", "duplicate_call_id", "a"),
    ]
    assert verdict.to_json()["valid"] is False


# -- business extension point -----------------------------------------------------------


class Recorder:
    """A business check that records what it saw and rejects one tool."""

    def __init__(self, reject: str | None = None) -> None:
        self.seen: list[str] = []
        self.reject = reject

    def check(self, contract: Contract, calls: Sequence[Call]) -> Iterable[Violation]:
        self.seen = [c.id for c in calls]
        for c in calls:
            if c.name == self.reject:
                yield Violation(code="amount_mismatch", level="business", call=c.id, message="no")


def test_business_sees_well_formed_calls_in_execution_order() -> None:
    recorder = Recorder()
    assert isinstance(recorder, BusinessCheck)
    calls = [*checkout(), call("bad", "get_order", {"order_id": 5}), call("u", "nope", {})]
    verdict = validate(CONTRACT, plan_of(*calls), business=recorder)
    assert recorder.seen == ["call_1", "call_2", "call_3", "call_4"]
    assert verdict.levels_checked == ("json", "schema", "business", "plan")
    assert verdict.levels_skipped == {}


def test_business_violations_are_reported_at_their_level() -> None:
    verdict = validate(CONTRACT, plan_of(*checkout()), business=Recorder("charge_payment"))
    assert [(v.level, v.code, v.call) for v in verdict.violations] == [
        ("business", "amount_mismatch", "call_3")
    ]


# -- properties -------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(arbitrary_plans(CONTRACT))
def test_validation_never_raises_and_is_deterministic(plan: Plan) -> None:
    verdict = validate(CONTRACT, plan)
    assert verdict.valid == (not verdict.violations)
    assert validate(CONTRACT, plan).to_json() == verdict.to_json()
    ids = {c.id for c in plan.calls}
    assert set(verdict.plan["order"]) == ids
    assert sorted(i for g in verdict.plan["parallel_groups"] for i in g) == sorted(ids)
    for v in verdict.violations:
        assert v.call is None or v.call in ids
        assert "\n" not in v.message


def _schema_argument_strategies() -> dict[str, st.SearchStrategy[dict[str, Any]]]:
    return {name: arguments_from_schema(tool.parameters) for name, tool in CONTRACT.tools.items()}


ARGUMENTS = _schema_argument_strategies()
TOOL_NAMES = sorted(ARGUMENTS)


@st.composite
def valid_call_arguments(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(TOOL_NAMES))
    arguments = draw(ARGUMENTS[name])
    # hypothesis-jsonschema targets older drafts: re-check under Draft 2020-12.
    validator = Draft202012Validator(
        dict(CONTRACT.tools[name].parameters), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    assert validator.is_valid(arguments)
    return name, arguments


def _schema_codes(name: str, arguments: dict[str, Any]) -> list[str]:
    verdict = validate(CONTRACT, Plan.of((name, arguments)))
    return [v.code for v in verdict.violations if v.level == "schema"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_call_arguments())
def test_arguments_valid_under_the_schema_pass_the_schema_level(
    drawn: tuple[str, dict[str, Any]],
) -> None:
    assert _schema_codes(*drawn) == []


_WRONG = {"string": 12345, "integer": "1", "number": True, "array": "x", "object": ["x"]}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_call_arguments(), st.data())
def test_a_single_mutation_is_caught_with_its_code(
    drawn: tuple[str, dict[str, Any]], data: st.DataObject
) -> None:
    name, arguments = drawn
    schema = CONTRACT.tools[name].parameters
    mutation = data.draw(st.sampled_from(["wrong_type", "drop_required", "add_unknown"]))
    mutated = copy.deepcopy(arguments)
    if mutation == "wrong_type":
        field = data.draw(st.sampled_from(sorted(mutated)))
        mutated[field] = _WRONG[schema["properties"][field]["type"]]
        expected = "type_mismatch"
    elif mutation == "drop_required":
        field = data.draw(st.sampled_from(sorted(schema["required"])))
        del mutated[field]
        expected = "missing_required"
    else:
        field = data.draw(st.text(min_size=1).filter(lambda k: k not in schema["properties"]))
        mutated[field] = data.draw(st.none() | st.booleans() | st.integers())
        expected = "unknown_argument"
    found = _schema_codes(name, mutated)
    assert expected in found
    assert set(found) <= {expected, "enum_violation"}  # a wrong-typed enum also misses it
