"""The strict scorer per case and the summary, end to end from case lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract, load_contract
from txcheck.models.plan.validation import validate
from txcheck.scoring import scorer as scoring
from txcheck.scoring.cases import parse_cases, read_cases
from txcheck.scoring.scorer import CaseResult, ScoreReport, score_case, score_file

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = default_contract()

CHECKOUT: list[tuple[str, dict[str, Any]]] = [
    (
        "create_order",
        {
            "order_id": "ord_9",
            "customer_id": "cus_1",
            "items": [{"sku": "sku_book", "quantity": 2}],
            "currency": "USD",
            "idempotency_key": "idem-create-ord_9",
        },
    ),
    ("reserve_inventory", {"order_id": "ord_9", "idempotency_key": "idem-reserve-ord_9"}),
    (
        "charge_payment",
        {"order_id": "ord_9", "amount": 2500, "currency": "USD", "idempotency_key": "idem-pay-9"},
    ),
    ("confirm_order", {"order_id": "ord_9", "idempotency_key": "idem-confirm-ord_9"}),
]


def _expected(calls: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"name": n, "arguments": a} for n, a in calls]


def chat(calls: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """An OpenAI chat message; a string argument is sent as is (it may be broken JSON)."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i + 1}",
                "type": "function",
                "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)},
            }
            for i, (n, a) in enumerate(calls)
        ],
    }


