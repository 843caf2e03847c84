"""The plan graph: edges, execution order, parallel groups and the graph's plan codes."""

from __future__ import annotations

from typing import Any

import networkx as nx
from hypothesis import given, settings

from tests.strategies import arbitrary_plans, call, checkout_calls, plan_of
from txcheck.models.plan.contract import Contract, Tool, Workflow
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.plan_graph import build_plan_graph, normalised
from txcheck.models.plan.proposal import Call, Plan

CONTRACT = default_contract()


def graph_of(*calls: Call) -> Any:
    return build_plan_graph(CONTRACT, plan_of(*calls).calls)


def codes(graph: Any) -> list[tuple[str, str | None]]:
    return [(v.code, v.call) for _, v in graph.violations]


def checkout(order: str = "o1", *, first: int = 1, prefix: str = "") -> list[Call]:
    return [
        call(f"call_{first + i}", name, args)
        for i, (name, args) in enumerate(checkout_calls(order, prefix=prefix))
    ]


def test_a_complete_checkout_runs_in_workflow_order() -> None:
    graph = graph_of(*checkout())
    assert graph.violations == ()
    assert graph.summary() == {
        "order": ["call_1", "call_2", "call_3", "call_4"],
        "parallel_groups": [["call_1"], ["call_2"], ["call_3"], ["call_4"]],
        "edges": [
            ["call_1", "call_2", "workflow"],
            ["call_2", "call_3", "workflow"],
            ["call_3", "call_4", "workflow"],
        ],
    }


def test_checkouts_of_different_orders_run_in_parallel() -> None:
    one, two = checkout("o1", first=1), checkout("o2", first=5)
    interleaved = [c for pair in zip(one, two, strict=True) for c in pair]
    graph = graph_of(*interleaved)
    assert graph.violations == ()
    assert [list(g) for g in graph.parallel_groups] == [
        ["call_1", "call_5"],
        ["call_2", "call_6"],
        ["call_3", "call_7"],
        ["call_4", "call_8"],
    ]
    assert list(graph.order) == [c.id for c in interleaved]


def test_reads_run_together_and_between_the_writes_of_their_resource() -> None:
    graph = graph_of(
        call("r1", "get_order", {"order_id": "o1"}),
        call("r2", "query_logistics", {"order_id": "o1"}),
        call("r3", "get_order", {"order_id": "o9"}),
        call(
            "w1",
            "cancel_order",
            {"order_id": "o1", "reason": "fraud", "idempotency_key": "k-cancel-1"},
        ),
        call("r4", "get_order", {"order_id": "o1"}),
    )
    assert graph.violations == ()
    assert [list(g) for g in graph.parallel_groups] == [["r1", "r2", "r3"], ["w1"], ["r4"]]
    assert graph.summary()["edges"] == [
        ["r1", "w1", "resource"],
        ["r2", "w1", "resource"],
        ["w1", "r4", "resource"],
    ]


def test_writes_to_one_resource_are_serialised_in_list_order() -> None:
    graph = graph_of(
        call(
            "a",
            "cancel_order",
            {"order_id": "o1", "reason": "fraud", "idempotency_key": "k-aaaaaaa"},
        ),
        call("b", "release_inventory", {"order_id": "o1", "idempotency_key": "k-bbbbbbb"}),
        call("c", "release_inventory", {"order_id": "o2", "idempotency_key": "k-ccccccc"}),
    )
    assert graph.summary()["edges"] == [["a", "b", "resource"]]
    assert [list(g) for g in graph.parallel_groups] == [["a", "c"], ["b"]]


# -- dependency_too_early ---------------------------------------------------------------


def test_charge_listed_before_reserve_is_too_early() -> None:
    create, reserve, charge, confirm = checkout()
    graph = graph_of(create, charge, reserve, confirm)
    assert codes(graph) == [("dependency_too_early", "call_3")]
    ((_, violation),) = graph.violations
    assert violation.message == (
        "charge_payment (call_3) is listed before reserve_inventory (call_2) on order_id "
        "\"o1\", but the 'checkout' workflow runs reserve_inventory first"
    )
    # The listed order is still the order, and it never gets a backward edge.
    assert list(graph.order) == ["call_1", "call_3", "call_2", "call_4"]


