"""``txcheck replay TRACE [--policy P]``: re-execute a saved trace exactly.

The recorded choices are fed back through the one runner, under the recorded policy or
``--policy``. When another policy cannot follow the recorded steps (its own steps differ),
the report names the step where the recorded choice became impossible and replays the
recorded *faults* instead, each at the matching point of that policy's run: that is what
tells whether a fix holds. Exit 1 when an invariant fails (the recorded violation
reproduced, or another one), 0 when the policy passes, 2 on bad input or a policy error.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

import attrs
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from txcheck.cli import EXIT_FOUND, EXIT_OK
from txcheck.cli.arguments import positive_seconds
from txcheck.cli.render_trace import counterexample_report, report_console
from txcheck.cli.safe_text import one_line
from txcheck.exploration.loading import DEFAULT_POLICY_TIMEOUT, load_policy
from txcheck.exploration.schedule import Deviations
from txcheck.exploration.session import Execution, execute
from txcheck.exploration.target import Target
from txcheck.models.canonical import canonical_json
from txcheck.models.errors import PolicyError
from txcheck.models.proposal import Plan, plan_to_json
from txcheck.traces.document import Trace, load_trace, target_of, translate_deviations

__all__ = ["ReplayReport", "register", "replay_trace", "run", "shared_plans"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="re-execute a saved trace",
        description=(
            "Re-execute a txcheck trace under its policy or another one. Exit 1 when an "
            "invariant fails, 0 when the policy passes the trace, 2 on bad input."
        ),
    )
    parser.add_argument("trace", metavar="TRACE", help="trace file (txcheck-trace/1)")
    parser.add_argument("--policy", help="replay under this policy instead of the recorded one")
    parser.add_argument(
        "--policy-timeout",
        type=positive_seconds,
        default=DEFAULT_POLICY_TIMEOUT,
        metavar="S",
        help="stop a user policy that runs this long without yielding",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(run=run)


def shared_plans(plans: Sequence[Plan]) -> tuple[Plan, ...]:
    """Identical plans as one object: a plan submitted twice is the same plan (invariants
    group instances by plan identity)."""
    seen: dict[str, Plan] = {}
    return tuple(seen.setdefault(canonical_json(plan_to_json(p)), p) for p in plans)


def replay_trace(
    trace: Trace, policy: str, *, timeout: float | None, translate: bool = False
) -> Execution:
    """Re-execute ``trace`` under ``policy`` (a built-in name or import path): its exact
    choices, or with ``translate`` its faults (``translate_deviations``), which another
    policy can meet although its steps differ."""
    loaded = load_policy(policy, timeout=timeout)
    target = target_of(trace, loaded.policy, policy_name=loaded.spec)
    chooser = Deviations(translate_deviations(trace.document)) if translate else None
    return execute(
        target,
        shared_plans(trace.plans),
        choices=() if translate else trace.choices,
        chooser=chooser,
    )


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
    translated: Execution | None = attrs.field(default=None, eq=False)

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
            "steps": [s.to_json() for s in execution.steps],
            "translated": None
            if self.translated is None
            else {
                "violations": [f.to_json() for f in self.translated.failures],
                "deviations": self.translated.deviations,
                "error": self.translated.error,
                "steps": [s.to_json() for s in self.translated.steps],
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
        final = self.final
        if self.translated is not None:
            yield Text(
                f"Replayed the recorded faults instead ({final.deviations} deviations at the "
                f"matching points of {policy}'s own run): {len(final.steps)} steps.",
                style="bold",
            )
        if final.failures or final.error:
            yield counterexample_report(final, target=self.target)
        recorded = one_line(", ".join(self.recorded), None) or "none"
        if self.reproduced:
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


def run(args: argparse.Namespace) -> int:
    trace = load_trace(args.trace)
    policy = args.policy or trace.policy
    execution = replay_trace(trace, policy, timeout=args.policy_timeout)
    translated = None
    if execution.divergence is not None and not execution.failures and execution.error is None:
        translated = replay_trace(trace, policy, timeout=args.policy_timeout, translate=True)
    report = ReplayReport(
        path=args.trace,
        policy=policy,
        recorded_policy=trace.policy,
        recorded=tuple(_names(trace.violations)),
        target=target_of(trace, load_policy(policy, timeout=None).policy, policy_name=policy),
        execution=execution,
        translated=translated,
    )
    execution = report.final
    if args.json:
        print(json.dumps(report.to_json(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        report_console().print(report)
    if execution.error is not None:
        raise PolicyError(execution.error)
    return EXIT_FOUND if execution.failures else EXIT_OK
