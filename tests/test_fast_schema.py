"""jsonschema-rs as the fast path: it must agree with jsonschema, the reference, wherever
txcheck uses it, and verdicts must be identical with and without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.strategies import arbitrary_plans, json_values
from txcheck.models import fast_schema
from txcheck.models.contract_loader import load_contract
from txcheck.models.fast_schema import fast_validator, schema_is_safe
from txcheck.models.proposal_parser import load_proposal
from txcheck.models.schema_check import _scan, compile_contract

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = [
    ROOT / "examples/checkout/contract.json",
    ROOT / "examples/custom_service/contract.json",
]
PROPOSALS = sorted((ROOT / "examples/proposals").glob("*.json"))

pytestmark = pytest.mark.skipif(fast_schema._rs is None, reason="jsonschema-rs not installed")


def _agree(schema: Any, value: Any) -> None:
    fast = fast_validator(schema)
    if fast is None or not _scan(value)[2]:
        return
    try:
        quick = fast(value)
    except Exception:
        return
    assert quick == Draft202012Validator(
        schema, format_checker=Draft202012Validator.FORMAT_CHECKER
    ).is_valid(value), (schema, value)


@pytest.mark.parametrize("contract_path", CONTRACTS, ids=lambda p: p.parent.name)
def test_agreement_on_every_example_call(contract_path: Path) -> None:
    contract = load_contract(contract_path)
    compiled = compile_contract(contract)
    assert any(f is not None for f in compiled.fast.values())  # the fast path is in use
    for path in PROPOSALS:
        for call in load_proposal(path).calls:
            validator = compiled.validators.get(call.name)
            if validator is not None and call.arguments is not None:
                _agree(validator.schema, call.arguments)


def test_violations_are_identical_without_the_fast_path() -> None:
    compiled = compile_contract(load_contract(CONTRACTS[0]))
    slow = attrs.evolve(compiled, fast={})
    for path in PROPOSALS:
        for call in load_proposal(path).calls:
            assert compiled.check(call) == slow.check(call)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_violations_are_identical_on_generated_plans(data: Any) -> None:
    contract = load_contract(CONTRACTS[0])
    compiled = compile_contract(contract)
    slow = attrs.evolve(compiled, fast={})
    for call in data.draw(arbitrary_plans(contract)).calls:
        assert compiled.check(call) == slow.check(call)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "email"},
        {"type": "string", "pattern": "^a$"},
        {"patternProperties": {"^x": {}}},
        {"multipleOf": 0.01},
        {"maximum": 2**60},
        {"enum": [1.5, {"$dynamicRef": "#x"}], "$dynamicAnchor": "x"},
    ],
)
def test_schemas_read_differently_are_never_fast(schema: dict[str, Any]) -> None:
    assert not schema_is_safe(schema)
    assert fast_validator(schema) is None


def test_data_keywords_do_not_count_as_schema_keywords() -> None:
    assert schema_is_safe({"enum": [{"format": "x", "pattern": "y"}], "const": {"pattern": 1}})


def test_values_the_fast_path_cannot_judge_go_to_jsonschema() -> None:
    contract = load_contract(CONTRACTS[0])
    compiled = compile_contract(contract)
    call = load_proposal(PROPOSALS[0]).calls[0]
    for odd in ({"order_id": "\ud800"}, {"order_id": 2**60}, {"order_id": float("inf")}):
        odd_call = attrs.evolve(call, name="get_order", arguments=odd)
        assert compiled.check(odd_call) == attrs.evolve(compiled, fast={}).check(odd_call)


# -- generated schemas and values ----------------------------------------------------------

_SCALAR_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null"])
_TYPES = _SCALAR_TYPES | st.lists(_SCALAR_TYPES, min_size=1, max_size=3, unique=True)
_NUMBERS = st.integers(-100, 100) | st.floats(-100, 100, allow_nan=False)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda t: {"type": t}, _TYPES),
        st.builds(lambda v: {"enum": v}, st.lists(json_values(3), min_size=1, max_size=4)),
        st.builds(lambda v: {"const": v}, json_values(3)),
        st.builds(lambda lo: {"minimum": lo}, _NUMBERS),
        st.builds(lambda hi: {"exclusiveMaximum": hi}, _NUMBERS),
        st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(0, 5)),
        st.builds(lambda n: {"minLength": n}, st.integers(0, 5)),
        st.builds(lambda n: {"multipleOf": n}, st.integers(1, 5)),
        st.just({}),
        st.just({"not": {"type": "null"}}),
    )


def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    def extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        names = st.sampled_from(["a", "b", "c"])
        return st.one_of(
            st.builds(
                lambda props, req, extra: {
                    "type": "object",
                    "properties": props,
                    "required": req,
                    **extra,
                },
                st.dictionaries(names, inner, max_size=3),
                st.lists(names, max_size=2, unique=True),
                st.sampled_from(
                    [{}, {"additionalProperties": False}, {"unevaluatedProperties": False}]
                ),
            ),
            st.builds(lambda i: {"type": "array", "items": i}, inner),
            st.builds(lambda i, u: {"items": i, "uniqueItems": u}, inner, st.booleans()),
            st.builds(lambda i: {"prefixItems": i}, st.lists(inner, max_size=2)),
            st.builds(lambda a: {"anyOf": a}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda a: {"oneOf": a}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda a: {"allOf": a}, st.lists(inner, min_size=1, max_size=2)),
            st.builds(lambda c, t: {"if": c, "then": t}, inner, inner),
            st.builds(lambda n: {"minProperties": n}, st.integers(0, 3)),
        )

    return st.recursive(_leaf(), extend, max_leaves=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas(), json_values(10))
def test_agreement_on_generated_schemas_and_values(schema: dict[str, Any], value: Any) -> None:
    _agree(schema, value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas(), st.data())
def test_agreement_on_values_drawn_near_the_schema(schema: dict[str, Any], data: Any) -> None:
    """Values built from the schema's own constants and shapes, where mistakes hide."""
    consts = [v for v in json.loads(json.dumps(schema)).values() if not isinstance(v, dict)]
    value = data.draw(st.sampled_from([*consts, 0, 1, 1.0, True, "", [], {}, [1, 1.0], [0, False]]))
    _agree(schema, value)
