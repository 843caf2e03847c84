"""Human rendering of an exploration: what ran, what it covered, what it found.

``ExploreSummary`` is a rich renderable: the verdict (a counterexample, a pass with the
bound it proved, or inconclusive with what was never exercised), one row per engine
(runs, steps, notes), then the coverage summary (deviations taken by kind, the states
each invariant was checked at, how runs ended, with counts). Wall-clock figures are left
out so the text is reproducible. Names (a user policy's, an engine's notes) go through
``txcheck.cli.safe_text``.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.cli.safe_text import one_line, plain
from txcheck.exploration.kernel.report import ExploreResult
from txcheck.exploration.kernel.verdict import ExploreOutcome, ExploreVerdict
from txcheck.models.sim.choices import OPT_IN_KINDS, FaultKind

__all__ = ["ExploreSummary"]

_SECTIONS = (
    ("deviations", "Deviations taken, by kind"),
    ("invariants", "Invariants checked (states)"),
    ("outcomes", "How runs ended (journal phase per instance)"),
)


@attrs.frozen(kw_only=True)
class ExploreSummary:
    """The summary of ``result`` for ``policy``."""

    policy: str
    result: ExploreResult = attrs.field(eq=False)
    verdict: ExploreVerdict | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        result = self.result
        policy = one_line(self.policy, None)
        verdict = self.verdict
        if result.counterexample is None and verdict is not None:
            bound = one_line(verdict.bound, None)  # names plan sets after the contract's
            exercised = (
                f"{verdict.runs:,} runs, {verdict.writes:,} writes committed, "
                f"{verdict.faults:,} faults injected"
            )
            if verdict.outcome is ExploreOutcome.PASS:
                yield Text(
                    f"No counterexample for policy {policy}: {bound} ({exercised}).",
                    style="bold green",
                )
            else:
                yield Text(f"Inconclusive for policy {policy}: {bound}.", style="bold")
                for reason in verdict.unexercised:
                    yield Text(f"  - {one_line(reason, None)}", style="yellow")
                yield Text(f"  ({exercised})")
        elif result.counterexample is None:
            yield Text(f"No counterexample for policy {policy}.", style="bold green")
        else:
            found = result.counterexample
            shortened = f", shortened by {found.shortened_by}" if found.shortened_by else ""
            how = one_line(f"{found.invariant} (found by {found.found_by}{shortened}", None)
            label = "Policy error" if found.execution.raised else "Counterexample"
            yield Text(
                f"{label} for policy {policy}: {how}, {found.deviations} "
                f"deviation{'s' * (found.deviations != 1)}, "
                f"{len(found.execution.steps)} steps)",
                style="bold red",
            )
        table = Table(title="Engines", title_justify="left", box=None)
        for name in ("engine", "runs", "steps", "notes"):
            table.add_column(name, justify="right" if name in ("runs", "steps") else "left")
        for report in result.reports:
            table.add_row(
                plain(report.engine, None),
                Text(str(report.runs)),
                Text(str(report.steps)),
                plain("; ".join(report.notes), None),
            )
        yield table
        coverage = result.coverage()
        for key, title in _SECTIONS:
            counts: Mapping[str, int] = coverage.get(key, {})
            heading = title
            missing = []
            if key == "deviations":
                # a kind only some policies ask for counts once taken (``OPT_IN_KINDS``)
                kinds = [k for k in FaultKind if k not in OPT_IN_KINDS or k in counts]
                missing = [str(k) for k in kinds if k not in counts]
                heading += f" ({len(kinds) - len(missing)}/{len(kinds)} kinds)"
            if not counts and key != "deviations":
                continue
            yield Text(heading + ":", style="bold")
            line = one_line(", ".join(f"{name} {count}" for name, count in counts.items()), None)
            yield Text(f"  {line or 'none'}")
            if missing:
                yield Text(f"  never taken: {', '.join(missing)}")
            if key == "invariants" and verdict is not None and verdict.inapplicable:
                yield Text("Not applicable (nothing to read, never evaluated):", style="bold")
                for reason, names in _by_reason(verdict.inapplicable):
                    yield Text(f"  {one_line(', '.join(names) + ': ' + reason, None)}")


def _by_reason(inapplicable: tuple[tuple[str, str], ...]) -> list[tuple[str, list[str]]]:
    """Invariants that do not apply, grouped by why (in order of first appearance)."""
    groups: dict[str, list[str]] = {}
    for name, reason in inapplicable:
        groups.setdefault(reason, []).append(name)
    return list(groups.items())
