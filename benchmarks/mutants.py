"""Bug-finding power: every search method against every mutant, plus baselines, in one run.

Run from the repository root::

    python benchmarks/mutants.py                 # full: 5 seeds, 60 s per search
    python benchmarks/mutants.py --quick         # under two minutes: 1 seed, 1 s per search
    python benchmarks/mutants.py --only mutant-key-per-attempt --seeds 2 --out /tmp/r.md

Methods, against each mutant of ``examples/mutants`` (``guarded`` with one bug each):

- ``scenarios``: the 14 fixed scenarios (their plans and deviation scripts) under the
  mutant; killed when any invariant fails (their own assertions are written for
  ``guarded``, so they are not used);
- ``systematic``, ``random``, ``hypothesis``: ``explore`` with that engine alone, no
  scenario seeds, on the engine's default plans, ``--cap`` seconds;
- ``auto``: ``explore`` with ``txcheck explore``'s defaults (auto, scenario seeds first,
  no time budget), in every mode.

Then the regression mutants of ``tests/blind_spots.py`` and ``tests/deep_controls.py``
under ``explore``'s defaults (seeds 1.., and the retry-forever one with ``--no-seeds``
too), the baselines (``mutants_baselines.py``), the k = 3 table of ``bench_depth.py`` when
``--depth-json`` names its rows, and ``--out`` (``benchmarks/results.md``), written by
``mutants_report.py``. Each search runs in a forked worker and is timed there in CPU time
around the search alone; the worker is stopped at ``2 * cap + 5`` seconds of wall time
(``auto``, which has no time budget: 125 s, twice issue 8's 60 s bar).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

import hypothesis
import mutants_baselines
from mutants_cells import (
    BLIND_SPOTS,
    DETERMINISTIC,
    EXPERIMENTS,
    METHODS,
    MUTANTS,
    Cell,
    cli_defaults,
    minimum,
    run_blind_spot,
    run_cell,
)
from mutants_report import LIMIT_S, done_when, render

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
AUTO_LIMIT_S = 2 * LIMIT_S + 5
"""``auto`` has no time budget (explore's default): its worker is stopped only here."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchmarks/mutants.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="under two minutes")
    parser.add_argument("--seeds", type=int, help="seeds per search (default 5; quick 1)")
    parser.add_argument("--cap", type=float, help="seconds per search (default 60; quick 1)")
    parser.add_argument("--out", default="benchmarks/results.md", help="the Markdown report")
    parser.add_argument("--only", action="append", metavar="MUTANT", help="only this mutant")
    parser.add_argument(
        "--methods", default=",".join(METHODS), help="comma-separated, of " + ", ".join(METHODS)
    )
    parser.add_argument(
        "--experiments",
        choices=("on", "off"),
        help="also measure the proposed search changes, seed 0 (default on; quick off)",
    )
    parser.add_argument(
        "--blind-spots",
        choices=("on", "off"),
        help="also run tests/blind_spots.py's mutants under explore's defaults, seeds 1.. "
        "(default on; quick off)",
    )
    parser.add_argument(
        "--depth-json",
        type=Path,
        help="rows of benchmarks/bench_depth.py --json to render (the k = 3 table)",
    )
    parser.add_argument(
        "--baseline-seconds", type=float, help="seconds per throughput row (default 10; quick 1.5)"
    )
    return parser


def _command(argv: Sequence[str]) -> str:
    return " ".join(["python benchmarks/mutants.py", *argv])


def _machine() -> dict[str, str]:
    return {
        "nproc": str(os.cpu_count()),
        "Python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "OS": f"{platform.system()} {platform.machine()}",
        "Hypothesis": hypothesis.__version__,
    }


def _cells(names: Sequence[str], methods: Sequence[str], seeds: int, cap: float) -> list[Cell]:
    engine_limit = 2.0 * cap + 5.0
    cells: list[Cell] = []
    for mutant in MUTANTS:
        if mutant.name not in names:
            continue
        for method in methods:
            first: Cell | None = None
            for seed in range(seeds):
                if first is not None and first.status in ("hung", "error"):
                    cell = Cell(
                        mutant=mutant.name, method=method, seed=seed, status="skipped", seconds=0
                    )
                elif first is not None and method in DETERMINISTIC and not first.killed:
                    cell = Cell(
                        mutant=first.mutant,
                        method=method,
                        seed=seed,
                        status=first.status,
                        seconds=first.seconds,
                        invariant=first.invariant,
                        deviations=first.deviations,
                        steps=first.steps,
                        scenarios=first.scenarios,
                    )
                else:
                    limit = AUTO_LIMIT_S if method == "auto" else engine_limit
                    cell = run_cell(mutant, method, seed, cap=cap, hard_limit=limit)
                first = first or cell
                cells.append(cell)
                _progress(mutant.name, cell)
    return cells


def _progress(name: str, cell: Cell) -> None:
    """One line per cell as the benchmark goes (a long run keeps what it measured)."""
    what = f"{cell.invariant} {cell.deviations}/{cell.steps}" if cell.invariant else ""
    print(
        f"{name:<36} {cell.method:<22} seed {cell.seed}  {cell.status:<8}"
        f"{cell.seconds:7.2f} s  {what}",
        flush=True,
    )


def _blind_cells(seeds: int) -> list[Cell]:
    """Each blind spot under explore's defaults for seeds 1..``seeds``; the retry-forever
    one also with ``--no-seeds``."""
    cells: list[Cell] = []
    forever = "tests.blind_spots:RetryTimeoutsForever"
    runs = [(spec, "auto") for spec in BLIND_SPOTS] + [(forever, "auto-no-seeds")]
    for spec, method in runs:
        for seed in range(1, seeds + 1):
            cell = run_blind_spot(spec, method, seed, hard_limit=AUTO_LIMIT_S)
            cells.append(cell)
            _progress(spec.partition(":")[2], cell)
    return cells


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    seeds = args.seeds or (1 if args.quick else 5)
    cap = args.cap or (1.0 if args.quick else 60.0)
    experiments = (args.experiments or ("off" if args.quick else "on")) == "on"
    blind_spots = (args.blind_spots or ("off" if args.quick else "on")) == "on"
    baseline_s = args.baseline_seconds or (1.5 if args.quick else 10.0)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(METHODS) - set(EXPERIMENTS))
    names = args.only or [m.name for m in MUTANTS]
    unknown += sorted(set(names) - {m.name for m in MUTANTS})
    if unknown:
        print(f"unknown method or mutant: {', '.join(unknown)}", file=sys.stderr)
        return 2
    print(f"# {_command(argv)}", flush=True)
    minimums = {m.name: minimum(m) for m in MUTANTS}
    cells = _cells(names, methods, seeds, cap)
    if experiments:
        cells += _cells(names, EXPERIMENTS, 1, cap)
    blind = _blind_cells(seeds) if blind_spots else []
    print("# baselines", flush=True)
    baselines = {
        "throughput": mutants_baselines.throughput(baseline_s, 0),
        "scenarios": mutants_baselines.scenario_suite(2 if args.quick else 5),
        "scoring": mutants_baselines.scoring(500 if args.quick else 3000, 2 if args.quick else 5),
    }
    # read last: bench_depth.py may still be writing it when this run starts
    depth = json.loads(args.depth_json.read_text(encoding="utf-8")) if args.depth_json else []
    defaults = cli_defaults()
    settings = {
        "seeds": seeds,
        "search cap": f"{cap:g} s",
        "explore defaults": ", ".join(f"{k}={v}" for k, v in defaults.items()),
    }
    text = render(
        command=_command(argv),
        machine=_machine(),
        settings=settings,
        methods=methods,
        experiments=EXPERIMENTS if experiments else (),
        mutants=[m for m in MUTANTS if m.name in names],
        minimums=minimums,
        cells=cells,
        baselines=baselines,
        blind=blind,
        depth=depth,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    for line in done_when(cells, minimums).lines():
        print(line)
    print(f"# wrote {args.out}; reproduce with: {_command(argv)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
