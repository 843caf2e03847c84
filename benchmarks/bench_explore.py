"""What does txcheck's Hypothesis layer cost, and how soon does it find each control's bug?

Two tables, in one process:

1. **Throughput** (steps per second, every safety invariant checked after every step and
   every liveness invariant at quiescence) of ``explore --policy guarded`` (the Hypothesis
   engine: ``txcheck.exploration.engines.machine`` with swarm fault kinds, fault seeking,
   recording and coverage) against a minimal hand-written ``RuleBasedStateMachine`` over the
   same world:
   a ``Run`` of the same plan, one rule that takes the default or draws any available
   choice (at most ``max_faults`` deviations), safety after each step, liveness in
   ``teardown``, nothing else. Both on one fixed checkout plan, then txcheck again on
   generated plans (what ``explore`` does without ``--plan``). The ratio is txcheck's
   steps/s over the baseline's.
2. **Time to the first counterexample** for each positive control (generated plans, no
   scenario seeds): the median over several seeds of the time until the first failing
   example, of the time until the shrunk counterexample is reported, and of its
   deviations and steps.

Run it from the repository root::

    python benchmarks/bench_explore.py              # ~1-2 minutes
    python benchmarks/bench_explore.py --examples 300 --seeds 3 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as fix_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kit import bounded

from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import Tally
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import DESIGNATED, builtin_policy

CONTRACT = default_contract()
FIXTURE = default_fixture()
PLAN = Plan.of(
    (
        "create_order",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "items": [{"sku": "sku_book", "quantity": 1}],
            "currency": "USD",
            "idempotency_key": "key-create-1",
        },
    ),
    ("reserve_inventory", {"order_id": "ord_1", "idempotency_key": "key-reserve-1"}),
    (
        "charge_payment",
        {"order_id": "ord_1", "amount": 1250, "currency": "USD", "idempotency_key": "key-charge-1"},
    ),
    ("confirm_order", {"order_id": "ord_1", "idempotency_key": "key-confirm-1"}),
)


def _target(policy: str, plans: tuple[tuple[Plan, ...], ...]) -> Target:
    found = builtin_policy(policy)
    assert found is not None
    return Target(
        policy_name=policy,
        policy=found,
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        plans=plans,
    )


# -- the minimal baseline -----------------------------------------------------------------


class Baseline(RuleBasedStateMachine):
    """Run + one default-or-fault rule, safety after each step, liveness at the end."""

    steps = 0
    max_faults = 3

    def __init__(self) -> None:
        super().__init__()
        self.session: Session | None = None
        self.faults = 0

    @initialize()
    def start(self) -> None:
        policy = builtin_policy("guarded")
        assert policy is not None
        self.session = Session(Target(policy=policy, contract=CONTRACT, fixture=FIXTURE), [PLAN])

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        assert self.session is not None
        options = self.session.choices()
        if not options:
            return
        choice = options[0]
        if self.faults < self.max_faults and data.draw(st.booleans()):
            choice = data.draw(st.sampled_from(options))
            self.faults += choice != options[0]
        self.session.apply(choice)
        Baseline.steps += 1
        assert not self.session.failures

    def teardown(self) -> None:
        if self.session is None:
            return
        before = len(self.session.steps)
        execution = self.session.finish()
        Baseline.steps += len(self.session.steps) - before
        assert execution.ok


def baseline_throughput(examples: int, seed: int, step_count: int) -> dict[str, Any]:
    Baseline.steps = 0
    started = time.perf_counter()
    run_state_machine_as_test(
        fix_seed(seed)(Baseline),
        settings=settings(
            max_examples=examples,
            stateful_step_count=step_count,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
            verbosity=Verbosity.quiet,
        ),
    )
    seconds = time.perf_counter() - started
    return {"engine": "baseline", "steps": Baseline.steps, "seconds": seconds}


def txcheck_throughput(
    examples: int, seed: int, plans: tuple[tuple[Plan, ...], ...], label: str
) -> dict[str, Any]:
    started = time.perf_counter()
    report = HypothesisEngine().explore(
        bounded(
            _target("guarded", plans),
            max_faults=3,
            max_examples=examples,
            seed=seed,
            max_shrinks=0,
        ),
        SearchContext(),
    )
    seconds = time.perf_counter() - started
    found = report.counterexample
    return {
        "engine": label,
        "steps": report.steps,
        "runs": report.runs,
        "seconds": seconds,
        "stopped_at": None if found is None else found.invariant,
    }


# -- time to the first counterexample ----------------------------------------------------


def control_times(policy: str, seeds: int, examples: int) -> dict[str, Any]:
    rows = []
    for seed in range(seeds):
        tally = Tally()
        started = time.monotonic()
        report = HypothesisEngine().explore(
            bounded(_target(policy, ()), max_faults=3, max_examples=examples, seed=seed),
            SearchContext(tally=tally),
        )
        total = time.monotonic() - started
        found = report.counterexample
        first = tally.first_failure
        rows.append(
            {
                "first": None if first is None else first - tally.started,
                "total": total,
                "invariant": None if found is None else found.invariant,
                "designated": found is not None and found.invariant in DESIGNATED[policy],
                "deviations": None if found is None else found.deviations,
                "steps": None if found is None else len(found.execution.steps),
            }
        )
    found_rows = [r for r in rows if r["invariant"] is not None]

    def median(key: str) -> float | None:
        values = [r[key] for r in found_rows]
        return statistics.median(values) if values else None

    return {
        "policy": policy,
        "found": f"{len(found_rows)}/{seeds}",
        "designated": sum(1 for r in rows if r["designated"]),
        "first_s": median("first"),
        "shrunk_s": median("total"),
        "deviations": median("deviations"),
        "steps": median("steps"),
        "invariants": sorted({r["invariant"] for r in found_rows}),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_explore.py")
    parser.add_argument("--examples", type=int, default=1000, help="examples per throughput run")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per control")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    base = baseline_throughput(args.examples, 0, 16)
    fixed = txcheck_throughput(args.examples, 0, ((PLAN,),), "txcheck (fixed plan)")
    generated = txcheck_throughput(args.examples, 0, (), "txcheck (generated plans)")
    throughput = []
    for row in (base, fixed, generated):
        row["steps_per_s"] = row["steps"] / row["seconds"]
        throughput.append(row)
    ratio = fixed["steps_per_s"] / base["steps_per_s"]
    controls = [control_times(p, args.seeds, 1000) for p in sorted(DESIGNATED)]
    if args.json:
        print(
            json.dumps({"throughput": throughput, "ratio": ratio, "controls": controls}, indent=2)
        )
        return 0
    print(f"Throughput on guarded ({args.examples} examples, seed 0):")
    for row in throughput:
        found = row.get("stopped_at")
        stopped = f" (stopped at a counterexample: {found})" if found else ""
        print(
            f"  {row['engine']:<28} {row['steps']:>8} steps {row['seconds']:>7.2f}s "
            f"{row['steps_per_s']:>9.0f} steps/s{stopped}"
        )
    print(f"  ratio txcheck (fixed plan) / baseline: {ratio:.2f}")
    print(f"Time to the first counterexample (median over {args.seeds} seeds, generated plans):")
    for row in controls:
        print(
            f"  {row['policy']:<25} found {row['found']} (designated {row['designated']}) "
            f"first {row['first_s']:.2f}s shrunk {row['shrunk_s']:.2f}s "
            f"deviations {row['deviations']} steps {row['steps']} {row['invariants']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
