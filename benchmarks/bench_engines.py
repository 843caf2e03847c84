"""How fast is each exploration engine, and how soon does it find each control's bug?

Two tables, in one run:

1. **Throughput** on ``guarded`` over the representative checkout plan (it has no bug
   within two deviations, so every engine spends its whole budget): steps per second of
   the raw runner (bare, and checked with every invariant after every step, as engines
   check), the systematic engine (``max_faults=2``: explored steps, and all steps counting
   the prefixes it replays), the random engine and the Hypothesis engine
   (``txcheck.exploration.engines.hypothesis_engine`` when present, else a minimal
   ``RuleBasedStateMachine``
   baseline defined here). The systematic engine's cost per explored step is also given
   as a multiple of the checked runner's.
2. **Time to the first counterexample** for each positive control, per engine, with the
   counterexample's invariant, deviations and steps (the systematic engine's are minimal).

Run it from the repository root::

    python benchmarks/bench_engines.py                  # ~1-2 minutes
    python benchmarks/bench_engines.py --seconds 5 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import seed as fix_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from kit import run_engine

from txcheck.exploration.engines.random_walk import RandomEngine
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import Engine, SearchContext
from txcheck.exploration.kernel.report import EngineReport
from txcheck.exploration.kernel.session import Session, execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import DESIGNATED, builtin_policy

__all__ = ["main"]

USAGE = "python benchmarks/bench_engines.py [--seconds S] [--seed N] [--json]"
CONTRACT = default_contract()
FIXTURE = default_fixture()
(SINGLE,) = representative_plans(CONTRACT, FIXTURE)[0:1]
_CALLS = list(SINGLE[0].calls)
SECOND_CALL_INVALID = Plan(
    calls=(
        _CALLS[0],
        attrs.evolve(_CALLS[1], arguments={"order_id": 5, "idempotency_key": "key-reserve-1"}),
        *_CALLS[2:],
    )
)


def target(policy_name: str, plans: tuple[Plan, ...] = SINGLE) -> Target:
    policy = builtin_policy(policy_name)
    assert policy is not None
    return Target(
        policy_name=policy_name,
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        plans=(plans,),
    )


# -- the Hypothesis engine, or a minimal baseline ------------------------------------------


from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine  # noqa: E402


def hypothesis_engine(seed: int) -> Engine:
    """txcheck's Hypothesis engine (the seed is the target budget's)."""
    return HypothesisEngine()


class BaselineHypothesis:
    """A minimal ``RuleBasedStateMachine``: a rule takes the default or draws any enabled
    choice (at most ``max_faults`` deviations), safety after each step, liveness at the
    end. For comparison only; txcheck's own machine is ``txcheck.exploration.engines.machine``."""

    name = "hypothesis-baseline"
    spreads = False

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def explore(self, target: Target, context: SearchContext) -> EngineReport:
        deadline = context.deadline
        started = time.monotonic()
        counts = {"runs": 0, "steps": 0}
        max_faults = target.bounds.max_faults

        class Machine(RuleBasedStateMachine):
            def __init__(self) -> None:
                super().__init__()
                self.session = Session(target, target.plans[0])
                self.deviations = 0
                counts["runs"] += 1

            @rule(pick=st.integers(min_value=0, max_value=64))
            def step(self, pick: int) -> None:
                options = self.session.choices()
                if not options or deadline.expired():
                    return
                index = pick % len(options) if self.deviations < max_faults else 0
                self.deviations += index > 0
                self.session.apply(options[index])
                counts["steps"] += 1
                assert not self.session.failures

        machine = fix_seed(self.seed)(Machine)
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=target.budget.max_examples,
                stateful_step_count=60,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
        return EngineReport(
            engine=self.name,
            runs=counts["runs"],
            steps=counts["steps"],
            seconds=time.monotonic() - started,
        )


# -- table 1: throughput -------------------------------------------------------------------


def _raw(checked: bool, seconds: float) -> dict[str, Any]:
    runs = steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        policy = builtin_policy("guarded")
        assert policy is not None
        if checked:
            execution = execute(
                Target(
                    policy=policy, contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
                ),
                SINGLE,
            )
            steps += len(execution.steps)
        else:
            bare = Target(policy=policy, contract=CONTRACT, fixture=FIXTURE, invariants=())
            steps += len(execute(bare, SINGLE).steps)
        runs += 1
    elapsed = time.perf_counter() - start
    name = "runner, checked" if checked else "runner, bare"
    return {"engine": name, "runs": runs, "steps": steps, "seconds": elapsed}


