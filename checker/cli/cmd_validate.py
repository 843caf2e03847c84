"""``txcheck validate``: the verdict on one proposal, or on many in one process.

- ``validate CONTRACT PROPOSAL``: one proposal. Exit 0 valid, 1 invalid, 2 bad input;
  ``--json`` prints exactly ``Verdict.to_json()`` (a public contract: unchanged).
- ``--world FILE`` adds the business level, run on checkout's services, generic ones for
  annotated tools and ``--services``; a call of a tool with none of them cannot be judged,
  which is exit 2 (a batch: that proposal is a bad line), never a checked level.
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

__all__ = ["register", "run", "world_check"]


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
        "--services",
        action="append",
        default=[],
        metavar="MODULE:NAME",
        help="with --world: your own ServiceSet (or a list) next to checkout; repeatable",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the verdict as JSON (a batch: JSON Lines, then a summary object)",
    )
    parser.set_defaults(run=run, usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    paths: list[str] = args.paths
    if args.services and not args.world:
        args.usage_error("--services needs --world (services judge the business level)")
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


def world_check(args: argparse.Namespace) -> Any:
    """The business check of ``--world`` (with ``--services``), or None; the world fixture
    machinery is only loaded when a world is given."""
    if not args.world:
        return None
    from txcheck.cli.contract_warnings import warn_unread
    from txcheck.exploration.usercode.loading import load_services
    from txcheck.models.sim.checkout import CHECKOUT
    from txcheck.models.sim.world_rules import business_check_from_file

    check = business_check_from_file(args.world, (CHECKOUT, *load_services(args.services)))
    warn_unread("validate", check.fixture, check.services)
    return check


def _single(args: argparse.Namespace, contract_path: str, proposal_path: str) -> int:
    """One proposal: the verdict, exactly as ``validate`` has always printed it."""
    from txcheck.cli import EXIT_FOUND, EXIT_OK
    from txcheck.models.errors import InputError
    from txcheck.models.plan.contract_loader import load_contract
    from txcheck.models.plan.proposal_parser import load_proposal
    from txcheck.models.plan.validation import validate

    contract = load_contract(contract_path)
    if contract.warnings:
        from txcheck.cli.contract_warnings import warn_about

        warn_about("validate", contract)
    plan = load_proposal(proposal_path)
    business = world_check(args)
    if business is not None:
        problem = business.unjudged(contract, plan.calls)
        if problem is not None:  # never report a business level that judged nothing
            raise InputError(
                f"the business level cannot judge this proposal: {problem}",
                source=contract.source,
            )
    verdict = validate(contract, plan, business=business)
    if args.json:
        print(json.dumps(verdict.to_json(), sort_keys=True, indent=2))
    else:
        from txcheck.cli.console import report_console
        from txcheck.cli.render_verdict import VerdictReport

        report_console().print(VerdictReport(contract=contract, plan=plan, verdict=verdict))
    return EXIT_OK if verdict.valid else EXIT_FOUND
