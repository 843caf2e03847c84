"""``txcheck score [CONTRACT] CASES.jsonl``: strict and legacy score per case, and a summary.

Cases are read, scored and printed one at a time, so a file of any length is scored in
bounded memory. CONTRACT is optional when every case carries its own ``tools``. Exit 2
when any line of the cases file was bad (after printing every result, so nothing scored is
lost), else 3 when no case was scored (inconclusive), else 1 when any case fails, else 0.
Each bad line is also one line on stderr. SIGINT or SIGTERM stops the scoring after the
case in hand: the results and the summary of the cases scored so far are printed (with
``--json``, one complete object with ``"interrupted": true``) and the exit code is 130 or
143. The module's top level stays light: the scorer and rich are imported when the
command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "score",
        help="strict and legacy score per case, and a summary",
        description=(
            "Score model proposals against expected calls: strict (whole-plan validation, "
            "exact typed matching, vetoes) next to the audited legacy formula. CONTRACT "
            "may be left out when every case carries its own 'tools'. Exit 0 all pass, "
            "1 some fail, 2 bad input, 3 no case scored."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="[CONTRACT] CASES.jsonl",
        help="contract JSON file (optional), then one scorer case per line",
    )
    parser.add_argument(
        "--services",
        action="append",
        default=[],
        metavar="MODULE:NAME",
        help=(
            "your own ServiceSet (or a list) next to checkout: a case's 'world' fixture is "
            "judged by its rules too; repeatable"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the score object as JSON")
    parser.set_defaults(run=run, usage_error=parser.error)


class JsonScoreWriter:
    """Writes ``ScoreReport.to_json()`` as ``json.dumps(..., sort_keys=True, indent=2)``
    would, one case at a time ("cases" < "errors" < "summary", so streaming keeps the
    sorted key order)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0

    def case(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, sort_keys=True, indent=2, allow_nan=False)
        self.out.write('{\n  "cases": [\n' if self.count == 0 else ",\n")
        self.out.write("\n".join("    " + line for line in text.split("\n")))
        self.count += 1

    def finish(self, rest: dict[str, Any]) -> None:
        self.out.write("\n  ],\n" if self.count else '{\n  "cases": [],\n')
        text = json.dumps(rest, sort_keys=True, indent=2, allow_nan=False)
        self.out.write(text.split("\n", 1)[1] + "\n")


def _paths(args: argparse.Namespace) -> tuple[str | None, str]:
    if len(args.paths) > 2:
        args.usage_error(f"expected [CONTRACT] CASES.jsonl (got {len(args.paths)} paths)")
    return (None, args.paths[0]) if len(args.paths) == 1 else (args.paths[0], args.paths[1])


def run(args: argparse.Namespace) -> int:
    from txcheck.cli.console import report_console
    from txcheck.cli.progress_line import LineProgress
    from txcheck.cli.render_score import ScoreStream
    from txcheck.cli.safe_text import one_line
    from txcheck.cli.stopping import Stopping
    from txcheck.exploration.kernel.target import Deadline
    from txcheck.exploration.usercode.loading import load_services
    from txcheck.exploration.usercode.watchdog import DEFAULT_POLICY_TIMEOUT
    from txcheck.models.plan.contract_loader import load_contract
    from txcheck.models.sim.checkout import CHECKOUT
    from txcheck.scoring.case_contracts import CaseContracts
    from txcheck.scoring.cases import LineError, iter_cases, open_cases
    from txcheck.scoring.reading import iter_lines
    from txcheck.scoring.scorer import SummaryBuilder, exit_code, score_cases

    contract_path, cases_path = _paths(args)
    services = (CHECKOUT, *load_services(args.services))
    contract = load_contract(contract_path) if contract_path is not None else None
    if contract is not None:
        from txcheck.cli.contract_warnings import warn_about

        warn_about("score", contract)
    source = cases_path
    console = report_console()
    stream = None if args.json else ScoreStream(source)
    writer = JsonScoreWriter(sys.stdout) if args.json else None
    progress = LineProgress("cases scored")
    summary = SummaryBuilder()
    errors: list[LineError] = []
    # the hard deadline watches the user's services (each call under the watchdog)
    limit = DEFAULT_POLICY_TIMEOUT if args.services else None
    stopping = Stopping("score", Deadline(), policy_timeout=limit)
    with stopping, open_cases(cases_path) as handle:
        items = iter_cases(iter_lines(handle))
        scored = score_cases(items, CaseContracts(contract), source=source, services=services)
        for item in scored:
            if isinstance(item, LineError):
                errors.append(item)
            else:
                summary.add(item)
                if writer is not None:
                    writer.case(item.to_json())
                else:
                    assert stream is not None
                    for renderable in stream.add(item):
                        progress.clear()
                        console.print(renderable)
            progress.tick(summary.cases, len(errors))
            if stopping.code is not None:  # the case in hand is done: stop here
                break
    progress.clear()
    errors.sort(key=lambda e: e.line)
    final = summary.build(len(errors))
    if writer is not None:
        rest: dict[str, Any] = {"errors": [e.to_json() for e in errors], "summary": final.to_json()}
        if stopping.code is not None:
            rest["interrupted"] = True
        writer.finish(rest)
    else:
        assert stream is not None
        for renderable in stream.finish(errors, final):
            console.print(renderable)
    shown = one_line(source, None)
    for error in errors:
        message = one_line(error.message, None)
        print(f"txcheck score: {shown}:{error.line}: {message}", file=sys.stderr)
    if stopping.code is not None:
        sys.stdout.flush()
        print(
            f"txcheck score: {shown}: interrupted after {summary.cases} case(s); the summary "
            "covers them",
            file=sys.stderr,
        )
        return stopping.code
    code = exit_code(final)
    if code == 3:
        print(f"txcheck score: {shown}: inconclusive: no case was scored", file=sys.stderr)
    return code