def _engine_row(engine: Engine, label: str | None = None, **limits: Any) -> dict[str, Any]:
    report = run_engine(engine, target("guarded"), **limits)
    row = {
        "engine": label or report.engine,
        "runs": report.runs,
        "steps": report.steps,
        "seconds": report.seconds,
        "found": None if report.counterexample is None else report.counterexample.invariant,
    }
    replayed = [n for n in report.notes if n.startswith("replayed ")]
    if replayed:
        row["replayed"] = int(replayed[0].split()[1])
        row["complete_bound"] = report.exhaustive_bound if report.complete else None
    return row


def throughput(seconds: float, seed: int) -> list[dict[str, Any]]:
    rows = [_raw(False, seconds), _raw(True, seconds)]
    rows.append(_engine_row(SystematicEngine(), seconds=max(seconds, 60.0)))
    rows.append(_engine_row(RandomEngine(), seconds=seconds, seed=seed))
    rows.append(_engine_row(hypothesis_engine(seed), seconds=seconds, seed=seed))
    for row in rows:
        row["steps_per_s"] = row["steps"] / row["seconds"]
        if "replayed" in row:
            row["all_steps_per_s"] = (row["steps"] + row["replayed"]) / row["seconds"]
    return rows


# -- table 2: time to the first counterexample ---------------------------------------------

CONTROL_PLANS = {
    name: ((SECOND_CALL_INVALID,) if name == "control-lazy-validation" else SINGLE)
    for name in DESIGNATED
}


def first_counterexamples(seconds: float, seed: int) -> list[dict[str, Any]]:
    engines: list[tuple[str, Callable[[], Engine]]] = [
        ("systematic", SystematicEngine),
        ("random", RandomEngine),
        ("hypothesis", lambda: hypothesis_engine(seed)),
    ]
    rows = []
    for control, plans in CONTROL_PLANS.items():
        for label, factory in engines:
            report = run_engine(factory(), target(control, plans), seconds=seconds, seed=seed)
            found = report.counterexample
            rows.append(
                {
                    "policy": control,
                    "engine": label,
                    "seconds": report.seconds,
                    "invariant": None if found is None else found.invariant,
                    "deviations": None if found is None else found.deviations,
                    "steps": None if found is None else len(found.execution.steps),
                }
            )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_engines.py", usage=USAGE)
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="time budget per timed measurement"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random engines")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    rows = throughput(args.seconds, args.seed)
    checked = next(r for r in rows if r["engine"] == "runner, checked")
    system = next(r for r in rows if r["engine"] == "systematic")
    hypo = rows[-1]
    ratio = (system["seconds"] / system["steps"]) / (checked["seconds"] / checked["steps"])
    speedup = system["steps_per_s"] / hypo["steps_per_s"]
    found = first_counterexamples(args.seconds * 3, args.seed)
    if args.json:
        print(
            json.dumps(
                {
                    "python": sys.version.split()[0],
                    "throughput": rows,
                    "systematic_cost_per_step_vs_checked_runner": ratio,
                    "systematic_speedup_over_hypothesis": speedup,
                    "first_counterexample": found,
                },
                indent=2,
            )
        )
        return 0
    print(f"# {USAGE}")
    print(f"# guarded, representative checkout plan, Python {sys.version.split()[0]}")
    print(f"{'engine':<22}{'runs':>8}{'steps':>9}{'seconds':>9}{'steps/s':>10}  note")
    for r in rows:
        note = ""
        if "replayed" in r:
            note = (
                f"+{r['replayed']} replayed ({r['all_steps_per_s']:.0f} steps/s in all); "
                f"complete for k={r['complete_bound']}"
            )
        if r.get("found"):
            note += f" found {r['found']}"
        print(
            f"{r['engine']:<22}{r['runs']:>8}{r['steps']:>9}{r['seconds']:>9.2f}"
            f"{r['steps_per_s']:>10.0f}  {note}"
        )
    print(f"# systematic cost per explored step: {ratio:.2f}x the checked runner's")
    print(f"# systematic steps/s over {hypo['engine']}: {speedup:.2f}x")
    print()
    print(f"{'control':<26}{'engine':<12}{'seconds':>8}  counterexample")
    for r in found:
        what = (
            f"{r['invariant']}, {r['deviations']} deviations, {r['steps']} steps"
            if r["invariant"]
            else "none"
        )
        print(f"{r['policy']:<26}{r['engine']:<12}{r['seconds']:>8.2f}  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
