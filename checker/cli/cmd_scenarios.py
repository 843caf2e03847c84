"""``txcheck scenarios [--out DIR]``: the 14 named scenarios and 5 positive controls.

Runs every scenario under ``guarded`` and every control under its control policy, writes
``raw_results.jsonl`` and ``summary.json`` into ``--out`` (default ``./txcheck-results``),
and exits 0 only when all 14 scenarios pass and all 5 controls show their expected
failure, 1 otherwise. What holds the two file names is checked before the runs: a device,
a pipe, a folder, a symbolic link or a file that is not a previous result file is kept and
refused (exit 2) unless ``--force``. ``--json`` prints the summary document. ``--services`` and
``--invariants`` add the user's own: every run is then held to their invariants too (a
scenario that breaks one fails), and their services serve the tools they handle.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from txcheck.cli import EXIT_FOUND, EXIT_OK
from txcheck.cli.console import report_console
from txcheck.cli.render_scenarios import ScenariosReport
from txcheck.cli.user_code import add_user_code_options, user_code
from txcheck.exploration.usercode.loading import load_policy
from txcheck.models.errors import InputError
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.policies.controls import DESIGNATED
from txcheck.scenarios.catalog import CONTROLS, SCENARIOS
from txcheck.scenarios.results import check_results, write_results
from txcheck.scenarios.run import broken, run_all

__all__ = ["DEFAULT_OUT", "register", "run"]

DEFAULT_OUT = "txcheck-results"


class OutputDirError(InputError):
    """The ``--out`` folder cannot be created or written."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scenarios",
        help="the 14 named scenarios and 5 positive controls, with result files",
        description=(
            "Run the 14 named fault scenarios under guarded and the 5 positive controls "
            "under their control policies, through the same runner as explore. Writes "
            "raw_results.jsonl and summary.json (byte-identical across runs). Exit 0 when "
            "every scenario passes and every control shows its expected failure, else 1."
        ),
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        default=DEFAULT_OUT,
        help=f"folder for the result files (default: ./{DEFAULT_OUT})",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace raw_results.jsonl and summary.json in --out even when they are not "
        "result files (or are symbolic links)",
    )
    parser.add_argument(
        "--policy",
        metavar="SPEC",
        help="run the 14 scenarios under this policy instead of guarded: an import path "
        "'package.module:Name' (a Policy, or an asyncio orchestrator)",
    )
    parser.add_argument(
        "--control",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="run the positive control NAME (control-fresh-key, ...) with the policy SPEC "
        "instead of the built-in one; repeatable",
    )
    add_user_code_options(parser)
    parser.add_argument("--json", action="store_true", help="print summary.json to stdout")
    parser.set_defaults(run=run)


def substitutes(args: argparse.Namespace) -> dict[str, Policy]:
    """The policies ``--policy`` and ``--control`` put in place of the built-in ones."""
    chosen: dict[str, Policy] = {}
    if args.policy:
        chosen["guarded"] = load_policy(args.policy).policy
    for given in args.control:
        name, _, spec = given.partition("=")
        if name not in DESIGNATED or not spec:
            known = ", ".join(sorted(DESIGNATED))
            raise InputError(
                f"expected NAME=SPEC with NAME one of {known} (got {given!r})",
                source="--control",
            )
        chosen[name] = load_policy(spec).policy
    return chosen


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputDirError(
            f"cannot create the results folder ({error.strerror or error})", source=args.out
        ) from None
    check_results(out, force=args.force)  # before the runs, not after them
    code = user_code(args)
    contract, fixture = default_contract(), default_fixture()
    runs = run_all(
        contract=contract,
        fixture=fixture,
        services=code.services,
        invariants=code.invariants,
        substitutes=substitutes(args),
    )
    try:
        files = write_results(runs, out, contract=contract, fixture=fixture, force=args.force)
    except OSError as error:
        raise OutputDirError(
            f"cannot write the results ({error.strerror or error})",
            source=error.filename or args.out,
        ) from None
    if args.json:
        print(json.dumps(files.summary, sort_keys=True, indent=2))
    else:
        shown = args.out.rstrip("/") or "/"
        report_console().print(ScenariosReport(runs=runs, summary=files.summary, where=shown))
    failed = broken(runs[-1]) if runs else None
    if failed is not None:  # the runs done are written; the command says where it stopped
        sys.stdout.flush()
        raise type(failed)(
            f"{failed} (in run {runs[-1].scenario.id}/{runs[-1].policy}; stopped after "
            f"{len(runs)} of {len(SCENARIOS) + len(CONTROLS)} runs, those written to {args.out})"
        )
    return EXIT_OK if files.ok else EXIT_FOUND
