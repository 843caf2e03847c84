"""Human rendering of a counterexample: what failed, the steps, the state change, and how
to reproduce it.

``CounterexampleReport`` is a rich renderable built by ``counterexample_report``, which
re-takes the recorded steps up to the one that broke a safety invariant, in a fresh run of
the same target, to snapshot the world before and after it (for a liveness failure: the
initial and the final state).
Steps are numbered, deviations from the default schedule are marked ``*``. Every cell is
plain ``Text`` and every string from a plan, a trace or a policy goes through
``txcheck.cli.safe_text``: never read as markup, control characters escaped.
"""

from __future__ import annotations

import io
import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.cli.console import report_console
from txcheck.cli.safe_text import block, one_line
from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.session import Execution, Session
from txcheck.exploration.kernel.target import Target
from txcheck.models.sim.policies import BUILTIN_POLICIES
from txcheck.models.sim.runner import Run, Step
from txcheck.traces.json_diff import json_diff

__all__ = ["CounterexampleReport", "counterexample_report", "render_text", "report_console"]


def _compact(value: Any, limit: int = 60) -> str:
    return one_line(json.dumps(value, sort_keys=True, ensure_ascii=False), limit)


def _request(step: Step) -> str:
    request = step.request
    if not request:
        return ""
    parts = [str(request.get("kind", ""))]
    for key in ("tool", "call", "event", "delivery", "ticks"):
        if key in request:
            parts.append(str(request[key]))
    return one_line(" ".join(parts), None)


def _observed(step: Step) -> str:
    observed = dict(step.observed)
    if not observed:
        return ""
    if "status" in observed:
        status = str(observed.pop("status"))
        code = observed.pop("code", None)
        rest = f" {_compact(observed, 30)}" if observed else ""
        return one_line(status + (f" ({code})" if code else ""), None) + rest
    return _compact(observed, 40)


def _diff_lines(before: Any, after: Any, limit: int) -> list[str]:
    lines = []
    for change in json_diff(before, after):
        path = one_line(change["path"], None)
        if change["op"] == "add":
            lines.append(f"+ {path} = {_compact(change['after'], 40)}")
        elif change["op"] == "remove":
            lines.append(f"- {path} (was {_compact(change['before'], 40)})")
        else:
            lines.append(
                f"~ {path}: {_compact(change['before'], 30)} -> {_compact(change['after'], 30)}"
            )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more changes"]
    return lines


def replay_command(path: str, description: TargetDescription) -> str:
    """The ``txcheck replay`` command line for a trace of the target ``description``
    names: a trace is data, so a policy that is not built in, and the user's services and
    invariants, are named on it."""
    words = ["txcheck", "replay", path]
    if description.policy not in BUILTIN_POLICIES:
        words += ["--policy", description.policy]
    for spec in description.services:
        words += ["--services", spec]
    for spec in description.invariants:
        words += ["--invariants", spec]
    return shlex.join(words)


