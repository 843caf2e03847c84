"""The business level: world-fixture rules, projected through the plan's earlier calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.validation import validate
from txcheck.models.sim.checkout import CHECKOUT, charge_payment, refund_payment
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.services import Committed, Rejected
from txcheck.models.sim.world_rules import WorldBusinessCheck, business_check_from_doc

CONTRACT = default_contract()
CHECK = WorldBusinessCheck(fixture=default_fixture())
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def checkout(amount: int = 2500, **overrides: Any) -> list[tuple[str, dict[str, Any]]]:
    calls = [
        (
            "create_order",
            {
                "order_id": "ord_9",
                "customer_id": "cus_1",
                "currency": "USD",
                "items": [{"sku": "sku_book", "quantity": 2}],
                "idempotency_key": "key-create-9",
            },
        ),
        ("reserve_inventory", {"order_id": "ord_9", "idempotency_key": "key-reserve-9"}),
        (
            "charge_payment",
            {
                "order_id": "ord_9",
                "amount": amount,
                "currency": "USD",
                "idempotency_key": "key-charge-9",
            },
        ),
        ("confirm_order", {"order_id": "ord_9", "idempotency_key": "key-confirm-9"}),
    ]
    return calls


def business_codes(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str | None]]:
    verdict = validate(CONTRACT, Plan.of(*calls), business=CHECK)
    assert "business" in verdict.levels_checked
    return [(v.code, v.call) for v in verdict.violations if v.level == "business"]


def test_a_consistent_checkout_passes_the_business_level() -> None:
    assert business_codes(checkout()) == []


def test_the_charge_must_equal_the_total_priced_from_the_catalog() -> None:
    # 2 x sku_book at 1250 is 2500: 2400 is refused, with the total in the message.
    verdict = validate(CONTRACT, Plan.of(*checkout(amount=2400)), business=CHECK)
    mismatch = [v for v in verdict.violations if v.code == "amount_mismatch"]
    assert [v.call for v in mismatch] == ["call_3"]
    assert "2500" in mismatch[0].message and "2400" in mismatch[0].message


def test_rules_see_the_state_projected_through_earlier_calls() -> None:
    # The order exists only because call_1 creates it; without call_1 it does not.
    assert business_codes(checkout()[1:2]) == [("order_not_found", "call_1")]
    # The existing fixture order can be read, an unknown one cannot.
    assert business_codes([("get_order", {"order_id": "ord_existing"})]) == []
    assert business_codes([("get_order", {"order_id": "ord_nope"})]) == [
        ("order_not_found", "call_1")
    ]


def test_an_unpaid_order_cannot_be_confirmed_and_stock_must_be_available() -> None:
    calls = checkout()
    assert ("not_paid", "call_3") in business_codes([calls[0], calls[1], calls[3]])
    lamp = [
        (
            "create_order",
            {
                "order_id": "ord_l",
                "customer_id": "cus_1",
                "currency": "USD",
                "items": [{"sku": "sku_lamp", "quantity": 2}],
                "idempotency_key": "key-create-l",
            },
        ),
        ("reserve_inventory", {"order_id": "ord_l", "idempotency_key": "key-reserve-l"}),
    ]
    assert business_codes(lamp) == [("out_of_stock", "call_2")]


def test_a_refund_needs_a_charge_and_a_charge_is_refunded_at_most_once() -> None:
    refund = ("refund_payment", {"charge_id": "ch_1", "reason": "customer asked"})
    assert business_codes([refund]) == [("charge_not_found", "call_1")]
    # The charge id is the refund's key: a second, different refund of it is refused.
    again = ("refund_payment", {"charge_id": "ch_1", "reason": "asked again"})
    assert business_codes([*checkout()[:3], refund, again]) == [("idempotency_conflict", "call_5")]


def test_the_refund_handler_never_pays_back_more_than_was_charged() -> None:
    state = CHECKOUT.initial_state(default_fixture().document)
    state["orders"]["ord_x"] = {
        "customer_id": "cus_1",
        "items": [],
        "currency": "USD",
        "total": 300,
        "status": "reserved",
        "version": 1,
    }
    charged = charge_payment(state, {"order_id": "ord_x", "amount": 300, "currency": "USD"})
    assert isinstance(charged, Committed)
    assert isinstance(refund_payment(state, {"charge_id": "ch_1", "reason": "r"}), Committed)
    again = refund_payment(state, {"charge_id": "ch_1", "reason": "r"})
    assert isinstance(again, Rejected) and again.code == "refund_exceeds_charge"
    assert sum(r["amount"] for r in state["refunds"].values()) == 300


def test_a_malformed_fixture_document_is_an_input_error() -> None:
    with pytest.raises(ValueError, match="txcheck-world/1"):
        business_check_from_doc({"format": "nope"})


def test_validate_world_flag_turns_the_business_level_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = str(EXAMPLES / "checkout" / "contract.json")
    world = str(EXAMPLES / "checkout" / "world.json")
    proposal = tmp_path / "p.json"
    proposal.write_text(
        json.dumps(
            {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "get_order",
                        "input": {"order_id": "ord_nope"},
                    }
                ]
            }
        )
    )
    assert main(["validate", contract, str(proposal), "--json"]) == 0
    without = json.loads(capsys.readouterr().out)
    assert "business" in without["levels_skipped"]
    assert main(["validate", contract, str(proposal), "--world", world, "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert "business" in verdict["levels_checked"]
    assert [v["code"] for v in verdict["violations"]] == ["order_not_found"]
    bad = tmp_path / "world.json"
    bad.write_text('{"format": "txcheck-world/1", "catalog": {"x": {"price": -1}}}')
    assert main(["validate", contract, str(proposal), "--world", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "$.catalog.x.price" in err[0]
