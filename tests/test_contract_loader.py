"""Contracts: the bundled checkout contract loads; every malformed contract is a ContractError."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from txcheck.models.errors import ContractError
from txcheck.models.plan.contract import ArgRef, Compensation, ReceiptRef
from txcheck.models.plan.contract_loader import default_contract, load_contract, parse_contract


def base() -> dict[str, Any]:
    """A small valid contract: an OpenAI write tool compensated by an Anthropic tool."""
    return {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "create_order",
                    "description": "Create an order.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "order_id": {"type": "string"},
                            "idempotency_key": {"type": "string"},
                        },
                        "required": ["order_id"],
                    },
                },
                "x-txcheck": {
                    "effect": "write",
                    "resource": "order_id",
                    "idempotency_key": "idempotency_key",
                    "compensated_by": {
                        "tool": "cancel_order",
                        "arguments": {"order_id": {"$arg": "order_id"}, "reason": "compensation"},
                    },
                },
            },
            {
                "name": "cancel_order",
                "description": "Cancel an order.",
                "input_schema": {
                    "type": "object",
                    "$defs": {"reason": {"type": "string", "enum": ["compensation", "customer"]}},
                    "properties": {
                        "order_id": {"type": "string"},
                        "reason": {"$ref": "#/$defs/reason"},
                    },
                    "required": ["order_id", "reason"],
                },
                "x-txcheck": {"effect": "write", "resource": "order_id"},
            },
            {"type": "function", "function": {"name": "ping"}},
        ],
        "workflows": [{"name": "order", "steps": ["create_order", "cancel_order"]}],
    }


def test_base_contract_parses_both_vendor_forms() -> None:
    contract = parse_contract(base(), source="c.json")
    assert list(contract.tools) == ["create_order", "cancel_order", "ping"]
    create, cancel, ping = contract.tools.values()
    assert (create.vendor, cancel.vendor, ping.vendor) == ("openai", "anthropic", "openai")
    assert create.compensated_by == Compensation(
        tool="cancel_order",
        arguments={"order_id": ArgRef(name="order_id"), "reason": "compensation"},
    )
    assert cancel.parameters["required"] == ["order_id", "reason"]
    assert contract.source == "c.json"
    assert contract.document["workflows"][0]["name"] == "order"


def test_a_tool_nothing_describes_is_a_write_with_unknown_idempotency_and_a_warning() -> None:
    contract = parse_contract(base())
    ping = contract.tools["ping"]
    assert (ping.effect, ping.resource, ping.idempotency_key, ping.compensated_by) == (
        "write",
        None,
        None,
        None,
    )
    assert (ping.declared_by, ping.annotated, ping.idempotent) == ("default", False, False)
    assert ping.parameters == {"type": "object", "properties": {}}
    assert (ping.description, ping.strict) == ("", False)
    (warning,) = contract.warnings
    assert warning.startswith("tool 'ping' says nothing about what it does")
    assert "treated as a write with unknown idempotency" in warning
    assert "docs/contract.md" in warning


def test_plain_compensation_form_passes_the_original_arguments() -> None:
    doc = base()
    doc["tools"][1]["input_schema"]["required"] = ["order_id"]
    doc["tools"][0]["x-txcheck"]["compensated_by"] = "cancel_order"
    assert parse_contract(doc).tools["create_order"].compensated_by == Compensation(
        tool="cancel_order"
    )


def test_bundled_checkout_contract() -> None:
    contract = default_contract()
    assert default_contract() is contract
    assert list(contract.tools) == [
        "query_logistics",
        "get_order",
        "create_order",
        "reserve_inventory",
        "charge_payment",
        "confirm_order",
        "cancel_order",
        "refund_payment",
        "release_inventory",
    ]
    effects = {name: tool.effect for name, tool in contract.tools.items()}
    assert effects == {
        "query_logistics": "read",
        "get_order": "read",
        "create_order": "write",
        "reserve_inventory": "write",
        "charge_payment": "write",
        "confirm_order": "irreversible",
        "cancel_order": "write",
        "refund_payment": "write",
        "release_inventory": "write",
    }
    keys = {name: tool.idempotency_key for name, tool in contract.tools.items()}
    assert keys["refund_payment"] == "charge_id"
    assert keys["charge_payment"] == "idempotency_key"
    assert keys["get_order"] is None
    assert all(tool.resource for tool in contract.tools.values())
    compensations = {n: t.compensated_by for n, t in contract.tools.items() if t.compensated_by}
    assert compensations == {
        "create_order": Compensation(
            tool="cancel_order",
            arguments={"order_id": ArgRef(name="order_id"), "reason": "compensation"},
        ),
        "reserve_inventory": Compensation(
            tool="release_inventory", arguments={"order_id": ArgRef(name="order_id")}
        ),
        "charge_payment": Compensation(
            tool="refund_payment",
            arguments={"charge_id": ReceiptRef(field="charge_id"), "reason": "compensation"},
        ),
    }
    assert contract.compensation_tools() == {"cancel_order", "release_inventory", "refund_payment"}
    (checkout,) = contract.workflows
    assert checkout.name == "checkout"
    assert checkout.steps == (
        "create_order",
        "reserve_inventory",
        "charge_payment",
        "confirm_order",
    )


def test_load_contract_from_a_file_matches_the_bundled_one(tmp_path: Path) -> None:
    path = tmp_path / "checkout.json"
    path.write_text(json.dumps(default_contract().document, indent=2), encoding="utf-8")
    loaded = load_contract(path)
    assert loaded.source == str(path)
    assert loaded.tools == default_contract().tools
    assert loaded.workflows == default_contract().workflows


# -- malformed contracts: one case each ---------------------------------------------------

Mutation = Callable[[dict[str, Any]], Any]


def tool(doc: dict[str, Any], i: int = 0) -> Any:
    return doc["tools"][i]


def params(doc: dict[str, Any]) -> Any:
    return tool(doc)["function"]["parameters"]


def x(doc: dict[str, Any], i: int = 0) -> Any:
    return tool(doc, i)["x-txcheck"]


def comp(doc: dict[str, Any]) -> Any:
    return x(doc)["compensated_by"]


CASES: list[tuple[str, Mutation, str, str]] = [
    ("no_tools", lambda d: d.pop("tools"), "$", "has no 'tools' list"),
    ("tools_not_list", lambda d: d.update(tools={}), "$.tools", "'tools' must be a list"),
    ("no_tool_at_all", lambda d: d.update(tools=[]), "$.tools", "at least one tool"),
    ("unknown_top_key", lambda d: d.update(tool=[]), "$.tool", "unknown key 'tool'"),
    ("tool_not_object", lambda d: d["tools"].append("x"), "$.tools[3]", "must be a JSON object"),
    ("tool_of_no_kind", lambda d: d["tools"].append({}), "$.tools[3]", "OpenAI function tool"),
    ("openai_bad_type", lambda d: tool(d).update(type="fn"), "$.tools[0].type", "'function'"),
    (
        "anthropic_server_tool",
        lambda d: tool(d, 1).update(type="web_search_20250305"),
        "$.tools[1].type",
        "unsupported tool type 'web_search_20250305'",
    ),
    (
        "openai_no_name",
        lambda d: tool(d)["function"].pop("name"),
        "$.tools[0].function",
        "has no 'name'",
    ),
    (
        "name_not_string",
        lambda d: tool(d)["function"].update(name=3),
        "$.tools[0].function.name",
        "'name' must be a non-empty string (got the number 3)",
    ),
    (
        "name_with_space",
        lambda d: tool(d)["function"].update(name="create order"),
        "$.tools[0].function.name",
        "must be 1-128 letters",
    ),
    (
        "typo_in_function_key",
        lambda d: tool(d)["function"].update(paramters={}),
        "$.tools[0].function.paramters",
        "did you mean 'parameters'?",
    ),
    (
        "description_not_string",
        lambda d: tool(d)["function"].update(description=["x"]),
        "$.tools[0].function.description",
        "'description' must be a string",
    ),
    (
        "strict_not_bool",
        lambda d: tool(d)["function"].update(strict="yes"),
        "$.tools[0].function.strict",
        "'strict' must be true or false",
    ),
    (
        "parameters_not_object",
        lambda d: tool(d)["function"].update(parameters=True),
        "$.tools[0].function.parameters",
        "must be a JSON Schema object (got true)",
    ),
    (
        "parameters_bad_type_keyword",
        lambda d: params(d)["properties"]["order_id"].update(type="strin"),
        "$.tools[0].function.parameters.properties.order_id.type",
        "is not a valid JSON Schema (draft 2020-12)",
    ),
    (
        "parameters_bad_regex",
        lambda d: params(d)["properties"]["order_id"].update(pattern="("),
        "$.tools[0].function.parameters.properties.order_id.pattern",
        "pattern '(' is not a regular expression txcheck's engine accepts",
    ),
    (
        "parameters_not_an_object_schema",
        lambda d: params(d).update(type="array"),
        "$.tools[0].function.parameters.type",
        "'parameters' must describe the arguments object: 'type' must be 'object' (got 'array')",
    ),
    (
        "dangling_ref",
        lambda d: tool(d, 1)["input_schema"]["properties"]["reason"].update({"$ref": "#/$defs/r"}),
        "$.tools[1].input_schema.properties.reason.$ref",
        "does not resolve",
    ),
    (
        "anthropic_no_schema",
        lambda d: tool(d, 1).pop("input_schema"),
        "$.tools[1]",
        "has no 'input_schema' schema",
    ),
    (
        "typo_in_anthropic_key",
        lambda d: tool(d, 1).update(inputschema={}),
        "$.tools[1].inputschema",
        "unknown key 'inputschema'",
    ),
    (
        "x_txcheck_not_object",
        lambda d: tool(d).update({"x-txcheck": "write"}),
        "$.tools[0].x-txcheck",
        "'x-txcheck' must be a JSON object",
    ),
    (
        "unknown_x_txcheck_key",
        lambda d: x(d).update({"idempotency-key": "idempotency_key"}),
        "$.tools[0].x-txcheck.idempotency-key",
        "did you mean 'idempotency_key'?",
    ),
    (
        "unknown_effect",
        lambda d: x(d).update(effect="wirte"),
        "$.tools[0].x-txcheck.effect",
        "'effect' must be 'read', 'write' or 'irreversible' (got the string \"wirte\")",
    ),
    (
        "resource_not_defined",
        lambda d: x(d).update(resource="order"),
        "$.tools[0].x-txcheck.resource",
        "names argument 'order', which tool 'create_order' does not define",
    ),
    (
        "resource_not_string",
        lambda d: x(d).update(resource=5),
        "$.tools[0].x-txcheck.resource",
        "'resource' must name an argument",
    ),
    (
        "resource_list_repeats",
        lambda d: x(d).update(resource=["order_id", "order_id"]),
        "$.tools[0].x-txcheck.resource",
        "'resource' lists an argument twice",
    ),
    (
        "resource_list_empty",
        lambda d: x(d).update(resource=[]),
        "$.tools[0].x-txcheck.resource",
        "'resource' must name at least one argument",
    ),
    (
        "key_not_defined",
        lambda d: x(d, 1).update(idempotency_key="idempotency_key"),
        "$.tools[1].x-txcheck.idempotency_key",
        "which tool 'cancel_order' does not define",
    ),
    (
        "compensation_unknown_tool",
        lambda d: comp(d).update(tool="cancel_ordr"),
        "$.tools[0].x-txcheck.compensated_by.tool",
        "names tool 'cancel_ordr', which the contract does not define; did you mean",
    ),
    (
        "compensation_plain_unknown_tool",
        lambda d: x(d).update(compensated_by="undo"),
        "$.tools[0].x-txcheck.compensated_by",
        "names tool 'undo'",
    ),
    (
        "compensation_wrong_type",
        lambda d: x(d).update(compensated_by=1),
        "$.tools[0].x-txcheck.compensated_by",
        "must be a tool name or",
    ),
    (
        "compensation_unknown_key",
        lambda d: comp(d).update(args={}),
        "$.tools[0].x-txcheck.compensated_by.args",
        "unknown key 'args'",
    ),
    (
        "compensation_arg_ref_undefined",
        lambda d: comp(d)["arguments"].update(order_id={"$arg": "order"}),
        "$.tools[0].x-txcheck.compensated_by.arguments.order_id.$arg",
        "names argument 'order', which tool 'create_order' does not define",
    ),
    (
        "compensation_argument_undefined",
        lambda d: comp(d)["arguments"].update(force=True),
        "$.tools[0].x-txcheck.compensated_by.arguments.force",
        "compensation tool 'cancel_order' does not define argument 'force'",
    ),
    (
        "compensation_bad_reference",
        lambda d: comp(d)["arguments"].update(order_id={"$ref": "order_id"}),
        "$.tools[0].x-txcheck.compensated_by.arguments.order_id",
        'exactly {"$arg": NAME} or {"$receipt": FIELD}',
    ),
    (
        "compensation_bad_receipt",
        lambda d: comp(d)["arguments"].update(order_id={"$receipt": 5}),
        "$.tools[0].x-txcheck.compensated_by.arguments.order_id.$receipt",
        "'$receipt' must name a receipt field",
    ),
    (
        "compensation_literal_misfits",
        lambda d: comp(d)["arguments"].update(reason="oops"),
        "$.tools[0].x-txcheck.compensated_by.arguments.reason",
        "does not fit argument 'reason' of 'cancel_order'",
    ),
    (
        "compensation_of_read_tool",
        lambda d: tool(d, 2).update(
            {"x-txcheck": {"effect": "read", "compensated_by": "cancel_order"}}
        ),
        "$.tools[2].x-txcheck.compensated_by",
        "has effect 'read': there is nothing to compensate",
    ),
    (
        "duplicate_tool",
        lambda d: d["tools"].append({"name": "ping", "input_schema": {"type": "object"}}),
        "$.tools[3]",
        "duplicate tool name 'ping' (first defined at $.tools[2])",
    ),
    ("workflows_not_list", lambda d: d.update(workflows={}), "$.workflows", "must be a list"),
    (
        "workflow_unknown_key",
        lambda d: d["workflows"][0].update(step=[]),
        "$.workflows[0].step",
        "did you mean 'steps'?",
    ),
    (
        "workflow_unknown_tool",
        lambda d: d["workflows"][0]["steps"].append("ship_order"),
        "$.workflows[0].steps[2]",
        "workflow 'order' names tool 'ship_order', which the contract does not define",
    ),
    (
        "workflow_step_not_string",
        lambda d: d["workflows"][0]["steps"].append(1),
        "$.workflows[0].steps[2]",
        "a step must be a tool name",
    ),
    (
        "workflow_repeats_a_step",
        lambda d: d["workflows"][0]["steps"].append("create_order"),
        "$.workflows[0].steps[2]",
        "lists tool 'create_order' twice",
    ),
    (
        "duplicate_workflow",
        lambda d: d["workflows"].append({"name": "order", "steps": ["ping"]}),
        "$.workflows[1].name",
        "duplicate workflow name 'order'",
    ),
    (
        "empty_workflow",
        lambda d: d["workflows"][0].update(steps=[]),
        "$.workflows[0].steps",
        "workflow 'order' has no steps",
    ),
    (
        "workflow_without_steps",
        lambda d: d["workflows"][0].pop("steps"),
        "$.workflows[0]",
        "has no 'steps'",
    ),
    (
        "workflow_without_name",
        lambda d: d["workflows"][0].pop("name"),
        "$.workflows[0].name",
        "'name' must be a non-empty string (got nothing)",
    ),
]


def mutated(mutation: Mutation) -> dict[str, Any]:
    doc = copy.deepcopy(base())
    mutation(doc)  # edits ``doc`` in place; what it returns is ignored
    return doc


def test_a_contract_must_be_an_object_or_a_list_of_tools() -> None:
    with pytest.raises(ContractError) as info:
        parse_contract("tools", source="c.json")
    assert str(info.value) == (
        "c.json: at $ a contract (or a list of tools; see docs/contract.md) must be a JSON "
        'object (got the string "tools")'
    )
    with pytest.raises(ContractError) as info:
        parse_contract(["tools"], source="c.json")
    assert (
        str(info.value) == 'c.json: at $[0] a tool must be a JSON object (got the string "tools")'
    )


@pytest.mark.parametrize(
    ("mutation", "path", "problem"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_malformed_contract_is_a_contract_error(
    mutation: Mutation, path: str, problem: str
) -> None:
    with pytest.raises(ContractError) as info:
        parse_contract(mutated(mutation), source="c.json")
    error = info.value
    assert error.path == path
    assert problem in error.problem
    assert str(error).startswith(f"c.json: at {path} ")


@pytest.mark.parametrize(
    ("mutation", "path", "problem"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_malformed_contract_file_names_the_line(
    tmp_path: Path, mutation: Mutation, path: str, problem: str
) -> None:
    file = tmp_path / "contract.json"
    file.write_text(json.dumps(mutated(mutation), indent=2), encoding="utf-8")
    with pytest.raises(ContractError) as info:
        load_contract(file)
    assert info.value.line is not None
    assert str(info.value).startswith(f"{file}:{info.value.line}: at {path} ")
    assert problem in str(info.value)


def test_line_is_the_line_of_the_offending_value(tmp_path: Path) -> None:
    doc = base()
    x(doc)["effect"] = "wirte"
    text = json.dumps(doc, indent=2)
    file = tmp_path / "contract.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ContractError) as info:
        load_contract(file)
    assert info.value.line == text[: text.index('"wirte"')].count("\n") + 1


def test_invalid_json_contract_file(tmp_path: Path) -> None:
    file = tmp_path / "contract.json"
    file.write_text('{\n  "tools": [],\n  "tools": []\n}', encoding="utf-8")
    with pytest.raises(ContractError) as info:
        load_contract(file)
    assert info.value.line == 3
    assert 'invalid JSON: duplicate key "tools"' in str(info.value)


def test_missing_contract_file(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="file not found"):
        load_contract(tmp_path / "missing.json")
