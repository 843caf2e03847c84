"""A domain txcheck has no code for: the bank transfer of examples/bank (patterned ids,
``$receipt`` compensations, an irreversible capture, a ledger service and fixture).

What a user writing such a contract from the docs gets must be honest: plans that satisfy
the whole schema and commit, sagas that can run, a pivot that is respected, harm reported
before hygiene, and no bound claimed for a plan set that was never exercised."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from examples.bank.ledger import INVARIANTS as LEDGER_INVARIANTS
from examples.bank.ledger import LEDGER
from tests import bank_runs
from tests.bank_runs import BANK, CONTRACT, FIXTURE, PLAN
from txcheck.cli import main
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.kernel.verdict import verdict_of
from txcheck.exploration.plansets.representative import search_plans
from txcheck.exploration.search import explore
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import InputError
from txcheck.models.plan.validation import validate
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.policies.guarded import Guarded

CONTRACT_PATH = str(BANK / "contract.json")
WORLD_PATH = str(BANK / "world.json")
TRANSFER = str(BANK / "transfer.json")


class PastPivot(Guarded):
    """Control: guarded as it was, undoing the steps before a committed capture when a
    later step fails (reversing the credit after the money left for good)."""

    name = "control-past-pivot"
    respect_pivots = False


def _systematic(policy: object, **kwargs: object) -> tuple[object, object]:
    target = Target(
        policy=policy,  # type: ignore[arg-type]
        contract=CONTRACT,
        fixture=FIXTURE,
        bounds=Bounds(max_faults=1),
        budget=Budget(seed=1, database=None),
        **kwargs,  # type: ignore[arg-type]
    )
    result = explore(target, engine="systematic", seeds=False)
    return result, verdict_of(result, target)


# -- plans that satisfy the whole schema ------------------------------------------------


def test_every_plan_made_to_be_valid_is_valid_and_uses_the_fixture() -> None:
    sets = search_plans(CONTRACT, FIXTURE)
    meant = [s for s in sets if s.meant_valid]
    assert {s.label for s in meant} >= {"transfer", "transfer, submitted twice"}
    for entry in meant:
        for plan in entry.plans:
            verdict = validate(CONTRACT, plan)
            assert verdict.valid, (entry.label, verdict.violations)
            for call in plan.calls:
                assert re.fullmatch(r"tr_[0-9]+", call.arguments["transfer_id"])
    transfer = next(s for s in sets if s.label == "transfer").plans[0]
    hold, credit = transfer.calls[0].arguments, transfer.calls[1].arguments
    assert (hold["from_account"], credit["to_account"]) == ("acc_1", "acc_2")  # they exist
    assert hold["amount"] == credit["amount"]  # one amount along the workflow


def test_two_resources_get_two_ids() -> None:
    entry = next(s for s in search_plans(CONTRACT, FIXTURE) if "two resources" in s.label)
    ids = {c.arguments["transfer_id"] for c in entry.plans[0].calls}
    assert len(ids) == 2


def test_guarded_commits_on_every_plan_set_it_claims_a_bound_for() -> None:
    result, verdict = _systematic(builtin_policy("guarded"))
    assert verdict.outcome == "pass", verdict.unexercised  # type: ignore[attr-defined]
    report = result.reports[-1]  # type: ignore[attr-defined]
    claimed = [p for p in report.plans if p.expects_writes]
    assert claimed, "no plan set was meant to commit"
    for plan in claimed:
        assert plan.writes > 0, plan.label
        assert {"permanent_error", "lost_response_after_commit"} <= set(plan.faults), plan.label


def test_a_contract_whose_plans_never_run_is_inconclusive_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poor = json.loads(Path(WORLD_PATH).read_text())
    poor["services"]["ledger"]["accounts"]["acc_1"]["balance"] = 0
    world = tmp_path / "poor.json"
    world.write_text(json.dumps(poor))
    code = main(
        [
            "explore",
            "--contract",
            CONTRACT_PATH,
            "--world",
            str(world),
            "--services",
            "examples.bank.ledger:LEDGER",
            "--engine",
            "systematic",
            "--max-faults",
            "1",
            "--seed",
            "1",
            "--trace-out",
            str(tmp_path / "t.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 3
    assert "plan set 'transfer': no run committed a write" in out
    assert "insufficient_funds" in out
    assert "not exercised: 'transfer'" in out


# -- receipts that carry what compensations need -----------------------------------------


def test_receipt_compensations_run_on_generic_behaviour() -> None:
    declined = Deviations(
        [Deviation(action="complete", outcome="permanent_error", tool="capture_hold")]
    )
    execution = bank_runs.run_bank("guarded", chooser=declined)
    assert execution.ok, execution.failures
    undos = [op for op in execution.run.world.operations if op["compensates"]]
    assert [op["tool"] for op in undos] == ["reverse_credit", "release_hold"]
    assert undos[1]["receipt"]["hold_id"] == "hold_1"  # the hold's own receipt field
    journal = execution.run.world.journals["orchestrator-1"]
    assert journal[-1] == {"phase": "RECONCILED", "outcome": "rolled_back"}


def test_a_receipt_field_no_value_fits_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(Path(CONTRACT_PATH).read_text())
    release = next(t for t in document["tools"] if t["function"]["name"] == "release_hold")
    release["function"]["parameters"]["properties"]["hold_id"]["format"] = "email"  # and a hold_
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps(document))
    code = main(["explore", "--contract", str(contract), "--world", WORLD_PATH, "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "takes 'hold_id' from its receipt" in err
    assert "the saga could never run" in err


def test_a_service_receipt_without_the_field_is_a_service_error() -> None:
    def hold_without_id(state: dict, args: object) -> object:
        outcome = LEDGER.handlers["hold_funds"](state, args)  # type: ignore[arg-type]
        return type(outcome)(receipt={"transfer_id": "tr_7"}, events=outcome.events)  # type: ignore[union-attr]

    broken = type(LEDGER)(
        name="ledger",
        initial_state=LEDGER.initial_state,
        handlers={**LEDGER.handlers, "hold_funds": hold_without_id},
    )
    target = Target(
        policy=builtin_policy("guarded"), contract=CONTRACT, fixture=FIXTURE, services=(broken,)
    )
    execution = execute(target, [PLAN])
    assert execution.error_kind == "service"
    assert "has no 'hold_id' field, which its compensation release_hold takes" in str(
        execution.error
    )


# -- the pivot, and amounts --------------------------------------------------------------


def test_the_old_guarded_unwinds_past_the_pivot_and_is_caught() -> None:
    """notify declined after the irreversible capture: undoing the credit then would
    destroy the money; a control with the old behaviour is caught at one deviation."""

    def declined() -> Deviations:
        notify = Deviation(action="complete", outcome="permanent_error", tool="notify_customer")
        return Deviations([notify])

    old = bank_runs.run_bank(PastPivot(), chooser=declined(), ledger=True)
    assert old.failed("no_compensation_past_pivot")
    fixed = bank_runs.run_bank("guarded", chooser=declined(), ledger=True)
    assert fixed.ok, fixed.failures
    last = fixed.run.world.journals["orchestrator-1"][-1]
    assert last["phase"] == "MANUAL"
    assert any("call_2: credit_account committed, not undone" in r for r in last["diverging"])
    accounts = fixed.run.world.state["ledger"]["accounts"]
    assert accounts["acc_1"]["balance"] + accounts["acc_2"]["balance"] == 51000  # conserved


def test_explore_finds_the_pivot_bug_of_the_control_and_passes_guarded() -> None:
    plan = bank_runs.PLAN
    for policy, expected in ((PastPivot(), "no_compensation_past_pivot"), (Guarded(), None)):
        target = Target(
            policy=policy,
            contract=CONTRACT,
            fixture=FIXTURE,
            services=(LEDGER,),
            invariants=(*DEFAULT_INVARIANTS, *LEDGER_INVARIANTS),
            plans=[(plan,)],
            bounds=Bounds(max_faults=1),
            budget=Budget(seed=1, database=None),
        )
        result = explore(target, engine="systematic", seeds=False)
        found = result.counterexample
        assert (found.invariant if found else None) == expected


# -- harm before hygiene -----------------------------------------------------------------


def test_naives_first_counterexample_on_a_transfer_is_the_double_effect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "explore",
            "--contract",
            CONTRACT_PATH,
            "--world",
            WORLD_PATH,
            "--policy",
            "naive",
            "--plan",
            TRANSFER,
            "--seed",
            "1",
            "--trace-out",
            str(tmp_path / "t.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    head = out.splitlines()[0]
    assert head.startswith("Counterexample: policy naive violates no_double_effect"), head
    assert "retries_reuse_key" in head  # the hygiene failure is still listed, after the harm


def test_checkout_invariants_are_not_applicable_on_a_bank() -> None:
    _, verdict = _systematic(builtin_policy("guarded"))
    names = {name for name, _ in verdict.inapplicable}  # type: ignore[attr-defined]
    assert names == {
        "no_double_charge",
        "no_orphan_reservation",
        "stock_and_money_conserved",
        "no_leftover_reservation",
    }
    target = bank_runs.target("guarded")
    assert "no_double_charge" not in {i.name for i in target.suite.safety}


# -- a business level that checked something ---------------------------------------------


def test_validate_world_without_the_service_says_business_is_not_applicable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["validate", CONTRACT_PATH, TRANSFER, "--world", WORLD_PATH, "--json"])
    captured = capsys.readouterr()
    verdict = json.loads(captured.out)
    assert code == 0
    assert "business" not in verdict["levels_checked"]
    assert "no rule reads the world fixture" in verdict["levels_skipped"]["business"]
    assert "section 'services.ledger' is read by no service" in captured.err
    code = main(
        [
            "validate",
            CONTRACT_PATH,
            TRANSFER,
            "--world",
            WORLD_PATH,
            "--services",
            "examples.bank.ledger:LEDGER",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert "business" in json.loads(captured.out)["levels_checked"]
    assert "read by no service" not in captured.err


def _overdrawn_case(tmp_path: Path) -> Path:
    proposal = json.loads(Path(TRANSFER).read_text())
    for call in proposal["tool_calls"]:
        arguments = json.loads(call["function"]["arguments"])
        if "amount" in arguments:
            arguments["amount"] = 900000  # more than acc_1 holds
        call["function"]["arguments"] = json.dumps(arguments)
    expected = [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for c in proposal["tool_calls"]
    ]
    case = {
        "id": "overdrawn",
        "proposal": proposal,
        "expect": {"calls": expected, "ordered": True},
        "world": json.loads(Path(WORLD_PATH).read_text()),
    }
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n")
    return path


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_score_and_evaluate_judge_a_case_world_by_the_services_given(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = str(_overdrawn_case(tmp_path))
    main([command, CONTRACT_PATH, cases, "--json"])
    without = capsys.readouterr().out
    main([command, CONTRACT_PATH, cases, "--json", "--services", "examples.bank.ledger:LEDGER"])
    with_ledger = capsys.readouterr().out
    assert "insufficient_funds" not in without
    assert "insufficient_funds" in with_ledger


# -- choosing invariants from the command line -------------------------------------------


def test_skip_invariant_is_recorded_in_the_trace_and_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.json"
    arguments = ["--contract", CONTRACT_PATH, "--world", WORLD_PATH, "--plan", TRANSFER]
    code = main(
        [
            "explore",
            *arguments,
            "--policy",
            "naive",
            "--seed",
            "1",
            "--skip-invariant",
            "retries_reuse_key",
            "--trace-out",
            str(trace),
        ]
    )
    assert code == 1
    document = json.loads(trace.read_text())
    assert document["skip_invariants"] == ["retries_reuse_key"]
    assert "retries_reuse_key" not in {v["invariant"] for v in document["violations"]}
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 1  # reproduced, under the same selection


def test_an_unknown_invariant_name_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", "--invariants-only", "no_such_thing", "--seed", "1"])
    assert code == 2
    assert "no invariant named 'no_such_thing'" in capsys.readouterr().err


def test_plans_may_be_given_as_bare_plans_and_a_bad_shape_is_one_clear_error() -> None:
    target = bank_runs.target("guarded")
    single = Target(policy=target.policy, contract=CONTRACT, fixture=FIXTURE, plans=(PLAN,))
    assert single.plans == ((PLAN,),)
    with pytest.raises(InputError, match="'plans' must be a list of plan sets"):
        Target(policy=target.policy, plans=PLAN)  # type: ignore[arg-type]