def test_workflow_order_only_binds_calls_on_the_same_resource() -> None:
    one, two = checkout("o1", first=1), checkout("o2", first=5)
    # o2's charge before o1's reserve is fine: different orders.
    graph = graph_of(one[0], two[0], two[1], two[2], one[1], one[2], two[3], one[3])
    assert graph.violations == ()


def test_depends_on_a_later_call_is_too_early() -> None:
    graph = graph_of(
        call("a", "get_order", {"order_id": "o1"}, depends_on=["b"]),
        call("b", "query_logistics", {"order_id": "o1"}),
    )
    assert codes(graph) == [("dependency_too_early", "a")]
    assert graph.edges == ()


def test_depends_on_an_earlier_call_is_an_edge() -> None:
    graph = graph_of(
        call("a", "get_order", {"order_id": "o1"}),
        call("b", "query_logistics", {"order_id": "o2"}, depends_on=["a"]),
    )
    assert graph.violations == ()
    assert graph.summary()["edges"] == [["a", "b", "depends_on"]]
    assert [list(g) for g in graph.parallel_groups] == [["a"], ["b"]]


def test_depends_on_an_unknown_call_is_too_early() -> None:
    graph = graph_of(call("a", "get_order", {"order_id": "o1"}, depends_on=["nope", "nope"]))
    assert codes(graph) == [("dependency_too_early", "a")]
    assert "'nope'" not in graph.violations[0][1].message  # ids are shown plainly
    assert "nope, which is not a call of this plan" in graph.violations[0][1].message


def test_depends_on_against_the_workflow_says_so() -> None:
    create, reserve, charge, confirm = checkout()
    create = call(create.id, create.name, create.arguments, depends_on=["call_2"])
    graph = graph_of(create, reserve, charge, confirm)
    assert codes(graph) == [("dependency_too_early", "call_1")]
    assert graph.violations[0][1].message.endswith(
        "; and the 'checkout' workflow runs create_order first"
    )


def test_an_exact_repeat_of_a_keyed_call_is_one_operation() -> None:
    calls = checkout()
    repeat = call("call_5", calls[2].name, calls[2].arguments)  # same charge, same key
    graph = graph_of(*calls, repeat)
    assert graph.violations == ()
    # A different charge after the confirmation is too early for the confirmation.
    other = call(
        "call_6",
        "charge_payment",
        {**dict(calls[2].arguments or {}), "amount": 5, "idempotency_key": "k-other-1"},
    )
    assert codes(graph_of(*calls, other)) == [("dependency_too_early", "call_4")]


# -- cycle ------------------------------------------------------------------------------


def test_a_depends_on_cycle_is_reported_once() -> None:
    graph = graph_of(
        call("a", "get_order", {"order_id": "o1"}, depends_on=["c"]),
        call("b", "get_order", {"order_id": "o2"}, depends_on=["a"]),
        call("c", "get_order", {"order_id": "o3"}, depends_on=["b"]),
    )
    assert codes(graph) == [("cycle", "a")]
    assert graph.violations[0][1].message.startswith("depends_on forms a cycle: a -> b -> c -> a")
    assert graph.summary()["edges"] == []  # no edge of a cycle is usable


def test_a_call_depending_on_itself_is_a_cycle() -> None:
    graph = graph_of(call("a", "get_order", {"order_id": "o1"}, depends_on=["a"]))
    assert codes(graph) == [("cycle", "a")]


def test_a_chain_of_depends_on_is_no_cycle() -> None:
    graph = graph_of(
        call("a", "get_order", {"order_id": "o1"}),
        call("b", "get_order", {"order_id": "o2"}, depends_on=["a"]),
        call("c", "get_order", {"order_id": "o3"}, depends_on=["b", "a"]),
    )
    assert graph.violations == ()
    assert [list(g) for g in graph.parallel_groups] == [["a"], ["b"], ["c"]]


def test_workflow_and_resource_edges_never_make_a_cycle() -> None:
    create, reserve, charge, confirm = checkout()
    graph = graph_of(confirm, charge, reserve, create)  # everything backwards
    assert {c for c, _ in codes(graph)} == {"dependency_too_early"}
    assert list(graph.order) == ["call_4", "call_3", "call_2", "call_1"]


# -- incomplete_workflow ----------------------------------------------------------------


def test_a_missing_step_is_an_incomplete_workflow() -> None:
    graph = graph_of(*checkout()[:3])
    assert codes(graph) == [("incomplete_workflow", "call_1")]
    assert graph.violations[0][1].message == (
        "the 'checkout' workflow on order_id \"o1\" is missing confirm_order (the plan has "
        "create_order, reserve_inventory, charge_payment); a plan that starts a workflow must "
        "contain all of its steps"
    )


