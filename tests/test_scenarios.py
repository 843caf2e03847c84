"""The 14 named scenarios, the 5 positive controls and ``txcheck scenarios``.

Each scenario's test checks its concrete outcome on the world (the state diff, the
charges, the compensation order, the trace), not only the pass flag; each control's test
checks that its failure really happened (two charges, a reservation left behind...).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from txcheck.cli import cmd_scenarios, main
from txcheck.cli.render_scenarios import ScenariosReport
from txcheck.exploration.kernel.schedule import Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import TxcheckError
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import DESIGNATED, builtin_policy
from txcheck.scenarios.catalog import (
    CONTROLS,
    DIMENSIONS,
    SCENARIOS,
    Control,
    scenario_seeds,
)
from txcheck.scenarios.results import RAW_NAME, SUMMARY_NAME, raw_text, summarize
from txcheck.scenarios.run import ScenarioRun, run_all, run_control
from txcheck.traces import atomic

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "scenarios_raw.sha256"
CONTRACT = default_contract()
FIXTURE = default_fixture()
FOUR = ["create_order", "reserve_inventory", "charge_payment", "confirm_order"]


@pytest.fixture(scope="module")
def runs() -> dict[str, ScenarioRun]:
    """Every run once, keyed ``scenario/policy``."""
    return {f"{r.scenario.id}/{r.policy}": r for r in run_all(contract=CONTRACT, fixture=FIXTURE)}


def _checkout(run: ScenarioRun) -> dict[str, Any]:
    return run.execution.run.world.state["checkout"]


def _ops(run: ScenarioRun) -> list[tuple[str, str]]:
    return [(op["owner"], op["tool"]) for op in run.execution.run.world.operations]


def _diff(run: ScenarioRun) -> dict[str, dict[str, Any]]:
    return {d["path"]: d for d in run.record()["state_diff"]}


def _charge_steps(run: ScenarioRun, instance: str = "orchestrator-1") -> list[dict[str, Any]]:
    return [
        s.to_json()
        for s in run.execution.steps
        if s.choice.actor == instance and s.request.get("call") == "call_3"
    ]


# -- the definitions ----------------------------------------------------------------------------


def test_the_brief_counts_per_dimension() -> None:
    counts = {d: sum(1 for s in SCENARIOS if s.dimension == d) for d in DIMENSIONS}
    assert counts == {
        "schema": 4,
        "completeness": 2,
        "order": 1,
        "timeout": 2,
        "idempotency": 2,
        "saga": 1,
        "delivery": 2,
    }
    assert len({s.id for s in SCENARIOS}) == 14
    assert sorted(c.policy for c in CONTROLS) == sorted(DESIGNATED)


def test_a_control_must_name_one_of_its_designated_invariants() -> None:
    with pytest.raises(TxcheckError, match="'designated' must be one of"):
        Control(
            policy="control-no-dedupe",
            scenario="delivery-ack-lost-redelivered",
            expected_failure="duplicate_consumption",
            designated="no_double_charge",
            assertions=(),
        )


def test_seeds_are_the_scenarios_plans_and_deviations() -> None:
    seeds = scenario_seeds()
    assert len(seeds) == 14
    plans, deviations = seeds[[s.id for s in SCENARIOS].index("idempotency-response-lost")]
    assert [c.name for c in plans[0].calls] == FOUR
    assert [d.describe() for d in deviations] == [
        "complete lost_response_after_commit tool=charge_payment"
    ]
    assert len(seeds[[s.id for s in SCENARIOS].index("idempotency-same-key-twice")][0]) == 2


def test_a_seed_replays_to_the_recorded_trace(runs: dict[str, ScenarioRun]) -> None:
    """A seed through ``Deviations`` and the recorded flat choices give the same run."""
    recorded = runs["idempotency-same-key-twice/guarded"].record()["trace"]
    plans, deviations = scenario_seeds()[
        [s.id for s in SCENARIOS].index("idempotency-same-key-twice")
    ]
    policy = builtin_policy("guarded")
    assert policy is not None
    seeded = execute(
        Target(policy=policy, contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS),
        plans,
        chooser=Deviations(deviations),
    )
    replayed = execute(
        Target(policy=policy, contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS),
        plans,
        choices=[Choice.from_json(s) for s in recorded],
    )
    assert [s.to_json() for s in seeded.steps] == recorded
    assert [s.to_json() for s in replayed.steps] == recorded
    assert sum(1 for s in recorded if s["deviation"]) == 12


# -- the 14 scenarios under guarded -------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario_id", "code"),
    [
        ("schema-missing-required", "missing_required"),
        ("schema-wrong-type", "type_mismatch"),
        ("schema-enum-out-of-range", "enum_violation"),
        ("schema-missing-idempotency-key", "missing_idempotency_key"),
        ("completeness-confirm-missing", "incomplete_workflow"),
        ("order-dependency-too-early", "dependency_too_early"),
    ],
)
def test_an_invalid_plan_is_rejected_with_zero_side_effects(
    runs: dict[str, ScenarioRun], scenario_id: str, code: str
) -> None:
    run = runs[f"{scenario_id}/guarded"]
    assert run.met
    record = run.record()
    # The only changes anywhere are the operation's claim and the journal: PROPOSED, then
    # REJECTED with the code.
    operation = record["state_after"]["journals"]["orchestrator-1"][0]["operation"]
    assert sorted(_diff(run)) == [
        f"/claims/{operation}",
        "/journals/orchestrator-1/0",
        "/journals/orchestrator-1/1",
    ]
    assert record["state_after"]["journals"]["orchestrator-1"][1] == {
        "phase": "REJECTED",
        "codes": [code],
    }
    assert record["state_after"]["services"] == record["state_before"]["services"]
    assert run.execution.run.world.operations == []
    assert not any(s["request"].get("kind") == "Invoke" for s in record["trace"])


def _assert_completed_once(run: ScenarioRun) -> None:
    checkout = _checkout(run)
    assert [c["amount"] for c in checkout["charges"].values()] == [2500]
    assert checkout["orders"]["ord_1"]["status"] == "confirmed"
    assert checkout["stock"]["sku_book"] == {"available": 8, "reserved": 0, "sold": 2}
    assert run.execution.run.world.effects == {f"evt_{i}": 1 for i in range(1, 5)}
    assert run.fired == []


def test_four_step_success(runs: dict[str, ScenarioRun]) -> None:
    run = runs["completeness-four-step-success/guarded"]
    assert run.met
    diff = _diff(run)
    assert diff["/services/checkout/stock/sku_book/available"]["before"] == 10
    assert diff["/services/checkout/stock/sku_book/available"]["after"] == 8
    assert diff["/services/checkout/stock/sku_book/sold"]["after"] == 2
    assert diff["/services/checkout/charges/ch_1"]["op"] == "add"
    assert diff["/services/checkout/orders/ord_1"]["after"]["status"] == "confirmed"
    assert [t for _, t in _ops(run)] == FOUR
    _assert_completed_once(run)


def test_timeout_before_the_side_effect_retries_with_the_same_key(
    runs: dict[str, ScenarioRun],
) -> None:
    run = runs["timeout-before-side-effect/guarded"]
    assert run.met
    steps = _charge_steps(run)
    outcomes = [(s["action"], s["outcome"], s["request"]["kind"]) for s in steps]
    assert ("complete", "timeout_before_commit", "Invoke") in outcomes
    lookup = next(s for s in steps if s["request"]["kind"] == "Lookup")
    assert "receipt" not in lookup["observed"]  # the timed-out attempt charged nothing
    keys = [
        s["request"]["arguments"]["idempotency_key"]
        for s in steps
        if s["action"] == "step" and s["request"]["kind"] == "Invoke"
    ]
    assert keys == ["key-charge-1", "key-charge-1"]
    _assert_completed_once(run)


def test_retries_exhausted_rolls_back_with_zero_charges(runs: dict[str, ScenarioRun]) -> None:
    run = runs["timeout-retries-exhausted/guarded"]
    assert run.met
    checkout = _checkout(run)
    assert checkout["charges"] == {}
    assert checkout["reservations"] == {}
    assert checkout["orders"]["ord_1"]["status"] == "cancelled"
    assert checkout["stock"]["sku_book"] == {"available": 10, "reserved": 0, "sold": 0}
    assert [(c["tool"], c["compensated_by"]) for c in run.record()["compensation_order"]] == [
        ("reserve_inventory", "release_inventory"),
        ("create_order", "cancel_order"),
    ]
    sent = [s for s in _charge_steps(run) if s["action"] == "complete"]
    assert [s["outcome"] for s in sent] == ["timeout_before_commit"] * 4
    assert "/services/checkout/charges/ch_1" not in _diff(run)


def test_response_lost_after_commit_is_found_not_charged_again(
    runs: dict[str, ScenarioRun],
) -> None:
    run = runs["idempotency-response-lost/guarded"]
    assert run.met
    steps = _charge_steps(run)
    assert [s["outcome"] for s in steps if s["action"] == "complete"] == [
        "lost_response_after_commit"
    ]
    lookup = next(s for s in steps if s["request"]["kind"] == "Lookup")
    assert lookup["observed"]["receipt"]["charge_id"] == "ch_1"
    _assert_completed_once(run)


def test_same_key_twice_charges_once(runs: dict[str, ScenarioRun]) -> None:
    run = runs["idempotency-same-key-twice/guarded"]
    assert run.met
    # The second click's charge went out first; the first click met it in flight.
    assert _ops(run) == [
        ("orchestrator-1", "create_order"),
        ("orchestrator-1", "reserve_inventory"),
        ("orchestrator-2", "charge_payment"),
        ("orchestrator-2", "confirm_order"),
    ]
    first = [s["observed"] for s in _charge_steps(run) if s["request"]["kind"] == "Invoke"]
    assert first[0]["code"] == "idempotency_conflict"
    assert first[-1]["replayed"] is True
    journals = run.record()["journals"]
    assert {j["outcome"] for j in journals.values()} == {"completed"}
    _assert_completed_once(run)


def test_payment_declined_compensates_in_reverse_order(runs: dict[str, ScenarioRun]) -> None:
    run = runs["saga-payment-declined/guarded"]
    assert run.met
    assert [t for _, t in _ops(run)] == [
        "create_order",
        "reserve_inventory",
        "release_inventory",
        "cancel_order",
    ]
    checkout = _checkout(run)
    assert checkout["charges"] == {} and checkout["reservations"] == {}
    assert checkout["orders"]["ord_1"]["status"] == "cancelled"
    assert checkout["stock"]["sku_book"]["available"] == 10
    record = run.record()
    assert record["state_after"]["idempotency"]["acme/key-charge-1"]["status"] == "rejected"
    assert [c["tool"] for c in record["compensation_order"]] == [
        "reserve_inventory",
        "create_order",
    ]


def test_crash_after_commit_recovers_and_delivers_once(runs: dict[str, ScenarioRun]) -> None:
    run = runs["delivery-crash-after-commit/guarded"]
    assert run.met
    trace = run.record()["trace"]
    crash = next(i for i, s in enumerate(trace) if s["action"] == "crash")
    assert trace[crash - 1]["action"] == "complete"
    assert trace[crash - 1]["request"]["tool"] == "charge_payment"
    assert trace[crash]["observed"]["restarted"] is True
    # Restarted, it asked the service instead of charging again.
    invokes = [s for s in _charge_steps(run) if s["request"]["kind"] == "Invoke"]
    assert len([s for s in invokes if s["action"] == "step"]) == 1
    assert any(s["request"]["kind"] == "Lookup" for s in _charge_steps(run))
    _assert_completed_once(run)


def test_ack_lost_is_redelivered_and_applied_once(runs: dict[str, ScenarioRun]) -> None:
    run = runs["delivery-ack-lost-redelivered/guarded"]
    assert run.met
    trace = run.record()["trace"]
    evt_1 = [s for s in trace if s["action"] == "deliver" and s["observed"]["event"] == "evt_1"]
    assert len(evt_1) == 2
    seen = [s["observed"]["seen"] for s in trace if s["request"].get("kind") == "SeenCheck"]
    assert seen.count(True) == 1  # the redelivery was recognised
    _assert_completed_once(run)


# -- the 5 controls ---------------------------------------------------------------------------


def _failure(run: ScenarioRun, name: str) -> tuple[str, ...]:
    return next(f.messages for f in run.execution.failures if f.name == name)


def test_fresh_key_control_charges_twice(runs: dict[str, ScenarioRun]) -> None:
    run = runs["idempotency-response-lost/control-fresh-key"]
    assert run.met and run.outcome == "double_charge"
    charges = _checkout(run)["charges"]
    assert sorted(charges) == ["ch_1", "ch_2"]
    assert {c["order_id"] for c in charges.values()} == {"ord_1"}
    assert "order ord_1 charged 2 times" in _failure(run, "no_double_charge")[0]
    # the hygiene failure, the charge, the same as a generic effect, and the outcome
    assert sorted(set(run.fired) & set(DESIGNATED[run.policy])) == [
        "acceptable_outcome",
        "no_double_charge",
        "no_double_effect",
        "retries_reuse_key",
    ]


def test_no_saga_control_leaves_the_reservation(runs: dict[str, ScenarioRun]) -> None:
    run = runs["saga-payment-declined/control-no-saga"]
    assert run.met and run.outcome == "leftover_reservation"
    checkout = _checkout(run)
    assert checkout["reservations"] == {"ord_1": {"sku_book": 2}}
    assert checkout["stock"]["sku_book"] == {"available": 8, "reserved": 2, "sold": 0}
    assert run.record()["compensation_order"] == []
    assert "left behind for order ord_1" in _failure(run, "no_leftover_reservation")[0]


def test_dual_write_control_loses_the_charge_event(runs: dict[str, ScenarioRun]) -> None:
    run = runs["delivery-crash-after-commit/control-dual-write"]
    assert run.met and run.outcome == "lost_event"
    world = run.execution.run.world
    assert "evt_3" in world.committed_events()
    assert "evt_3" not in world.effects
    published = [s["request"].get("event") for s in run.record()["trace"]]
    assert "evt_3" not in published  # the crash came between the commit and the Publish
    assert "evt_3" in _failure(run, "consumer_effect_exactly_once")[0]


def test_no_dedupe_control_consumes_twice(runs: dict[str, ScenarioRun]) -> None:
    run = runs["delivery-ack-lost-redelivered/control-no-dedupe"]
    assert run.met and run.outcome == "duplicate_consumption"
    assert run.execution.run.world.effects["evt_1"] == 2
    assert _failure(run, "consumer_effect_at_most_once") == (
        "event evt_1 applied 2 times by the consumer",
    )


def test_lazy_validation_control_commits_from_an_invalid_plan(
    runs: dict[str, ScenarioRun],
) -> None:
    run = runs["schema-wrong-type/control-lazy-validation"]
    assert run.met and run.outcome == "side_effects_from_rejected_plan"
    assert [t for _, t in _ops(run)][:2] == ["create_order", "reserve_inventory"]
    assert "/services/checkout/orders/ord_1" in _diff(run)
    assert "type_mismatch" in _failure(run, "rejected_plan_unchanged")[0]


def test_a_control_that_does_not_fail_is_reported_not_seen() -> None:
    quiet = Control(
        policy="control-no-dedupe",
        scenario="completeness-four-step-success",  # no lost ACK: nothing to dedupe
        expected_failure="duplicate_consumption",
        designated="consumer_effect_at_most_once",
        assertions=(),
    )
    run = run_control(quiet, contract=CONTRACT, fixture=FIXTURE)
    assert not run.met
    assert run.outcome == "not_seen"
    summary = summarize([run], raw_sha256="0" * 64, contract=CONTRACT, fixture=FIXTURE)
    assert summary["ok"] is False
    assert summary["controls"]["runs"]["control-no-dedupe"]["seen"] is False


def test_a_failed_assertion_says_what_was_expected_and_found() -> None:
    broken = run_control(
        Control(
            policy="control-lazy-validation",
            scenario="completeness-four-step-success",
            expected_failure="side_effects_from_rejected_plan",
            designated="rejected_plan_unchanged",
            assertions=(),
        ),
        contract=CONTRACT,
        fixture=FIXTURE,
    )
    wrong = [r for r in broken.results if not r.passed]
    assert [r.name for r in wrong] == ["invariant_fired(rejected_plan_unchanged)"]
    assert wrong[0].describe() == (
        "invariant_fired(rejected_plan_unchanged) == true: FAILED (actual false)"
    )


# -- the command and its files ----------------------------------------------------------------


def _start_cli(cwd: Path, seed: str) -> subprocess.Popen[str]:
    code = "import sys; from txcheck.cli import main; sys.exit(main(['scenarios', '--json']))"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_result_files_are_byte_identical_across_runs_and_directories(tmp_path: Path) -> None:
    """Two processes, two hash seeds, two folders (the default relative --out): same bytes."""
    first, second = tmp_path / "a", tmp_path / "b" / "deeper"
    first.mkdir()
    second.mkdir(parents=True)
    procs = [_start_cli(first, "0"), _start_cli(second, "4242")]
    (out_one, err_one), (_, err_two) = (p.communicate(timeout=120) for p in procs)
    assert [p.returncode for p in procs] == [0, 0], err_one + err_two
    for name in (RAW_NAME, SUMMARY_NAME):
        a = (first / "txcheck-results" / name).read_bytes()
        b = (second / "txcheck-results" / name).read_bytes()
        assert a == b, name
        assert str(tmp_path).encode() not in a
    summary = json.loads((first / "txcheck-results" / SUMMARY_NAME).read_text())
    assert json.loads(out_one) == summary
    raw = (first / "txcheck-results" / RAW_NAME).read_bytes()
    assert summary["raw_results"]["sha256"] == hashlib.sha256(raw).hexdigest()
    assert summary["raw_results"]["runs"] == len(raw.splitlines()) == 19


def test_raw_results_match_the_golden_hash(runs: dict[str, ScenarioRun]) -> None:
    digest = hashlib.sha256(raw_text(list(runs.values())).encode()).hexdigest()
    golden = GOLDEN.read_text().strip()
    assert digest == golden, (
        "the scenario results changed: review the diff of raw_results.jsonl, then "
        "regenerate with `txcheck scenarios --out /tmp/r && sha256sum /tmp/r/raw_results.jsonl"
        " | cut -d' ' -f1 > tests/golden/scenarios_raw.sha256`"
    )


def test_every_line_has_the_documented_fields(runs: dict[str, ScenarioRun]) -> None:
    lines = [json.loads(line) for line in raw_text(list(runs.values())).splitlines()]
    assert [(r["scenario"], r["policy"]) for r in lines[14:]] == [
        (c.scenario, c.policy) for c in CONTROLS
    ]
    for line in lines:
        assert {
            "scenario",
            "dimension",
            "policy",
            "expectation",
            "outcome",
            "state_before",
            "state_after",
            "state_diff",
            "trace",
            "compensation_order",
            "assertions",
        } <= set(line)
        assert line["outcome"] == ("pass" if line["kind"] == "scenario" else line["expectation"])
        assert all({"name", "expected", "actual", "passed"} <= set(a) for a in line["assertions"])


def test_the_command_exits_1_when_a_control_does_not_fail(
    runs: dict[str, ScenarioRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet = run_control(
        Control(
            policy="control-no-saga",
            scenario="completeness-four-step-success",
            expected_failure="leftover_reservation",
            designated="no_leftover_reservation",
            assertions=(),
        ),
        contract=CONTRACT,
        fixture=FIXTURE,
    )
    monkeypatch.setattr(cmd_scenarios, "run_all", lambda **_: [*runs.values(), quiet])
    assert main(["scenarios", "--out", str(tmp_path), "--json"]) == 1
    assert json.loads((tmp_path / SUMMARY_NAME).read_text())["controls"]["seen"] == 5


def test_an_unwritable_out_folder_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["scenarios", "--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create the results folder" in err


EXPECTED_TABLE = """\
Scenarios by dimension

  dimension      scenarios   passed   guarded result   control result
 ────────────────────────────────────────────────────────────────────────────
  schema                 4        4   all pass         lazy-validation: seen
  completeness           2        2   all pass         -
  order                  1        1   all pass         -
  timeout                2        2   all pass         -
  idempotency            2        2   all pass         fresh-key: seen
  saga                   1        1   all pass         no-saga: seen
  delivery               2        2   all pass         dual-write: seen
                                                       no-dedupe: seen

