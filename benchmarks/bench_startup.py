"""Start-up cost of the command line, and what each command imports for its work.

    python benchmarks/bench_startup.py [--runs N] [--baseline TREE]

Runs each command as a fresh process and reports the median CPU time (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``) and wall time per run, next to a bare
``python -c pass`` measured in the same run:

- ``txcheck --version``, and ``validate`` of one proposal (``--json`` and the table);
- ``explore --engine systematic`` of a one-call plan at k=0 (``--max-faults 0``): the
  whole command for the smallest search, so mostly what it imports (``guarded`` refuses
  the plan, a workflow's first step alone, so it exits 3: nothing committed);
- ``explore --policy naive`` (``auto``: the scenario seeds find a counterexample);
- ``score`` of ``benchmarks/bench_score.py``'s 2,000 checkout cases, as a table (stdout
  to a file) and with ``--json``; the table's CPU over ``--json``'s is reported.

With ``--baseline TREE`` (a checkout of another commit, e.g. ``git worktree add --detach
/tmp/base main``) every command also runs against that tree, interleaved (command by
command, baseline then this tree, ``N`` rounds after an uncounted warm-up round that
writes the ``.pyc`` files and Hypothesis' caches), each process importing ``txcheck``
through ``TREE/.typecheck`` (``PYTHONPATH``; this tree's commands through its own), with
this interpreter and its installed dependencies; the ratio this/baseline is reported per
command. Unix only. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROPOSAL = (
    '{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", '
    '"function": {"name": "get_order", "arguments": "{\\"order_id\\": \\"ord_1\\"}"}}]}'
)
ONE_CALL = (
    '{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": '
    '"function", "function": {"name": "create_order", "arguments": "{\\"order_id\\": '
    '\\"ord_1001\\", \\"customer_id\\": \\"cus_1\\", \\"items\\": [{\\"sku\\": \\"sku_book\\", '
    '\\"quantity\\": 2}], \\"currency\\": \\"USD\\", \\"idempotency_key\\": '
    '\\"ord_1001-create\\"}"}}]}'
)
SCORE_CASES = 2000


def _run_once(argv: list[str], env: dict[str, str], cwd: str, out: Path) -> tuple[float, float]:
    """One process: its CPU seconds (user + system) and wall seconds; stdout to ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with out.open("wb") as sink:
        subprocess.run(argv, stdout=sink, stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def _cases_text() -> str:
    spec = importlib.util.spec_from_file_location("bench_score", ROOT / "benchmarks/bench_score.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.build(SCORE_CASES)[0]
    return text


def _commands(tmp: Path) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "txcheck"]
    contract = str(ROOT / "examples/checkout/contract.json")
    proposal, plan, cases = tmp / "proposal.json", tmp / "plan.json", tmp / "cases.jsonl"
    proposal.write_text(PROPOSAL, encoding="utf-8")
    plan.write_text(ONE_CALL, encoding="utf-8")
    cases.write_text(_cases_text(), encoding="utf-8")
    explore = [*cli, "explore", "--seed", "0", "--json", "--trace-out", str(tmp / "t.json")]
    return {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "txcheck --version": [*cli, "--version"],
        "txcheck validate --json (1 call)": [*cli, "validate", contract, str(proposal), "--json"],
        "txcheck validate (table, 1 call)": [*cli, "validate", contract, str(proposal)],
        "explore systematic, 1-call plan, k=0": [
            *explore,
            "--engine",
            "systematic",
            "--plan",
            str(plan),
            "--max-faults",
            "0",
            "--force",
        ],
        "explore naive (seeds find it)": [*explore, "--policy", "naive", "--force"],
        f"score {SCORE_CASES} cases (table)": [*cli, "score", contract, str(cases)],
        f"score {SCORE_CASES} cases --json": [*cli, "score", contract, str(cases), "--json"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare against")
    args = parser.parse_args(argv)
    trees = {"this": ROOT}
    if args.baseline is not None:
        if not (args.baseline / ".typecheck" / "txcheck").is_dir():
            parser.error(f"{args.baseline} has no .typecheck/txcheck tree")
        trees = {"baseline": args.baseline.resolve(), "this": ROOT}
    # the warm-up round writes the .pyc files: measured start-up is an installed program's,
    # not one compiling every module of the tree again (PYTHONDONTWRITEBYTECODE, if set,
    # would make every run compile them: about 0.2 s of CPU per explore)
    quiet = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {name: {**quiet, "PYTHONPATH": str(tree / ".typecheck")} for name, tree in trees.items()}
    with tempfile.TemporaryDirectory() as tmp:
        commands = _commands(Path(tmp))
        cpu: dict[tuple[str, str], list[float]] = {}
        wall: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.runs + 1):  # rounds: every command, each tree in turn
            for name, command in commands.items():
                for tree in trees:
                    spent, took = _run_once(command, envs[tree], tmp, Path(tmp) / "out")
                    if round_ == 0:
                        continue  # warm-up: .pyc files and Hypothesis' caches are written
                    cpu.setdefault((name, tree), []).append(spent)
                    wall.setdefault((name, tree), []).append(took)
    median = {key: statistics.median(values) for key, values in cpu.items()}
    print(
        f"median of {args.runs} interleaved runs per command and tree, CPU (user+sys) and "
        "wall seconds per process"
    )
    print(f"trees: {', '.join(f'{name} = {tree}' for name, tree in trees.items())}")
    for name in commands:
        cells = [
            f"{tree} {median[name, tree]:6.3f} s CPU {statistics.median(wall[name, tree]):6.3f}"
            " s wall"
            for tree in trees
        ]
        ratio = ""
        if len(trees) == 2:
            ratio = f"  this/baseline {median[name, 'this'] / median[name, 'baseline']:5.2f}"
        print(f"{name:38s} {'  '.join(cells)}{ratio}")
    table, json_ = f"score {SCORE_CASES} cases (table)", f"score {SCORE_CASES} cases --json"
    for tree in trees:
        print(f"score table / --json ({tree}): {median[table, tree] / median[json_, tree]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
