# ruff: noqa: PLC0415, I001  (each side imports its own layout lazily)
"""The exploration kernel, A/B against another checkout of txcheck (e.g. its parent commit).

Two figures, both in CPU time (``time.process_time``), so a busy shared machine distorts
them less than wall time:

- **systematic states per CPU second**: the systematic engine, pruning on, on the single
  representative checkout plan under ``guarded`` at ``--k`` deviations (default 2); the
  state count and the verdict are printed too, and must be identical on both sides;
- **checked runner microseconds per step**: the default (fault-free) checkout run of
  ``guarded`` with every default invariant checked after every step and at quiescence;
- **peak RSS** of the measuring interpreter (the search dominates it).

``--same-space`` measures B in A's state space (before issue 14 changed what a state and a
deviation are): free repeats off, the fault chain out of the fingerprint, absolute times and
fault counts kept in it (four hooks patched in B's interpreter). What is left between the
two counts is how each serialises a state: A pickles with a memo, so equal states whose
objects are shared in one and copied in the other hash apart; B's ``marshal`` does not.

``--measure`` prints one side's figures as JSON. Without it, the script runs the
measurement in fresh interpreters, alternating the baseline and this checkout (A, B, A,
B, ... for ``--rounds`` rounds), and prints each round and the ratios of the medians::

    git worktree add /tmp/txcheck-parent <parent commit>
    python benchmarks/bench_kernel.py --baseline /tmp/txcheck-parent --rounds 3

The baseline may be a checkout from before the ``txcheck`` namespace (top-level
``models``/``checker`` packages, run from its own folder) or after it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent


def _parent_space() -> None:
    """Patch this interpreter's txcheck to search A's state space (``--same-space``)."""
    from txcheck.exploration.kernel.target import Target
    from txcheck.models.sim import runner

    runner.Run.free_repeat = lambda self, choice: False
    runner.extend = lambda chain, step: chain
    Target.time_blind = property(lambda self: False)
    Target.count_blind = property(lambda self: False)


def _measure_new(k: int, repeat: int) -> dict[str, Any]:
    import attrs

    from txcheck import Bounds, Guarded, Target, execute
    from txcheck.exploration.plansets.representative import representative_plans
    from txcheck.exploration.engines.systematic import SystematicEngine
    from txcheck.exploration.kernel.context import SearchContext

    target = Target(policy=Guarded())
    single = representative_plans(target.contract, target.fixture)[0]
    searched = attrs.evolve(target, plans=(single,), bounds=Bounds(max_faults=k, max_states=10**8))
    started = time.process_time()
    report = SystematicEngine().explore(searched, SearchContext())
    search_cpu = time.process_time() - started

    def checked() -> int:
        execution = execute(Target(policy=Guarded()), single, stop_at_first=False)
        assert execution.ok and execution.quiesced
        return len(execution.steps)

    return _result(report, search_cpu, checked, repeat)


def _measure_old(k: int, repeat: int) -> dict[str, Any]:
    from checker.engine import Budget, Target
    from checker.representative import representative_plans
    from checker.systematic import SystematicEngine
    from invariants import DEFAULT_INVARIANTS
    from models.contract_loader import default_contract
    from models.execution import execute
    from models.fixture import default_fixture
    from models.policies import Guarded

    contract, fixture = default_contract(), default_fixture()
    single = representative_plans(contract, fixture)[0]
    target = Target(
        policy_name="guarded",
        policy=Guarded(),
        contract=contract,
        fixture=fixture,
        invariants=DEFAULT_INVARIANTS,
        plans=(single,),
    )
    started = time.process_time()
    report = SystematicEngine().explore(target, Budget(max_faults=k, max_states=10**8))
    search_cpu = time.process_time() - started

    def checked() -> int:
        execution = execute(
            policy=Guarded(),
            contract=contract,
            plans=single,
            fixture=fixture,
            invariants=DEFAULT_INVARIANTS,
            stop_at_first=False,
        )
        assert execution.ok and execution.quiesced
        return len(execution.steps)

    return _result(report, search_cpu, checked, repeat)


def _result(report: Any, search_cpu: float, checked: Any, repeat: int) -> dict[str, Any]:
    found = report.counterexample
    steps = checked()  # warm caches before timing
    started = time.process_time()
    for _ in range(repeat):
        checked()
    runner_cpu = time.process_time() - started
    import resource

    return {
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "states": report.states,
        "verdict": None if found is None else [found.invariant, found.deviations],
        "complete": report.complete,
        "search_cpu_s": round(search_cpu, 3),
        "states_per_cpu_s": round(report.states / search_cpu, 1),
        "runner_steps": steps,
        "checked_us_per_step": round(runner_cpu / (repeat * steps) * 1e6, 2),
    }


def _side(folder: Path, layout: str, k: int, repeat: int, same_space: bool) -> dict[str, Any]:
    env = {k_: v for k_, v in os.environ.items() if k_ != "PYTHONPATH"}
    if layout == "old":
        env["PYTHONPATH"] = str(folder)
    elif (folder / ".typecheck" / "txcheck").is_dir():
        # that checkout's own code, whichever checkout the editable install points to
        env["PYTHONPATH"] = str(folder / ".typecheck")
    argv = [sys.executable, str(HERE), "--measure", "--layout", layout]
    argv += ["--k", str(k), "--repeat", str(repeat)]
    if same_space and layout == "new":
        argv.append("--same-space")
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring {folder} failed:\n{done.stderr}")
    return dict(json.loads(done.stdout))


def _layout(folder: Path) -> str:
    return "old" if (folder / "models" / "execution.py").exists() else "new"


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench_kernel.py", description=__doc__)
    parser.add_argument("--baseline", type=Path, help="another txcheck checkout (A)")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds (>= 3)")
    parser.add_argument("--k", type=int, default=2, help="deviation bound of the search")
    parser.add_argument("--repeat", type=int, default=200, help="checked runs timed per side")
    parser.add_argument("--measure", action="store_true", help="measure this side only")
    parser.add_argument("--layout", choices=("old", "new"), default="new")
    parser.add_argument("--same-space", action="store_true", help="B in A's state space")
    args = parser.parse_args()
    if args.same_space and args.layout == "new":
        _parent_space()
    if args.measure:
        measure = _measure_old if args.layout == "old" else _measure_new
        print(json.dumps(measure(args.k, args.repeat)))
        return 0
    if args.baseline is None:
        print(json.dumps(_measure_new(args.k, args.repeat), indent=2))
        return 0
    sides = {"A": (args.baseline.resolve(), _layout(args.baseline)), "B": (ROOT, "new")}
    rows: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    print(f"# A = {sides['A'][0]} ({sides['A'][1]} layout), B = {ROOT}")
    print(f"# guarded, single checkout plan, k={args.k}; runner: {args.repeat} checked runs")
    if args.same_space:
        print("# B searches A's state space (--same-space)")
    for round_ in range(1, args.rounds + 1):
        for name in ("A", "B"):
            folder, layout = sides[name]
            row = _side(folder, layout, args.k, args.repeat, args.same_space)
            rows[name].append(row)
            print(f"round {round_} {name}: {json.dumps(row, sort_keys=True)}")
    same = {json.dumps([r["states"], r["verdict"]]) for side in rows.values() for r in side}
    rate = {n: statistics.median(r["states_per_cpu_s"] for r in rows[n]) for n in rows}
    runner = {n: statistics.median(r["checked_us_per_step"] for r in rows[n]) for n in rows}
    print(f"identical state count and verdict on every run: {len(same) == 1} {sorted(same)}")
    print(
        f"systematic states per CPU second (median): A {rate['A']:.0f}, B {rate['B']:.0f}, "
        f"B/A = {rate['B'] / rate['A']:.2f}x"
    )
    print(
        f"checked runner us/step (median): A {runner['A']:.2f}, B {runner['B']:.2f}, "
        f"B/A = {runner['B'] / runner['A']:.2f}x"
    )
    cpu = {n: statistics.median(r["search_cpu_s"] for r in rows[n]) for n in rows}
    rss = {n: statistics.median(r["peak_rss_mb"] for r in rows[n]) for n in rows}
    print(
        f"search CPU seconds (median): A {cpu['A']:.1f}, B {cpu['B']:.1f}, "
        f"B/A = {cpu['B'] / cpu['A']:.2f}x; peak RSS MB: A {rss['A']:.0f}, B {rss['B']:.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
