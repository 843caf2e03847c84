"""The example policy of docs/policies.md runs through ``execute`` and keeps every invariant."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout_runs import (
    PLAN,
    checkout_plan,
    default_choices,
    fault_points,
    journal_phase,
    run_checked,
)
from txcheck.cli import main
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.target import Bounds, Deadline, Target
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.policies.base import Policy

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "policies" / "my_policy.py"


def _careful() -> type[Policy]:
    spec = importlib.util.spec_from_file_location("my_policy_example", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: type[Policy] = module.Careful
    return found


Careful = _careful()
DEFAULT = default_choices(Careful())


def test_the_example_script_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "no fault               ends RECONCILED every invariant holds",
        "charge response lost   ends RECONCILED every invariant holds",
        "crash while charging   ends RECONCILED every invariant holds",
        "charge declined        ends MANUAL     every invariant holds",
    ]


def test_default_run_completes_once() -> None:
    execution = run_checked(Careful())
    assert execution.ok and execution.quiesced
    assert journal_phase(execution.run) == {"phase": "RECONCILED", "outcome": "completed"}
    assert list(execution.run.world.state["checkout"]["charges"]) == ["ch_1"]


def test_an_invalid_plan_is_rejected_before_any_side_effect() -> None:
    execution = run_checked(Careful(), (Plan(calls=PLAN.calls[:3]),))
    assert execution.ok and execution.run.world.operations == []
    assert journal_phase(execution.run) == {"phase": "REJECTED", "codes": ["incomplete_workflow"]}


def test_a_declined_charge_goes_to_manual_with_the_records() -> None:
    chooser = Deviations(
        [Deviation(action="complete", outcome="permanent_error", tool="charge_payment")]
    )
    execution = run_checked(Careful(), chooser=chooser)
    assert execution.ok
    phase = journal_phase(execution.run)
    assert phase is not None and phase["phase"] == "MANUAL"
    assert phase["diverging"][0] == "call_3: charge_payment rejected"
    assert [d.split(":")[0] for d in phase["diverging"][1:]] == ["call_1", "call_2"]


@pytest.mark.parametrize(
    "point", fault_points(Careful()), ids=lambda p: f"{p[0]}-{p[1].actor}-{p[1].action}"
)
def test_every_single_deviation_keeps_every_invariant(point: tuple[int, Choice]) -> None:
    index, choice = point
    execution = run_checked(Careful(), choices=[*DEFAULT[:index], choice])
    assert [f.to_json() for f in execution.failures] == []
    assert execution.ok and execution.quiesced


@pytest.mark.parametrize(
    "again", [PLAN, checkout_plan(prefix="again-")], ids=["same-keys", "fresh-keys"]
)
def test_the_plan_submitted_twice_keeps_every_invariant_to_two_deviations(again: Plan) -> None:
    """Default explore found no_double_charge in the example as it was: the plan submitted
    twice, a lost response and a clock jump past the idempotency record's lifetime. Every
    schedule of up to two deviations is searched; Careful claims the operation, so the
    second submission attaches instead of charging again."""
    target = Target(policy=Careful(), plans=((PLAN, again),), bounds=Bounds(max_faults=2))
    report = SystematicEngine().explore(target, SearchContext(deadline=Deadline(600)))
    assert report.counterexample is None
    assert report.complete and report.states > 10_000


@pytest.mark.slow
def test_default_explore_finds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What docs/policies.md claims: the default engines find no counterexample."""
    monkeypatch.chdir(tmp_path)
    policy = "examples.policies.my_policy:Careful"
    assert main(["explore", "--policy", policy, "--seed", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["counterexample"] is None and result["verdict"]["outcome"] == "pass"


def test_the_policies_page_shows_what_the_example_needs() -> None:
    """The request table has Claim, the phases include ATTACHED, and the page says how
    compensation arguments are built (ArgRef, ReceiptRef): the example needs the first
    two, a saga the last two."""
    page = (ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    requests = page.split("## Requests and what they answer", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in requests.splitlines() if line.startswith("| `")]
    assert "`Claim(operation, entry)`" in rows and "`Invoke(tool, arguments, call_id, " in (
        " ".join(rows)
    )
    assert "`RECONCILED`, or `REJECTED`, or `MANUAL`, or `ATTACHED`" in " ".join(page.split())
    assert 'yield Claim(operation=operation, entry={"phase": "PROPOSED"})' in page
    assert "`ArgRef`" in page and "`ReceiptRef`" in page and "undo_arguments(" in page
    source = SCRIPT.read_text(encoding="utf-8")
    assert "yield Claim(operation=operation" in source and '"ATTACHED"' in source
