"""``txcheck evaluate CONTRACT CASES.jsonl``: the model and the orchestration, separately.

Stage 1 is the strict score of ``txcheck score``; stage 2 runs every valid proposal in the
sandbox under ``naive`` and ``guarded`` over a fixed fault schedule (docs/evaluation.md).
Exit 2 when any line of the cases file was bad (after printing everything), else 1 when
any case fails stage 1 or ``guarded`` fails any run, else 0. naive's failed runs are
reported but never change the exit code: they are the baseline. Each bad line is also one
line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from txcheck.cli.render_evaluation import EvaluationView
from txcheck.cli.safe_text import one_line
from txcheck.evaluate.evaluation import evaluate_file
from txcheck.models.contract_loader import load_contract
from txcheck.scoring.cases import read_cases

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "evaluate",
        help="two stages: strict score, then each valid proposal run under faults",
        description=(
            "Stage 1 scores each proposal strictly (as 'txcheck score'). Stage 2 runs each "
            "valid proposal in the sandbox under the naive and the guarded policy, fault-free "
            "and once per fault of a fixed schedule, and reports state consistency, fault "
            "recovery, efficiency and vetoes per policy."
        ),
    )
    parser.add_argument("contract", metavar="CONTRACT", help="contract JSON file")
    parser.add_argument("cases", metavar="CASES.jsonl", help="one scorer case per line")
    parser.add_argument("--json", action="store_true", help="print the evaluation as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    contract = load_contract(args.contract)
    report = evaluate_file(contract, read_cases(args.cases))
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True, indent=2, allow_nan=False))
    else:
        Console().print(EvaluationView(report))
    source = one_line(report.source, None)
    for error in report.errors:
        message = one_line(error.message, None)
        print(f"txcheck evaluate: {source}:{error.line}: {message}", file=sys.stderr)
    return report.exit_code
