"""How fast is one deterministic run, and what do the invariants cost?

For each policy this times the default (fault-free) checkout run two ways:

- **checked**: ``txcheck.exploration.kernel.session`` with every ``DEFAULT_INVARIANTS`` property
  checked after every step (safety) and at quiescence (liveness), as the engines run it;
- **bare**: ``txcheck.models.sim.runner.Run`` driven to quiescence with no property at all;

and reports microseconds per step for both and their ratio (the invariants' overhead).
Each figure is the median over ``--repeat`` runs, after ``--warmup`` untimed runs.

Run it from the repository root::

    python benchmarks/bench_runner.py                    # guarded and naive, 50 runs each
    python benchmarks/bench_runner.py --policy guarded --repeat 200 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import BUILTIN_POLICIES, builtin_policy

__all__ = ["PLAN", "main", "measure"]

USAGE = "python benchmarks/bench_runner.py [--policy P ...] [--repeat N] [--warmup N] [--json]"

PLAN = Plan.of(
    (
        "create_order",
        {
            "order_id": "ord_1",
            "customer_id": "cus_1",
            "items": [{"sku": "sku_book", "quantity": 2}],
            "currency": "USD",
            "idempotency_key": "key-create-1",
        },
    ),
    ("reserve_inventory", {"order_id": "ord_1", "idempotency_key": "key-reserve-1"}),
    (
        "charge_payment",
        {"order_id": "ord_1", "amount": 2500, "currency": "USD", "idempotency_key": "key-ch-1"},
    ),
    ("confirm_order", {"order_id": "ord_1", "idempotency_key": "key-confirm-1"}),
)


def _time(run_once: Callable[[], int], repeat: int, warmup: int) -> tuple[int, float]:
    """(steps of one run, median seconds per run)."""
    steps = 0
    for _ in range(warmup):
        steps = run_once()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        steps = run_once()
        samples.append(time.perf_counter() - start)
    return steps, statistics.median(samples)


def measure(policy_name: str, *, repeat: int, warmup: int) -> dict[str, Any]:
    """Time the default checkout run of ``policy_name``, checked and bare."""
    contract, fixture = default_contract(), default_fixture()

    def checked() -> int:
        policy = builtin_policy(policy_name)
        assert policy is not None
        execution = execute(
            Target(
                policy=policy, contract=contract, fixture=fixture, invariants=DEFAULT_INVARIANTS
            ),
            [PLAN],
            stop_at_first=False,
        )
        if not (execution.ok and execution.quiesced):
            raise SystemExit(f"{policy_name}: the default run is not clean: {execution.failures}")
        return len(execution.steps)

    def bare() -> int:
        policy = builtin_policy(policy_name)
        assert policy is not None
        bare = Target(policy=policy, contract=contract, fixture=fixture, invariants=())
        return len(execute(bare, [PLAN]).steps)

    steps, with_checks = _time(checked, repeat, warmup)
    bare_steps, without = _time(bare, repeat, warmup)
    assert bare_steps == steps, (bare_steps, steps)
    checked_us = with_checks / steps * 1e6
    bare_us = without / steps * 1e6
    return {
        "policy": policy_name,
        "steps": steps,
        "invariants": len(DEFAULT_INVARIANTS),
        "checked_us_per_step": round(checked_us, 1),
        "bare_us_per_step": round(bare_us, 1),
        "ratio": round(checked_us / bare_us, 2),
        "checked_ms_per_run": round(with_checks * 1e3, 3),
        "bare_ms_per_run": round(without * 1e3, 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_runner.py",
        usage=USAGE,
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--policy",
        action="append",
        choices=sorted(BUILTIN_POLICIES),
        help="policy to measure (repeatable; default: guarded and naive)",
    )
    parser.add_argument("--repeat", type=int, default=50, help="timed runs per figure")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        parser.error("--repeat must be >= 1 and --warmup >= 0")
    results = [
        measure(name, repeat=args.repeat, warmup=args.warmup)
        for name in args.policy or ["guarded", "naive"]
    ]
    if args.json:
        print(json.dumps({"python": sys.version.split()[0], "results": results}, indent=2))
        return 0
    print(f"# {USAGE}")
    print(f"# default checkout run, median of {args.repeat} runs, Python {sys.version.split()[0]}")
    print(f"{'policy':<10}{'steps':>6}{'checked us/step':>17}{'bare us/step':>14}{'ratio':>8}")
    for r in results:
        print(
            f"{r['policy']:<10}{r['steps']:>6}{r['checked_us_per_step']:>17.1f}"
            f"{r['bare_us_per_step']:>14.1f}{r['ratio']:>8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
