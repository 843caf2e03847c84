"""``txcheck replay``: exact re-execution, other policies, divergence, determinism."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

import txcheck
from tests.strategies import checkout_calls
from txcheck.cli import main
from txcheck.cli.cmd_replay import ReplayReport, replay_trace, shared_plans
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.traces import replaying
from txcheck.traces.document import dumps_trace, load_trace, target_of, trace_of, write_trace

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TRACE = ROOT / "examples" / "pytest_example" / "counterexample.json"
CONTRACT = default_contract()
FIXTURE = default_fixture()
PLAN = Plan.of(*checkout_calls("ord_1"))
SMALL = Plan.of(
    ("reserve_inventory", {"order_id": "ord_existing", "idempotency_key": "key-reserve-1"})
)


def _run(policy: str, plans: list[Plan], *deviations: Deviation) -> Execution:
    return execute(
        Target(
            policy=builtin_policy(policy),
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        plans,
        chooser=Deviations(deviations),
    )


def _write(path: Path, policy: str, plans: list[Plan], *deviations: Deviation) -> Path:
    execution = _run(policy, plans, *deviations)
    document = trace_of(execution, policy=policy, contract=CONTRACT, fixture=FIXTURE, plans=plans)
    write_trace(document, path)
    return path


LOST = Deviation(action="complete", outcome="lost_response_after_commit", tool="charge_payment")


def test_replay_reproduces_the_recorded_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _write(tmp_path / "t.json", "control-fresh-key", [PLAN], LOST)
    assert main(["replay", str(trace), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["reproduced"] and result["divergence"] is None
    # the fresh key (hygiene), then the second charge it led to (harm)
    expected = ["retries_reuse_key", "no_double_charge", "no_double_effect"]
    assert result["recorded_violations"] == expected
    assert [v["invariant"] for v in result["violations"]] == expected


def test_replay_is_byte_for_byte_deterministic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _write(tmp_path / "t.json", "control-no-saga", [PLAN], LOST)
    outputs = []
    for _ in range(2):
        assert main(["replay", str(trace), "--json"]) in (0, 1)
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    loaded = load_trace(trace)
    again = replay_trace(loaded, loaded.policy, timeout=None)
    rewritten = trace_of(
        again, policy=loaded.policy, contract=loaded.contract, fixture=loaded.fixture,
        plans=loaded.plans,
    )  # fmt: skip
    assert dumps_trace(rewritten) == trace.read_text(encoding="utf-8")


def test_another_policy_that_passes_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ack = Deviation(action="step", outcome="ack_lost", actor="consumer")
    trace = _write(tmp_path / "t.json", "control-no-dedupe", [PLAN], ack)
    assert main(["replay", str(trace)]) == 1
    capsys.readouterr()
    assert main(["replay", str(trace), "--policy", "guarded", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["policy"] == "guarded" and result["recorded_policy"] == "control-no-dedupe"
    assert result["violations"] == [] and not result["reproduced"]


def test_a_policy_that_cannot_follow_the_trace_diverges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _write(tmp_path / "t.json", "control-fresh-key", [PLAN], LOST)
    assert main(["replay", str(trace), "--policy", "naive", "--json"]) in (0, 1)
    divergence = json.loads(capsys.readouterr().out)["divergence"]
    assert divergence is not None
    recorded = load_trace(trace).choices[divergence["step"]]
    assert divergence["wanted"] == recorded.to_json()
    assert recorded.to_json() not in divergence["available"]
    assert main(["replay", str(trace), "--policy", "naive"]) in (0, 1)
    assert f"Diverged: step {divergence['step']}: recorded choice" in capsys.readouterr().out


def test_under_another_policy_the_recorded_faults_are_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # naive's steps are not guarded's: exact replay diverges at once, so the recorded
    # fault (the charge's lost response) is replayed at guarded's own charge instead.
    trace = _write(tmp_path / "t.json", "naive", [PLAN], LOST)
    assert main(["replay", str(trace), "--policy", "guarded", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["divergence"] is not None and result["violations"] == []
    translated = result["translated"]
    assert translated["deviations"] == 1 and translated["violations"] == []
    faulted = [s for s in translated["steps"] if s["deviation"]]
    assert [(s["outcome"], s["request"]["tool"]) for s in faulted] == [
        ("lost_response_after_commit", "charge_payment")
    ]
    # The same faults under the control that lacks the mechanism reproduce the failure.
    assert main(["replay", str(trace), "--policy", "control-fresh-key", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    names = [v["invariant"] for v in result["violations"]]
    assert names == ["retries_reuse_key", "no_double_charge", "no_double_effect"]


def test_faults_the_other_policy_never_meets_are_counted_as_unplaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # guarded compensates a declined confirmation and its refund fails once; naive has no
    # saga, so it never sends the refund: that fault finds no place in its run.
    declined = Deviation(action="complete", outcome="permanent_error", tool="confirm_order")
    refund = Deviation(action="complete", outcome="transient_error", tool="refund_payment")
    trace = _write(tmp_path / "t.json", "guarded", [PLAN], declined, refund)
    assert main(["replay", str(trace), "--policy", "naive", "--json"]) == 1
    translated = json.loads(capsys.readouterr().out)["translated"]
    assert translated["recorded_faults"] == 2 and translated["unplaced_faults"] == 1
    assert translated["deviations"] == 1
    assert main(["replay", str(trace), "--policy", "naive"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "Replayed the recorded faults instead: 1 of 2 placed at the matching points of "
        "naive's own run (1 found no place)"
    ) in out


def test_the_same_plan_twice_stays_one_plan() -> None:
    first, second = shared_plans([Plan.of(*checkout_calls("ord_1"))] * 2)
    assert first is second
    other = shared_plans([PLAN, Plan.of(*checkout_calls("ord_2"))])
    assert other[0] is not other[1]


def test_the_public_replay_is_the_cli_replay_and_keeps_a_plan_twice_one(tmp_path: Path) -> None:
    trace = load_trace(_write(tmp_path / "twice.json", "guarded", [PLAN, PLAN], LOST))
    target = target_of(trace, builtin_policy("guarded"), invariants=DEFAULT_INVARIANTS)
    execution = txcheck.replay(trace, target)
    assert txcheck.replay is replaying.replay
    assert execution.plans[0] is execution.plans[1]  # as in the run that was recorded
    assert replaying.first_difference(trace, execution) is None
    assert [s.choice for s in execution.steps] == list(trace.choices)


def test_the_committed_pytest_example_trace_reproduces(
    capsys: pytest.CaptureFixture[str],
) -> None:
    policy = "examples.pytest_example.shop_policy:KeepsTheMoney"
    assert main(["replay", str(EXAMPLE_TRACE), "--policy", policy, "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["reproduced"] and result["difference"] is None
    assert result["policy"] == policy
    assert [v["invariant"] for v in result["violations"]] == [
        "acceptable_outcome",
        "no_orphaned_effect",
    ]


def test_bad_trace_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}', encoding="utf-8")
    assert main(["replay", str(bad)]) == 2
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "expected a txcheck-trace/1 document" in err and "cannot read trace" in err


EXPECTED = """\
Replayed t.json under policy naive (recorded under naive): 8 steps
Counterexample: policy naive violates no_leftover_reservation, no_orphaned_effect,
retries_reuse_key, rejected_plan_unchanged
8 steps, 1 deviation from the default schedule
no_leftover_reservation (eventually, at quiescence):
  reservation {'sku_pen': 1} left behind for order ord_existing (reserved)
