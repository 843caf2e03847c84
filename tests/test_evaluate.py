"""``txcheck evaluate``: the fault schedule, the two stages, vetoes, bad lines and output."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from txcheck.cli import main
from txcheck.cli.render_evaluation import EvaluationView
from txcheck.evaluate.evaluation import EvaluationReport, evaluate_file
from txcheck.evaluate.fault_schedule import SCHEDULE_KINDS, fault_schedule
from txcheck.evaluate.stage2 import judge_run, reference_of
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS as INVARIANTS
from txcheck.models.plan.contract_loader import default_contract, load_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded, builtin_policy
from txcheck.models.sim.policies.base import ActorGen
from txcheck.models.sim.policies.journal import JournalState
from txcheck.scoring.cases import parse_cases, read_cases

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
CASES = str(ROOT / "examples/evaluate/cases.jsonl")


def _checkout(order: str, amount: int = 2500, tag: str = "x") -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            "create_order",
            {
                "order_id": order,
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": 2}],
                "currency": "USD",
                "idempotency_key": f"idem-create-{tag}",
            },
        ),
        ("reserve_inventory", {"order_id": order, "idempotency_key": f"idem-reserve-{tag}"}),
        (
            "charge_payment",
            {
                "order_id": order,
                "amount": amount,
                "currency": "USD",
                "idempotency_key": f"idem-charge-{tag}",
            },
        ),
        ("confirm_order", {"order_id": order, "idempotency_key": f"idem-confirm-{tag}"}),
    ]


def _chat(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"call_{i + 1}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(calls)
        ],
    }


def _expect(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"calls": [{"name": n, "arguments": a} for n, a in calls]}


def _evaluate(*lines: str) -> EvaluationReport:
    return evaluate_file(default_contract(), parse_cases("\n".join(lines), source="cases.jsonl"))


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    """The README tour's file, evaluated once for the tests that read it."""
    report = evaluate_file(load_contract(CONTRACT), read_cases(CASES))
    return {"report": report, "json": report.to_json()}


def _case(example: dict[str, Any], case_id: str) -> dict[str, Any]:
    cases: list[dict[str, Any]] = example["json"]["cases"]
    return next(c for c in cases if c["id"] == case_id)


# -- the fault schedule ---------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["naive", "guarded"])
def test_schedule_faults_every_tool_call_publish_and_ack(policy: str) -> None:
    plan = Plan.of(*_checkout("ord_1"))
    policy_obj = builtin_policy(policy)
    assert policy_obj is not None
    schedule = fault_schedule(Target(policy=policy_obj), [plan])
    counts = schedule.counts()
    # Four writes: each non-ok outcome once per tool call; four events: one duplicate per
    # send and one lost ACK per ACK.
    for kind in ("timeout_before_commit", "lost_response_after_commit"):
        assert counts[kind] == 4
    assert counts["transient_error"] == counts["permanent_error"] == 4
    assert counts["duplicate"] == counts["ack_lost"] == 4
    assert list(counts) == list(SCHEDULE_KINDS)
    assert schedule.runs == 1 + sum(counts.values())
    invokes = sorted(p.invoke or 0 for p in schedule.points if p.kind == "permanent_error")
    assert invokes == [1, 2, 3, 4]
    # No crash of an orchestrator that has done nothing yet: it would change nothing.
    assert not any(p.kind == "crash" and p.step == 0 for p in schedule.points)
    assert counts["crash"] > 0


def test_schedule_of_a_read_uses_the_read_outcomes() -> None:
    plan = Plan.of(("query_logistics", {"order_id": "ord_existing"}))
    policy = builtin_policy("naive")
    assert policy is not None
    schedule = fault_schedule(Target(policy=policy), [plan])
    counts = schedule.counts()
    assert counts["timeout_before_commit"] == counts["transient_error"] == 1
    assert counts["lost_response_after_commit"] == counts["permanent_error"] == 0
    assert counts["duplicate"] == counts["ack_lost"] == 0


def test_example_schedule_sizes(example: dict[str, Any]) -> None:
    checkout = _case(example, "checkout-correct")["stage2"]
    for policy in ("naive", "guarded"):
        schedule = checkout[policy]["schedule"]
        assert schedule["runs"] == 1 + sum(schedule["faults"].values())
        assert checkout[policy]["fault_recovery"]["runs"] == schedule["runs"]
    # A few hundred runs per file at most: the schedule stays small.
    total = sum(
        c["stage2"][p]["schedule"]["runs"]
        for c in example["json"]["cases"]
        if c["stage2"]
        for p in ("naive", "guarded")
    )
    assert 100 < total < 400


# -- the example file: naive against guarded, and the vetoes -------------------------------


