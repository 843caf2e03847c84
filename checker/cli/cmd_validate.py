"""``txcheck validate CONTRACT PROPOSAL``: the verdict on one proposal, before anything runs.

Exit 0 when the whole plan is valid at every level that ran, 1 when it is not, 2 when the
contract or proposal file is bad input. ``--json`` prints exactly ``Verdict.to_json()``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console

from txcheck.cli import EXIT_FOUND, EXIT_OK
from txcheck.cli.render_verdict import VerdictReport
from txcheck.models.business import BusinessCheck
from txcheck.models.contract_loader import load_contract
from txcheck.models.proposal_parser import load_proposal
from txcheck.models.validation import validate
from txcheck.models.world_rules import business_check_from_file

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="verdict for one proposal: every violation at every level",
        description=(
            "Validate a model's whole tool-call plan against a contract: JSON, schema, plan "
            "(tools, ids, idempotency keys, dependencies, workflows) and, with a world "
            "fixture, business rules. Exit 0 valid, 1 invalid, 2 bad input."
        ),
    )
    parser.add_argument("contract", metavar="CONTRACT", help="contract file (JSON)")
    parser.add_argument(
        "proposal",
        metavar="PROPOSAL",
        help="proposal file: an OpenAI, Anthropic or Gemini response (JSON)",
    )
    parser.add_argument(
        "--world",
        metavar="FILE",
        help="world fixture (txcheck-world/1): turns on the business level",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.set_defaults(run=run)


def _business(args: argparse.Namespace) -> BusinessCheck | None:
    """The business-level check for this run: from ``--world FILE``, or ``None``, which
    skips the level and says why."""
    return business_check_from_file(args.world) if args.world else None


def run(args: argparse.Namespace) -> int:
    contract = load_contract(args.contract)
    plan = load_proposal(args.proposal)
    verdict = validate(contract, plan, business=_business(args))
    if args.json:
        print(json.dumps(verdict.to_json(), sort_keys=True, indent=2))
    else:
        Console().print(VerdictReport(contract=contract, plan=plan, verdict=verdict))
    return EXIT_OK if verdict.valid else EXIT_FOUND
