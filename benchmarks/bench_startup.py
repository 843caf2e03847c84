"""Start-up cost of the command line: ``txcheck --version`` and ``validate`` of one proposal.

    python benchmarks/bench_startup.py [--runs N]

Runs each command N times as a fresh process and reports the median CPU time (user +
system, from ``resource.getrusage(RUSAGE_CHILDREN)``) and wall time per run, next to a bare
``python -c pass`` measured in the same run as the baseline. Unix only. A measurement,
not a test.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROPOSAL = (
    '{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", '
    '"function": {"name": "get_order", "arguments": "{\\"order_id\\": \\"ord_1\\"}"}}]}'
)


def _measure(argv: list[str], runs: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=False)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    cli = [sys.executable, "-m", "txcheck"]
    contract = str(ROOT / "examples/checkout/contract.json")
    with tempfile.TemporaryDirectory() as tmp:
        proposal = Path(tmp) / "proposal.json"
        proposal.write_text(PROPOSAL, encoding="utf-8")
        rows = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "txcheck --version": [*cli, "--version"],
            "txcheck validate --json (1 call)": [
                *cli,
                "validate",
                contract,
                str(proposal),
                "--json",
            ],
            "txcheck validate (table, 1 call)": [*cli, "validate", contract, str(proposal)],
        }
        print(f"median of {args.runs} runs, CPU (user+sys) and wall seconds per process")
        for name, command in rows.items():
            cpu, wall = _measure(command, args.runs)
            print(f"{name:36s} {cpu:6.3f} s CPU  {wall:6.3f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
