"""What does checking the asyncio version of an orchestrator cost, against its generator twin?

Two workloads on the bundled checkout plan, each run for the built-in generator ``guarded``
(A) and its asyncio twin ``examples/async_orchestrators/guarded.py`` (B), checked with every
default invariant:

- **run**: the default (fault-free) run, start to quiescence (``Session`` execute);
- **search**: the systematic engine to 1 deviation on the single checkout plan: every run
  it explores, with its forks (a fork of an async run re-runs its coroutine from the start).

A and B alternate within each round (A, B, A, B, ...), for ``--rounds`` rounds; the figures
are medians of CPU time (``time.process_time``) per run, and B/A is the ratio. Both twins take
the same steps (the search visits the same states), which the script checks.

Run it from the repository root::

    python benchmarks/bench_async.py               # 11 rounds
    python benchmarks/bench_async.py --rounds 5 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.async_orchestrators.guarded import Guarded as AsyncGuarded  # noqa: E402
from txcheck.exploration.engines.systematic import SystematicEngine  # noqa: E402
from txcheck.exploration.kernel.context import SearchContext  # noqa: E402
from txcheck.exploration.kernel.session import execute  # noqa: E402
from txcheck.exploration.kernel.target import Bounds, Target  # noqa: E402
from txcheck.exploration.plansets.representative import representative_plans  # noqa: E402
from txcheck.models.plan.contract_loader import default_contract  # noqa: E402
from txcheck.models.sim.fixture import default_fixture  # noqa: E402
from txcheck.models.sim.policies import builtin_policy  # noqa: E402
from txcheck.models.sim.policies.base import Policy  # noqa: E402
from txcheck.sim import AsyncPolicy  # noqa: E402

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, _ = representative_plans(CONTRACT, FIXTURE)


def _target(policy: Policy, k: int) -> Target:
    return Target(
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=(SINGLE,),
        bounds=Bounds(max_faults=k, max_states=10**6),
    )


def run_once(policy: Policy) -> tuple[float, int, int]:
    """CPU seconds of one checked default run, its runs (1) and steps."""
    target = _target(policy, 0)
    started = time.process_time()
    execution = execute(target, SINGLE)
    return time.process_time() - started, 1, len(execution.steps)


def search_once(policy: Policy) -> tuple[float, int, int]:
    """CPU seconds of a systematic search to 1 deviation, its runs and steps."""
    target = _target(policy, 1)
    started = time.process_time()
    report = SystematicEngine().explore(target, SearchContext.of(target))
    if report.counterexample is not None:
        raise SystemExit(f"{policy.name} failed the search: the benchmark expects a pass")
    return time.process_time() - started, report.runs, report.steps


WORKLOADS = {"run": run_once, "search": search_once}


def measure(rounds: int) -> dict[str, Any]:
    generator = builtin_policy("guarded")
    assert generator is not None
    twin = AsyncPolicy(AsyncGuarded)
    results: dict[str, Any] = {}
    for name, workload in WORKLOADS.items():
        per_run: dict[str, list[float]] = {"generator": [], "async": []}
        shape: dict[str, tuple[int, int]] = {}
        workload(generator)  # warm the caches (schema validators, admissions) once each
        workload(twin)
        for _ in range(rounds):
            for label, policy in (("generator", generator), ("async", twin)):
                seconds, runs, steps = workload(policy)
                per_run[label].append(seconds / runs)
                shape[label] = (runs, steps)
        if shape["generator"] != shape["async"]:
            raise SystemExit(f"{name}: the twins took other runs or steps: {shape}")
        a = statistics.median(per_run["generator"])
        b = statistics.median(per_run["async"])
        results[name] = {
            "runs": shape["generator"][0],
            "steps": shape["generator"][1],
            "generator_ms_per_run": round(a * 1000, 3),
            "async_ms_per_run": round(b * 1000, 3),
            "async_over_generator": round(b / a, 2),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11, help="interleaved rounds (default 11)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    results = measure(max(1, args.rounds))
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return 0
    print(f"{'workload':8} {'runs':>5} {'steps':>6} {'generator ms/run':>17} "
          f"{'async ms/run':>13} {'async/generator':>16}")  # fmt: skip
    for name, row in results.items():
        print(
            f"{name:8} {row['runs']:>5} {row['steps']:>6} {row['generator_ms_per_run']:>17.3f} "
            f"{row['async_ms_per_run']:>13.3f} {row['async_over_generator']:>16.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