def test_naive_double_charges_where_guarded_survives(example: dict[str, Any]) -> None:
    stage2 = _case(example, "checkout-correct")["stage2"]
    naive, guarded = stage2["naive"], stage2["guarded"]
    lost_charge = [
        run
        for run in naive["flagged_runs"]
        if run["fault"]["kind"] == "lost_response_after_commit"
        and run["fault"]["request"].get("tool") == "charge_payment"
    ]
    assert len(lost_charge) == 1
    assert {"no_double_charge", "retries_reuse_key"} <= set(lost_charge[0]["failed"])
    assert lost_charge[0]["vetoes"] == ["double_charge", "new_key_on_retry"]
    assert naive["fault_recovery"]["failed_runs"] > 0
    assert naive["state_consistency"]["vetoes"]["fired"] == ["double_charge"]
    assert naive["fault_recovery"]["vetoes"]["fired"] == ["new_key_on_retry"]
    # The same proposal under guarded: every run survives, nothing vetoed, every UNKNOWN
    # resolved, and the fault-free final state equals the expected calls'.
    assert guarded["fault_recovery"]["failed_runs"] == 0
    assert guarded["flagged_runs"] == []
    assert guarded["state_consistency"]["vetoes"] == {"count": 0, "fired": [], "runs": {}}
    assert guarded["fault_recovery"]["vetoes"] == {"count": 0, "fired": [], "runs": {}}
    recovery = guarded["fault_recovery"]
    assert recovery["unknown_resolved"] == recovery["unknown_injected"] == 8
    assert guarded["state_consistency"]["final_state_match"] is True
    assert naive["state_consistency"]["final_state_match"] is True


def test_extra_cancel_is_vetoed_in_both_stages(example: dict[str, Any]) -> None:
    case = _case(example, "query-extra-cancel")
    assert case["stage1"]["strict"]["vetoes"] == ["unauthorised_side_effect"]
    for policy in ("naive", "guarded"):
        consistency = case["stage2"][policy]["state_consistency"]
        assert consistency["vetoes"]["fired"] == ["unauthorised_write"]
        assert consistency["final_state_match"] is False
        assert consistency["unexpected_side_effects"] == [
            {
                "call": "call_2",
                "resource": "ord_existing",
                "tool": "cancel_order",
                "why": "not among the expected writes",
            }
        ]


def test_invalid_proposal_is_skipped_with_its_reason(example: dict[str, Any]) -> None:
    case = _case(example, "wrong-amount")
    assert case["stage2"] is None
    assert case["skipped"] == (
        "invalid at level business: amount_mismatch (call_3), not_paid (call_4)"
    )
    # Without a world the same proposal is valid, so it runs: the service rejects the
    # charge, naive leaves a half-done checkout and guarded rolls it back.
    runs = _case(example, "wrong-amount-no-world")["stage2"]
    assert runs["naive"]["state_consistency"]["outcome"] == "incomplete"
    assert runs["naive"]["state_consistency"]["invariant_failures"] == [
        "acceptable_outcome",
        "no_leftover_reservation",
        "no_orphaned_effect",
    ]
    assert runs["guarded"]["state_consistency"]["outcome"] == "compensated"
    assert runs["guarded"]["fault_recovery"]["failed_runs"] == 0


def test_tables_and_summary_split_model_from_orchestration(example: dict[str, Any]) -> None:
    data = example["json"]
    assert data["tables"]["call_accuracy"]["vetoes"] == {
        "count": 1,
        "fired": {"unauthorised_side_effect": 1},
    }
    assert data["tables"]["state_consistency"]["naive"]["vetoes"]["fired"] == [
        "double_charge",
        "unauthorised_write",
    ]
    assert data["tables"]["state_consistency"]["guarded"]["vetoes"]["fired"] == [
        "unauthorised_write"
    ]
    summary = data["summary"]
    assert (summary["cases"], summary["model_errors"], summary["skipped"]) == (5, 3, 1)
    assert summary["orchestration_failures"]["naive"]["cases"] == 1
    assert example["report"].exit_code == 1


def test_a_read_only_plan_survives_every_fault(example: dict[str, Any]) -> None:
    for policy in ("naive", "guarded"):
        stage2 = _case(example, "query-correct")["stage2"][policy]
        assert stage2["fault_recovery"]["failed_runs"] == 0
        assert stage2["state_consistency"]["outcome"] == "completed"


# -- vetoes from side effects, and authorised compensations --------------------------------


