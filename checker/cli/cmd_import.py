"""``txcheck import bfcl|tau2 ... --out CASES.jsonl``: benchmark data as txcheck cases.

The cases carry their own tools, so ``txcheck score CASES.jsonl`` needs no contract. The
output file is written whole or not at all (a temporary file renamed at the end), so a
bad input file never leaves half a cases file behind. ``--out`` is checked before anything
is read (``txcheck.traces.destination``): a device, a pipe, a folder or a symbolic link is
refused, and so is an existing file that is not a cases file ``txcheck import`` wrote,
unless ``--force``. Exit 0, or 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import",
        help="turn benchmark data (BFCL, tau2-bench) into txcheck cases",
        description=(
            "Turn benchmark data into txcheck cases, each with its own tools: the Berkeley "
            "Function Calling Leaderboard's question and possible-answer files (bfcl), or a "
            "tau2-bench domain's tasks and tool schemas (tau2)."
        ),
    )
    kinds = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    bfcl = kinds.add_parser("bfcl", help="BFCL data folder -> cases")
    bfcl.add_argument("data_dir", metavar="DATA_DIR", help="BFCL's data folder")
    bfcl.add_argument(
        "--category",
        action="append",
        metavar="C",
        help=(
            "a category to import (repeatable; 'all' for every importable one; default: the "
            "single-turn Python AST categories)"
        ),
    )
    bfcl.add_argument(
        "--results",
        action="append",
        metavar="FILE",
        type=Path,
        help="BFCL model-result file(s) to use as the proposals (default: the ground truth)",
    )
    bfcl.add_argument(
        "--normalize",
        action="store_true",
        help="declare BFCL's string leniency (case, whitespace, punctuation) in each case",
    )
    _out_options(bfcl)
    tau2 = kinds.add_parser("tau2", help="tau2-bench domain folder -> cases")
    tau2.add_argument("domain_dir", metavar="DOMAIN_DIR", help="folder with tasks.json")
    tau2.add_argument(
        "--tools",
        metavar="FILE",
        type=Path,
        help="the domain's tool schemas (default: DOMAIN_DIR/tools.json)",
    )
    tau2.add_argument(
        "--services",
        action="store_true",
        help=(
            "run tau2's own code (needs txcheck[tau2]): tools and types from it, a world "
            "fixture per case with the task's database and tau2's gold one, for "
            "--services txcheck.adapters.tau2:SERVICES"
        ),
    )
    _out_options(tau2)
    parser.set_defaults(run=run)


def _out_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, metavar="FILE", help="cases file to write")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --out file even when txcheck import did not write it",
    )


def run(args: argparse.Namespace) -> int:
    from txcheck.cli.safe_text import one_line
    from txcheck.importers.bfcl import CATEGORIES, import_bfcl
    from txcheck.importers.common import is_imported_cases
    from txcheck.importers.tau2 import import_tau2
    from txcheck.models.errors import InputError
    from txcheck.traces.atomic import replacing
    from txcheck.traces.destination import Output, check_destination

    cases = Output(
        what="the cases file",
        kind="cases file txcheck import wrote",
        option="--out",
        ours=is_imported_cases,
    )
    check_destination(args.out, cases, force=args.force)
    out = Path(args.out)
    try:
        with replacing(out, encoding="utf-8") as handle:
            if args.benchmark == "bfcl":
                stats = import_bfcl(
                    Path(args.data_dir),
                    handle,
                    tuple(args.category or CATEGORIES),
                    results=tuple(args.results or ()),
                    normalize=args.normalize,
                )
            else:
                stats = import_tau2(Path(args.domain_dir), handle, **_tau2_code(args))
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror or error}", source=str(out)) from None
    for warning in stats.warning_lines():
        text = one_line(warning, None)
        print(f"txcheck import {args.benchmark}: warning: {text}", file=sys.stderr)
    done = one_line(f"{out}: {stats.describe()}", None)
    print(f"txcheck import {args.benchmark}: {done}", file=sys.stderr)
    return 0


def _tau2_code(args: argparse.Namespace) -> dict[str, Any]:
    """What ``import tau2`` takes from tau2's own code with ``--services``."""
    if not args.services:
        return {"tools_file": args.tools}
    from txcheck.adapters import tau2
    from txcheck.models.errors import InputError

    domain = Path(args.domain_dir).name
    try:
        tools = tau2.domain_tools(domain)  # checks the domain and that tau2 is installed
    except InputError as error:
        raise InputError(error.problem, source=str(args.domain_dir)) from None
    return {
        "tools": tools,
        "worlds": lambda task: tau2.task_world(domain, task),
        "order": lambda task, writes: tau2.gold_order_matters(domain, task, writes),
    }
