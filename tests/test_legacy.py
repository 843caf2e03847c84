"""The reconstructed audited scorer: first call only, str() comparison, no schema."""

from __future__ import annotations

from typing import Any

import pytest

from txcheck.models.plan.proposal import Call, Plan
from txcheck.scoring.legacy import legacy_arguments, legacy_score


def _plan(*calls: tuple[str, Any]) -> Plan:
    """A plan whose raw arguments are exactly as given (a JSON string or an object)."""
    return Plan(
        calls=tuple(
            Call(
                id=f"call_{i + 1}",
                name=name,
                index=i,
                raw_arguments=raw,
                arguments=raw if isinstance(raw, dict) else None,
            )
            for i, (name, raw) in enumerate(calls)
        )
    )


KEY = "idem-charge-0001"
CHARGE = {"order_id": "ord_1", "amount": 1250, "currency": "USD", "idempotency_key": KEY}


@pytest.mark.parametrize(
    ("plan", "expected", "score"),
    [
        # (1) first call right, second cancels the order: the second is never looked at.
        (
            _plan(
                ("query_logistics", '{"order_id": "10086"}'),
                ("cancel_order", '{"order_id": "10086", "reason": "customer_request"}'),
            ),
            [("query_logistics", {"order_id": "10086"})],
            1.0,
        ),
        # (2) refund missing the required reason: 1 of 2 argument names equal.
        (
            _plan(("refund_payment", '{"charge_id": "ch_1"}')),
            [("refund_payment", {"charge_id": "ch_1", "reason": "damaged"})],
            0.75,
        ),
        # (3) a string field given a number: str(10086) == "10086".
        (
            _plan(("query_logistics", '{"order_id": 10086}')),
            [("query_logistics", {"order_id": "10086"})],
            1.0,
        ),
        # (4) unknown argument force=true: 4 of 5 names equal.
        (
            _plan(("charge_payment", dict(CHARGE, force=True))),
            [("charge_payment", CHARGE)],
            0.9,
        ),
        # (5) arguments that are not JSON: only the name half.
        (
            _plan(("query_logistics", '{"order_id": "10086"')),
            [("query_logistics", {"order_id": "10086"})],
            0.5,
        ),
    ],
)
def test_the_five_audit_figures(plan: Plan, expected: Any, score: float) -> None:
    assert legacy_score(plan, expected) == score


def test_edge_cases_are_defined() -> None:
    assert legacy_score(_plan(), []) == 1.0
    assert legacy_score(_plan(), [("get_order", {"order_id": "o"})]) == 0.0
    assert legacy_score(_plan(("get_order", "{}")), []) == 0.0
    assert legacy_score(None, [("get_order", {})]) == 0.0
    assert legacy_score(_plan(("get_order", "{}")), [("get_order", {})]) == 1.0
    assert legacy_score(_plan(("other", "{}")), [("get_order", {})]) == 0.5
    # Arguments that parse to something other than an object count 0 for their half.
    assert legacy_score(_plan(("get_order", "[1]")), [("get_order", {})]) == 0.5


def test_str_comparison_reproduces_the_audited_flaws() -> None:
    # true and "True" look the same after str(); 1 and 1.0 do not.
    assert legacy_score(_plan(("t", '{"a": true}')), [("t", {"a": "True"})]) == 1.0
    assert legacy_score(_plan(("t", '{"a": 1.0}')), [("t", {"a": 1})]) == 0.5


def test_lenient_python_parsing() -> None:
    assert legacy_arguments('{"a": NaN, "a": 2}') == {"a": 2}
    assert legacy_arguments("not json") is None
    assert legacy_arguments({"a": 1}) == {"a": 1}
    assert legacy_arguments(None) is None
