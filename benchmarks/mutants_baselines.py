"""The baselines of the mutant benchmark, measured in the same run on the same machine.

- **Exploration throughput**: steps per second of each engine on ``guarded`` over the
  representative checkout plan (no bug there within two deviations, so each spends its
  whole budget), against a minimal Hypothesis ``RuleBasedStateMachine`` over the same
  world (one rule takes the default or any enabled choice, safety after every step,
  liveness at quiescence: what a user would write by hand without txcheck).
- **Scenario-suite time**: the 14 scenarios under ``guarded``, and all 19 runs with the
  five positive controls (``txcheck.scenarios.run``), best of R.
- **Scoring throughput**: ``txcheck score`` against bare jsonschema on the same calls
  (``bench_score.py``'s cases and timing).
"""

from __future__ import annotations

import time
from typing import Any

import bench_score
from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as fix_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from jsonschema import Draft202012Validator
from kit import run_engine

from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.engines.random_walk import RandomEngine
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import Engine
from txcheck.exploration.kernel.session import Session, execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded
from txcheck.scenarios.catalog import SCENARIOS
from txcheck.scenarios.run import run_all, run_scenario
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import score_file

__all__ = ["bare_hypothesis", "scenario_suite", "scoring", "throughput"]

CONTRACT = default_contract()
FIXTURE = default_fixture()
MAX_FAULTS = 2
BATCH = 25


def _guarded() -> Target:
    single = representative_plans(CONTRACT, FIXTURE)[0]
    return Target(
        policy_name="guarded",
        policy=Guarded(),
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        plans=(single,),
    )


def bare_hypothesis(target: Target, seconds: float, seed: int) -> dict[str, Any]:
    """A minimal rule-based state machine over ``target``'s first plans, for ``seconds``.

    It runs in batches of ``BATCH`` examples until the time is up; once it is, rules do
    nothing, so the batch ends at once. (Raising out of a rule to stop would make
    Hypothesis report a flaky strategy when the stopped example's prefix was seen before.)
    """
    counts = {"runs": 0, "steps": 0}
    deadline = time.monotonic() + seconds

    class Bare(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session = Session(target, target.plans[0])
            self.deviations = 0
            self.live = time.monotonic() < deadline
            counts["runs"] += self.live

        @rule(pick=st.integers(min_value=0, max_value=64))
        def step(self, pick: int) -> None:
            options = self.session.choices() if self.live else []
            if not options:
                return
            index = pick % len(options) if self.deviations < MAX_FAULTS else 0
            self.deviations += index > 0
            self.session.apply(options[index])
            counts["steps"] += 1
            assert not self.session.failures

        def teardown(self) -> None:
            if self.live:
                before = len(self.session.steps)
                execution = self.session.finish()
                counts["steps"] += len(self.session.steps) - before
                assert execution.ok

    started = time.perf_counter()
    batch = 0
    while time.monotonic() < deadline:
        try:
            run_state_machine_as_test(
                fix_seed(seed * 1_000_003 + batch)(Bare),
                settings=settings(
                    max_examples=BATCH,
                    stateful_step_count=60,
                    deadline=None,
                    database=None,
                    suppress_health_check=list(HealthCheck),
                    phases=(Phase.generate,),
                ),
            )
        except AssertionError:  # a failure on guarded: still a throughput figure, flagged
            counts["found"] = 1
        batch += 1
    elapsed = time.perf_counter() - started
    return {"engine": "bare Hypothesis (baseline)", "seconds": elapsed, **counts}


def _runner_checked(seconds: float) -> dict[str, Any]:
    """The runner alone on the default schedule, every invariant after every step."""
    runs = steps = 0
    (plans,) = _guarded().plans
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        execution = execute(
            Target(
                policy=Guarded(), contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
            ),
            plans,
        )
        runs += 1
        steps += len(execution.steps)
    elapsed = time.perf_counter() - started
    label = "runner, checked (no search)"
    return {"engine": label, "runs": runs, "steps": steps, "seconds": elapsed}


def _engine(engine: Engine, label: str, seconds: float, seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    report = run_engine(engine, _guarded(), max_faults=MAX_FAULTS, seconds=seconds, seed=seed)
    elapsed = time.perf_counter() - started
    return {"engine": label, "runs": report.runs, "steps": report.steps, "seconds": elapsed}


def throughput(seconds: float, seed: int) -> list[dict[str, Any]]:
    """Steps per second of each engine and of the bare Hypothesis baseline, and each
    engine's ratio to the baseline (``x_bare``)."""
    rows = [
        _runner_checked(seconds),
        _engine(SystematicEngine(), "explore --engine systematic", seconds, seed),
        _engine(RandomEngine(), "explore --engine random", seconds, seed),
        _engine(
            HypothesisEngine(),
            "explore --engine hypothesis",
            seconds,
            seed,
        ),
        bare_hypothesis(_guarded(), seconds, seed),
    ]
    for row in rows:
        row["steps_per_s"] = row["steps"] / row["seconds"] if row["seconds"] else 0.0
    bare = rows[-1]["steps_per_s"]
    for row in rows:
        row["x_bare"] = row["steps_per_s"] / bare if bare else 0.0
    return rows


def _best(repeat: int, work: Any) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def scenario_suite(repeat: int) -> dict[str, Any]:
    """Seconds for the 14 scenarios under ``guarded``, and for all 19 runs (best of R)."""

    def fourteen() -> None:
        for entry in SCENARIOS:
            run_scenario(entry, contract=CONTRACT, fixture=FIXTURE)

    def nineteen() -> None:
        run_all(contract=CONTRACT, fixture=FIXTURE)

    return {
        "repeat": repeat,
        "scenarios": len(SCENARIOS),
        "scenarios_seconds": _best(repeat, fourteen),
        "all_runs_seconds": _best(repeat, nineteen),
    }


def scoring(cases: int, repeat: int) -> dict[str, Any]:
    """``txcheck score`` cases per second against bare jsonschema on the same calls."""
    text, calls = bench_score.build(cases)
    validators = {
        name: Draft202012Validator(dict(tool.parameters)) for name, tool in CONTRACT.tools.items()
    }

    def bare() -> int:
        return sum(len(list(validators[t].iter_errors(a))) for t, a in calls)

    def strict() -> object:
        return score_file(CONTRACT, parse_cases(text, source="bench.jsonl"))

    strict()  # warm caches before timing either side
    bare()
    score_s, bare_s = bench_score.best_of(repeat, strict, bare)
    return {
        "cases": cases,
        "calls": len(calls),
        "repeat": repeat,
        "score_per_s": cases / score_s,
        "bare_per_s": cases / bare_s,
        "slowdown": score_s / bare_s,
    }
