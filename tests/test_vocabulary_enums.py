"""The names users compare are string enums (issue 23 item 5): tool result statuses,
journal phases, the explore outcome and the error kind. Their values are the strings
txcheck always wrote, they never print as ``Status.OK``, plain strings still work where
users hand them in, an unknown one is refused naming the allowed ones, and what a run
writes (journals, traces, fingerprints) is byte for byte what it was."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from enum import Enum
from typing import Any

import pytest

from txcheck import (
    DEFAULT_INVARIANTS,
    TERMINAL_PHASES,
    Claim,
    Deviation,
    Deviations,
    ErrorKind,
    ExploreOutcome,
    ExploreVerdict,
    Invoke,
    JournalAppend,
    JournalRead,
    JournalState,
    OrchestratorContext,
    Phase,
    Plan,
    Policy,
    ResultStatus,
    Target,
    ToolResult,
    TxcheckError,
    UnknownNameError,
    default_contract,
    default_fixture,
    dumps_trace,
    execute,
    trace_of,
)
from txcheck.models import errors
from txcheck.models.sim.digest import serial

ENUMS: tuple[type[Enum], ...] = (ResultStatus, Phase, ExploreOutcome, ErrorKind)


# -- the values are the old strings ---------------------------------------------------------


def test_member_values_are_the_strings_txcheck_always_wrote() -> None:
    assert {m.value for m in ResultStatus} == {"ok", "rejected", "conflict", "timeout", "error"}
    assert [m.value for m in Phase] == [
        "PROPOSED",
        "VALIDATED",
        "EXECUTING",
        "COMPENSATING",
        "RECONCILED",
        "REJECTED",
        "MANUAL",
        "ATTACHED",
    ]
    assert {"RECONCILED", "REJECTED", "MANUAL", "ATTACHED"} == TERMINAL_PHASES
    assert {m.value for m in ExploreOutcome} == {"counterexample", "pass", "inconclusive", "error"}


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_user_code_error_kind_is_an_error_kind() -> None:
    kinds = {cls.kind for cls in [errors.UserCodeError, *_subclasses(errors.UserCodeError)]}
    assert kinds == {m.value for m in ErrorKind}


@pytest.mark.parametrize("member", [m for enum in ENUMS for m in enum], ids=str)
def test_a_member_equals_hashes_and_prints_as_its_string(member: Any) -> None:
    value = member.value
    assert type(value) is str
    assert member == value and hash(member) == hash(value) and value in {member}
    assert str(member) == f"{member}" == format(member, "") == value
    assert "%s" % member == value  # noqa: UP031 (what %-formatting prints is under test)
    assert f"{member:>14}" == f"{value:>14}"
    assert json.dumps(member) == json.dumps(value)
    assert json.dumps({member: member}) == json.dumps({value: value})
    assert type(member).parse(value) is member and type(member).parse(member) is member


def test_plain_strings_are_terminal_phases_too() -> None:
    assert "MANUAL" in TERMINAL_PHASES and "EXECUTING" not in TERMINAL_PHASES


# -- strings where users hand them in --------------------------------------------------------


def test_a_tool_result_built_with_a_string_holds_the_member() -> None:
    result = ToolResult(status="timeout", code="timeout")
    assert result.status is ResultStatus.TIMEOUT
    assert result == ToolResult(status=ResultStatus.TIMEOUT, code="timeout")
    summary = result.summary()
    assert summary == {"status": "timeout", "code": "timeout"}
    assert type(summary["status"]) is str  # traces hold the plain value


@pytest.mark.parametrize("status", ["okay", "OK", "", "Status.OK"])
def test_an_unknown_status_is_refused_naming_the_allowed_ones(status: str) -> None:
    with pytest.raises(UnknownNameError) as raised:
        ToolResult(status=status)
    message = str(raised.value)
    assert message.startswith(f"unknown ResultStatus {status!r}: expected one of ")
    for allowed in ("'ok'", "'rejected'", "'conflict'", "'timeout'", "'error'"):
        assert allowed in message
    assert isinstance(raised.value, TxcheckError) and isinstance(raised.value, ValueError)


def test_a_status_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(UnknownNameError, match="unknown ResultStatus 200"):
        ToolResult(status=200)  # type: ignore[arg-type]


def _verdict(**fields: Any) -> ExploreVerdict:
    base: dict[str, Any] = {
        "outcome": "pass",
        "unexercised": (),
        "bound": "exhaustive to 1 deviation",
        "exhaustive_to": 1,
        "asked": 1,
        "complete": True,
        "runs": 3,
        "writes": 2,
        "faults": 1,
    }
    return ExploreVerdict(**{**base, **fields})


def test_a_verdict_built_with_strings_holds_members_and_writes_plain_json() -> None:
    verdict = _verdict(outcome="error", error_kind="service")
    assert verdict.outcome is ExploreOutcome.ERROR and verdict.error_kind is ErrorKind.SERVICE
    data = verdict.to_json()
    assert (data["outcome"], data["error_kind"]) == ("error", "service")
    assert type(data["outcome"]) is str and type(data["error_kind"]) is str
    assert _verdict().to_json()["error_kind"] is None
    assert json.dumps(data) == json.dumps(_verdict(outcome="error", error_kind="service").to_json())
    with pytest.raises(UnknownNameError, match="expected one of 'counterexample', 'pass'"):
        _verdict(outcome="passed")
    with pytest.raises(UnknownNameError, match="unknown ErrorKind 'services'"):
        _verdict(outcome="error", error_kind="services")


def test_a_journal_folds_known_phases_to_members_and_keeps_its_own() -> None:
    state = JournalState.fold([{"phase": "PROPOSED"}, {"phase": "MANUAL", "diverging": []}])
    assert state.phase is Phase.MANUAL and state.terminal
    own = JournalState.fold([{"phase": "PROPOSED"}, {"phase": "WAITING_FOR_APPROVAL"}])
    assert own.phase == "WAITING_FOR_APPROVAL" and not own.terminal


def test_a_journal_entry_stores_members_as_their_strings() -> None:
    entry = {"phase": Phase.MANUAL, "diverging": ["call_1: committed"]}
    for request in (JournalAppend(entry=entry), Claim(operation="op", entry=entry)):
        stored = request.entry
        assert stored == {"phase": "MANUAL", "diverging": ["call_1: committed"]}
        assert type(stored["phase"]) is str
    plain = {"phase": "MANUAL"}
    assert JournalAppend(entry=plain).entry is plain  # nothing to convert: not copied


# -- a policy in strings and the same policy in members ---------------------------------------


def _policy(name: str, vocabulary: Callable[[str], Any]) -> Policy:
    """One policy, spelled with ``vocabulary`` (``str`` or the enums' members)."""
    ok = vocabulary("ok")

    class Spelled(Policy):
        def orchestrate(self, ctx: OrchestratorContext) -> Any:
            journal = yield JournalRead()
            if journal and journal[-1].get("phase") in TERMINAL_PHASES:
                return
            proposed = {"phase": vocabulary("PROPOSED")}
            owner = yield Claim(operation=ctx.operation_id(), entry=proposed)
            if owner != ctx.instance:
                yield JournalAppend(entry={"phase": vocabulary("ATTACHED"), "owner": owner})
                return
            for call in ctx.plan.calls:
                result: ToolResult = yield Invoke(
                    tool=call.name, arguments=dict(call.arguments or {}), call_id=call.id
                )
                if result.status != ok:
                    why = [f"{call.id}: {result.status}", result.status]
                    manual = {"phase": vocabulary("MANUAL"), "diverging": why}
                    yield JournalAppend(entry=manual)
                    return
            yield JournalAppend(entry={"phase": vocabulary("RECONCILED")})

    Spelled.name = name
    return Spelled()


def _members(value: str) -> Any:
    return ResultStatus(value) if value == value.lower() else Phase(value)


PLAN = Plan.of(
    (
        "create_order",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "items": [{"sku": "sku_book", "quantity": 1}],
            "currency": "USD",
            "idempotency_key": "key-create-1",
        },
    ),
    ("reserve_inventory", {"order_id": "ord_1", "idempotency_key": "key-reserve-1"}),
    (
        "charge_payment",
        {"order_id": "ord_1", "amount": 1250, "currency": "USD", "idempotency_key": "key-ch-1"},
    ),
    ("confirm_order", {"order_id": "ord_1", "idempotency_key": "key-confirm-1"}),
)


