"""How much faster is a search on two Dask worker processes than on one?

    python benchmarks/bench_distributed.py                 # 3 rounds, ~2-3 minutes
    python benchmarks/bench_distributed.py --rounds 5 --json
    python benchmarks/bench_distributed.py --quick         # 3 short rounds, under a minute
    python benchmarks/bench_distributed.py --only systematic --k 3   # the long one

Each case is one engine's search of one target, spread over local Dask clusters of 1 and
of 2 worker processes (``txcheck.exploration.spread.cluster.local_workers``), each started once
before the timing and kept for every round. The rounds interleave the modes (1, 2, 1,
2, ...), so a change in the machine's load falls on both. Per run it records the wall time
and the CPU time of the command's process plus every worker process (``getrusage`` read
in each worker before and after), and the runs executed (both modes run the same number of
examples, split into 1 or 2 shares; the systematic search cuts each level into the same
chunks whatever the number of workers). It reports the medians, the ratios 1-worker /
2-workers measured in this same run, and each worker's utilisation (its CPU time over the
wall time of the run). Cluster start-up is measured apart (it is paid once
per command). A measurement, not a test: nothing here asserts a speed.

A case is one line in ``CASES``: a name, the engine, and how to build its target.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.engines.random_walk import RandomEngine
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import Engine, SearchContext
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.plansets.representative import search_plans
from txcheck.exploration.spread.cluster import DaskWorkers, local_workers
from txcheck.models.sim.policies import builtin_policy

__all__ = ["CASES", "Case", "main"]


def _guarded(examples: int, max_faults: int = 2) -> Target:
    """``guarded`` (no bug within the bound: every engine spends its whole budget)."""
    policy = builtin_policy("guarded")
    assert policy is not None
    return Target(
        policy=policy,
        bounds=Bounds(max_faults=max_faults),
        budget=Budget(max_examples=examples, seed=1, database=None),
    )


def _two_orders(max_faults: int) -> Target:
    """``guarded`` on the 8-call plan that checks out two orders, every state within
    ``max_faults`` deviations (no state budget)."""
    target = _guarded(1, max_faults)
    entry = next(
        e
        for e in search_plans(target.contract, target.fixture)
        if e.label == "checkout on two resources"
    )
    return attrs.evolve(
        target, plans=(entry.plans,), bounds=Bounds(max_faults=max_faults, max_states=10**9)
    )


SYSTEMATIC_K = 2
"""Deviations for the systematic case (``--k``): k=3 on this plan is about 30 times k=2."""


@attrs.frozen
class Case:
    """One search to time: ``engine`` on ``target(quick)``."""

    name: str
    engine: Callable[[], Engine]
    target: Callable[[bool], Target]


CASES: tuple[Case, ...] = (
    Case("hypothesis, guarded", HypothesisEngine, lambda quick: _guarded(300 if quick else 1200)),
    Case("random, guarded", RandomEngine, lambda quick: _guarded(3000 if quick else 12000)),
    Case(
        "systematic, 8 calls, two orders",
        SystematicEngine,
        lambda quick: _two_orders(1 if quick else SYSTEMATIC_K),
    ),
)


def _cpu_here() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_workers(workers: DaskWorkers) -> dict[str, float]:
    """CPU seconds used so far by each worker process of ``workers``."""
    return {str(k): float(v) for k, v in workers.client.run(_cpu_here).items()}


def _once(case: Case, workers: DaskWorkers, quick: bool) -> dict[str, Any]:
    target = case.target(quick)
    engine = case.engine()
    spreads: Any = engine
    here, there = _cpu_here(), _cpu_workers(workers)
    start = time.perf_counter()
    report = spreads.explore(target, SearchContext(workers=workers))
    wall = time.perf_counter() - start
    used = {k: v - there[k] for k, v in _cpu_workers(workers).items()}
    cpu = _cpu_here() - here + sum(used.values())
    return {
        "wall": wall,
        "cpu": cpu,
        "runs": float(report.runs),
        "utilisation": sorted(round(u / wall, 2) for u in used.values()),
    }


def _started(count: int) -> tuple[Any, DaskWorkers, float]:
    start = time.perf_counter()
    context = local_workers(count)
    workers = context.__enter__()
    workers.client.run(_cpu_here)  # every worker up and answering
    return context, workers, time.perf_counter() - start


def measure(rounds: int, quick: bool, cases: Sequence[Case] = CASES) -> dict[str, Any]:
    """Every case on 1 and on 2 workers, interleaved, ``rounds`` times."""
    modes = (1, 2)
    clusters = {n: _started(n) for n in modes}
    results: dict[str, Any] = {
        "startup_s": {str(n): round(clusters[n][2], 2) for n in modes},
        "cases": {},
    }
    try:
        for case in cases:
            _once(case, clusters[1][1], True)  # warm both (imports in the workers)
            _once(case, clusters[2][1], True)
            runs: dict[int, list[dict[str, Any]]] = {n: [] for n in modes}
            for round_ in range(1, rounds + 1):
                for n in modes:
                    runs[n].append(_once(case, clusters[n][1], quick))
                    _progress(case, round_, n, runs[n][-1])
            results["cases"][case.name] = _summary(runs)
    finally:
        for context, _, _ in clusters.values():
            context.__exit__(None, None, None)
    return results


def _progress(case: Case, round_: int, workers: int, run: dict[str, Any]) -> None:
    """One line per run on stderr, so a long measurement shows where it is and what it has
    measured so far, whatever happens to it later."""
    busy = "/".join(f"{u:.2f}" for u in run["utilisation"])
    print(
        f"{case.name}: round {round_}, {workers} worker(s): {run['wall']:.2f} s wall, "
        f"{run['cpu']:.2f} s CPU, {int(run['runs'])} runs, utilisation {busy}",
        file=sys.stderr,
        flush=True,
    )


def _summary(runs: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    median = {
        n: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "runs")}
        for n, rs in runs.items()
    }
    return {
        "rounds": len(runs[1]),
        "per_mode": {
            str(n): {
                "wall_s": round(m["wall"], 3),
                "cpu_s": round(m["cpu"], 3),
                "runs": int(m["runs"]),
                "walls_s": [round(r["wall"], 3) for r in runs[n]],
                "utilisation": [r["utilisation"] for r in runs[n]],
            }
            for n, m in median.items()
        },
        "speedup_wall": round(median[1]["wall"] / median[2]["wall"], 2),
        "cpu_ratio_2_over_1": round(median[2]["cpu"] / median[1]["cpu"], 2),
    }


def _markdown(results: dict[str, Any]) -> str:
    lines = [
        "| case | workers | runs | wall (median) | CPU (median) | walls per round "
        "| worker utilisation per round |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, case in results["cases"].items():
        for n, mode in case["per_mode"].items():
            walls = ", ".join(f"{w:.2f}" for w in mode["walls_s"])
            busy = "; ".join("/".join(f"{u:.2f}" for u in r) for r in mode["utilisation"])
            lines.append(
                f"| {name} | {n} | {mode['runs']} | {mode['wall_s']:.2f} s | "
                f"{mode['cpu_s']:.2f} s | {walls} | {busy} |"
            )
    lines.append("")
    for name, case in results["cases"].items():
        lines.append(
            f"- {name}: 2 workers are {case['speedup_wall']}x as fast as 1 (wall); "
            f"they use {case['cpu_ratio_2_over_1']}x its CPU"
        )
    start = results["startup_s"]
    lines.append(f"- cluster start-up: {start['1']} s (1 worker), {start['2']} s (2 workers)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/bench_distributed.py")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (at least 3)")
    parser.add_argument("--quick", action="store_true", help="smaller searches")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--only", help="only the cases whose name starts with this")
    parser.add_argument("--k", type=int, help="deviations for the systematic case (default 2)")
    args = parser.parse_args(argv)
    if args.rounds < 3:
        parser.error("--rounds must be at least 3")
    if args.k is not None:
        global SYSTEMATIC_K  # noqa: PLW0603 (a script's option)
        SYSTEMATIC_K = args.k
    cases = [c for c in CASES if args.only is None or c.name.startswith(args.only)]
    results = measure(args.rounds, args.quick, cases)
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.machine()}",
    }
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
    else:
        print(_markdown(results))
        print(f"- machine: {results['machine']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
