"""``txcheck score CONTRACT CASES.jsonl``: strict and legacy score per case, and a summary.

Exit 2 when any line of the cases file was bad (after printing every result, so nothing
scored is lost), else 1 when any case fails, else 0. Each bad line is also one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from txcheck.cli.render_score import ScoreView
from txcheck.models.contract_loader import load_contract
from txcheck.score.cases import read_cases
from txcheck.score.scoring import score_file

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "score",
        help="strict and legacy score per case, and a summary",
        description=(
            "Score model proposals against expected calls: strict (whole-plan validation, "
            "exact typed matching, vetoes) next to the audited legacy formula."
        ),
    )
    parser.add_argument("contract", metavar="CONTRACT", help="contract JSON file")
    parser.add_argument("cases", metavar="CASES.jsonl", help="one scorer case per line")
    parser.add_argument("--json", action="store_true", help="print the score object as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    contract = load_contract(args.contract)
    report = score_file(contract, read_cases(args.cases))
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True, indent=2, allow_nan=False))
    else:
        Console().print(ScoreView(report))
    for error in report.errors:
        print(f"txcheck score: {report.source}:{error.line}: {error.message}", file=sys.stderr)
    return report.exit_code
