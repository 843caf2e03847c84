"""``txcheck explore``: counterexamples, shrinking, controls, seeds, traces, bad input."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from txcheck.cli import main
from txcheck.cli.progress import ExploreProgress
from txcheck.exploration.engines.auto import ENGINES
from txcheck.exploration.engines.faults import FAULT_KINDS
from txcheck.exploration.kernel.report import Tally
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.sim.policies import DESIGNATED
from txcheck.scenarios.catalog import control, scenario

ROOT = Path(__file__).resolve().parent.parent
VALID_PLAN = str(ROOT / "examples" / "proposals" / "valid_openai_chat.json")
HYGIENE = {i.name for i in DEFAULT_INVARIANTS if not i.is_harm}
QUICK = ["--engine", "hypothesis", "--no-seeds", "--seed", "0", "--max-shrinks", "50"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def explore_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["explore", *argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_naive_counterexample_is_short_and_replays(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = explore_json(capsys, "--policy", "naive", *QUICK)
    assert code == 1 and result["found"]
    found = result["counterexample"]
    # short: one deviation at most, and the run goes on only to the harm its first
    # (hygiene) failure leads to
    assert found["deviations"] <= 1 and found["steps"] <= 8
    assert found["trace"] == "txcheck-counterexample.json"
    assert main(["replay", "txcheck-counterexample.json", "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["reproduced"]
    names = [v["invariant"] for v in replayed["violations"]]
    assert names == [v["invariant"] for v in found["violations"]]
    assert found["invariant"] == next(n for n in names if n not in HYGIENE)


@pytest.mark.parametrize("policy", sorted(DESIGNATED))
def test_each_control_is_caught_by_its_designated_invariant(
    policy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = explore_json(capsys, "--policy", policy, *QUICK, "--trace-out", "ce.json")
    assert code == 1
    found = result["counterexample"]
    assert found["invariant"] in DESIGNATED[policy]
    known = len(scenario(control(policy).scenario).deviations)
    assert found["deviations"] <= known  # shrinking reaches the scenario's hand-made minimum
    trace = json.loads(Path("ce.json").read_text(encoding="utf-8"))
    assert trace["policy"] == policy and trace["engine"] == "hypothesis"
    assert sum(1 for s in trace["steps"] if s["deviation"]) == found["deviations"]


def test_a_given_plan_under_guarded_finds_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = explore_json(
        capsys, "--policy", "guarded", "--plan", VALID_PLAN, "--max-examples", "40", *QUICK
    )
    assert code == 0 and not result["found"] and result["counterexample"] is None
    engines = result["engines"]
    assert [e["engine"] for e in engines] == ["hypothesis"]
    coverage = result["coverage"]
    assert set(coverage["deviations"]) <= set(FAULT_KINDS) and sum(coverage["faults"].values()) > 0
    assert coverage["invariants"]["no_double_charge"] == engines[0]["steps"]
    assert not Path("txcheck-counterexample.json").exists()


def test_a_seeded_run_is_byte_for_byte_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for name in ("a.json", "b.json"):
        assert main(["explore", "--policy", "naive", *QUICK, "--trace-out", name, "--json"]) == 1
        outputs.append(capsys.readouterr().out.replace(name, "TRACE"))
    assert outputs[0] == outputs[1]
    assert Path("a.json").read_bytes() == Path("b.json").read_bytes()
    assert not Path(".txcheck/examples").exists()  # --seed runs without the example database


@pytest.mark.parametrize("seeded", [True, False], ids=["seed", "database"])
def test_no_state_is_written_outside_txcheck(tmp_path: Path, seeded: bool) -> None:
    """Hypothesis keeps its state under .txcheck/, never in ./.hypothesis, with or without
    --seed (a child process: Hypothesis picks its folder once per process)."""
    argv = ["--policy", "naive", "--engine", "hypothesis", "--no-seeds", "--max-shrinks", "20"]
    done = subprocess.run(
        [sys.executable, "-m", "txcheck", "explore", *argv, *(["--seed", "0"] * seeded)],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".txcheck", "txcheck-counterexample.json"]
    assert Path(tmp_path / ".txcheck" / "examples").exists() is not seeded


def test_failures_are_saved_to_the_example_database(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", "--policy", "naive", "--engine", "hypothesis", "--no-seeds", "--json"]
    assert main([*argv, "--max-shrinks", "50"]) == 1
    capsys.readouterr()
    saved = [p for p in Path(".txcheck/examples").rglob("*") if p.is_file()]
    assert saved  # the next run replays these first


def test_auto_replays_the_scenario_seeds_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = explore_json(capsys, "--policy", "naive", "--seed", "0")
    assert code == 1
    assert result["engines"][0]["engine"] == "seeds"
    assert result["counterexample"]["engine"] == "seeds"


def test_human_output_shows_the_report_and_the_coverage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explore", "--policy", "naive", *QUICK]) == 1
    captured = capsys.readouterr()
    assert captured.err == ""  # progress only on a terminal
    out = captured.out
    assert "Counterexample: policy naive violates" in out
    assert "txcheck replay txcheck-counterexample.json" in out
    assert "Reproduce in Python:" in out and "execution = execute(" in out
    assert "Deviations taken, by kind" in out and "Invariants checked (states):" in out


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--plan", "missing.json"], "missing.json"),
        (["--policy", "no such policy"], "--policy"),
        (["--contract", "missing-contract.json"], "missing-contract.json"),
        (["--policy", "nomodule_for_txcheck:Policy"], "cannot import"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", *argv]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--max-examples", "0"], ["--engine", "nope"], ["--seed", "x"]])
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["explore", *argv])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


RAISING = """
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.requests import JournalAppend, JournalRead

class Raising(Guarded):
    name = "raising"

    def orchestrate(self, ctx):
        yield JournalRead()
        yield JournalAppend(entry={"phase": "PROPOSED"})
        raise ValueError("boom")
"""


def test_a_policy_that_raises_is_reported_with_its_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "raising_policy.py").write_text(RAISING, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["explore", "--policy", "raising_policy:Raising", *QUICK, "--json"])
    assert code == 2
    err = capsys.readouterr().err
    assert "ValueError: boom" in err and "trace up to that point" in err
    assert err.count("\n") == 1
    trace = json.loads(Path("txcheck-counterexample.json").read_text(encoding="utf-8"))
    assert "ValueError: boom" in trace["error"] and trace["steps"]


def test_every_available_engine_finds_naive(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(ENGINES) == {"systematic", "hypothesis", "random"}
    for engine in ENGINES:
        code, result = explore_json(
            capsys, "--policy", "naive", "--engine", engine, "--no-seeds", "--seed", "0",
            "--max-examples", "200", "--max-shrinks", "50",
        )  # fmt: skip
        assert code == 1, engine
        assert result["counterexample"]["engine"] == engine


@pytest.mark.slow
def test_guarded_survives_thousands_of_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = explore_json(
        capsys, "--policy", "guarded", "--engine", "hypothesis", "--no-seeds", "--seed", "1",
        "--max-examples", "3000",
    )  # fmt: skip
    assert code == 0, result["counterexample"]
    assert result["engines"][0]["runs"] >= 3000


def test_progress_reads_the_live_counters() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    tally = Tally(runs=12, steps=300, deviations=Counter({"crash": 2, "jump": 1}))
    with ExploreProgress(console) as progress:
        progress.observe("hypothesis", tally)
        text = progress.__rich__().plain
    assert text.startswith("exploring (hypothesis) · 12 runs · ")
    assert f"· 2/{len(FAULT_KINDS)} deviation kinds · " in text
