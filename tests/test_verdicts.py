"""A pass is earned: explore's exit code and verdict say what was exercised and which bound
was proved; a search that exercised nothing is inconclusive (exit 3), not a pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.exploration.kernel.report import EngineReport, ExploreResult, StopKind, StopReason
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.kernel.verdict import verdict_of
from txcheck.models.sim.policies import Guarded

ROOT = Path(__file__).resolve().parent.parent
VALID_PLAN = str(ROOT / "examples" / "proposals" / "valid_openai_chat.json")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _explore(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["explore", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _plan(tmp_path: Path, *calls: tuple[str, dict[str, Any]]) -> str:
    document = {
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(calls, 1)
        ]
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_a_search_that_ran_nothing_is_inconclusive(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = _explore(capsys, "--time-budget", "0.000001", "--seed", "0")
    assert code == 3
    verdict = result["verdict"]
    assert verdict["outcome"] == "inconclusive" and verdict["runs"] == 0
    assert "no run was executed" in verdict["unexercised"]


def test_the_human_summary_says_inconclusive_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--time-budget", "0.000001", "--seed", "0"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("Inconclusive for policy guarded: ")
    assert "  - no run was executed" in out
    assert "No counterexample" not in out


def test_a_plan_of_reads_commits_nothing_and_is_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, ("get_order", {"order_id": "ord_1"}))
    code, result = _explore(capsys, "--plan", plan, "--seed", "0", "--max-examples", "20")
    assert code == 3
    verdict = result["verdict"]
    assert verdict["runs"] > 0 and verdict["writes"] == 0
    assert any(r.startswith("no write was committed") for r in verdict["unexercised"])


def test_a_plan_of_unknown_tools_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, ("launch_rocket", {"x": 1}))
    assert main(["explore", "--plan", plan, "--seed", "0"]) == 2
    err = capsys.readouterr().err
    assert "plan.json: the proposal calls no tool the contract has" in err
    assert "launch_rocket" in err


def test_a_complete_systematic_pass_states_the_bound_it_proved(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--engine", "systematic", "--plan", VALID_PLAN, "--max-faults", "1", "--seed", "0"]
    code, result = _explore(capsys, *argv)
    assert code == 0
    verdict = result["verdict"]
    assert verdict["outcome"] == "pass" and verdict["complete"] is True
    assert verdict["bound"] == "exhaustive to 1 deviation on all 2 plan sets"
    assert verdict["exhaustive_to"] == 1 and verdict["writes"] > 0 and verdict["faults"] > 0
    assert main(["explore", *argv]) == 0
    out = capsys.readouterr().out
    assert (
        "No counterexample for policy guarded: exhaustive to 1 deviation on all 2 plan sets ("
        in out
    )


def test_a_bound_cut_short_is_stated_and_require_exhaustive_makes_it_inconclusive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--engine", "systematic", "--max-states", "300", "--seed", "0"]
    code, result = _explore(capsys, *argv)
    assert code == 0
    verdict = result["verdict"]
    assert verdict["complete"] is False
    assert verdict["bound"].startswith("exhaustive to ")
    assert " of 3 deviations (" in verdict["bound"]
    assert "state budget (300 states) ran out" in verdict["bound"] or "lower:" in verdict["bound"]
    code, strict = _explore(capsys, *argv, "--require-exhaustive")
    assert code == 3
    assert strict["verdict"]["outcome"] == "inconclusive"
    assert strict["verdict"]["unexercised"] == [f"--require-exhaustive: {verdict['bound']}"]


def test_require_exhaustive_passes_when_the_bound_is_reached(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--engine", "systematic", "--plan", VALID_PLAN, "--max-faults", "1"]
    code, result = _explore(capsys, *argv, "--require-exhaustive", "--seed", "0")
    assert code == 0 and result["verdict"]["outcome"] == "pass"


def test_no_exhaustive_engine_means_no_bound_is_claimed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--engine", "hypothesis", "--plan", VALID_PLAN, "--max-examples", "30", "--seed", "0"]
    code, result = _explore(capsys, *argv)
    assert code == 0
    assert result["verdict"]["bound"].startswith("no exhaustive search ran")
    code, strict = _explore(capsys, *argv, "--require-exhaustive")
    assert code == 3 and strict["verdict"]["outcome"] == "inconclusive"


def _target(max_faults: int = 3) -> Target:
    return Target(policy=Guarded(), bounds=Bounds(max_faults=max_faults))


def _report(**fields: Any) -> EngineReport:
    defaults: dict[str, Any] = {"engine": "random", "runs": 10, "steps": 100, "writes": 5}
    return EngineReport(**{**defaults, **fields})


def test_runs_that_never_injected_an_asked_for_fault_are_inconclusive() -> None:
    result = ExploreResult(reports=(_report(coverage={"faults": {}, "deviations": {}}),))
    verdict = verdict_of(result, _target())
    assert verdict.outcome == "inconclusive"
    assert verdict.unexercised == ("no fault was injected (up to 3 per run were asked for)",)
    # with no fault asked for, none missing is no gap
    assert verdict_of(result, _target(max_faults=0)).outcome == "pass"


def test_a_pass_needs_runs_writes_and_faults() -> None:
    covered = {"faults": {"crash": 2}}
    assert verdict_of(ExploreResult(reports=(_report(coverage=covered),)), _target()).outcome == (
        "pass"
    )
    no_writes = ExploreResult(reports=(_report(coverage=covered, writes=0),))
    assert verdict_of(no_writes, _target()).outcome == "inconclusive"
    nothing = ExploreResult(reports=(_report(runs=0, steps=0, writes=0),))
    assert verdict_of(nothing, _target()).unexercised == ("no run was executed",)
    interrupted = verdict_of(
        ExploreResult(reports=(_report(coverage=covered),)), _target(), interrupted=True
    )
    assert interrupted.outcome == "inconclusive"


def test_the_readme_documents_every_exit_code_and_the_bound() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("| exit | meaning |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in table.splitlines()}
    assert list(rows) == ["0", "1", "2", "3", "130, 143"]
    assert "the summary states the bound proved" in rows["0"]
    assert "counterexample" in rows["1"] and "bad input" in rows["2"]
    assert rows["3"].strip().startswith("inconclusive") and "--require-exhaustive" in rows["3"]
    assert "interrupted by SIGINT or SIGTERM" in rows["130, 143"]
    assert "No counterexample for policy guarded: exhaustive to " in readme
    assert "`--require-exhaustive` makes an unreached bound exit 3" in readme


def test_the_verdict_says_why_a_search_stopped_short_from_the_typed_reason() -> None:
    """The stop reason is read from ``EngineReport.stopped``, not parsed from a note: a
    report whose notes say something else still gets its own reason in the verdict."""
    short = StopReason(StopKind.STATES, "the state budget (9 states) ran out on 1 of 1 plan sets")
    report = _report(
        engine="systematic",
        bound=2,
        exhaustive_bound=None,
        coverage={"faults": {"crash": 2}},
        notes=("stopped early: something the verdict must not read",),
        stopped=short,
    )
    result = ExploreResult(reports=(report,))
    assert (
        verdict_of(result, _target(max_faults=2)).bound
        == f"exhaustive to no level of 2 deviations ({short.said})"
    )
    strict = verdict_of(result, _target(max_faults=2), require_exhaustive=True)
    assert strict.outcome == "inconclusive" and "must not read" not in strict.bound
