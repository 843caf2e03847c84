"""Generating arguments from users' schemas: what cannot be generated is a one-line error
with the file, line and JSON path (exit 2); what can is generated valid, nested objects,
``$ref`` and recursion included."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

import txcheck.exploration.plansets.schema_values as schema_values_module
from txcheck import Guarded, Target, explore, load_contract, txcheck_testcase
from txcheck.cli import main
from txcheck.exploration.plansets.schema_draw import first_draw_problem
from txcheck.exploration.plansets.schema_values import MAX_DEPTH, schema_values
from txcheck.models.errors import InputError
from txcheck.models.plan.schema_limits import GENERATED_SIZE_LIMIT, generation_problem


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _contract(tmp_path: Path, name: str, parameters: Any, **extension: Any) -> str:
    tool: dict[str, Any] = {
        "type": "function",
        "function": {"name": name, "description": "d", "parameters": parameters},
        "x-txcheck": {"effect": "write", **extension},
    }
    path = tmp_path / "contract.json"
    path.write_text(json.dumps({"tools": [tool]}, indent=2), encoding="utf-8")
    return str(path)


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


UNGENERATABLE = [
    (
        _object({"name": {"type": "string", "minLength": 5, "maxLength": 2}}),
        ".properties.name.minLength",
        "minLength 5 is more than maxLength 2: no value satisfies it",
    ),
    (
        _object({"name": {"type": "string", "minLength": 100_000_000}}),
        ".properties.name.minLength",
        f"more than {GENERATED_SIZE_LIMIT:,} characters",
    ),
    (_object({"name": False}), ".properties.name", "the schema is false"),
    (
        _object({"n": {"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2}}),
        ".properties.n.exclusiveMinimum",
        "leave no integer",
    ),
    (_object({"kind": {"enum": []}}), ".properties.kind.enum", "an empty 'enum'"),
    (
        _object({"a": {"type": "string"}}, required=["a", "b"]),
        ".required",
        "required property 'b' is not among 'properties'",
    ),
    (
        _object({"items": {"type": "array", "minItems": 3, "maxItems": 1}}),
        ".properties.items.minItems",
        "minItems 3 is more than maxItems 1",
    ),
]


@pytest.mark.parametrize(("parameters", "where", "problem"), UNGENERATABLE)
def test_a_schema_nothing_can_be_generated_from_is_bad_input_with_its_place(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    parameters: Any,
    where: str,
    problem: str,
) -> None:
    contract = _contract(tmp_path, "book", parameters)
    assert main(["explore", "--contract", contract, "--seed", "0", "--time-budget", "30"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "contract.json:" in err
    assert f"at $.tools[0].function.parameters{where} tool 'book': " in err
    assert problem in err
    line = int(err.split("contract.json:")[1].split(":")[0])
    assert line > 1  # the line of the offending keyword in the indented file


def test_a_ref_to_nothing_is_refused_when_the_contract_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _contract(tmp_path, "book", _object({"a": {"$ref": "#/$defs/missing"}}))
    assert main(["explore", "--contract", contract]) == 2
    err = capsys.readouterr().err
    assert "at $.tools[0].function.parameters.properties.a.$ref " in err
    assert "'#/$defs/missing' does not resolve" in err
    # and the generation check says the same of a schema given directly
    problem = generation_problem(_object({"a": {"$ref": "#/$defs/missing"}}))
    assert problem == (
        ("properties", "a", "$ref"),
        "'$ref' '#/$defs/missing' points at nothing in this schema",
    )


def test_an_optional_false_property_is_simply_never_sent() -> None:
    schema = _object({"a": {"type": "string"}, "b": False}, required=["a"])
    assert generation_problem(schema) is None


def test_a_recursive_optional_ref_is_generatable() -> None:
    schema = {
        "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}},
        **_object({"tree": {"$ref": "#/$defs/node"}}),
    }
    assert generation_problem(schema) is None
    assert first_draw_problem(schema_values(schema, schema)) is None


def test_an_endlessly_required_recursion_cannot_be_drawn() -> None:
    node = {
        "type": "object",
        "properties": {"child": {"$ref": "#/$defs/node"}},
        "required": ["child"],
    }
    schema = {"$defs": {"node": node}, **_object({"tree": {"$ref": "#/$defs/node"}})}
    assert first_draw_problem(schema_values(schema, schema)) is not None


NESTED = [
    _object(
        {
            "items": {
                "type": "array",
                "minItems": 1,
                "items": _object(
                    {
                        "sku": {"type": "string", "pattern": "^[A-Z]{3}$"},
                        "qty": {"type": "integer", "minimum": 1},
                    }
                ),
            }
        }
    ),
    {
        "$defs": {
            "money": _object({"amount": {"type": "integer"}, "currency": {"enum": ["USD", "EUR"]}})
        },
        **_object(
            {"price": {"$ref": "#/$defs/money"}, "note": {"type": "string"}}, required=["price"]
        ),
    },
    _object(
        {
            "target": {
                "anyOf": [
                    _object({"user": {"type": "string"}}),
                    _object({"team": {"type": "integer"}}),
                ]
            }
        }
    ),
    _object(
        {
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "items": False,
            }
        }
    ),
    _object(
        {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "minItems": 2}}
    ),
    _object(
        {
            "both": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "string"}}},
                ]
            }
        }
    ),
]


@pytest.mark.parametrize("schema", NESTED)
def test_nested_schemas_generate_valid_values(schema: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schema)

    @settings(max_examples=60, database=None, deadline=None)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(schema_values(schema, schema).filter(validator.is_valid))
        assert validator.is_valid(value)

    check()
    assert first_draw_problem(schema_values(schema, schema).filter(validator.is_valid)) is None


def test_the_recursion_depth_is_bounded() -> None:
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}
    schema = {"$defs": {"node": node}, "$ref": "#/$defs/node"}

    def depth(value: Any) -> int:
        return (
            0 if not isinstance(value, dict) or "child" not in value else 1 + depth(value["child"])
        )

    @settings(max_examples=80, database=None, deadline=None)
    @given(schema_values(schema, schema))
    def check(value: Any) -> None:
        assert depth(value) < MAX_DEPTH

    check()


_FIRST_FOUND = settings(database=None, max_examples=2000, phases=(Phase.generate,))
"""``find`` that stops at the first example (no shrinking: it may take minutes on a
predicate like these), from a fixed random."""


def test_a_recursion_through_an_array_ends_in_empty_arrays_at_the_depth_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: at the bound, ``items`` had no values, and drawing the array raised
    Hypothesis's InvalidArgument (a traceback from explore) instead of drawing []."""
    monkeypatch.setattr(schema_values_module, "MAX_DEPTH", 2)  # reach the cut quickly
    reply = {"type": "array", "items": {"$ref": "#/$defs/note"}}
    note = _object({"text": {"type": "string"}, "replies": reply}, required=["text"])
    schema = {"$defs": {"note": note}, "$ref": "#/$defs/note"}
    validator = jsonschema.Draft202012Validator(schema)

    def depth(value: Any) -> int:
        return 1 + max((depth(r) for r in value.get("replies", [])), default=0)

    deepest = find(
        schema_values(schema, schema),
        lambda v: depth(v) == 2 and "replies" in v["replies"][0],
        settings=_FIRST_FOUND,
        random=random.Random(0),
    )
    assert deepest["replies"][0]["replies"] == [] and validator.is_valid(deepest)
    above = find(schema_values(reply, schema), bool, settings=_FIRST_FOUND, random=random.Random(0))
    assert above  # above the bound, replies do exist