@attrs.frozen(kw_only=True)
class CounterexampleReport:
    """A failing execution ready to print (see the module docstring)."""

    policy: str
    execution: Execution = attrs.field(eq=False)
    diff_title: str
    diff: tuple[str, ...]
    trace_path: str | None = None
    reproduction: str | None = None
    found_by: str | None = None
    max_rows: int = 120
    description: TargetDescription | None = None
    """What the replay command names (None: the policy alone)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        execution = self.execution
        steps = execution.steps
        policy = one_line(self.policy, None)
        if execution.failures:
            names = one_line(", ".join(f.name for f in execution.by_harm), None)
            head = f"Counterexample: policy {policy} violates {names}"
        else:
            head = f"Policy error: policy {policy} raised an error"  # not a counterexample
        yield Text(head, style="bold red")
        yield Text(
            f"{len(steps)} steps, {execution.deviations} deviation"
            f"{'' if execution.deviations == 1 else 's'} from the default schedule"
            + (f" (found by {one_line(self.found_by, None)})" if self.found_by else "")
        )
        for failure in execution.by_harm:
            where = f"after step {failure.step}" if failure.step is not None else "at quiescence"
            name = one_line(f"{failure.name} ({failure.kind}, {where}):", None)
            yield Text(name, style="bold")
            for message in failure.messages:
                yield Text(f"  {one_line(message, None)}")
        if execution.error:
            yield Text(f"error: {block(execution.error)}", style="bold")
        yield _plans_table(execution.run)
        yield self._steps_table(steps)
        yield Text(self.diff_title, style="bold")
        for line in self.diff or ("(no change)",):
            yield Text(f"  {line}")
        if self.trace_path:
            path = one_line(self.trace_path, None)
            yield Text(f"Trace written to {path}; replay it with:", style="bold")
            described = self.description or TargetDescription(policy=self.policy)
            command = replay_command(self.trace_path, described)
            # a command and code are copied, not read: never wrapped inside an argument
            yield Text(f"  {one_line(command, None)}", no_wrap=True, overflow="ignore")
        if self.reproduction:
            yield Text("Reproduce in Python:", style="bold")
            yield Text(block(self.reproduction.rstrip("\n")), no_wrap=True, overflow="ignore")

    def _steps_table(self, steps: Sequence[Step]) -> Table:
        table = Table(title="Steps (* = deviation)", title_justify="left", box=None)
        for name in ("#", "", "actor", "action", "outcome", "request", "observed"):
            table.add_column(name, no_wrap=name != "observed")
        shown: list[Step | None] = list(steps)
        if len(steps) > self.max_rows:
            tail = self.max_rows - 20
            shown = [*steps[:20], None, *steps[len(steps) - tail :]]
        for step in shown:
            if step is None:
                skipped = len(steps) - self.max_rows
                table.add_row(Text("..."), Text(""), Text(f"{skipped} steps not shown"))
                continue
            table.add_row(
                Text(str(step.index)),
                Text("*" if step.deviation else ""),
                Text(one_line(step.choice.actor, None)),
                Text(one_line(step.choice.action, None)),
                Text(one_line(step.choice.outcome, None)),
                Text(_request(step)),
                Text(_observed(step)),
            )
        return table


def _plans_table(run: Run) -> Table:
    table = Table(title="Plans", title_justify="left", box=None)
    for name in ("instance", "call", "tool", "arguments"):
        table.add_column(name, no_wrap=name != "arguments")
    for instance, plan in zip(run.instances, run.plans, strict=False):
        for call in plan.calls:
            arguments = call.arguments if call.arguments is not None else call.raw_arguments
            table.add_row(
                Text(one_line(instance, None)),
                Text(one_line(call.id, None)),
                Text(one_line(call.name, None)),
                Text(_compact(arguments, 70)),
            )
    return table


def _snapshots(
    execution: Execution, step: int | None, target: Target
) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    if step is None:
        initial = target.run(execution.plans, start=False)  # runs no user code
        return initial.world.snapshot(), execution.run.world.snapshot()
    session = Session(target, execution.plans)
    session.retrace(execution.steps[:step])
    before = session.run.world.snapshot()
    session.retrace(execution.steps[step : step + 1])
    return before, session.run.world.snapshot()


def counterexample_report(
    execution: Execution,
    *,
    target: Target,
    trace_path: str | None = None,
    reproduction: str | None = None,
    found_by: str | None = None,
    diff_limit: int = 40,
    description: TargetDescription | None = None,
) -> CounterexampleReport:
    """Build the report, re-taking the steps once (in a run of ``target``) for the
    state diff; never for a user-code error, which would only raise or hang again. The
    replay command names what ``description`` names (None: the policy alone)."""
    step: int | None = None
    if execution.error is not None:
        step = None  # re-running user code that raised or hung would raise or hang again
    elif execution.failures:
        step = execution.by_harm[0].step
    elif execution.steps:
        step = len(execution.steps) - 1
    if step is not None and step >= len(execution.steps):
        step = None
    before, after = _snapshots(execution, step, target)
    if step is not None:
        title = f"State change at step {step}:"
    elif execution.error is not None:
        title = "State change over the whole run, up to the error:"
    else:
        title = "State change over the whole run (the failure is at quiescence):"
    return CounterexampleReport(
        policy=target.policy_name,
        execution=execution,
        diff_title=title,
        diff=tuple(_diff_lines(before, after, diff_limit)),
        trace_path=trace_path,
        reproduction=reproduction,
        found_by=found_by,
        description=description,
    )


def render_text(renderable: Any, *, width: int = 100) -> str:
    """Plain text of a renderable (for notes and tests)."""
    console = Console(width=width, color_system=None, file=io.StringIO())
    console.print(renderable, crop=False)
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue()
