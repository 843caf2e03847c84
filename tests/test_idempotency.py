"""The idempotency store follows the Stripe / IETF Idempotency-Key rules, and the world's
tool calls are local transactions (state and outbox event together, or nothing)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.checkout_runs import CONTRACT, FIXTURE, PLAN, policy
from txcheck.exploration.kernel.target import Target
from txcheck.models.sim.choices import TOOL_OUTCOMES as OUTCOMES
from txcheck.models.sim.choices import Outcome
from txcheck.models.sim.idempotency import DEFAULT_TTL, IdempotencyStore
from txcheck.models.sim.requests import BrokerSend, Invoke, Publish, ToolResult
from txcheck.models.sim.world import PendingCall, World


def world(*, outbox: bool = True) -> World:
    return World(contract=CONTRACT, fixture=FIXTURE, outbox=outbox)


def invoke(tool: str, call_id: str = "call_1", **arguments: Any) -> Invoke:
    return Invoke(tool=tool, arguments=arguments, call_id=call_id)


CREATE = invoke(
    "create_order",
    order_id="ord_1",
    customer_id="cus_1",
    items=[{"sku": "sku_book", "quantity": 2}],
    currency="USD",
    idempotency_key="key-create-1",
)


def charge(amount: int = 2500, key: str = "key-charge-1") -> Invoke:
    return invoke(
        "charge_payment",
        "call_3",
        order_id="ord_1",
        amount=amount,
        currency="USD",
        idempotency_key=key,
    )


def send(w: World, request: Invoke, owner: str = "orchestrator-1") -> PendingCall | ToolResult:
    return w.send(owner, request)


def call(w: World, request: Invoke, outcome: str = "ok", owner: str = "orchestrator-1") -> Any:
    pending = send(w, request, owner)
    assert isinstance(pending, PendingCall), pending
    return w.complete(pending, outcome)  # type: ignore[arg-type]


def reserved_world() -> World:
    """ord_1 created and reserved: ready to be charged."""
    w = world()
    assert call(w, CREATE).status == "ok"
    reserve = invoke("reserve_inventory", "call_2", order_id="ord_1", idempotency_key="key-res-1")
    assert call(w, reserve).status == "ok"
    return w


# -- replay ---------------------------------------------------------------------------------


def test_a_committed_result_is_replayed_not_executed_again() -> None:
    w = reserved_world()
    first = call(w, charge())
    again = send(w, charge())
    assert isinstance(again, ToolResult)
    assert (again.status, again.replayed) == ("ok", True)
    assert (
        again.receipt == first.receipt == {"charge_id": "ch_1", "order_id": "ord_1", "amount": 2500}
    )
    assert list(w.state["checkout"]["charges"]) == ["ch_1"]
    assert [op["tool"] for op in w.operations].count("charge_payment") == 1


def test_a_stored_permanent_rejection_is_replayed() -> None:
    w = reserved_world()
    declined = call(w, charge(), "permanent_error")
    assert (declined.status, declined.code) == ("rejected", "declined")
    again = send(w, charge())
    assert isinstance(again, ToolResult)
    assert (again.status, again.code, again.replayed) == ("rejected", "declined", True)
    assert w.state["checkout"]["charges"] == {}


def test_a_business_rejection_is_stored_and_replayed() -> None:
    w = world()  # ord_1 does not exist
    first = call(w, charge())
    assert (first.status, first.code) == ("rejected", "order_not_found")
    record = w.store.lookup("acme", "key-charge-1", w.clock)
    assert record is not None and record.status == "rejected"
    again = send(w, charge())
    assert isinstance(again, ToolResult)
    assert (again.status, again.code, again.replayed) == ("rejected", "order_not_found", True)


# -- conflicts ------------------------------------------------------------------------------


def test_the_same_key_for_a_different_payload_is_a_conflict() -> None:
    w = reserved_world()
    call(w, charge())
    other = send(w, charge(amount=1250))
    assert isinstance(other, ToolResult)
    assert (other.status, other.code) == ("conflict", "idempotency_conflict")
    assert "'key-charge-1' was used for a different request" in other.message
    assert list(w.state["checkout"]["charges"]) == ["ch_1"]


def test_the_same_key_on_another_tool_is_a_conflict() -> None:
    w = reserved_world()  # key-create-1 belongs to create_order
    other = send(w, charge(key="key-create-1"))
    assert isinstance(other, ToolResult) and other.status == "conflict"


def test_a_request_while_the_key_is_in_flight_is_a_conflict() -> None:
    w = reserved_world()
    held = send(w, charge(), owner="orchestrator-1")
    assert isinstance(held, PendingCall)
    second = send(w, charge(), owner="orchestrator-2")
    assert isinstance(second, ToolResult)
    assert (second.status, second.code) == ("conflict", "idempotency_conflict")
    assert "in flight (held by orchestrator-1)" in second.message
    assert w.complete(held, "ok").status == "ok"
    replay = send(w, charge(), owner="orchestrator-2")
    assert isinstance(replay, ToolResult) and replay.replayed


# -- expiry ---------------------------------------------------------------------------------


def test_a_record_expires_after_the_ttl_and_the_key_executes_again() -> None:
    w = reserved_world()
    call(w, charge())
    w.clock = DEFAULT_TTL - 1
    still = send(w, charge())
    assert isinstance(still, ToolResult) and still.replayed
    w.clock = DEFAULT_TTL
    assert w.store.lookup("acme", "key-charge-1", w.clock) is None
    again = send(w, charge())
    assert isinstance(again, PendingCall)  # admitted: it will execute again
    assert w.complete(again, "ok").receipt == {
        "charge_id": "ch_2",
        "order_id": "ord_1",
        "amount": 2500,
    }
    assert sorted(w.state["checkout"]["charges"]) == ["ch_1", "ch_2"]
    record = w.store.lookup("acme", "key-charge-1", w.clock)
    assert record is not None and (record.created_at, record.expires_at) == (40, 80)


def test_store_records_bind_the_brief_fields() -> None:
    w = reserved_world()
    call(w, charge())
    record = w.store.lookup("acme", "key-charge-1", 0)
    assert record is not None
    data = record.to_json()
    assert {
        "tenant_id",
        "user_id",
        "operation_type",
        "resource_id",
        "normalized_intent_hash",
        "idempotency_key",
        "request_hash",
        "created_at",
        "expires_at",
        "status",
        "result_receipt",
    } <= set(data)
    # A charge names no customer, so the record binds the caller.
    assert (data["tenant_id"], data["user_id"], data["operation_type"]) == (
        "acme",
        "orchestrator-1",
        "charge_payment",
    )
    assert (data["resource_id"], data["status"], data["expires_at"]) == ("ord_1", "committed", 40)


# -- what is stored -------------------------------------------------------------------------

STORED = {
    "ok": "committed",
    "timeout_before_commit": None,
    "lost_response_after_commit": "committed",
    "transient_error": None,
    "permanent_error": "rejected",
}


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_only_commits_and_permanent_rejections_are_stored(outcome: str) -> None:
    w = reserved_world()
    result = call(w, charge(), outcome)
    record = w.store.lookup("acme", "key-charge-1", w.clock)
    assert (record.status if record else None) == STORED[outcome]
    if STORED[outcome] is None:  # nothing stored: the same key executes afresh
        assert result.status in ("timeout", "error")
        assert isinstance(send(w, charge()), PendingCall)
        assert w.state["checkout"]["charges"] == {}
    else:
        again = send(w, charge())
        assert isinstance(again, ToolResult) and again.replayed


def test_abort_drops_only_an_in_flight_marker() -> None:
    store = IdempotencyStore(ttl=5)
    fields: dict[str, Any] = {
        "tenant": "t",
        "user_id": "u",
        "operation_type": "op",
        "resource_id": "r",
        "intent_hash": "i",
        "request_hash": "h",
        "now": 0,
        "owner": "o",
    }
    assert store.begin(key="k1", **fields).decision == "proceed"
    store.abort("t", "k1")
    assert store.records() == []
    assert store.begin(key="k2", **fields).decision == "proceed"
    store.finish("t", "k2", status="committed", receipt={"x": 1}, now=0)
    store.abort("t", "k2")
    assert [r.status for r in store.records()] == ["committed"]
    assert store.begin(key="k2", **fields).decision == "replay"


def test_a_crash_before_the_answer_commits_nothing() -> None:
    w = reserved_world()
    before = copy.deepcopy(w.snapshot())
    pending = send(w, charge())
    assert isinstance(pending, PendingCall)
    w.abort(pending)
    assert w.snapshot() == before


# -- local transactions ---------------------------------------------------------------------


def test_a_handler_rejection_leaves_the_state_untouched() -> None:
    w = reserved_world()
    before = copy.deepcopy(w.state)
    operations, outbox = len(w.operations), len(w.outbox)
    result = call(w, charge(amount=999))
    assert (result.status, result.code) == ("rejected", "amount_mismatch")
    assert w.state == before
    assert (len(w.operations), len(w.outbox)) == (operations, outbox)


def test_a_schema_rejection_never_reaches_the_service() -> None:
    w = world()
    result = send(w, invoke("charge_payment", order_id="ord_1", amount="2500", currency="USD"))
    assert isinstance(result, ToolResult)
    assert (result.status, result.code) == ("rejected", "invalid_arguments")
    assert w.store.records() == [] and w.operations == []


def test_outbox_mode_writes_the_event_with_the_state_change() -> None:
    w = world(outbox=True)
    result = call(w, CREATE)
    assert "ord_1" in w.state["checkout"]["orders"]
    assert [row["event"]["id"] for row in w.outbox] == ["evt_1"] == w.operations[0]["events"]
    assert [e["id"] for e in result.events] == ["evt_1"]


def test_dual_write_mode_leaves_the_event_to_the_caller() -> None:
    w = world(outbox=False)
    result = call(w, CREATE)
    assert "ord_1" in w.state["checkout"]["orders"]
    assert w.outbox == [] and w.broker == []
    assert [e["id"] for e in result.events] == ["evt_1"]


@pytest.mark.parametrize("kind", [Publish, BrokerSend])
def test_a_publish_and_a_relay_send_reach_the_broker_alike(kind: type[Publish]) -> None:
    event = {"id": "evt_9", "type": "order.created"}
    request = kind(event=event)
    assert kind.faults == (Outcome.DUPLICATE,)
    assert request.summary() == {"kind": kind.__name__, "event": "evt_9"}
    w = world(outbox=False)
    assert request.perform(w, "orchestrator-1", Outcome.DUPLICATE) == (None, {})
    assert [(d["delivery_id"], d["event"]) for d in w.broker] == [("d_1", event), ("d_2", event)]
    assert request.perform(w, "orchestrator-1", Outcome.OK) == (None, {})
    assert len(w.broker) == 3
    assert Publish(event=event) != BrokerSend(event=event)  # two kinds, told apart by traces


@pytest.mark.parametrize(("name", "outbox"), [("guarded", True), ("naive", False)])
def test_in_a_run_the_event_appears_in_the_commit_step_only_with_the_outbox(
    name: str, outbox: bool
) -> None:
    run = Target(policy=policy(name), contract=CONTRACT, fixture=FIXTURE).run([PLAN])
    while not run.world.operations:
        before = len(run.world.outbox) + len(run.world.broker)
        step = run.apply(run.choices()[0])
    assert step.choice.action == "complete" and step.request["tool"] == "create_order"
    after = len(run.world.outbox) + len(run.world.broker)
    assert (after - before == 1) is outbox
    if not outbox:  # the event only travels with the orchestrator's next request
        step = run.apply(run.choices()[0])
        assert step.request == {"kind": "Publish", "event": "evt_1"}
        assert [d["event"]["id"] for d in run.world.broker] == ["evt_1"]
