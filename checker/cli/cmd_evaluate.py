"""``txcheck evaluate CONTRACT CASES.jsonl``: the model and the orchestration, separately.

Stage 1 is the strict score of ``txcheck score``; stage 2 runs every valid proposal in the
sandbox under ``naive`` and ``guarded`` over a fixed fault schedule (docs/evaluation.md).
The cases file is read as a stream: line by line, each decoded as UTF-8 on its own and
capped in length (``txcheck.scoring.reading``), each case evaluated before the next line
is read; a count of evaluated cases is shown on stderr when it is a terminal.
``--services`` and ``--invariants`` add the user's own (as for explore); a case whose
plans call a tool that nothing gives behaviour to is a bad line, never a silent pass.
Exit 2 when any line of the cases file was bad (after printing everything), else 3 when
no case was evaluated (inconclusive), else 1 when any case fails stage 1 or ``guarded``
fails any run, else 0. naive's failed runs are reported but never change the exit code:
they are the baseline. Each bad line is also one line on stderr. SIGINT or SIGTERM stops
the evaluation after the case in hand: the report of the cases evaluated so far is printed
(with ``--json``, one complete object with ``"interrupted": true``) and the exit code is
130 or 143.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from txcheck.cli import EXIT_BAD_INPUT, EXIT_INCONCLUSIVE
from txcheck.cli.console import report_console
from txcheck.cli.contract_warnings import warn_about
from txcheck.cli.progress_line import LineProgress
from txcheck.cli.render_evaluation import EvaluationView
from txcheck.cli.safe_text import one_line
from txcheck.cli.stopping import Stopping
from txcheck.cli.user_code import add_user_code_options, user_code
from txcheck.evaluate.evaluation import CaseEvaluation, Sandbox, evaluate_cases, report_of
from txcheck.exploration.kernel.target import Deadline
from txcheck.exploration.usercode.watchdog import DEFAULT_POLICY_TIMEOUT
from txcheck.models.errors import InputError, UserCodeError
from txcheck.models.plan.contract_loader import load_contract
from txcheck.scoring.cases import LineError, iter_cases, open_cases
from txcheck.scoring.reading import iter_lines

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "evaluate",
        help="two stages: strict score, then each valid proposal run under faults",
        description=(
            "Stage 1 scores each proposal strictly (as 'txcheck score'). Stage 2 runs each "
            "valid proposal in the sandbox under the naive and the guarded policy, fault-free "
            "and once per fault of a fixed schedule, and reports state consistency, fault "
            "recovery, efficiency and vetoes per policy. Exit 0 all pass, 1 some fail, "
            "2 bad input, 3 no case evaluated."
        ),
    )
    parser.add_argument("contract", metavar="CONTRACT", help="contract JSON file")
    parser.add_argument("cases", metavar="CASES.jsonl", help="one scorer case per line")
    add_user_code_options(parser)
    parser.add_argument("--json", action="store_true", help="print the evaluation as JSON")
    parser.set_defaults(run=run)


def _counted(
    items: Iterator[CaseEvaluation | LineError],
    progress: LineProgress,
    stopping: Stopping,
    broken: list[UserCodeError],
) -> Iterator[CaseEvaluation | LineError]:
    """``items`` as they come, counted on the progress line, up to an interrupt or the
    user's code failing (kept in ``broken``: the cases done are still reported)."""
    done = bad = 0
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except UserCodeError as error:
            broken.append(error)
            return
        if isinstance(item, LineError):
            bad += 1
        else:
            done += 1
        progress.tick(done, bad)
        yield item
        if stopping.code is not None:  # the case in hand is done: stop here
            return


def run(args: argparse.Namespace) -> int:
    contract = load_contract(args.contract)
    code = user_code(args)
    warnings = warn_about("evaluate", contract)
    sandbox = Sandbox(services=code.services, invariants=code.invariants)
    source = args.cases
    progress = LineProgress("cases evaluated")
    # the hard deadline watches the user's services and invariants (each under the watchdog)
    limit = DEFAULT_POLICY_TIMEOUT if code.users else None
    stopping = Stopping("evaluate", Deadline(), policy_timeout=limit)
    broken: list[UserCodeError] = []
    with stopping, open_cases(source) as handle:
        items = evaluate_cases(
            contract, iter_cases(iter_lines(handle)), source=source, sandbox=sandbox
        )
        try:
            report = report_of(source, _counted(items, progress, stopping, broken))
        except OSError as failure:  # a read error mid-file (the open was checked)
            raise InputError(
                f"cannot read the cases file: {failure.strerror or failure}", source=source
            ) from None
    progress.clear()
    if args.json:
        document = {**report.to_json(), "warnings": warnings}
        if stopping.code is not None:
            document["interrupted"] = True
        print(json.dumps(document, sort_keys=True, indent=2, allow_nan=False))
    else:
        report_console().print(EvaluationView(report))
    shown = one_line(source, None)
    for error in report.errors:
        message = one_line(error.message, None)
        print(f"txcheck evaluate: {shown}:{error.line}: {message}", file=sys.stderr)
    if broken:
        sys.stdout.flush()
        failed = broken[0]
        print(
            f"txcheck evaluate: {failed.kind} error: {one_line(str(failed), None)} (stopped "
            f"after {len(report.cases)} case(s); the report covers them)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if stopping.code is not None:
        sys.stdout.flush()
        print(
            f"txcheck evaluate: {shown}: interrupted after {len(report.cases)} case(s); the "
            "report covers them",
            file=sys.stderr,
        )
        return stopping.code
    if report.exit_code == EXIT_INCONCLUSIVE:
        print(f"txcheck evaluate: {shown}: inconclusive: no case was evaluated", file=sys.stderr)
    return report.exit_code