no_orphaned_effect (eventually, at quiescence):
  reserve_inventory (call_1) of orchestrator-1 committed and was neither completed by its workflow
nor undone
retries_reuse_key (always, after step 2):
  orchestrator-1 retried call_1 under 2 keys: ['key-reserve-1', 'key-reserve-1-retry2']
rejected_plan_unchanged (always, after step 3):
  orchestrator-1's plan is invalid (incomplete_workflow) but it committed reserve_inventory on
'ord_existing' (op 1)
Plans
 instance        call    tool               arguments
 orchestrator-1  call_1  reserve_inventory  {"idempotency_key": "key-reserve-1", "order_id":
                                            "ord_existing"}
Steps (* = deviation)
 #     actor           action    outcome          request                          observed
 0     orchestrator-1  step      ok               Invoke reserve_inventory call_1  {"admitted":
                                                                                   true}
 1  *  orchestrator-1  complete  transient_error  Invoke reserve_inventory call_1  error
                                                                                   (transient)
 2     orchestrator-1  step      ok               Invoke reserve_inventory call_1  {"admitted":
                                                                                   true}
 3     orchestrator-1  complete  ok               Invoke reserve_inventory call_1  ok {"receipt":
                                                                                   {"order_id":
                                                                                   "o...
 4     orchestrator-1  step      ok               Publish evt_1
 5     consumer        deliver   d_1                                               {"event":
                                                                                   "evt_1"}
 6     consumer        step      ok               ApplyEffect evt_1
 7     consumer        step      ok               Ack d_1
State change over the whole run (the failure is at quiescence):
  + /consumer/effects/evt_1 = 1
  + /idempotency/acme~1key-reserve-1-retry2 = {"created_at": 0, "expires_at": 40, "...
  + /operations/0 = {"at": 0, "call_id": "call_1", "compe...
  ~ /services/checkout/orders/ord_existing/status: "created" -> "reserved"
  ~ /services/checkout/orders/ord_existing/version: 1 -> 2
  + /services/checkout/reservations/ord_existing = {"sku_pen": 1}
  ~ /services/checkout/stock/sku_pen/available: 5 -> 4
  ~ /services/checkout/stock/sku_pen/reserved: 0 -> 1
Reproduced: retries_reuse_key, rejected_plan_unchanged, no_leftover_reservation, no_orphaned_effect.
"""


def test_the_human_report_reads_as_expected(tmp_path: Path) -> None:
    error = Deviation(action="complete", outcome="transient_error")
    trace = load_trace(_write(tmp_path / "t.json", "naive", [SMALL], error))
    report = ReplayReport(
        path="t.json",
        policy="naive",
        recorded_policy=trace.policy,
        recorded=tuple(str(v["invariant"]) for v in trace.violations),
        target=target_of(trace, builtin_policy("naive")),  # type: ignore[arg-type]
        execution=replay_trace(trace, "naive", timeout=None),
    )
    console = Console(color_system=None, width=100, file=io.StringIO())
    console.print(report)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\n".join(line.rstrip() for line in output.splitlines()) + "\n" == EXPECTED
