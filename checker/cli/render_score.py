"""Human output for ``txcheck score``: a table per case, the bad lines and a summary.

``ScoreStream`` renders as results arrive, so a file of any length is shown in bounded
memory: the case table is printed in chunks of ``chunk`` rows, and the detail section
keeps the violations of at most ``detail_limit`` failing cases (``--json`` has them all).
``ScoreView`` renders a whole ``ScoreReport`` the same way. Every id and message comes from
the cases file or the model, so each is plain ``Text`` with control characters escaped.
Tables go through ``QuickTable``, which prints rich's very characters without rich's
per-cell layout when the output is plain text (a file or a pipe).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.cli.quick_table import QuickTable
from txcheck.cli.safe_text import one_line, plain
from txcheck.models.plan.verdict import Violation
from txcheck.scoring.cases import LineError
from txcheck.scoring.scorer import CaseResult, ScoreReport, Summary

__all__ = ["ScoreStream", "ScoreView"]


def _fraction(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _codes(violations: Sequence[Violation]) -> str:
    return "\n".join(dict.fromkeys(v.code for v in violations)) or "-"


class ScoreStream:
    """Renders scored cases as they come, then the bad lines and the summary."""

    def __init__(self, source: str, *, chunk: int = 1000, detail_limit: int = 1000) -> None:
        self.source = source
        self.chunk = chunk
        self.detail_limit = detail_limit
        self._rows: list[CaseResult] = []
        self._first_chunk = True
        self._normalized = False
        self._details: list[tuple[str, tuple[Violation, ...]]] = []
        self._details_left_out = 0
        self._skipped: Counter[tuple[str, str]] = Counter()

    def add(self, result: CaseResult) -> Iterator[RenderableType]:
        """Take one result; yields a table when a chunk of rows is full."""
        self._rows.append(result)
        self._normalized = self._normalized or bool(result.normalize)
        issues = (*result.strict.violations, *result.warnings)
        if issues:
            if len(self._details) < self.detail_limit:
                self._details.append((result.id, issues))
            else:
                self._details_left_out += 1
        if not result.unreadable:
            self._skipped.update(result.strict.levels_skipped.items())
        if len(self._rows) >= self.chunk:
            yield self._table()

    def finish(self, errors: Sequence[LineError], summary: Summary) -> Iterator[RenderableType]:
        """The last rows, the details, the bad lines and the summary."""
        if self._rows or self._first_chunk:
            yield self._table()
        if self._details:
            yield from self._render_details()
            yield Text("")
        if errors:
            yield self._errors(errors)
        yield self._summary(summary)
        for (level, why), count in sorted(self._skipped.items()):
            yield Text(f"Level {level} skipped in {count} of {summary.cases} cases: {why}.")
        if errors:
            yield Text(f"{len(errors)} bad line(s) were not scored; exit code 2.")
        elif not summary.cases:
            yield Text("Inconclusive: no case was scored; exit code 3.")

    def _table(self) -> QuickTable:
        title = None
        if self._first_chunk:
            title = Text(f"Scored cases: {one_line(self.source, None)}", style="table.title")
        table = Table(title=title, box=box.SIMPLE_HEAD, show_header=self._first_chunk)
        self._first_chunk = False
        table.add_column("case", overflow="fold")
        table.add_column("strict", no_wrap=True)
        table.add_column("veto", no_wrap=True)
        table.add_column("violations", overflow="fold")
        table.add_column("warnings", no_wrap=True)
        table.add_column("legacy", justify="right", no_wrap=True)
        if self._normalized:
            table.add_column("strings", no_wrap=True)
        for r in self._rows:
            cells = [
                plain(r.id, 200),
                Text("pass 1" if r.strict.passed else "FAIL 0"),
                Text("VETO" if r.strict.veto else "-"),
                Text(_codes(r.strict.violations)),
                Text(_codes(r.warnings)),
                Text(f"{r.legacy:.2f}"),
            ]
            if self._normalized:
                cells.append(Text(", ".join(r.normalize) if r.normalize else "exact"))
            table.add_row(*cells)
        self._rows = []
        return QuickTable(table)

    def _render_details(self) -> Iterator[RenderableType]:
        """Each failing case's violations and warnings, with their messages."""
        yield Text("Violations and warnings", justify="center", style="italic")
        parts: list[RenderableType] = []  # printed at once: a print per case costs
        for case_id, issues in self._details:
            parts.append(Text("\n") + plain(case_id, 200, style="bold"))
            grid = Table.grid(padding=(0, 1), expand=True)
            grid.add_column(no_wrap=True, min_width=1)
            grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold", ratio=1)
            for v in issues:
                text = f"{v.call}: {v.message}" if v.call else v.message
                grid.add_row(Text(""), Text(v.code), plain(text, 2000))
            parts.append(QuickTable(grid))
        yield Group(*parts)
        if self._details_left_out:
            yield Text(
                f"\n... {self._details_left_out} more case(s) with violations not shown "
                "(use --json for all)"
            )

    @staticmethod
    def _errors(errors: Sequence[LineError]) -> Table:
        table = Table(title="Bad lines (not scored)", box=box.SIMPLE_HEAD)
        table.add_column("line", justify="right")
        table.add_column("problem")
        for e in errors:
            table.add_row(str(e.line), plain(e.message, 400))
        return table

    @staticmethod
    def _summary(s: Summary) -> Table:
        table = Table(title="Summary", box=box.SIMPLE_HEAD, show_header=False)
        table.add_column("metric")
        table.add_column("value", justify="right")
        table.add_row("cases scored", str(s.cases))
        table.add_row("strict pass rate", f"{_fraction(s.pass_rate)} ({s.passed}/{s.cases})")
        table.add_row("cases with a veto", str(s.vetoes))
        table.add_row("unreadable proposals (score 0)", str(s.unreadable))
        table.add_row("legacy mean", _fraction(s.legacy_mean))
        for name, value in s.means.items():
            table.add_row(f"mean {name}", _fraction(value))
        table.add_row("expect_invalid warnings", str(s.expect_invalid))
        table.add_row("bad lines", str(s.errors))
        return table


class ScoreView:
    """Renders a whole ``ScoreReport`` with rich (one table chunk)."""

    def __init__(self, report: ScoreReport) -> None:
        self.report = report

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        stream = ScoreStream(self.report.source, chunk=len(self.report.cases) + 1)
        for result in self.report.cases:
            yield from stream.add(result)
        yield from stream.finish(self.report.errors, self.report.summary)