def _trace(policy: Policy, deviations: list[Deviation]) -> tuple[str, Any]:
    contract, fixture = default_contract(), default_fixture()
    target = Target(
        policy=policy, contract=contract, fixture=fixture, invariants=DEFAULT_INVARIANTS
    )
    execution = execute(target, [PLAN], chooser=Deviations(deviations), stop_at_first=False)
    document = trace_of(
        execution, policy="spelled", contract=contract, fixture=fixture, plans=[PLAN]
    )
    return dumps_trace(document), execution


@pytest.mark.parametrize(
    "deviations",
    [
        [],
        [Deviation(action="complete", outcome="permanent_error", tool="reserve_inventory")],
        [Deviation(action="complete", outcome="timeout_before_commit", tool="create_order")],
    ],
    ids=["no fault", "rejected", "timeout"],
)
def test_a_policy_in_plain_strings_runs_as_the_same_policy_in_members(
    deviations: list[Deviation],
) -> None:
    strings, by_strings = _trace(_policy("spelled", str), deviations)
    members, by_members = _trace(_policy("spelled", _members), deviations)
    assert strings == members  # the trace, byte for byte
    assert [f.name for f in by_strings.failures] == [f.name for f in by_members.failures]
    journal = by_members.run.world.journals["orchestrator-1"]
    assert all(type(e["phase"]) is str for e in journal if "phase" in e)
    if not deviations:
        assert by_strings.ok and journal[-1] == {"phase": "RECONCILED"}
    else:
        last = journal[-1]  # a status listed in an entry is journaled as its string
        assert last["phase"] == "MANUAL" and type(last["diverging"][1]) is str
        assert last["diverging"][0].endswith(": " + last["diverging"][1])
        assert "ResultStatus" not in strings and "Phase." not in strings


