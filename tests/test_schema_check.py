"""Level 2: per-tool JSON Schema checks, the strict closure and the stable codes."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from tests.strategies import call
from txcheck.models.errors import ContractError
from txcheck.models.plan import schema_check
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.schema_check import closed_schema, compile_contract, nesting_depth
from txcheck.models.plan.verdict import Violation


def contract_with(schema: dict[str, Any], *, strict: bool = False) -> Contract:
    return Contract(tools={"t": Tool(name="t", parameters=schema, strict=strict)})


def check(schema: dict[str, Any], arguments: Any, *, strict: bool = False) -> list[Violation]:
    compiled = compile_contract(contract_with(schema, strict=strict))
    return compiled.check(call("c1", "t", arguments))


def pairs(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.code, v.message) for v in violations]


INT = {"type": "object", "properties": {"n": {"type": "integer"}}}


# -- types: never coerced ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "got"),
    [("1", 'the string "1"'), (True, "true"), (1.5, "the number 1.5"), (None, "null")],
)
def test_integer_rejects_strings_booleans_fractions_and_null(value: Any, got: str) -> None:
    assert pairs(check(INT, {"n": value})) == [
        ("type_mismatch", f"$.n: expected integer, got {got}")
    ]


def test_integer_accepts_integral_numbers() -> None:
    # JSON Schema: 1.0 is an integer (numbers by value).
    assert check(INT, {"n": 1}) == []
    assert check(INT, {"n": 1.0}) == []


def test_number_rejects_booleans() -> None:
    assert [v.code for v in check({"properties": {"x": {"type": "number"}}}, {"x": False})] == [
        "type_mismatch"
    ]


def test_type_list_is_named_in_the_message() -> None:
    schema = {"properties": {"x": {"type": ["string", "null"]}}}
    assert pairs(check(schema, {"x": 3})) == [
        ("type_mismatch", "$.x: expected string or null, got the number 3")
    ]


# -- required ---------------------------------------------------------------------------


def test_each_missing_required_argument_is_one_violation_at_its_own_path() -> None:
    schema = {"type": "object", "required": ["a", "b", "c"]}
    assert pairs(check(schema, {"b": 1})) == [
        ("missing_required", "$.a: required argument is missing"),
        ("missing_required", "$.c: required argument is missing"),
    ]


def test_nested_missing_property_keeps_the_json_path() -> None:
    contract = default_contract()
    arguments = {
        "order_id": "o1",
        "customer_id": "c",
        "currency": "USD",
        "items": [{"sku": "a", "quantity": 1}, {"quantity": 1}],
    }
    violations = compile_contract(contract).check(call("c1", "create_order", arguments))
    assert pairs(violations) == [
        ("missing_required", "$.items[1].sku: required property is missing")
    ]


def test_present_required_arguments_pass() -> None:
    assert check({"type": "object", "required": ["a"]}, {"a": None}) == []


# -- unknown arguments ------------------------------------------------------------------


CLOSED = {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False}


def test_one_violation_per_unknown_argument() -> None:
    assert pairs(check(CLOSED, {"a": 1, "z": 1, "force": True})) == [
        ("unknown_argument", "$.z: unknown argument (expected only a, b)"),
        ("unknown_argument", "$.force: unknown argument (expected only a, b)"),
    ]


def test_pattern_properties_are_not_unknown() -> None:
    schema = {**CLOSED, "patternProperties": {"^x_": {}}}
    assert [v.message for v in check(schema, {"x_1": 1, "y": 2})] == [
        "$.y: unknown argument (expected only a, b)"
    ]


def test_open_schema_accepts_extra_arguments_unless_the_tool_is_strict() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}
    arguments = {"a": {"deep": 1}, "top": 2}
    assert check(schema, arguments) == []
    assert pairs(check(schema, arguments, strict=True)) == [
        ("unknown_argument", "$.a.deep: unknown property (expected none)"),
        ("unknown_argument", "$.top: unknown argument (expected only a)"),
    ]


def test_strict_closure_sees_through_all_of() -> None:
    schema = {"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}
    assert check(schema, {"a": 1, "b": 2}, strict=True) == []
    assert [v.message for v in check(schema, {"a": 1, "b": 2, "c": 3}, strict=True)] == [
        "$.c: unknown argument (expected none)"
    ]


def test_strict_closure_reaches_array_items_and_refs() -> None:
    schema = {
        "$defs": {"item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
    }
    violations = check(schema, {"items": [{"sku": "a"}, {"sku": "b", "qty": 1}]}, strict=True)
    assert [(v.code, v.message.split(":")[0]) for v in violations] == [
        ("unknown_argument", "$.items[1].qty")
    ]


def test_strict_keeps_an_explicit_additional_properties() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": True}
    assert check(schema, {"a": 1, "b": 2}, strict=True) == []


def test_closed_schema_is_a_copy_with_every_object_level_closed() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "s": {"type": "string"},
            "any": {},
        },
        "anyOf": [{"required": ["a"]}, {"required": ["s"]}],
        "not": {"type": "object", "properties": {"x": {}}},
    }
    assert closed_schema(schema) == {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                "properties": {"b": {"type": "string"}},
                "additionalProperties": False,
            },
            "s": {"type": "string"},
            "any": {},
        },
        "anyOf": [{"required": ["a"]}, {"required": ["s"]}],
        "not": {"type": "object", "properties": {"x": {}}},
        "unevaluatedProperties": False,
    }
    assert "additionalProperties" not in schema["properties"]["a"]  # the input is untouched


# -- enum and const ---------------------------------------------------------------------


def test_enum_and_const_keep_booleans_apart_from_numbers() -> None:
    schema = {"properties": {"e": {"enum": [1, "USD"]}, "c": {"const": 1}}}
    assert pairs(check(schema, {"e": True, "c": True})) == [
        ("enum_violation", '$.e: expected one of 1, "USD", got true'),
        ("enum_violation", "$.c: expected 1, got true"),
    ]
    assert check(schema, {"e": 1.0, "c": 1.0}) == []


# -- out of range -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keyword", "limit", "bad", "good", "message"),
    [
        ("minimum", 1, 0, 1, "expected a number >= 1, got the number 0"),
        ("maximum", 10, 11, 10, "expected a number <= 10, got the number 11"),
        ("exclusiveMinimum", 0, 0, 1, "expected a number > 0, got the number 0"),
        ("exclusiveMaximum", 5, 5, 4.5, "expected a number < 5, got the number 5"),
        ("minLength", 3, "ab", "abc", 'expected at least 3 characters, got 2 (the string "ab")'),
        ("maxLength", 2, "abc", "ab", 'expected at most 2 characters, got 3 (the string "abc")'),
        (
            "pattern",
            "^[a-z]+$",
            "A1",
            "ab",
            'expected a string matching "^[a-z]+$", got the string "A1"',
        ),
        ("minItems", 1, [], [1], "expected at least 1 items, got 0 (an empty array)"),
        ("maxItems", 1, [1, 2], [1], "expected at most 1 items, got 2 (an array of 2 items)"),
        ("multipleOf", 5, 7, 10, "expected a multiple of 5, got the number 7"),
        (
            "uniqueItems",
            True,
            [1, 1],
            [1, True],
            "expected unique items, got an array of 2 items with repeats",
        ),
        (
            "minProperties",
            1,
            {},
            {"a": 1},
            "expected at least 1 properties, got 0 (an empty object)",
        ),
        (
            "maxProperties",
            0,
            {"a": 1},
            {},
            'expected at most 0 properties, got 1 (an object with keys "a")',
        ),
    ],
)
def test_limits_are_out_of_range(
    keyword: str, limit: Any, bad: Any, good: Any, message: str
) -> None:
    schema = {"properties": {"x": {keyword: limit}}}
    assert pairs(check(schema, {"x": bad})) == [("out_of_range", f"$.x: {message}")]
    assert check(schema, {"x": good}) == []


def test_format_is_checked() -> None:
    schema = {"properties": {"when": {"type": "string", "format": "date"}}}
    assert pairs(check(schema, {"when": "2024-13-45"})) == [
        ("out_of_range", "$.when: expected a valid 'date', got the string \"2024-13-45\"")
    ]
    assert check(schema, {"when": "2024-02-29"}) == []


# -- anything else ----------------------------------------------------------------------


def test_other_keywords_are_schema_violations() -> None:
    schema = {"properties": {"x": {"not": {"type": "string"}}}, "dependentRequired": {"a": ["b"]}}
    assert [v.code for v in check(schema, {"x": "s", "a": 1})] == [
        "schema_violation",
        "schema_violation",
    ]
    assert check(schema, {"x": 1, "a": 1, "b": 2}) == []


def test_any_of_reports_the_deepest_matching_branch() -> None:
    schema = {
        "properties": {
            "e": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "object", "properties": {"x": {"type": "integer"}}},
                ]
            }
        }
    }
    assert pairs(check(schema, {"e": {"x": "s"}})) == [
        ("type_mismatch", '$.e.x: expected integer, got the string "s"')
    ]


def test_one_of_matching_twice_is_a_schema_violation() -> None:
    schema = {"properties": {"e": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}}
    assert [v.code for v in check(schema, {"e": 1})] == ["schema_violation"]


# -- robustness -------------------------------------------------------------------------


def nest(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def test_deep_arguments_get_a_violation_not_a_recursion_error() -> None:
    violations = check({"properties": {"x": {"enum": [1]}}}, {"x": nest(100_000)})
    assert pairs(violations) == [
        ("schema_violation", "$: arguments nest 100001 levels deep; at most 256 are checked")
    ]


def test_a_recursive_schema_on_deep_arguments_does_not_crash() -> None:
    schema = {
        "$defs": {"n": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/n"}}},
        "properties": {"x": {"$ref": "#/$defs/n"}},
    }
    assert check(schema, {"x": nest(20)}) == []
    # Within the depth limit, but deeper than jsonschema's recursion can go on this schema.
    violations = check(schema, {"x": nest(250)})
    assert [v.code for v in violations] in ([], ["schema_violation"])


def test_integers_too_long_to_print_are_out_of_range() -> None:
    violations = check({"properties": {"x": {"maximum": 5}}}, {"x": [10**50_000]})
    assert pairs(violations) == [
        (
            "out_of_range",
            "$.x[0]: expected a number of at most 4275 digits, got a number of about 50000 digits",
        )
    ]


def test_nesting_depth() -> None:
    assert nesting_depth(1) == 0
    assert nesting_depth({}) == 1
    assert nesting_depth({"a": [1, {"b": []}]}) == 4


def test_an_invalid_schema_is_a_contract_error() -> None:
    with pytest.raises(ContractError, match="'t': parameters must be a valid JSON Schema"):
        compile_contract(contract_with({"type": 5}))


# -- compiled once ----------------------------------------------------------------------


def test_validators_are_compiled_once_per_contract_object(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Contract] = []
    original = schema_check.CompiledContract.build

    def counting(contract: Contract) -> schema_check.CompiledContract:
        built.append(contract)
        return original(contract)

    monkeypatch.setattr(schema_check.CompiledContract, "build", staticmethod(counting))
    first = contract_with(INT)
    second = contract_with(INT)  # equal by value, but a different object
    assert first == second
    compiled = compile_contract(first)
    assert compile_contract(first) is compiled
    assert compile_contract(second) is not compiled
    assert built == [first, second]


def test_the_cache_forgets_a_contract_once_it_is_gone() -> None:
    contract = contract_with(INT)
    compile_contract(contract)
    assert contract in schema_check._COMPILED
    held = len(schema_check._COMPILED)
    del contract
    gc.collect()
    assert len(schema_check._COMPILED) == held - 1
