"""Per-case tools at full speed: what a batch of cases with their own tools costs is one
schema check and one fast check per tool, never a jsonschema validator for a call the fast
check accepts, and the verdicts are those of the slow road."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from txcheck.importers.bfcl import bfcl_cases
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan import rust_engine, schema_check, schema_walk, tool_schema
from txcheck.models.plan.contract_loader import parse_contract
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.scoring.case_contracts import CaseContracts
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import score_file

BFCL = Path(__file__).resolve().parent / "fixtures" / "bfcl"
CATEGORIES = ("simple_python", "parallel", "live_multiple", "simple_java", "live_relevance")


def _cases() -> list[dict[str, Any]]:
    return list(bfcl_cases(BFCL, CATEGORIES))


def test_a_plain_valid_schema_is_not_sent_to_jsonschemas_metaschema_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(schema: Any, **options: Any) -> None:
        raise AssertionError("jsonschema's check_schema was asked")

    monkeypatch.setattr(Draft202012Validator, "check_schema", staticmethod(refuse))
    tool_schema.check_schema({"type": "object", "properties": {"a": {"type": "integer"}}})
    with pytest.raises(AssertionError):  # not shown valid by jsonschema-rs: jsonschema asked
        tool_schema.check_schema({"type": "object", "properties": {"a": {"type": "intger"}}})
    with pytest.raises(AssertionError):  # a format: the two check different formats
        tool_schema.check_schema({"type": "object", "properties": {"a": {"format": "date"}}})


def test_the_fast_metaschema_check_never_passes_what_jsonschema_refuses() -> None:
    for bad in (
        {"type": "object", "required": ("a",)},  # a tuple: jsonschema-rs reads an array
        {"type": "object", "properties": {"a": {"type": "intger"}}},
        {"type": "object", "minProperties": -1},
    ):
        with pytest.raises(SchemaError):
            tool_schema.check_schema(bad)
    assert not tool_schema._plain({"required": ("a",)})
    assert not tool_schema._plain({1: {}})


def test_a_batch_checks_first_calls_without_building_jsonschema_validators() -> None:
    contracts = CaseContracts(None)
    case = next(c for c in _cases() if c["id"] == "simple_python_0")
    context = contracts.for_tools(case["tools"])
    compiled = schema_check.compile_contract(context.contract)
    assert compiled.eager
    plan = parse_proposal(case["proposal"])
    assert all(compiled.check(call) == [] for call in plan.calls)
    assert compiled.validators._built == {}  # type: ignore[attr-defined]
    bad = parse_proposal(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {
                        "name": plan.calls[0].name,
                        "arguments": json.dumps({"base": "10", "height": 5}),
                    },
                }
            ],
        }
    )
    [violation] = compiled.check(bad.calls[0])
    assert violation.code == "type_mismatch"  # jsonschema built for the call it must word
    assert list(compiled.validators._built) == [plan.calls[0].name]  # type: ignore[attr-defined]


def test_a_contract_outside_a_batch_keeps_the_first_call_on_jsonschema() -> None:
    contract = parse_contract(
        [{"name": "t", "input_schema": {"type": "object"}, "x-txcheck": {"effect": "read"}}]
    )
    compiled = schema_check.compile_contract(contract)
    assert not compiled.eager
    plan = parse_proposal({"content": [{"type": "tool_use", "id": "a", "name": "t", "input": {}}]})
    assert compiled.check(plan.calls[0]) == []
    assert list(compiled.validators._built) == ["t"]  # type: ignore[attr-defined]


def test_verdicts_are_the_same_with_and_without_the_fast_road(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases = _cases()
    broken = json.loads(json.dumps(cases[0]))
    broken["id"] = "broken"
    broken["proposal"]["tool_calls"][0]["function"]["arguments"] = '{"base": "x", "height": 5}'
    text = "\n".join(json.dumps(c) for c in [*cases, broken])
    fast = score_file(None, parse_cases(text, source="t")).to_json()
    monkeypatch.setattr(rust_engine, "_LOADED", [None])  # as without jsonschema-rs
    monkeypatch.setattr(tool_schema, "_SEEN", IdentityMemo())
    monkeypatch.setattr(tool_schema, "_PASSED", set())
    slow = score_file(None, parse_cases(text, source="t")).to_json()
    assert fast == slow
    assert fast["summary"]["cases"] == len(cases) + 1


def test_each_schema_is_walked_once_from_reading_to_its_fast_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[int] = []
    real = schema_walk._walk

    def counting(root: Any) -> Any:
        walked.append(id(root))
        return real(root)

    monkeypatch.setattr(schema_walk, "_walk", counting)
    case = next(c for c in _cases() if c["id"] == "live_multiple_991-222-0")
    context = CaseContracts(None).for_tools(case["tools"])
    compiled = schema_check.compile_contract(context.contract)
    for name in context.contract.tools:
        assert compiled.fast.get(name) is not None
    assert len(walked) == len(case["tools"]) == len(set(walked))
