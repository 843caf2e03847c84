"""Validation's quick paths give the answers of the full ones.

``validate(..., summary=False)`` skips the plan graph (and the key rules) when a linear
pass (``quick_checks``) shows they have nothing to report, ``proven_valid`` says "valid"
only when that is certain, and the schema check's quick scan agrees with the full one.
Plans are drawn close to the checkout contract's rules (workflow steps in and out of
order, shared resources and keys, repeats), where the quick passes must tell "nothing to
report" from "look closer".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import arbitrary_plans, call, checkout_calls, json_values
from txcheck.models.plan.contract_index import contract_index
from txcheck.models.plan.contract_loader import default_contract, load_contract
from txcheck.models.plan.plan_graph import build_plan_graph, plan_graph_violations
from txcheck.models.plan.plan_quick import quick_checks
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.plan.schema_check import MAX_ARGUMENT_DEPTH, _plain, _scan
from txcheck.models.plan.validation import _key_violations, proven_valid, validate

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = default_contract()
CUSTOM = load_contract(ROOT / "examples/custom_service/contract.json")
PROPOSALS = sorted((ROOT / "examples/proposals").glob("*.json"))

_POOL = [
    *checkout_calls("o1"),
    *checkout_calls("o2"),
    *checkout_calls("o1", prefix="again-"),
    ("query_logistics", {"order_id": "o1"}),
    ("get_order", {"order_id": 1}),
    ("refund_payment", {"charge_id": "ch_1", "reason": "damaged"}),
    ("refund_payment", {"charge_id": "ch_1", "reason": "other"}),
    ("cancel_order", {"order_id": "o1", "reason": "fraud", "idempotency_key": "o1-create"}),
    ("charge_payment", {"order_id": "o1", "amount": "1250", "currency": "USD"}),
    ("release_inventory", {"order_id": "o2"}),
]


@st.composite
def _near_checkout_plans(draw: st.DrawFn) -> Plan:
    """Plans of pool calls: whole checkouts, some steps dropped, swapped or repeated."""
    picks = draw(st.lists(st.integers(0, len(_POOL) - 1), max_size=7))
    if draw(st.booleans()):
        picks = [0, 1, 2, 3, *picks[:2]]
    calls = []
    for index, pick in enumerate(picks):
        name, arguments = _POOL[pick]
        same_id = index > 0 and draw(st.integers(0, 9)) == 0
        depends = draw(st.sampled_from([(), (), (), (), ("c0",), ("c5",)]))
        calls.append(
            call(f"c{index - 1 if same_id else index}", name, arguments, index=index)
            if not depends
            else call(f"c{index}", name, arguments, index=index, depends_on=depends)
        )
    return Plan(calls=tuple(calls))


def _same_answers(contract: Any, plan: Plan) -> None:
    full = validate(contract, plan)
    quick = validate(contract, plan, summary=False)
    assert quick.violations == full.violations
    assert quick.levels_checked == full.levels_checked
    assert quick.levels_skipped == full.levels_skipped
    keys_clean, graph_clean, in_order = quick_checks(contract_index(contract), plan.calls)
    if keys_clean:
        assert _key_violations(contract, plan) == []
    graph = build_plan_graph(contract, plan.calls)
    assert plan_graph_violations(contract, plan.calls) == graph.violations
    if graph_clean:
        assert graph.violations == ()
    if in_order:
        assert plan_graph_violations(contract, plan.calls, in_order=True) == graph.violations
        assert {v.code for _, v in graph.violations} <= {"incomplete_workflow"}
    if proven_valid(contract, plan.calls):
        assert full.valid


def test_quick_paths_on_the_example_proposals() -> None:
    for path in PROPOSALS:
        _same_answers(CONTRACT, load_proposal(path))


def test_a_whole_checkout_is_proven_valid_without_the_graph() -> None:
    index = contract_index(CONTRACT)
    plan = Plan.of(*checkout_calls("o1"))
    assert proven_valid(CONTRACT, plan.calls)
    assert quick_checks(index, plan.calls) == (True, True, True)
    swapped = Plan.of(*[checkout_calls("o1")[i] for i in (0, 2, 1, 3)])
    assert quick_checks(index, swapped.calls) == (True, False, False)
    twice = Plan.of(*checkout_calls("o1"), *checkout_calls("o2"))
    assert quick_checks(index, twice.calls) == (False, True, True)
    dropped = Plan.of(*checkout_calls("o1")[:3])
    assert quick_checks(index, dropped.calls) == (True, False, True)
    assert not proven_valid(CONTRACT, dropped.calls)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_checkout_plans())
def test_quick_paths_on_near_checkout_plans(plan: Plan) -> None:
    _same_answers(CONTRACT, plan)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([CONTRACT, CUSTOM]).flatmap(lambda c: st.tuples(st.just(c), arbitrary_plans(c)))
)
def test_quick_paths_on_arbitrary_plans(drawn: tuple[Any, Plan]) -> None:
    _same_answers(*drawn)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=4), json_values(10), max_size=4))
def test_the_quick_scan_agrees_with_the_full_scan(arguments: dict[str, Any]) -> None:
    if _plain(arguments, 1):
        depth, huge, exact = _scan(arguments)
        assert depth <= MAX_ARGUMENT_DEPTH and huge is None and exact


def test_the_quick_scan_leaves_deep_and_inexact_values_to_the_full_scan() -> None:
    deep: Any = 1
    for _ in range(MAX_ARGUMENT_DEPTH):
        deep = [deep]
    assert _plain({"a": deep[0]}, 1)  # exactly at the limit
    assert not _plain({"a": deep}, 1)
    assert not _plain({"a": 2**53 + 1}, 1)
    assert not _plain({"a": [float("inf")]}, 1)
    assert not _plain({"a": (1, 2)}, 1)
