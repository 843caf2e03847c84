"""Human rendering of a verdict: the calls, the violations, and which levels ran.

``VerdictReport`` is a rich renderable. Every cell is plain ``Text`` (a proposal's ids and
names are never read as markup), and long plans are cut to ``max_rows`` rows per table with
a note saying how many were left out (``--json`` always has everything).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import attrs
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.cli.safe_text import one_line
from txcheck.models.json_path import describe
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Call, Plan
from txcheck.models.plan.verdict import Verdict

__all__ = ["VerdictReport"]


def _safe(text: str, limit: int = 80) -> str:
    """One printable line: control characters and lone surrogates escaped, whitespace runs
    collapsed, cut to size."""
    return one_line(text, limit)


def _resource(contract: Contract, call: Call) -> str:
    tool = contract.tool(call.name)
    if tool is None or tool.resource is None or call.arguments is None:
        return "-"
    value = call.arguments.get(tool.resource)
    if value is None:
        return "-"
    shown = json.dumps(value) if isinstance(value, str) else describe(value)
    return _safe(f"{tool.resource}={shown}", 40)


@attrs.frozen(kw_only=True)
class VerdictReport:
    """The verdict on ``plan`` under ``contract``, as rich renders it."""

    contract: Contract
    plan: Plan
    verdict: Verdict
    max_rows: int = 100

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        calls, violations = self.plan.calls, self.verdict.violations
        noun = "call" if len(calls) == 1 else "calls"
        if self.verdict.valid:
            yield Text(f"VALID: {len(calls)} {noun}, no violations", style="bold green")
        else:
            many = "violation" if len(violations) == 1 else "violations"
            yield Text(
                f"INVALID: {len(violations)} {many} in {len(calls)} {noun}", style="bold red"
            )
        yield from self._calls_table()
        if violations:
            yield from self._violations_table()
        yield from self._groups()
        yield Text(self._levels_line())

    def _calls_table(self) -> Iterator[Any]:
        codes: dict[str, list[str]] = {}
        for v in self.verdict.violations:
            if v.call is not None and v.code not in codes.setdefault(v.call, []):
                codes[v.call].append(v.code)
        shown = self.plan.calls[: self.max_rows]
        table = Table(title="Calls", title_justify="left")
        for column in ("#", "id", "tool", "effect", "resource"):
            table.add_column(column, justify="right" if column == "#" else "left")
        table.add_column("status", overflow="fold")
        for call in shown:
            tool = self.contract.tool(call.name)
            status = ", ".join(codes.get(call.id, [])) or "ok"
            table.add_row(
                Text(str(call.index + 1)),
                Text(_safe(call.id, 30)),
                Text(_safe(call.name, 30)),
                Text(tool.effect if tool is not None else "?"),
                Text(_resource(self.contract, call)),
                Text(status, style="green" if status == "ok" else "red"),
            )
        yield table
        yield from self._cut("calls", len(self.plan.calls))

    def _violations_table(self) -> Iterator[Any]:
        table = Table(title="Violations", title_justify="left")
        for column in ("level", "code", "call", "message"):
            table.add_column(column, overflow="fold" if column == "message" else "ellipsis")
        for v in self.verdict.violations[: self.max_rows]:
            table.add_row(
                Text(v.level),
                Text(v.code),
                Text(_safe(v.call, 30) if v.call is not None else "-"),
                Text(_safe(v.message, 400)),
            )
        yield table
        yield from self._cut("violations", len(self.verdict.violations))

    def _cut(self, what: str, total: int) -> Iterator[Text]:
        if total > self.max_rows:
            yield Text(f"... {total - self.max_rows} more {what} not shown (use --json for all)")

    def _groups(self) -> Iterator[Text]:
        groups = self.verdict.plan.get("parallel_groups", [])
        if not groups or len(self.plan.calls) > self.max_rows:
            return
        shown = " -> ".join("{" + ", ".join(_safe(i, 30) for i in g) + "}" for g in groups)
        yield Text(f"Parallel groups: {shown}")

    def _levels_line(self) -> str:
        line = "Levels checked: " + (", ".join(self.verdict.levels_checked) or "none") + "."
        skipped = self.verdict.levels_skipped
        if skipped:
            why = "; ".join(f"{level} ({reason})" for level, reason in sorted(skipped.items()))
            line += f" Skipped: {why}."
        return line