def test_a_tool_result_fingerprints_as_it_did_with_a_plain_status() -> None:
    result = ToolResult(status="ok", receipt={"order_id": "ord_1", "amount": 2500})
    plain = copy.copy(result)
    object.__setattr__(plain, "status", "ok")  # what ToolResult held before the enum
    assert type(plain.status) is str and type(result.status) is ResultStatus
    assert serial(result) == serial(plain)
    assert not serial(result).startswith(b"pickle:")  # marshal's fast path, as before
    assert serial(ToolResult(status="error")) != serial(ToolResult(status="timeout"))


def test_an_execution_that_raised_names_the_error_kind_as_a_member() -> None:
    class Raises(Policy):
        name = "raises"

        def orchestrate(self, ctx: OrchestratorContext) -> Any:
            yield JournalRead()
            raise RuntimeError("boom")

    target = Target(
        policy=Raises(),
        contract=default_contract(),
        fixture=default_fixture(),
        invariants=DEFAULT_INVARIANTS,
    )
    execution = execute(target, [PLAN])
    assert execution.error is not None and execution.error_kind is ErrorKind.POLICY
    clean = execute(
        Target(
            policy=_policy("spelled", str),
            contract=default_contract(),
            fixture=default_fixture(),
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLAN],
    )
    assert clean.error is None and clean.error_kind is None
