"""The Hypothesis layer: fault kinds, plan strategies, the state machine, pytest support."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from examples.pytest_example.shop_policy import KeepsTheMoney
from tests.strategies import checkout_calls
from txcheck.cli import main
from txcheck.exploration.engines.faults import FAULT_KINDS, deviations_by_kind, draw_kind
from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.engines.machine import describe_failure
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Bounds, Budget, Deadline, Target
from txcheck.exploration.plansets.plan_space import PlanSpace
from txcheck.exploration.plansets.strategies import near_valid_plans, submissions, valid_plans
from txcheck.exploration.usercode.loading import load_policy
from txcheck.invariants import DEFAULT_INVARIANTS, always, eventually
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.validation import validate
from txcheck.models.sim.choices import Choice, FaultKind
from txcheck.models.sim.choices import fault_kind as kind_of
from txcheck.models.sim.fixture import default_fixture, parse_world
from txcheck.models.sim.policies import DESIGNATED, builtin_policy
from txcheck.models.sim.runner import Run, RunView
from txcheck.models.sim.world_rules import business_check_from_doc
from txcheck.testing import txcheck_testcase

ROOT = Path(__file__).resolve().parent.parent

CONTRACT = default_contract()
FIXTURE = default_fixture()
SPACE = PlanSpace(CONTRACT, FIXTURE)
PLAN = Plan.of(*checkout_calls("ord_1"))
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _run(policy: str = "guarded", plans: tuple[Plan, ...] = (PLAN,)) -> Run:
    return Target(policy=builtin_policy(policy), contract=CONTRACT, fixture=FIXTURE).run(plans)


def _target(
    policy: str, *, invariants: tuple = DEFAULT_INVARIANTS, examples: int = 50, **budget: object
) -> Target:  # type: ignore[type-arg]
    return Target(
        policy_name=policy,
        policy=load_policy(policy).policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=invariants,
        plans=((PLAN,),),
        bounds=Bounds(max_faults=2),
        budget=Budget(max_examples=examples, seed=0, **budget),  # type: ignore[arg-type]
    )


# -- fault kinds -------------------------------------------------------------------------------


def test_kind_of_names_every_kind_of_deviation() -> None:
    run = _run()
    options = run.choices()
    assert kind_of(options[0], options) is None
    assert kind_of(Choice("orchestrator-1", "crash"), options) == "crash"
    assert kind_of(Choice("clock", "jump"), options) == "jump"
    while run.current("orchestrator-1").get("kind") != "Invoke" or not any(
        c.action == "complete" for c in run.choices()
    ):
        run.apply(run.choices()[0])
    options = run.choices()
    kinds = {kind_of(c, options) for c in options[1:]}
    assert {"timeout_before_commit", "lost_response_after_commit", "permanent_error"} <= kinds
    assert "transient_error" in kinds


def test_reorder_and_interleave_are_told_apart() -> None:
    options = [
        Choice("orchestrator-1", "step"),
        Choice("consumer", "deliver", "d_1"),
        Choice("consumer", "deliver", "d_2"),
    ]
    assert kind_of(options[1], options) == "interleave"
    assert kind_of(options[2], options) == "reorder"
    grouped = deviations_by_kind(options, frozenset({FaultKind.REORDER}))
    assert grouped == {"reorder": [options[2]]}


@FAST
@given(st.data(), st.sets(st.sampled_from(FAULT_KINDS), min_size=1))
def test_draw_kind_draws_only_enabled_kinds(data: st.DataObject, enabled: set[str]) -> None:
    assert draw_kind(data, sorted(enabled)) in enabled


# -- plan strategies ---------------------------------------------------------------------------


@FAST
@given(valid_plans(SPACE))
def test_valid_plans_are_valid_at_every_level_and_complete_under_guarded(plan: Plan) -> None:
    business = business_check_from_doc(FIXTURE.document)
    verdict = validate(CONTRACT, plan, business=business)
    assert verdict.valid, verdict.codes()
    execution = execute(
        Target(
            policy=builtin_policy("guarded"),
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        [plan],
    )
    assert execution.ok
    assert execution.run.world.journals["orchestrator-1"][-1] == {
        "phase": "RECONCILED",
        "outcome": "completed",
    }


EXPECTED_CODES = {
    "drop_step": {"incomplete_workflow"},
    "swap_steps": {"dependency_too_early"},
    "missing_key": {"missing_idempotency_key"},
    "shared_key": {"duplicate_key_different_intent"},
    "duplicate_new_key": {"duplicate_side_effect"},
}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(near_valid_plans(SPACE))
def test_each_mutation_is_one_step_from_valid(mutated: tuple[str, Plan]) -> None:
    name, plan = mutated
    codes = set(validate(CONTRACT, plan).codes())
    if name in EXPECTED_CODES:
        assert EXPECTED_CODES[name] <= codes
    elif name == "wrong_type":
        assert codes & {"type_mismatch", "enum_violation"}
    elif name == "repeat_same_key":
        assert not codes
        execution = execute(
            Target(
                policy=builtin_policy("guarded"),
                contract=CONTRACT,
                fixture=FIXTURE,
                invariants=DEFAULT_INVARIANTS,
            ),
            [plan],
        )
        intents = [op["intent"] for op in execution.run.world.operations]
        assert len(intents) == len(set(intents))  # the repeated call executed once
    elif name == "foreign_tool":
        assert not codes or codes == {"unknown_tool"}


@FAST
@given(submissions(SPACE))
def test_submissions_hold_one_or_two_plans(plans: tuple[Plan, ...]) -> None:
    assert 1 <= len(plans) <= 2
    if len(plans) == 2 and plans[0] == plans[1]:
        assert plans[0] is plans[1] or plans[0].calls[0].arguments != plans[1].calls[0].arguments


# -- the machine -------------------------------------------------------------------------------


@always
def nothing_charged(view: RunView) -> Iterator[str]:
    """Test property: fails as soon as any charge exists."""
    for charge_id in sorted(view.world.state["checkout"]["charges"]):
        yield f"{charge_id} exists"


@eventually
def never_quiet(view: RunView) -> Iterator[str]:
    """Test property: fails whenever a run quiesces."""
    yield "the run went quiet"


def _explore(target: Target) -> object:
    return HypothesisEngine().explore(
        target, SearchContext(deadline=Deadline(target.budget.time_budget))
    )


def test_safety_is_checked_after_the_step_that_breaks_it() -> None:
    report = _explore(_target("guarded", invariants=(nothing_charged,)))
    found = report.counterexample  # type: ignore[attr-defined]
    assert found is not None and found.invariant == "nothing_charged"
    failure = found.execution.failures[0]
    step = found.execution.steps[failure.step]
    assert (step.choice.action, step.request["tool"]) == ("complete", "charge_payment")
    assert found.deviations == 0
    assert describe_failure(found.execution).startswith(
        f"invariant 'nothing_charged' (always) violated after step {failure.step}: ch_1 exists"
    )


def test_liveness_is_checked_at_quiescence_in_teardown() -> None:
    report = _explore(_target("guarded", invariants=(never_quiet,)))
    found = report.counterexample  # type: ignore[attr-defined]
    assert found is not None and found.execution.failures[0].step is None
    assert found.execution.quiesced and found.deviations == 0


def test_guarded_survives_a_fixed_plan_and_coverage_counts_what_ran() -> None:
    report = _explore(_target("guarded", examples=40))
    assert report.counterexample is None  # type: ignore[attr-defined]
    coverage = report.coverage  # type: ignore[attr-defined]
    assert set(coverage["deviations"]) <= set(FAULT_KINDS) and coverage["faults"]
    assert coverage["invariants"]["no_double_charge"] == report.steps  # type: ignore[attr-defined]
    assert sum(coverage["outcomes"].values()) == coverage["invariants"]["acceptable_outcome"]


def test_time_budget_stops_the_search() -> None:
    report = _explore(_target("guarded", examples=10**6, time_budget=0.3))
    assert report.counterexample is None
    assert report.notes == ("time budget ran out",)
    assert report.runs < 10**6


def test_shrinking_reaches_the_known_minimum_for_naive() -> None:
    """naive's harm at one deviation: a lost ACK makes its consumer, which does not
    dedupe, apply the redelivered event again (a timeout's fresh key, one deviation too,
    is hygiene: the run settles and no harm follows on this plan)."""
    report = _explore(_target("naive", examples=200))
    found = report.counterexample  # type: ignore[attr-defined]
    assert found is not None and found.invariant == "consumer_effect_at_most_once"
    assert found.deviations == 1
    assert [str(s.choice.outcome) for s in found.execution.steps if s.deviation] == ["ack_lost"]


# -- pytest integration -----------------------------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _outcome(testcase: type[unittest.TestCase]) -> unittest.TestResult:
    result = unittest.TestResult()
    testcase().run(result)
    return result


@pytest.mark.usefixtures("in_tmp")
def test_txcheck_testcase_passes_for_guarded() -> None:
    testcase = txcheck_testcase("guarded", plans=[(PLAN,)], max_examples=15, database=None)
    result = _outcome(testcase)
    assert result.wasSuccessful(), result.failures


@pytest.mark.usefixtures("in_tmp")
def test_txcheck_testcase_fails_naming_the_invariant() -> None:
    testcase = txcheck_testcase(
        "control-no-saga",
        plans=[(PLAN,)],
        max_examples=300,
        database=None,
        derandomize=True,
        phases=(Phase.generate,),
    )
    result = _outcome(testcase)
    assert len(result.failures) == 1
    text = result.failures[0][1]
    named = [n for n in DESIGNATED["control-no-saga"] if f"invariant {n!r} (eventually)" in text]
    assert len(named) == 1
    assert "Reproduce in Python:" in text and f"assert execution.failed({named[0]!r})" in text


def _reproduction(report: str) -> str:
    """The Python block of a failure report, as printed."""
    lines = report.split("Reproduce in Python:\n", 1)[1].splitlines()
    block = []
    for line in lines:
        block.append(line)
        if line.startswith("assert execution."):
            break
    return "\n".join(block) + "\n"


def test_a_user_policys_failure_prints_a_reproduction_that_runs_and_writes_its_trace(
    in_tmp: Path,
) -> None:
    testcase = txcheck_testcase(
        KeepsTheMoney(),  # an instance, as users pass it
        plans=[(PLAN,)],
        max_examples=300,
        database=None,
        derandomize=True,
    )
    result = _outcome(testcase)
    assert len(result.failures) == 1
    text = result.failures[0][1]
    spec = "examples.pytest_example.shop_policy:KeepsTheMoney"
    trace = in_tmp / ".txcheck" / "traces" / f"{testcase.__name__}.json"
    assert f"load_policy({spec!r})" in text  # its import path, not its display name
    assert trace.is_file(), text
    assert f"txcheck replay .txcheck/traces/{testcase.__name__}.json --policy {spec}" in " ".join(
        text.split()
    )
    script = in_tmp / "repro.py"
    script.write_text(_reproduction(text), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=in_tmp,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert main(["replay", str(trace), "--policy", spec, "--json"]) == 1


def _run_script(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    script = folder / "repro.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("trace_dir", [".txcheck/traces", None], ids=["trace", "no-trace"])
def test_a_reproduction_on_another_world_runs_with_or_without_a_trace_file(
    in_tmp: Path, trace_dir: str | None
) -> None:
    """Not the bundled world, so the reproduction needs it: read back from the trace that
    was written, or inlined when none was; never a file that does not exist."""
    document = json.loads(json.dumps(FIXTURE.document))
    document["catalog"]["sku_book"]["stock"] = 7
    testcase = txcheck_testcase(
        KeepsTheMoney(),
        fixture=parse_world(document),
        plans=[(PLAN,)],
        max_examples=300,
        database=None,
        derandomize=True,
        trace_dir=trace_dir,
    )
    result = _outcome(testcase)
    assert len(result.failures) == 1
    text = result.failures[0][1]
    reproduction = _reproduction(text)
    written = sorted(str(p.relative_to(in_tmp)) for p in in_tmp.rglob("*.json"))
    if trace_dir is None:
        assert written == [] and "load_trace" not in reproduction
        assert "fixture = parse_world(" in reproduction and "fixture=fixture" in reproduction
    else:
        assert written == [f".txcheck/traces/{testcase.__name__}.json"]
        assert f"trace = load_trace({written[0]!r})" in reproduction
        assert "fixture=trace.fixture" in reproduction
    done = _run_script(in_tmp, reproduction)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_planted_txcheck_link_is_not_written_through(in_tmp: Path, tmp_path: Path) -> None:
    """A checkout whose .txcheck points elsewhere: the failing test's trace is not written
    (the report then names no trace file), and nothing lands where the link points."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (in_tmp / ".txcheck").symlink_to(elsewhere)
    testcase = txcheck_testcase(
        KeepsTheMoney(), plans=[(PLAN,)], max_examples=300, database=None, derandomize=True
    )
    result = _outcome(testcase)
    assert len(result.failures) == 1
    assert "load_trace" not in _reproduction(result.failures[0][1])
    assert list(elsewhere.iterdir()) == []


def test_the_pytest_example_policy_keeps_the_money() -> None:
    """One deviation (the confirmation declined) and the saga never refunds."""
    deviation = Deviation(action="complete", outcome="permanent_error", tool="confirm_order")
    execution = execute(
        Target(
            policy=load_policy("examples.pytest_example.shop_policy:KeepsTheMoney").policy,
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLAN],
        chooser=Deviations([deviation]),
    )
    assert [f.name for f in execution.failures] == ["acceptable_outcome", "no_orphaned_effect"]
    assert execution.run.world.state["checkout"]["refunds"] == {}


def test_deviations_chooser_and_machine_agree_on_the_designated_failure() -> None:
    deviation = Deviation(action="complete", outcome="permanent_error", tool="charge_payment")
    execution = execute(
        Target(
            policy=builtin_policy("control-no-saga"),
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLAN],
        chooser=Deviations([deviation]),
    )
    assert execution.failed("acceptable_outcome") and execution.deviations == 1