def anthropic(calls: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    blocks = [
        {"type": "tool_use", "id": f"tu_{i}", "name": n, "input": a}
        for i, (n, a) in enumerate(calls)
    ]
    return {"role": "assistant", "content": [{"type": "text", "text": "On it."}, *blocks]}


def responses(calls: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    items = [
        {"type": "function_call", "call_id": f"fc_{i}", "name": n, "arguments": json.dumps(a)}
        for i, (n, a) in enumerate(calls)
    ]
    return {"output": [{"type": "reasoning", "summary": []}, *items]}


def gemini(calls: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    parts = [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


def completion(calls: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": chat(calls), "finish_reason": "tool_calls"}]}


def text_only(answer: str = "Which order do you mean?") -> dict[str, Any]:
    return {"role": "assistant", "content": answer}


def case(
    proposal: Any, expected: Sequence[tuple[str, dict[str, Any]]], **expect: Any
) -> dict[str, Any]:
    return {"id": "c", "proposal": proposal, "expect": {"calls": _expected(expected), **expect}}


def score(doc: dict[str, Any], contract: Contract = CONTRACT) -> CaseResult:
    cases = parse_cases(json.dumps(doc), source="t.jsonl")
    assert cases.errors == ()
    return score_case(contract, cases.cases[0])


def codes(result: CaseResult) -> list[str]:
    return [v.code for v in result.strict.violations]


# -- the audit example -------------------------------------------------------------------


AUDIT = {
    "audit-1-cancel-order": (1.0, "forbidden_tool", ["forbidden_tool"]),
    "audit-2-refund-no-reason": (0.75, "missing_required", []),
    "audit-3-number-for-string": (1.0, "type_mismatch", []),
    "audit-4-unknown-force": (0.9, "unknown_argument", []),
    "audit-5-bad-json": (0.5, "invalid_json", []),
}


def test_the_audit_examples_give_the_five_legacy_figures_and_strict_codes() -> None:
    contract = load_contract(ROOT / "examples/checkout/contract.json")
    report = score_file(contract, read_cases(ROOT / "examples/audit/cases.jsonl"))
    assert report.errors == ()
    got = {r.id: (r.legacy, r.strict) for r in report.cases}
    assert list(got) == list(AUDIT)
    for case_id, (legacy, code, vetoes) in AUDIT.items():
        legacy_score, strict = got[case_id]
        assert legacy_score == legacy, case_id
        assert not strict.passed and strict.score == 0.0, case_id
        assert code in [v.code for v in strict.violations], case_id
        assert list(strict.vetoes) == vetoes, case_id
    assert report.summary.pass_rate == 0.0
    assert report.summary.vetoes == 1


# -- vendor formats, typed values --------------------------------------------------------


@pytest.mark.parametrize("fmt", [chat, completion, responses, anthropic, gemini])
def test_a_right_plan_passes_in_every_vendor_format(fmt: Any) -> None:
    expected = [
        (n, dict(a, idempotency_key=f"expected-key-{n}") if "idempotency_key" in a else a)
        for n, a in CHECKOUT
    ]
    result = score(case(fmt(CHECKOUT), expected, ordered=True))
    assert result.strict.passed, result.strict.violations
    assert result.strict.score == 1.0
    assert (result.strict.tool_selection, result.strict.exact_arguments) == (1.0, 1.0)
    assert result.strict.order is True
    assert result.strict.schema_valid
    assert result.warnings == ()
    # The legacy scorer compares the key by value: 4 of 5 arguments of create_order.
    assert result.legacy == 0.9


def test_numbers_compare_by_value_but_never_with_strings() -> None:
    as_float = [(n, dict(a, amount=2500.0) if n == "charge_payment" else a) for n, a in CHECKOUT]
    assert score(case(chat(as_float), CHECKOUT)).strict.passed

    as_string = [(n, dict(a, amount="2500") if n == "charge_payment" else a) for n, a in CHECKOUT]
    result = score(case(chat(as_string), CHECKOUT))
    assert not result.strict.passed
    assert codes(result) == ["type_mismatch", "wrong_arguments"]
    wrong = result.strict.violations[1]
    assert wrong.call == "call_3"
    assert wrong.message == (
        "'charge_payment' against expect.calls[2]: $.amount expected the number 2500, "
        'got the string "2500"'
    )
    assert result.strict.exact_arguments == 0.75
    assert result.strict.tool_selection == 1.0


# -- idempotency keys --------------------------------------------------------------------


def test_a_key_reused_for_another_operation_fails() -> None:
    reused = [
        (n, dict(a, idempotency_key="idem-one-key") if n != "create_order" else a)
        for n, a in CHECKOUT
    ]
    result = score(case(chat(reused), CHECKOUT))
    assert "duplicate_key_different_intent" in codes(result)
    wrong = [v for v in result.strict.violations if v.code == "wrong_arguments"]
    assert [v.call for v in wrong] == ["call_3", "call_4"]
    assert "is reused, but the expected calls are distinct operations" in wrong[0].message


def test_a_missing_key_fails_where_one_is_expected() -> None:
    no_key = [
        (n, {k: v for k, v in a.items() if k != "idempotency_key"} if n == "confirm_order" else a)
        for n, a in CHECKOUT
    ]
    result = score(case(chat(no_key), CHECKOUT))
    assert codes(result) == ["missing_idempotency_key", "wrong_arguments"]
    assert "$.idempotency_key expected" in result.strict.violations[1].message


# -- expectations, vetoes, extras and omissions -----------------------------------------


def test_invalid_expectations_are_a_warning_not_a_score_change() -> None:
    bad_expect = [("query_logistics", {"order_id": ""})]
    result = score(case(chat([("query_logistics", {"order_id": "ord_1"})]), bad_expect))
    assert [w.code for w in result.warnings] == ["expect_invalid"]
    assert "expect.calls[0]: out_of_range" in result.warnings[0].message
    assert codes(result) == ["wrong_arguments"]
    good = score(
        case(
            chat([("query_logistics", {"order_id": "ord_1"})]),
            [("query_logistics", {"order_id": "ord_1"})],
        )
    )
    assert good.warnings == () and good.strict.passed


READ = [("query_logistics", {"order_id": "ord_1"})]


@pytest.mark.parametrize(
    ("extra", "forbidden", "code", "vetoes"),
    [
        (("get_order", {"order_id": "ord_1"}), ["get_order"], "forbidden_tool", ["forbidden_tool"]),
        (
            (
                "cancel_order",
                {"order_id": "ord_1", "reason": "fraud", "idempotency_key": "idem-cancel-1"},
            ),
            [],
            "unexpected_call",
            ["unauthorised_side_effect"],
        ),
        (
            ("release_inventory", {"order_id": "ord_1", "idempotency_key": "idem-release-1"}),
            [],
            "unexpected_call",
            ["unauthorised_side_effect"],  # no reservation in the plan to compensate
        ),
        (("get_order", {"order_id": "ord_1"}), [], "unexpected_call", []),
    ],
)
def test_extra_calls_fail_and_side_effects_veto(
    extra: tuple[str, dict[str, Any]], forbidden: list[str], code: str, vetoes: list[str]
) -> None:
    result = score(case(chat([*READ, extra]), READ, forbidden=forbidden))
    assert codes(result) == [code]
    assert result.strict.violations[0].call == "call_2"
    assert list(result.strict.vetoes) == vetoes
    assert result.strict.veto is bool(vetoes)
    assert not result.strict.passed
    # The extra call does not spoil the alignment of the right one.
    assert result.strict.tool_selection == 1.0 and result.strict.exact_arguments == 1.0


@pytest.mark.parametrize(("order", "veto"), [("ord_9", False), ("ord_other", True)])
def test_a_compensation_of_an_earlier_call_is_an_extra_call_but_no_veto(
    order: str, veto: bool
) -> None:
    release = ("release_inventory", {"order_id": order, "idempotency_key": "idem-release-9"})
    result = score(case(chat([*CHECKOUT, release]), CHECKOUT))
    extra = [v for v in result.strict.violations if v.level == "scorer"]
    assert [(v.code, v.call) for v in extra] == [("unexpected_call", "call_5")]
    assert result.strict.veto is veto
    assert ("it compensates call_2 (reserve_inventory)" in extra[0].message) is not veto


def test_a_same_key_repeat_is_an_extra_call_but_no_veto() -> None:
    repeated = [*CHECKOUT[:3], CHECKOUT[2], CHECKOUT[3]]
    result = score(case(chat(repeated), CHECKOUT))
    assert "unexpected_call" in codes(result)
    assert result.strict.veto is False
    assert not result.strict.passed


def test_no_call_expected() -> None:
    right = score(case(text_only(), []))
    assert right.strict.passed and right.strict.irrelevance is True
    assert right.strict.tool_selection is None and right.legacy == 1.0

    called = score(case(chat(READ), []))
    assert not called.strict.passed and called.strict.irrelevance is False
    assert codes(called) == ["unexpected_call"]


def test_text_when_a_call_was_expected_fails() -> None:
    result = score(case(text_only(), READ))
    assert codes(result) == ["missing_call"]
    assert result.strict.tool_selection == 0.0
    assert result.strict.exact_arguments is None and result.strict.irrelevance is None
    assert result.legacy == 0.0


def test_order_is_checked_only_when_asked() -> None:
    two = [("query_logistics", {"order_id": "ord_1"}), ("get_order", {"order_id": "ord_1"})]
    swapped = chat(list(reversed(two)))
    ordered = score(case(swapped, two, ordered=True))
    assert codes(ordered) == ["wrong_order"] and ordered.strict.order is False
    unordered = score(case(swapped, two))
    assert unordered.strict.passed and unordered.strict.order is None


# -- unreadable output stays in the denominator -----------------------------------------


def test_unreadable_and_unparseable_proposals_score_zero_in_the_denominator() -> None:
    lines = [
        {"id": "ok", "proposal": chat(READ), "expect": {"calls": _expected(READ)}},
        {"id": "unreadable", "proposal": {"answer": "42"}, "expect": {"calls": _expected(READ)}},
        {
            "id": "broken",
            "proposal": chat([("query_logistics", '{"order_id": ')]),
            "expect": {"calls": _expected(READ)},
        },
        {
            "id": "nan",
            "proposal": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t",
                        "name": "query_logistics",
                        "input": {"order_id": "NAN_HERE"},
                    }
                ],
            },
            "expect": {"calls": _expected(READ)},
        },
    ]
    text = "\n".join(json.dumps(x) for x in lines).replace('"NAN_HERE"', "NaN")
    report = score_file(CONTRACT, parse_cases(text, source="t.jsonl"))
    assert report.errors == ()
    by_id = {r.id: r for r in report.cases}
    assert list(by_id) == ["ok", "unreadable", "broken", "nan"]
    unreadable = by_id["unreadable"].strict
    assert [(v.code, v.level) for v in unreadable.violations] == [("unreadable_proposal", "json")]
    assert "not a recognised proposal" in unreadable.violations[0].message
    assert by_id["unreadable"].legacy == 0.0
    assert "invalid_json" in codes(by_id["broken"])
    nan = by_id["nan"].strict.violations[0]
    assert (nan.code, nan.level) == ("invalid_json", "json")
    assert nan.message.startswith("$.proposal.content[0].input.order_id: NaN is not JSON")
    summary = report.summary
    assert (summary.cases, summary.passed, summary.unreadable) == (4, 1, 1)
    assert summary.pass_rate == 0.25
    assert report.exit_code == 1


def test_summary_means_skip_metrics_that_do_not_apply() -> None:
    lines = [
        {"id": "a", "proposal": chat(READ), "expect": {"calls": _expected(READ)}},
        {"id": "b", "proposal": text_only(), "expect": {"calls": []}},
        {"id": "c", "proposal": chat(READ), "expect": {"calls": []}},
    ]
    report = score_file(CONTRACT, parse_cases("\n".join(json.dumps(x) for x in lines), source="t"))
    s = report.summary.to_json()
    assert s["means"] == {
        "tool_selection": 1.0,
        "schema_valid": 1.0,
        "exact_arguments": 1.0,
        "order": None,
        "irrelevance": 0.5,
    }
    assert (s["cases"], s["passed"], s["errors"], s["expect_invalid"]) == (3, 2, 0, 0)
    assert s["legacy_mean"] == pytest.approx(2 / 3)


# -- the world hook ----------------------------------------------------------------------


WORLD = {
    "format": "txcheck-world/1",
    "catalog": {"sku_book": {"price": 1250, "stock": 10}},
    "orders": {"ord_1": {"customer_id": "cus_1", "items": [{"sku": "sku_book", "quantity": 1}]}},
}


def test_a_case_without_a_world_skips_the_business_level() -> None:
    plain = score(case(chat(READ), READ))
    assert "business" not in plain.strict.levels_checked
    assert plain.strict.levels_skipped["business"].startswith("no world fixture in the case")


def test_a_world_runs_the_business_level() -> None:
    known = score(dict(case(chat(READ), READ), world=WORLD))
    assert "business" in known.strict.levels_checked
    assert known.strict.passed
    missing = {**WORLD, "orders": {}}
    result = score(dict(case(chat(READ), READ), world=missing))
    assert codes(result) == ["order_not_found"]
    # The expected calls meet the same world: they fail it too.
    assert [w.code for w in result.warnings] == ["expect_invalid"]


def test_a_malformed_world_makes_the_line_bad() -> None:
    bad_world = json.dumps(dict(case(chat(READ), READ), world={"format": "nope"}))
    report: ScoreReport = score_file(CONTRACT, parse_cases(bad_world, source="t"))
    assert report.cases == ()
    assert len(report.errors) == 1
    assert report.errors[0].line == 1
    assert "txcheck-world/1" in report.errors[0].message
    assert report.exit_code == 2


def test_a_repeated_expectation_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = validate

    def counting(contract: Contract, plan: Any, **kw: Any) -> Any:
        calls.append(len(plan.calls))
        return real(contract, plan, **kw)

    monkeypatch.setattr(scoring, "validate", counting)  # the name scoring looks up
    bad_expect = _expected([("query_logistics", {"order_id": ""})])
    lines = [
        json.dumps({"id": f"sample-{k}", "proposal": chat(READ), "expect": {"calls": bad_expect}})
        for k in range(3)
    ]
    report = score_file(CONTRACT, parse_cases("\n".join(lines), source="t"))
    assert [[w.code for w in r.warnings] for r in report.cases] == [["expect_invalid"]] * 3
    assert len(calls) == 3 + 1  # three proposals, one expectation
    assert report.summary.expect_invalid == 3
