"""``txcheck replay TRACE [--policy P]``: re-execute a saved trace.

Under the recorded policy the replay must be the recorded run, step by step, with the
recorded violations (``txcheck.traces.replaying``): exit 1 when it is and a violation
reproduces, 0 when it is and the trace records none, 2 (naming the first differing step)
when it is not. Under another policy (``--policy``), the exact choices are fed back; where
that policy cannot follow them, the recorded *faults* are replayed at the matching points
of its own run instead, and the report says how many found no place: exit 1 when an
invariant fails, 0 when the policy passes. A trace that records no plan with a call and no
step exercises nothing: exit 3 (inconclusive), one line on stderr, never a pass. A trace
is data: what it names is imported only when the user names it too (or passes
``--trust-trace``), and its structure is checked whole before anything runs (exit 2).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import attrs
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from txcheck.cli import EXIT_FOUND, EXIT_INCONCLUSIVE, EXIT_OK
from txcheck.cli.render_trace import counterexample_report, replay_command, report_console
from txcheck.cli.replay_target import trusted_target
from txcheck.cli.safe_text import one_line
from txcheck.cli.user_code import add_rerun_options
from txcheck.exploration.kernel.session import Execution
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.usercode.loading import load_policy
from txcheck.models.canonical import printable_json
from txcheck.models.errors import InputError, user_code_error
from txcheck.traces.document import Trace, load_trace, target_of
from txcheck.traces.replaying import (
    Translated,
    first_difference,
    replay,
    replay_faults,
    shared_plans,
)

__all__ = ["ReplayReport", "register", "replay_trace", "run", "shared_plans"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="re-execute a saved trace",
        description=(
            "Re-execute a txcheck trace under its policy or another one. Under the recorded "
            "policy: exit 1 when the recorded run and violation reproduce, 0 when the trace "
            "records none, 2 when the replay is not the recorded run. Under --policy OTHER: "
            "exit 1 when an invariant fails, 0 when the policy passes. 2 on bad input, "
            "3 when the trace records nothing to replay."
        ),
    )
    parser.add_argument("trace", metavar="TRACE", help="trace file (txcheck-trace/1)")
    parser.add_argument("--policy", help="replay under this policy instead of the recorded one")
    add_rerun_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--html-out", metavar="FILE", help="also write the replayed run as an HTML report"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --html-out file even when it is not a txcheck report",
    )
    parser.set_defaults(run=run)


def replay_trace(
    trace: Trace, policy: str, *, timeout: float | None, translate: bool = False
) -> Execution:
    """Re-execute ``trace`` under ``policy`` (a built-in name or import path): its exact
    choices, or with ``translate`` its faults, which another policy can meet although its
    steps differ. (Imports what it is given: check trust before.)"""
    loaded = load_policy(policy, timeout=timeout)
    target = target_of(trace, loaded.policy, policy_name=loaded.spec)
    if translate:
        return replay_faults(trace, target).execution
    return replay(trace, target)


def _names(violations: Sequence[Any]) -> list[str]:
    return [str(v.get("invariant")) for v in violations if isinstance(v, dict)]


@attrs.frozen(kw_only=True)
class ReplayReport:
    """The outcome of a replay compared with what the trace recorded."""

    path: str
    policy: str
    recorded_policy: str
    recorded: tuple[str, ...]
    target: Target = attrs.field(eq=False)
    execution: Execution = attrs.field(eq=False)
    faults: Translated | None = attrs.field(default=None, eq=False)
    difference: str | None = None
    """Under the recorded policy: where the replay stops being the recorded run."""

    @property
    def translated(self) -> Execution | None:
        return None if self.faults is None else self.faults.execution

    @property
    def final(self) -> Execution:
        """The run the verdict rests on: the translated one when exact replay diverged."""
        return self.translated if self.translated is not None else self.execution

    @property
    def violations(self) -> list[str]:
        return [f.name for f in self.final.failures]

    @property
    def reproduced(self) -> bool:
        return bool(self.recorded) and self.violations == list(self.recorded)

    def to_json(self) -> dict[str, Any]:
        execution = self.execution
        divergence = execution.divergence
        return {
            "trace": self.path,
            "policy": self.policy,
            "recorded_policy": self.recorded_policy,
            "recorded_violations": list(self.recorded),
            "violations": [f.to_json() for f in self.final.failures],
            "reproduced": self.reproduced,
            "divergence": None
            if divergence is None
            else {
                "step": divergence.step,
                "wanted": divergence.wanted.to_json(),
                "available": [c.to_json() for c in divergence.available],
                "message": divergence.message(),
            },
            "error": execution.error,
            "difference": self.difference,
            "steps": [s.to_json() for s in execution.steps],
            "translated": None
            if self.faults is None
            else {
                "violations": [f.to_json() for f in self.faults.execution.failures],
                "deviations": self.faults.execution.deviations,
                "recorded_faults": self.faults.faults,
                "unplaced_faults": self.faults.unplaced,
                "error": self.faults.execution.error,
                "steps": [s.to_json() for s in self.faults.execution.steps],
            },
        }

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        execution = self.execution
        policy, path = one_line(self.policy, None), one_line(self.path, None)
        yield Text(
            f"Replayed {path} under policy {policy} "
            f"(recorded under {one_line(self.recorded_policy, None)}): "
            f"{len(execution.steps)} steps",
            style="bold",
        )
        if execution.divergence is not None:
            yield Text(
                f"Diverged: {one_line(execution.divergence.message(), None)}. Policy {policy} "
                "cannot follow the recorded run from there.",
                style="bold yellow",
            )
        if self.difference is not None:
            yield Text(
                f"Not the recorded run: {one_line(self.difference, None)}.", style="bold yellow"
            )
        final = self.final
        if self.faults is not None:
            placed = self.faults.faults - self.faults.unplaced
            yield Text(
                f"Replayed the recorded faults instead: {placed} of {self.faults.faults} "
                f"placed at the matching points of {policy}'s own run"
                + (f" ({self.faults.unplaced} found no place)" if self.faults.unplaced else "")
                + f": {len(final.steps)} steps.",
                style="bold",
            )
        if final.failures or final.error:
            yield counterexample_report(final, target=self.target)
        recorded = one_line(", ".join(self.recorded), None) or "none"
        if self.difference is not None:
            # Neither a pass nor a reproduction: what ran is not the run the trace records.
            yield Text(
                f"No verdict: this is not the recorded run (recorded: {recorded}).",
                style="bold red",
            )
        elif self.reproduced:
            yield Text(f"Reproduced: {recorded}.", style="bold red")
        elif final.failures:
            yield Text(
                f"Violations: {one_line(', '.join(self.violations), None)} (recorded: {recorded}).",
                style="bold red",
            )
        elif final.divergence is not None:
            yield Text(
                f"No invariant failed up to the divergence (recorded: {recorded}).",
                style="bold green",
            )
        elif final.error is None:
            yield Text(
                f"Policy {policy} passes this trace (recorded: {recorded}).",
                style="bold green",
            )


def _exercises_nothing(trace: Trace) -> bool:
    """Whether replaying ``trace`` would run nothing and compare nothing: no plan with a
    call and no recorded step. (Steps without a plan, or a plan without its steps, are
    not the run they claim: the replay says where, exit 2.)"""
    return not trace.choices and not any(plan.calls for plan in trace.plans)


def _write_html(args: argparse.Namespace, trace: Trace, report: ReplayReport) -> None:
    """``--html-out``: the run the verdict rests on, as an HTML report."""
    from txcheck.report.build import html_report
    from txcheck.report.output import write_report

    command = replay_command(args.trace, trace.description)
    if args.policy is not None and args.policy != trace.policy:
        command += " --policy " + shlex.quote(args.policy)
    page = html_report(report.final, target=report.target, document=trace.document, replay=command)
    try:
        write_report(page, args.html_out, force=args.force, option="--html-out")
    except OSError as error:
        problem = error.strerror or error
        raise InputError(f"cannot write the report: {problem}", source=args.html_out) from None


def run(args: argparse.Namespace) -> int:
    if args.html_out is not None:
        from txcheck.report.output import check_report_path

        check_report_path(args.html_out, force=args.force, option="--html-out")
    trace = load_trace(args.trace)
    if _exercises_nothing(trace):  # never "passes this trace": nothing was checked
        shown = one_line(args.trace, None)
        print(
            f"txcheck replay: {shown}: inconclusive: the trace records no plan with a call "
            "and no step, so replaying it exercises nothing",
            file=sys.stderr,
        )
        return EXIT_INCONCLUSIVE
    target = trusted_target(trace, args)
    policy = args.policy or trace.policy
    same_policy = args.policy is None or args.policy == trace.policy
    execution = replay(trace, target)
    faults = None
    difference = None
    if same_policy:
        difference = first_difference(trace, execution)
    elif execution.divergence is not None and not execution.failures and execution.error is None:
        faults = replay_faults(trace, target)
    report = ReplayReport(
        path=args.trace,
        policy=policy,
        recorded_policy=trace.policy,
        recorded=tuple(_names(trace.violations)),
        target=target,
        execution=execution,
        faults=faults,
        difference=difference,
    )
    final = report.final
    if args.json:
        text = json.dumps(report.to_json(), indent=2, sort_keys=True, ensure_ascii=False)
        print(printable_json(text))
    else:
        report_console().print(report, crop=False)
    if difference is not None:
        raise InputError(f"the replay is not the recorded run: {difference}", source=args.trace)
    if args.html_out is not None:
        _write_html(args, trace, report)
    if final.error is not None:
        raise user_code_error(final.error_kind, final.error)
    return EXIT_FOUND if final.failures else EXIT_OK
