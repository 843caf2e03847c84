"""Every built-in policy and mutant on the single checkout plan at ``--k`` deviations
(default 3), searched by the systematic engine with pruning and without.

For each policy and each mutant (``examples/mutants`` and the regression mutants of
``tests/blind_spots.py``), and for pruning on and off, one fresh interpreter runs
``SystematicEngine(prune=...)`` on the representative checkout plan (4 calls, one
instance) up to ``--k`` deviations and reports: the verdict (the invariant of the first
counterexample, or ``pass``), the counterexample's deviations (the fewest: both searches
go one level at a time) and steps, the states (without pruning: every state checked,
equal ones again), whether the bound
was completed, CPU seconds around the search, and the interpreter's peak RSS. Pruned and
unpruned must agree on the verdict and the deviations; the script says where they do not.

An unpruned search of a policy that passes walks every run within the bound (the pruned
one merges equal states), so it runs only for ``--unpruned-pass`` (default ``guarded``);
``--limit`` stops any search, and the row says where it stopped. A
policy whose bug needs another plan (a one-call plan, an invalid plan, two orders)
passes here: that is the checkout plan's verdict, not a miss of the engine.

    python benchmarks/bench_depth.py                  # k = 3, every subject, both modes
    python benchmarks/bench_depth.py --k 2 --only guarded --json /tmp/depth.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT / "examples"), str(ROOT)]

import attrs  # noqa: E402
from mutants import MUTANTS  # noqa: E402
from mutants.make_traces import policy_spec  # noqa: E402

from tests import blind_spots, deep_controls  # noqa: E402
from tests.blind_spots import CATCHES  # noqa: E402
from tests.deep_controls import DEEP_CATCHES  # noqa: E402
from txcheck import Bounds, Target  # noqa: E402
from txcheck.exploration.engines.systematic import SystematicEngine  # noqa: E402
from txcheck.exploration.kernel.context import SearchContext  # noqa: E402
from txcheck.exploration.plansets.representative import representative_plans  # noqa: E402
from txcheck.models.sim.policies import BUILTIN_POLICIES, builtin_policy  # noqa: E402


def subjects() -> list[tuple[str, str]]:
    """(name, spec) of every built-in policy, every example mutant and every regression mutant."""
    found = [(name, name) for name in BUILTIN_POLICIES]
    found += [(m.name, policy_spec(m)) for m in MUTANTS]
    found += [(getattr(blind_spots, c).name, f"tests.blind_spots:{c}") for c in CATCHES]
    found += [(getattr(deep_controls, c).name, f"tests.deep_controls:{c}") for c in DEEP_CATCHES]
    return found


def _policy(spec: str) -> Any:
    built = builtin_policy(spec)
    if built is not None:
        return built
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)()


def measure(spec: str, k: int, prune: bool) -> dict[str, Any]:
    """One search in this interpreter (``--measure``)."""
    target = Target(policy=_policy(spec))
    single = representative_plans(target.contract, target.fixture)[0]
    searched = attrs.evolve(target, plans=(single,), bounds=Bounds(max_faults=k, max_states=10**10))
    started = time.process_time()
    report = SystematicEngine(prune=prune).explore(searched, SearchContext())
    cpu = time.process_time() - started
    found = report.counterexample
    return {
        "verdict": "pass" if found is None else found.invariant,
        "deviations": None if found is None else found.deviations,
        "steps": None if found is None else len(found.execution.steps),
        "states": report.states,
        "complete": report.complete,
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _side(spec: str, k: int, prune: bool, limit: float) -> dict[str, Any]:
    argv = [sys.executable, str(HERE), "--measure", spec, "--k", str(k)]
    argv += ["--prune", "on" if prune else "off"]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            argv, cwd=ROOT, capture_output=True, text=True, timeout=limit, check=False
        )
    except subprocess.TimeoutExpired:
        return {"stopped_after_s": limit}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        return {"error": tail[0], "wall_s": round(time.perf_counter() - started, 1)}
    return dict(json.loads(done.stdout))


def agree(pruned: dict[str, Any], unpruned: dict[str, Any]) -> bool | None:
    """Whether both found the same verdict at the same depth (None: one did not finish)."""
    if not (pruned.get("complete") or pruned.get("deviations") is not None):
        return None
    if not (unpruned.get("complete") or unpruned.get("deviations") is not None):
        return None
    keys = ("verdict", "deviations")
    return all(pruned.get(key) == unpruned.get(key) for key in keys)


def run_all(
    k: int,
    limit: float,
    only: Sequence[str] = (),
    unpruned: Sequence[str] | None = ("guarded",),
    reuse: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Every subject (or ``only`` those), pruned then unpruned, one line each on stderr.

    Unpruned runs where the pruned search found a counterexample, and for the subjects in
    ``unpruned`` also where it passed (walking every run within the bound takes long:
    ``guarded`` by default); None turns unpruned searches off. ``reuse`` holds earlier
    rows whose pruned side is taken as measured."""
    earlier = {row["name"]: row["pruned"] for row in reuse}
    rows = []
    for name, spec in subjects():
        if only and name not in only:
            continue
        row: dict[str, Any] = {"name": name, "spec": spec, "k": k}
        row["pruned"] = earlier.get(name) or _side(spec, k, True, limit)
        found = row["pruned"].get("deviations") is not None
        if unpruned is not None and (found or name in unpruned):
            row["unpruned"] = _side(spec, k, False, limit)
        else:
            row["unpruned"] = {"skipped": True}
        row["agree"] = agree(row["pruned"], row["unpruned"])
        rows.append(row)
        print(json.dumps(row, sort_keys=True), file=sys.stderr, flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=3, help="deviation bound (default 3)")
    parser.add_argument("--limit", type=float, default=3600.0, help="seconds per search")
    parser.add_argument("--only", action="append", default=[], metavar="NAME")
    parser.add_argument("--no-unpruned", action="store_true", help="pruned searches only")
    parser.add_argument(
        "--unpruned-pass",
        action="append",
        metavar="NAME",
        help="also search NAME unpruned when it passes pruned (default: guarded)",
    )
    parser.add_argument("--reuse", type=Path, help="take the pruned sides from these rows")
    parser.add_argument("--json", type=Path, help="write the rows here too")
    parser.add_argument("--measure", metavar="SPEC", help=argparse.SUPPRESS)
    parser.add_argument("--prune", choices=("on", "off"), default="on", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.k, args.prune == "on"), sort_keys=True))
        return 0
    passes = None if args.no_unpruned else (args.unpruned_pass or ["guarded"])
    reuse = json.loads(args.reuse.read_text(encoding="utf-8")) if args.reuse else []
    rows = run_all(args.k, args.limit, args.only, passes, reuse)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    disagree = [row["name"] for row in rows if row["agree"] is False]
    listed = ", ".join(disagree) or "none"
    print(f"{len(rows)} subjects at k = {args.k}; pruned and unpruned disagree on: {listed}")
    return 1 if disagree else 0


if __name__ == "__main__":
    raise SystemExit(main())
