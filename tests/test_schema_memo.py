"""Schema checks remembered, fast checks compiled late: the same answers as without.

A schema that passed ``check_schema`` is remembered by its canonical JSON, but only when it
is made of plain JSON types (a tuple reads as a JSON array yet jsonschema rejects it). A
tool's first call is checked by jsonschema alone; its fast check is compiled for later.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema.exceptions import SchemaError

from txcheck.models.plan.contract_loader import load_contract
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.plan.schema_check import CompiledContract
from txcheck.models.plan.tool_schema import check_schema

ROOT = Path(__file__).resolve().parent.parent


def test_a_passed_schema_does_not_vouch_for_a_lookalike_with_a_tuple() -> None:
    check_schema({"type": "object", "required": ["a"]})
    with pytest.raises(SchemaError):
        check_schema({"type": "object", "required": ("a",)})
    with pytest.raises(SchemaError):
        check_schema({"type": "object", "required": "a"})


def test_first_calls_are_checked_alike_with_and_without_the_fast_check() -> None:
    contract = load_contract(ROOT / "examples/checkout/contract.json")
    plans = [load_proposal(p) for p in sorted((ROOT / "examples/proposals").glob("*.json"))]
    fresh = CompiledContract.build(contract)  # nothing asked yet
    slow = CompiledContract(validators=fresh.validators, fast={})
    for _ in range(2):  # first calls (jsonschema alone), then the same calls again
        for plan in plans:
            for call in plan.calls:
                assert fresh.check(call) == slow.check(call)
    assert any(f is not None for f in fresh._ready.values())  # the fast check came in
