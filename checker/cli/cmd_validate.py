"""``txcheck validate``: the verdict on one proposal, or on many in one process.

- ``validate CONTRACT PROPOSAL``: one proposal. Exit 0 valid, 1 invalid, 2 bad input;
  ``--json`` prints exactly ``Verdict.to_json()`` (a public contract: unchanged).
- ``validate CONTRACT PROPOSAL PROPOSAL...`` and ``validate [CONTRACT] --jsonl FILE``: a
  batch (``txcheck.cli.validate_batch``): one result per proposal, then a summary; bad
  files and lines are reported on stderr and the rest is still validated.

The module's top level stays light (argparse only): validating one small proposal must
start fast, so the validator and rich are imported inside ``run``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="verdict for one proposal or many: every violation at every level",
        description=(
            "Validate a model's whole tool-call plan against a contract: JSON, schema, plan "
            "(tools, ids, idempotency keys, dependencies, workflows) and, with a world "
            "fixture, business rules. Give several PROPOSAL files, or --jsonl FILE (one "
            "proposal per line), to validate many in one process. Exit 0 all valid, "
            "1 some invalid, 2 bad input."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="CONTRACT PROPOSAL",
        help=(
            "contract file (JSON), then one or more proposal files (OpenAI, Anthropic or "
            "Gemini responses); with --jsonl, only the contract, and it is optional"
        ),
    )
    parser.add_argument(
        "--jsonl",
        metavar="FILE",
        help=(
            'validate every line of FILE: a proposal, or {"proposal", "id"?, "tools"?} '
            "(a line's own tools take precedence over CONTRACT)"
        ),
    )
    parser.add_argument(
        "--world",
        metavar="FILE",
        help="world fixture (txcheck-world/1): turns on the business level",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the verdict as JSON (a batch: JSON Lines, then a summary object)",
    )
    parser.set_defaults(run=run, usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    paths: list[str] = args.paths
    if args.jsonl is not None:
        if len(paths) > 1:
            args.usage_error(f"with --jsonl, give at most the CONTRACT (got {len(paths)} paths)")
        from txcheck.cli.validate_batch import run_jsonl

        return run_jsonl(args, paths[0] if paths else None, args.jsonl)
    if len(paths) < 2:
        args.usage_error("expected CONTRACT PROPOSAL [PROPOSAL...] or [CONTRACT] --jsonl FILE")
    if len(paths) > 2:
        from txcheck.cli.validate_batch import run_files

        return run_files(args, paths[0], paths[1:])
    return _single(args, paths[0], paths[1])


def _single(args: argparse.Namespace, contract_path: str, proposal_path: str) -> int:
    """One proposal: the verdict, exactly as ``validate`` has always printed it."""
    from txcheck.cli import EXIT_FOUND, EXIT_OK
    from txcheck.models.contract_loader import load_contract
    from txcheck.models.proposal_parser import load_proposal
    from txcheck.models.validation import validate

    contract = load_contract(contract_path)
    plan = load_proposal(proposal_path)
    business = None
    if args.world:  # the world fixture machinery is only loaded when a world is given
        from txcheck.models.world_rules import business_check_from_file

        business = business_check_from_file(args.world)
    verdict = validate(contract, plan, business=business)
    if args.json:
        print(json.dumps(verdict.to_json(), sort_keys=True, indent=2))
    else:
        from rich.console import Console

        from txcheck.cli.render_verdict import VerdictReport

        Console().print(VerdictReport(contract=contract, plan=plan, verdict=verdict))
    return EXIT_OK if verdict.valid else EXIT_FOUND