Positive controls

  control                   scenario                        expected failure / invariant    result
 ──────────────────────────────────────────────────────────────────────────────────────────────────
  control-fresh-key         idempotency-response-lost       double charge                   seen
                                                            no_double_charge
  control-no-saga           saga-payment-declined           leftover reservation            seen
                                                            no_leftover_reservation
  control-dual-write        delivery-crash-after-commit     lost event                      seen
                                                            consumer_effect_exactly_once
  control-no-dedupe         delivery-ack-lost-redelivered   duplicate consumption           seen
                                                            consumer_effect_at_most_once
  control-lazy-validation   schema-wrong-type               side effects from rejected      seen
                                                            plan
                                                            rejected_plan_unchanged

14/14 scenarios passed under guarded; 5/5 controls showed their expected failure.
Wrote txcheck-results/raw_results.jsonl (19 runs) and summary.json.
sha256 {sha}
"""


def test_human_output(runs: dict[str, ScenarioRun]) -> None:
    ordered = list(runs.values())
    sha = hashlib.sha256(raw_text(ordered).encode()).hexdigest()
    summary = summarize(ordered, raw_sha256=sha, contract=CONTRACT, fixture=FIXTURE)
    console = Console(color_system=None, width=100, record=True)
    with console.capture() as captured:
        console.print(ScenariosReport(runs=ordered, summary=summary, where="txcheck-results"))
    text = "\n".join(line.rstrip() for line in captured.get().splitlines()) + "\n"
    assert text == EXPECTED_TABLE.format(sha=sha)


def test_planted_symbolic_links_are_refused_and_replaced_with_force_never_written_through(
    runs: dict[str, ScenarioRun],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside.txt"
    out.mkdir()
    outside.write_bytes(b"not yours\n")
    for name in (RAW_NAME, SUMMARY_NAME):
        (out / name).symlink_to(outside)
    monkeypatch.setattr(cmd_scenarios, "run_all", lambda **_: list(runs.values()))
    assert main(["scenarios", "--out", str(out), "--json"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"txcheck scenarios: error: {out / RAW_NAME}: is a symbolic link (it would be "
        "replaced, not written through); use --force to replace the link\n"
    )
    assert main(["scenarios", "--out", str(out), "--json", "--force"]) == 0
    assert outside.read_bytes() == b"not yours\n"
    assert sorted(os.listdir(out)) == [RAW_NAME, SUMMARY_NAME]  # no temporary file left
    assert not any((out / name).is_symlink() for name in (RAW_NAME, SUMMARY_NAME))
    raw = (out / RAW_NAME).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == GOLDEN.read_text().strip()
    assert json.loads((out / SUMMARY_NAME).read_text())["raw_results"]["runs"] == 19


def _no_runs(**_: object) -> list[ScenarioRun]:
    raise AssertionError("the scenarios ran although their output was refused")


@pytest.mark.parametrize("name", [RAW_NAME, SUMMARY_NAME])
def test_a_named_pipe_under_a_result_name_is_refused_before_the_runs(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / name)
    monkeypatch.setattr(cmd_scenarios, "run_all", _no_runs)
    assert main(["scenarios", "--out", str(tmp_path), "--force"]) == 2
    assert capsys.readouterr().err == (
        f"txcheck scenarios: error: {tmp_path / name}: is a named pipe, not a regular file\n"
    )
    assert stat.S_ISFIFO(os.lstat(tmp_path / name).st_mode)
    assert os.listdir(tmp_path) == [name]


_KINDS = {RAW_NAME: "scenario results file", SUMMARY_NAME: "txcheck-scenarios/1 file"}


@pytest.mark.parametrize("name", [RAW_NAME, SUMMARY_NAME])
def test_an_unrelated_file_under_a_result_name_is_kept_unless_forced(
    name: str,
    runs: dict[str, ScenarioRun],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / name).write_text('{"my": "notes"}\n')
    monkeypatch.setattr(cmd_scenarios, "run_all", _no_runs)
    assert main(["scenarios", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"txcheck scenarios: error: {tmp_path / name}: exists and is not a {_KINDS[name]}"
    )
    assert (tmp_path / name).read_text() == '{"my": "notes"}\n'
    monkeypatch.setattr(cmd_scenarios, "run_all", lambda **_: list(runs.values()))
    assert main(["scenarios", "--out", str(tmp_path), "--force", "--json"]) == 0
    assert main(["scenarios", "--out", str(tmp_path), "--json"]) == 0  # its own: replaced
    raw = (tmp_path / RAW_NAME).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == GOLDEN.read_text().strip()


def test_a_failed_write_is_one_line_naming_the_file(
    runs: dict[str, ScenarioRun],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cmd_scenarios, "run_all", lambda **_: list(runs.values()))
    monkeypatch.setattr(atomic.os, "fsync", full)
    assert main(["scenarios", "--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"txcheck scenarios: error: {tmp_path / RAW_NAME}: cannot write the results "
        "(No space left on device)\n"
    )
    assert os.listdir(tmp_path) == []


def test_the_docs_show_the_golden_hash() -> None:
    """docs/scenarios.md shows the result file's SHA-256: the golden one."""
    docs = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert f"sha256 {GOLDEN.read_text().strip()}" in docs