def test_wrong_resource_and_authorised_compensation() -> None:
    expect = _expect(_checkout("ord_1", tag="0001"))
    undo = ("release_inventory", {"order_id": "ord_1", "idempotency_key": "idem-release-x"})
    report = _evaluate(
        json.dumps({"id": "other-order", "proposal": _chat(_checkout("ord_2")), "expect": expect}),
        json.dumps(
            {"id": "undo", "proposal": _chat([*_checkout("ord_1"), undo]), "expect": expect}
        ),
    )
    other, undone = report.cases
    assert other.stage2 is not None and undone.stage2 is not None
    guarded = other.stage2["guarded"]
    assert guarded.vetoes.names == ["wrong_resource"]
    assert guarded.fault_free.unexpected is not None
    assert [e.tool for e in guarded.fault_free.unexpected] == [t for t, _ in _checkout("ord_2")]
    # release_inventory undoes the plan's own reservation: an authorised side effect.
    assert undone.stage1.strict.vetoes == ()
    assert undone.stage2["guarded"].fault_free.unexpected == ()
    assert undone.stage2["guarded"].vetoes.runs == 0
    assert undone.stage2["guarded"].final_state_match is True


class _Shrugs(Guarded):
    """guarded, except that what it cannot undo it closes as done instead of escalating."""

    name = "shrugs"

    def manual(self, state: JournalState, diverging: list[str]) -> ActorGen:
        yield from self.write(state, {"phase": "RECONCILED", "outcome": "failed"})


def test_failed_compensation_not_escalated_is_a_veto() -> None:
    contract, fixture = default_contract(), default_fixture()
    plan = Plan.of(*_checkout("ord_1"))
    reference = reference_of(contract, _checkout("ord_1"), fixture)
    vetoes: dict[str, tuple[str, tuple[str, ...]]] = {}
    for policy in (Guarded(), _Shrugs()):
        chooser = Deviations(
            [
                Deviation(action="complete", outcome="permanent_error", tool="charge_payment"),
                Deviation(action="complete", outcome="permanent_error", tool="release_inventory"),
            ]
        )
        execution = execute(
            Target(policy=policy, contract=contract, fixture=fixture, invariants=INVARIANTS),
            [plan],
            chooser=chooser,
            stop_at_first=False,
        )
        assert chooser.unused == []
        result = judge_run(execution, plan, contract, reference, None)
        vetoes[policy.name] = (result.outcome, result.vetoes)
    assert vetoes == {
        "guarded": ("manual", ()),
        "shrugs": ("incomplete", ("compensation_not_escalated",)),
    }


def test_invalid_expectation_leaves_the_state_uncompared() -> None:
    expect = _expect(_checkout("ord_1")[:1])  # a lone create_order: incomplete_workflow
    report = _evaluate(
        json.dumps({"id": "half", "proposal": _chat(_checkout("ord_1")), "expect": expect})
    )
    (case,) = report.cases
    assert case.stage2 is not None
    guarded = case.stage2["guarded"]
    assert guarded.final_state_match is None
    assert guarded.reference_problem is not None and "expect_invalid" in guarded.reference_problem
    assert guarded.fault_free.unexpected is None


# -- bad lines, exit codes, determinism, rendering -----------------------------------------

NO_CALL = json.dumps(
    {
        "id": "no-call",
        "proposal": {"role": "assistant", "content": "Which order do you mean?"},
        "expect": {"calls": []},
    }
)
MISSING_REASON = json.dumps(
    {
        "id": "missing-reason",
        "proposal": {
            "content": [
                {
                    "type": "tool_use",
                    "id": "tu_1",
                    "name": "cancel_order",
                    "input": {"order_id": "ord_existing"},
                }
            ]
        },
        "expect": _expect([("cancel_order", {"order_id": "ord_existing", "reason": "fraud"})]),
    }
)
UNREADABLE = json.dumps({"id": "unreadable", "proposal": {"answer": 42}, "expect": {"calls": []}})


def test_skipped_proposals_say_why() -> None:
    report = _evaluate(MISSING_REASON, UNREADABLE)
    reasons = {c.id: c.skipped for c in report.cases}
    assert all(c.stage2 is None for c in report.cases)
    assert reasons == {
        "missing-reason": "invalid at level plan, schema: missing_required (tu_1), "
        "missing_idempotency_key (tu_1)",
        "unreadable": "the proposal could not be read (unreadable_proposal)",
    }


def test_bad_line_is_reported_and_the_rest_evaluated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join([NO_CALL, "{not json", MISSING_REASON]) + "\n", encoding="utf-8")
    code = main(["evaluate", CONTRACT, str(path), "--json"])
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 2
    assert [c["id"] for c in data["cases"]] == ["no-call", "missing-reason"]
    assert [e["line"] for e in data["errors"]] == [2]
    assert err.startswith(f"txcheck evaluate: {path}:2: not valid JSON")
    assert data["cases"][0]["stage2"]["guarded"]["fault_recovery"]["failed_runs"] == 0


