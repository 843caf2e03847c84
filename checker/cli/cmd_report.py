"""``txcheck report TRACE --html OUT``: a trace as a self-contained HTML page.

The trace is re-run the way ``replay`` re-runs it (``trusted_target``, then the recorded
choices), so each step's world diff comes from the code, not from stored snapshots; a
trace that is not the run it records is refused (exit 2), as ``replay`` refuses it. The
page (``txcheck.report``) is written whole, atomically, to a path checked before any work
(a folder, a device, a pipe or a socket never; a symbolic link or a file that is not a
txcheck report only with ``--force``). Exit 0 when the report is written, 2 on bad input,
3 when the trace records nothing to show. ``--policy OTHER`` adds the same trace replayed
under OTHER, side by side with the recorded run (``txcheck.report.compare``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from txcheck.cli import EXIT_INCONCLUSIVE, EXIT_OK
from txcheck.cli.user_code import add_rerun_options

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a trace as a self-contained HTML report",
        description=(
            "Re-run a txcheck trace and write an HTML report: the violated invariant, a "
            "sequence diagram, and each step's request, answer and world diff. Exit 0 "
            "written, 2 bad input (or a trace that is not the run it records), 3 when "
            "the trace records nothing to show."
        ),
    )
    parser.add_argument("trace", metavar="TRACE", help="trace file (txcheck-trace/1)")
    parser.add_argument("--html", required=True, metavar="FILE", help="the report file to write")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --html file even when it is not a txcheck report",
    )
    add_rerun_options(parser)
    parser.add_argument(
        "--policy",
        metavar="OTHER",
        help="also replay the trace under this policy and show both runs side by side",
    )
    parser.set_defaults(run=run)


def _comparison(trace: Any, recorded: Any, other: Any) -> list[str]:
    """The comparison section: ``trace`` replayed under the ``other`` target, as ``replay
    --policy`` does (the recorded choices, else the recorded faults in its own run)."""
    from txcheck.report.compare import comparison_section
    from txcheck.traces.replaying import replay, replay_faults

    execution = replay(trace, other)
    faults = None
    if execution.divergence is not None and not execution.failures and execution.error is None:
        translated = replay_faults(trace, other)
        execution = translated.execution
        faults = (translated.faults - translated.unplaced, translated.faults)
    return comparison_section(
        recorded,
        execution,
        policy=other.policy_name,
        recorded_policy=trace.policy,
        faults=faults,
    )


def run(args: argparse.Namespace) -> int:
    from txcheck.cli.render_trace import replay_command
    from txcheck.cli.replay_target import trusted_target
    from txcheck.cli.safe_text import one_line
    from txcheck.models.errors import InputError, user_code_error
    from txcheck.report.build import html_report
    from txcheck.report.output import check_report_path, write_report
    from txcheck.traces.document import load_trace
    from txcheck.traces.replaying import first_difference, replay

    check_report_path(args.html, force=args.force)  # before any work, not after it
    trace = load_trace(args.trace)
    if not trace.choices and not any(plan.calls for plan in trace.plans):
        print(
            f"txcheck report: {one_line(args.trace, None)}: inconclusive: the trace records "
            "no plan with a call and no step, so there is nothing to show",
            file=sys.stderr,
        )
        return EXIT_INCONCLUSIVE
    other_policy = args.policy
    args.policy = None  # the page's run is the recorded one, under the recorded policy
    target = trusted_target(trace, args)
    execution = replay(trace, target)
    difference = first_difference(trace, execution)
    if difference is not None:
        raise InputError(f"the replay is not the recorded run: {difference}", source=args.trace)
    if execution.error is not None and not execution.failures:
        raise user_code_error(execution.error_kind, execution.error)
    command = replay_command(args.trace, trace.description)
    sections: list[str] = []
    if other_policy is not None:
        args.policy = other_policy
        sections = _comparison(trace, execution, trusted_target(trace, args))
    page = html_report(
        execution, target=target, document=trace.document, replay=command, sections=sections
    )
    write_report(page, args.html, force=args.force)
    print(f"Report written to {one_line(args.html, None)}")
    return EXIT_OK
