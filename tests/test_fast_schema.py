"""jsonschema-rs as the fast path: it must agree with jsonschema, the reference, wherever
txcheck uses it, and verdicts must be identical with and without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.strategies import arbitrary_plans, json_values
from tests.strategies import call as make_call
from txcheck.cli import main
from txcheck.models.errors import ContractError
from txcheck.models.plan import fast_schema
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_loader import load_contract
from txcheck.models.plan.fast_schema import fast_validator, schema_is_safe
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.plan.schema_check import _scan, compile_contract

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
        {"type": "string", "pattern": "^(?=a)"},  # not run by the linear engine
        {"patternProperties": {"(a)\\1": {}}},
        {"multipleOf": 0.01},
        {"multipleOf": 3},  # jsonschema-rs divides in floating point, txcheck exactly
        {"maximum": 2**60},
        {"enum": [1.5, {"$dynamicRef": "#x"}], "$dynamicAnchor": "x"},
        {"properties": {"a": {"$id": "https://example.com/a", "type": "string"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"properties": {"a b": {}, "c": {"$ref": "#/properties/a%20b"}}},
    ],
)
def test_schemas_read_differently_are_never_fast(schema: dict[str, Any]) -> None:
    assert not schema_is_safe(schema)
    assert fast_validator(schema) is None


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a$"},
        {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
        {"$id": "https://example.com/root", "$defs": {"a": {}}, "$ref": "#/$defs/a"},
    ],
)
def test_patterns_are_fast_the_reference_runs_them_on_the_same_engine(
    schema: dict[str, Any],
) -> None:
    assert schema_is_safe(schema)
    assert fast_validator(schema) is not None


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


# -- the schema's structure decides, never the names in it (issue 31) ----------------------

DATA_WORDS = ["default", "enum", "const", "examples"]
IPV4 = {"type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"}}}


@pytest.mark.parametrize("name", DATA_WORDS)
def test_a_format_under_a_property_named_like_a_data_keyword_is_seen(name: str) -> None:
    schema = {"type": "object", "properties": {name: IPV4}}
    assert not schema_is_safe(schema)
    assert fast_validator(schema) is None


@pytest.mark.parametrize("holder", ["patternProperties", "$defs", "dependentSchemas"])
def test_a_format_under_a_map_of_subschemas_named_like_a_data_keyword_is_seen(
    holder: str,
) -> None:
    assert not schema_is_safe({holder: {"default": {"format": "ipv4"}}})


def test_a_ref_into_data_makes_that_data_a_schema() -> None:
    assert not schema_is_safe({"$ref": "#/default", "default": {"format": "ipv4"}})
    assert schema_is_safe({"default": {"format": "ipv4"}, "properties": {"a": {}}})


def test_a_ref_loop_is_never_fast() -> None:
    assert not schema_is_safe({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})


def _lookup_contract(tmp_path: Path, name: str) -> Path:
    tool = {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {name: IPV4},
                "required": [name],
                "additionalProperties": False,
            },
        },
        "x-txcheck": {"effect": "read"},
    }
    path = tmp_path / "contract.json"
    path.write_text(json.dumps({"tools": [tool]}), "utf-8")
    return path


def _lookups(name: str, *ips: str) -> dict[str, Any]:
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({name: {"ip": ip}})},
        }
        for i, ip in enumerate(ips, start=1)
    ]
    return {"role": "assistant", "tool_calls": calls}


@pytest.mark.parametrize("name", DATA_WORDS)
def test_validate_finds_the_bad_ip_in_a_second_call(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _lookup_contract(tmp_path, name)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_lookups(name, "1.2.3.4", "not-an-ip")), "utf-8")
    assert main(["validate", str(contract), str(plan), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert not verdict["valid"]
    assert [(v["code"], v["call"]) for v in verdict["violations"]] == [("out_of_range", "c2")]


def test_score_does_not_pass_the_bad_ip_in_a_second_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _lookup_contract(tmp_path, "default")
    proposal = _lookups("default", "1.2.3.4", "not-an-ip")
    expected = [
        {"name": "lookup", "arguments": {"default": {"ip": ip}}} for ip in ("1.2.3.4", "not-an-ip")
    ]
    case = {"id": "two", "proposal": proposal, "expect": {"calls": expected}}
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n", "utf-8")
    assert main(["score", str(contract), str(cases), "--json"]) == 1
    strict = json.loads(capsys.readouterr().out)["cases"][0]["strict"]
    assert not strict["pass"]
    assert [v["code"] for v in strict["violations"]] == ["out_of_range"]


def test_a_ref_loop_gets_one_verdict_whichever_call_it_is() -> None:
    """A contract built in code skips the loader's checks; compiling it still refuses the
    loop, so no verdict (first call: jsonschema; later calls: jsonschema-rs) is given."""
    loop = {
        "type": "object",
        "$defs": {"a": {"$ref": "#/$defs/a"}},
        "properties": {"x": {"$ref": "#/$defs/a"}},
    }
    contract = Contract(tools={"t": Tool(name="t", parameters=loop)})
    with pytest.raises(ContractError, match="loops"):
        compile_contract(contract)


def test_a_ref_loop_in_a_contract_file_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _lookup_contract(tmp_path, "a")
    document = json.loads(contract.read_text("utf-8"))
    parameters = document["tools"][0]["function"]["parameters"]
    parameters["$defs"] = {"a": {"$ref": "#/$defs/a"}}
    parameters["properties"]["a"] = {"$ref": "#/$defs/a"}
    contract.write_text(json.dumps(document), "utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_lookups("a", "1.2.3.4", "1.2.3.4")), "utf-8")
    assert main(["validate", str(contract), str(plan)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f" {contract}:1: " in err[0]
    assert "at $.tools[0].function.parameters.$defs.a.$ref " in err[0]
    assert "loops" in err[0]


# -- generated: property names that are JSON Schema keywords -------------------------------

KEYWORD_NAMES = [
    "default", "enum", "const", "examples", "format", "pattern", "properties", "$ref",
    "$defs", "items", "not", "allOf", "required", "type", "patternProperties", "minimum",
    "multipleOf", "a",
]  # fmt: skip
_NAMES = st.sampled_from(DATA_WORDS) | st.sampled_from(KEYWORD_NAMES)  # data words: often
_STRINGS = st.sampled_from(
    ["1.2.3.4", "not-an-ip", "2024-02-30", "2024-01-31", "a@b.c", "abc", "ab", "5", "d]", "٣", ""]
)
_DATA = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, 1.0]) | _STRINGS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_NAMES, inner, max_size=3),
    max_leaves=6,
)


def _keyword_leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.sampled_from([{"type": "string", "format": "ipv4"}, {"format": "date"}]),
        st.sampled_from(
            [
                {"format": "email"},
                {"pattern": "^[a-c]+$"},
                {"pattern": "^\\d$"},
                {"multipleOf": 0.5},
                {"multipleOf": 2},
                {"type": "integer"},
                {"type": ["string", "null"]},
                {"minLength": 2},
                {"uniqueItems": True},
                {},
                {"not": {"type": "null"}},
            ]
        ),
        st.builds(lambda v: {"enum": v}, st.lists(_DATA, min_size=1, max_size=3)),
        st.builds(lambda v: {"const": v}, _DATA),
        st.builds(lambda v: {"default": v}, _DATA),
        st.builds(lambda v: {"examples": v}, st.lists(_DATA, max_size=2)),
    )


def _keyword_schemas() -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def an_object(draw: st.DrawFn, inner: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
        props = draw(st.dictionaries(_NAMES, inner, max_size=3))
        out: dict[str, Any] = {"type": "object", "properties": props}
        if props and draw(st.integers(0, 3)) == 0:
            out["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        if draw(st.integers(0, 3)) == 0:
            out["additionalProperties"] = False
        return out

    def extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.one_of(
            an_object(inner),
            st.builds(lambda p: {"patternProperties": {"^d": p}}, inner),
            st.builds(lambda d: {"dependentSchemas": {"default": d}}, inner),
            st.builds(lambda i: {"items": i}, inner),
            st.builds(lambda a: {"allOf": a}, st.lists(inner, min_size=1, max_size=2)),
            st.builds(lambda a: {"anyOf": a}, st.lists(inner, min_size=1, max_size=2)),
            st.builds(lambda n: {"not": n}, inner),
        )

    leaf = _keyword_leaf()
    inner = st.recursive(leaf, extend, max_leaves=3)
    top_names = st.sampled_from(DATA_WORDS) | _NAMES  # where the fast path was fooled
    properties = st.dictionaries(top_names, inner, min_size=1, max_size=4)
    kept = extend(leaf)

    @st.composite
    def with_refs(draw: st.DrawFn) -> dict[str, Any]:
        """An arguments object whose property names are keywords, each property any
        schema; sometimes one applied in place by ``$ref``, or one kept under ``$defs``."""
        schema: dict[str, Any] = {"type": "object", "properties": draw(properties)}
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        names = sorted(schema["properties"])
        if names and draw(st.booleans()):  # apply one property's schema in place, by $ref
            name = draw(st.sampled_from(names))
            schema["allOf"] = [{"$ref": f"#/properties/{name}"}]
        if draw(st.booleans()):  # a schema kept under $defs, reached by $ref
            schema["$defs"] = {draw(_NAMES): draw(leaf), "default": draw(kept)}
            schema["anyOf"] = [{"$ref": "#/$defs/default"}, {"type": "null"}]
        return schema

    return with_refs()


_VALUES = _STRINGS | _DATA


_ARGUMENTS = st.dictionaries(_NAMES, _VALUES, max_size=4)


@st.composite
def _near(draw: st.DrawFn, schema: Any, depth: int = 0) -> Any:
    """A value shaped by ``schema`` (its properties, its items), leaves from ``_VALUES``:
    where a property named like a keyword hides a format, its value is drawn often."""
    if not isinstance(schema, dict) or depth > 4 or draw(st.integers(0, 5)) == 0:
        return draw(_VALUES)
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        names = [n for n in sorted(properties) if draw(st.integers(0, 3))]  # most of them
        extra = draw(st.dictionaries(_NAMES, _VALUES, max_size=1)) if draw(st.booleans()) else {}
        return extra | {n: draw(_near(properties[n], depth + 1)) for n in names}
    if "items" in schema:
        return draw(st.lists(_near(schema["items"], depth + 1), max_size=3))
    branches = [b for k in ("allOf", "anyOf") for b in schema.get(k, [])]
    if branches:
        return draw(_near(draw(st.sampled_from(branches)), depth + 1))
    if "format" in schema or "pattern" in schema:  # strings near the limit, both sides
        return draw(_STRINGS)
    return draw(_VALUES)


class _Fixed:
    """Stands in for ``st.data()`` in an ``@example``: its one draw is ``value``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def draw(self, strategy: Any) -> Any:
        return self.value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_keyword_schemas(), st.data())
@example(
    {"type": "object", "properties": {"default": {"format": "ipv4"}}}, _Fixed({"default": "x"})
)
@example({"type": "object", "properties": {"enum": {"pattern": "^a$"}}}, _Fixed({"enum": "a\n"}))
def test_fast_path_and_jsonschema_agree_on_keyword_named_properties(
    schema: dict[str, Any], data: Any
) -> None:
    """The first call of a tool is checked by jsonschema alone, later ones by jsonschema-rs
    where it is safe: the same call gets the same violations either way."""
    arguments = data.draw(_near(schema).filter(lambda v: isinstance(v, dict)) | _ARGUMENTS)
    _check_both_roads(schema, arguments)


def _check_both_roads(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    compiled = compile_contract(Contract(tools={"t": Tool(name="t", parameters=schema)}))
    slow = attrs.evolve(compiled, fast={})
    one = make_call("c1", "t", arguments)
    expected = slow.check(one)
    assert compiled.check(one) == expected  # the tool's first call
    assert compiled.check(one) == expected  # later calls: the fast path, where safe
    fast = fast_validator(schema)
    if fast is not None and fast(arguments):
        assert compiled.validators["t"].is_valid(arguments), (schema, arguments)