def test_exit_zero_when_every_case_passes_and_guarded_survives(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    line = {
        "id": "ok",
        "proposal": _chat(_checkout("ord_1")),
        "expect": _expect(_checkout("ord_1")),
    }
    path.write_text(json.dumps(line) + "\n" + NO_CALL + "\n", encoding="utf-8")
    report = evaluate_file(default_contract(), read_cases(path))
    stage2 = report.cases[0].stage2
    assert stage2 is not None
    assert stage2[
        "naive"
    ].failed  # naive fails under faults, and that does not change the exit code
    assert report.exit_code == 0


def test_json_is_byte_identical_across_runs(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for _ in range(2):
        assert main(["evaluate", CONTRACT, CASES, "--json"]) == 1
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert set(json.loads(outputs[0])) == {"cases", "errors", "summary", "tables", "warnings"}


HUMAN = """\
Stage 1: call accuracy (the model; the same for every policy)
case            strict  tools  schema  args  no call  vetoes  stage 2
─────────────────────────────────────────────────────────────────────
no-call         pass    -      yes     -     yes      -       run
missing-reason  FAIL    1.00   no      0.00  -        -       skipped

all cases       1/2     1.00   0.50    0.00  1.00     -       1 run

Not run in stage 2 (an invalid proposal is a stage-1 failure):
  missing-reason: invalid at level plan, schema: missing_required (tu_1), missing_idempotency_key
(tu_1)

Stage 2: state consistency (fault-free run vs expected calls' run)
case       policy   final state  invariants failed  unexpected writes
─────────────────────────────────────────────────────────────────────
no-call    naive    match        -                                  0
           guarded  match        -                                  0

all cases  naive    1/1 match    -                                  0
all cases  guarded  1/1 match    -                                  0

Vetoes: counted, never averaged (stage 2: runs per policy)
case            stage 1 (model)  naive (runs)  guarded (runs)
─────────────────────────────────────────────────────────────
no-call         -                -             -
missing-reason  -                not run       not run

all cases       -                -             -

Stage 2: fault recovery (the fault-free run + one run per fault)
                                      UNKNOWN
case       policy   runs  recovered  resolved  compensated  MANUAL  failed
──────────────────────────────────────────────────────────────────────────
no-call    naive       1        0/0       0/0            0       0       0
           guarded     6        5/5       0/0            0       0       0

all cases  naive       1        0/0       0/0            0       0       0
all cases  guarded     6        5/5       0/0            0       0       0

Stage 2: failed runs by invariant (all cases)
invariant        naive  guarded
───────────────────────────────
(no failed run)      0        0

Stage 2: failed runs by fault kind
case     policy   fault          failed  invariants failed (runs)
─────────────────────────────────────────────────────────────────
no-call  naive    (none failed)     0/1  -
         guarded  (none failed)     0/6  -

Stage 2: efficiency (p50 / p95 over the runs)
case       policy   runs  logical clock  steps  tool calls  retries
───────────────────────────────────────────────────────────────────
no-call    naive       1          0 / 0  0 / 0       0 / 0    0 / 0
           guarded     6          0 / 0  8 / 9       0 / 0    0 / 0

all cases  naive       1          0 / 0  0 / 0       0 / 0    0 / 0
all cases  guarded     6          0 / 0  8 / 9       0 / 0    0 / 0

Bad lines (not evaluated)
line  problem
─────────────────────────────────────────────────────────────────────────────────
   2  not valid JSON: column 2: Expecting property name enclosed in double quotes

Summary: model errors vs orchestration failures
cases evaluated                   2
model errors (stage 1 failures)   1 of 2
proposals run in the sandbox      1 (1 invalid, not run)
orchestration failures, naive     0 of 1 correct proposal(s); 0 failed run(s)
orchestration failures, guarded   0 of 1 correct proposal(s); 0 failed run(s)
wrong proposals failing, naive    0 case(s); 0 failed run(s)
wrong proposals failing, guarded  0 case(s); 0 failed run(s)
bad lines                         1

Exit code 2: 2 for bad lines, else 1 when a case fails stage 1 or guarded fails any run, else 0.
naive's failed runs never change it: naive is the baseline guarded is compared with.
"""


def test_human_output() -> None:
    report = _evaluate(NO_CALL, "{not json", MISSING_REASON)
    out = io.StringIO()
    Console(file=out, color_system=None, width=100).print(EvaluationView(report))
    text = out.getvalue()
    assert "\n".join(line.rstrip() for line in text.splitlines()) + "\n" == HUMAN


def test_the_docs_show_the_real_output(example: dict[str, Any]) -> None:
    """docs/evaluation.md's tour prints what evaluate prints at 100 columns, every table."""
    console = Console(color_system=None, width=100, file=io.StringIO())
    console.print(EvaluationView(example["report"]))
    output = console.file.getvalue()  # type: ignore[attr-defined]
    shown = "\n".join(line.rstrip() for line in output.splitlines())
    docs = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    block = docs.split("prints (at 100 columns):\n\n```\n", 1)[1].split("```", 1)[0]
    assert shown.strip() == block.strip(), "regenerate the block from this output"