def test_an_array_whose_items_cannot_exist_is_empty_or_impossible() -> None:
    def first(schema: Any) -> Any:
        return find(
            schema_values(schema, schema),
            lambda _: True,
            settings=_FIRST_FOUND,
            random=random.Random(0),
        )

    assert first({"type": "array", "items": False}) == []
    assert schema_values({"type": "array", "items": False, "minItems": 1}, {}).is_empty
    pair = first({"type": "array", "prefixItems": [{"type": "integer"}], "items": False})
    assert len(pair) == 1 and isinstance(pair[0], int)


def test_a_contract_with_a_recursive_ref_is_explored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}
    parameters = {"$defs": {"node": node}, **_object({"tree": {"$ref": "#/$defs/node"}})}
    contract = _contract(tmp_path, "book", parameters)
    argv = ["explore", "--contract", contract, "--engine", "hypothesis", "--seed", "0"]
    assert main([*argv, "--max-examples", "50", "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)["verdict"]
    assert verdict["outcome"] == "pass" and verdict["writes"] > 0 and verdict["faults"] > 0


def test_one_write_tool_and_no_workflow_is_explored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _contract(tmp_path, "book", _object({"room": {"type": "string"}}))
    argv = ["explore", "--contract", contract, "--engine", "systematic", "--seed", "0"]
    assert main([*argv, "--max-faults", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"]["bound"].startswith("exhaustive to 1 deviation on all ")
    assert result["verdict"]["writes"] > 0


def test_one_read_only_tool_and_no_workflow_is_bad_input_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No plan can be generated from it: every engine would run nothing (the hypothesis
    and systematic engines crashed on it)."""
    contract = _contract(tmp_path, "lookup", _object({"id": {"type": "string"}}), effect="read")
    assert main(["explore", "--contract", contract, "--seed", "0"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert err.startswith(f"txcheck explore: error: {contract}:2: at $.tools the contract has ")
    assert "no workflow and every tool only reads, so there is no plan to explore" in err
    assert main(["explore", "--contract", contract, "--engine", "hypothesis", "--seed", "0"]) == 2


def test_an_empty_world_runs_and_says_nothing_was_committed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = tmp_path / "world.json"
    world.write_text('{"format": "txcheck-world/1"}', encoding="utf-8")
    # one deviation is enough to show it (every engine runs; 0.1 of the default's CPU)
    argv = ["explore", "--world", str(world), "--seed", "0", "--max-examples", "30", "--json"]
    assert main([*argv, "--max-faults", "1"]) == 3
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"]["writes"] == 0 and result["verdict"]["runs"] > 0
    assert {e["engine"] for e in result["engines"] if e["runs"]} >= {"systematic", "random"}


def test_the_python_api_refuses_a_contract_with_nothing_to_plan(tmp_path: Path) -> None:
    """Through ``explore()`` and ``txcheck_testcase`` as through the command line: an
    error naming the file and ``$.tools``, not a crash in an engine, and not a pass."""
    source = _contract(tmp_path, "lookup", _object({"id": {"type": "string"}}), effect="read")
    contract = load_contract(source)
    for engine in ("auto", "systematic", "hypothesis", "random"):
        with pytest.raises(InputError, match=r"at \$\.tools the contract has no workflow"):
            explore(Target(policy=Guarded(), contract=contract), engine=engine)
    with pytest.raises(InputError, match="no plan to explore"):
        txcheck_testcase("guarded", contract=contract)


def test_txcheck_testcase_refuses_tools_without_behaviour(tmp_path: Path) -> None:
    """A tool nothing models would reject every call: the test would pass having run
    nothing, so making it is an error."""
    function = {"name": "launch", "description": "d", "parameters": _object({})}
    source = tmp_path / "contract.json"
    source.write_text(json.dumps({"tools": [{"type": "function", "function": function}]}))
    with pytest.raises(InputError, match="launch"):
        txcheck_testcase("guarded", contract=load_contract(str(source)))