def test_steps_on_another_resource_do_not_complete_a_workflow() -> None:
    one = checkout("o1")
    two = checkout("o2", first=5)
    graph = graph_of(*one[:3], two[3])
    assert codes(graph) == [
        ("incomplete_workflow", "call_1"),
        ("incomplete_workflow", "call_8"),
    ]


def test_reads_alone_start_no_workflow() -> None:
    contract = Contract(
        tools={
            "look": Tool(name="look", effect="read", resources=("id",)),
            "act": Tool(name="act", effect="write", resources=("id",)),
        },
        workflows=(Workflow(name="w", steps=("look", "act")),),
    )
    reads = Plan.of(("look", {"id": 1}))
    assert build_plan_graph(contract, reads.calls).violations == ()
    writes = Plan.of(("act", {"id": 1}))
    assert [v.code for _, v in build_plan_graph(contract, writes.calls).violations] == [
        "incomplete_workflow"
    ]


def test_a_step_shared_by_two_workflows_needs_only_one_complete() -> None:
    contract = Contract(
        tools={n: Tool(name=n, effect="write", resources=("id",)) for n in ("a", "b", "c")},
        workflows=(
            Workflow(name="long", steps=("a", "b", "c")),
            Workflow(name="short", steps=("a", "c")),
        ),
    )
    plan = Plan.of(("a", {"id": 1}), ("c", {"id": 1}))
    assert build_plan_graph(contract, plan.calls).violations == ()
    plan = Plan.of(("a", {"id": 1}))
    ((_, violation),) = build_plan_graph(contract, plan.calls).violations
    assert "'short' workflow" in violation.message and "missing c " in violation.message


# -- structure --------------------------------------------------------------------------


def test_the_order_is_the_topological_order_with_list_position_as_tiebreak() -> None:
    one, two = checkout("o1", first=1), checkout("o2", first=5)
    reads = [
        call("r1", "get_order", {"order_id": "o9"}),
        call("r2", "get_order", {"order_id": "o1"}),
    ]
    calls = [two[0], *reads, one[0], one[1], two[1], two[2], one[2], one[3], two[3]]
    graph = graph_of(*calls)
    position = {c.id: i for i, c in enumerate(calls)}
    assert graph.order == tuple(
        nx.lexicographical_topological_sort(graph.graph, key=position.__getitem__)
    )
    assert all(position[a] < position[b] for a, b, _ in graph.edges)
    assert sorted(graph.graph.edges(data="kind")) == sorted(graph.edges)


def test_duplicate_ids_keep_the_first_call_as_the_node() -> None:
    graph = graph_of(
        call("a", "get_order", {"order_id": "o1"}),
        call("a", "get_order", {"order_id": "o2"}),
    )
    assert list(graph.order) == ["a"]
    assert sorted(graph.graph.nodes) == ["a"]


def test_normalised_compares_numbers_by_value_and_keeps_booleans_apart() -> None:
    assert normalised({"a": 1, "b": [1.0]}) == normalised({"b": [1], "a": 1.0})
    assert normalised(True) != normalised(1)
    assert normalised("1") != normalised(1)
    assert normalised(None) != normalised(0)
    deep: Any = []
    for _ in range(1000):
        deep = [deep]
    assert normalised(deep) != normalised(deep)  # too deep to compare: never equal


def test_a_large_plan_builds_in_list_order() -> None:
    calls = [c for n in range(500) for c in checkout(f"o{n}", first=4 * n + 1)]
    graph = graph_of(*calls)
    assert graph.violations == ()
    assert len(graph.order) == 2000
    assert len(graph.parallel_groups) == 4


@settings(max_examples=150, deadline=None)
@given(arbitrary_plans(CONTRACT))
def test_parallel_groups_are_networkx_topological_generations(plan: Plan) -> None:
    """The linear pass gives exactly the generations networkx computes on the same graph."""
    graph = build_plan_graph(CONTRACT, plan.calls)
    position = {call_id: i for i, call_id in enumerate(graph.order)}
    expected = tuple(
        tuple(sorted(generation, key=position.__getitem__))
        for generation in nx.topological_generations(graph.graph)
    )
    assert graph.parallel_groups == expected
