"""Human output for ``txcheck score``: a table per case, the bad lines and a summary."""

from __future__ import annotations

from collections import Counter

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.score.scoring import CaseResult, ScoreReport

__all__ = ["ScoreView"]


def _fraction(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _codes(result: CaseResult) -> str:
    codes = list(dict.fromkeys(v.code for v in result.strict.violations))
    return "\n".join(codes) or "-"


class ScoreView:
    """Renders a ``ScoreReport`` with rich."""

    def __init__(self, report: ScoreReport) -> None:
        self.report = report

    def _cases(self) -> Table:
        table = Table(title=f"Scored cases: {self.report.source}", box=box.SIMPLE_HEAD)
        table.add_column("case", overflow="fold")
        table.add_column("strict", no_wrap=True)
        table.add_column("veto", no_wrap=True)
        table.add_column("violations", overflow="fold")
        table.add_column("warnings", no_wrap=True)
        table.add_column("legacy", justify="right", no_wrap=True)
        for r in self.report.cases:
            table.add_row(
                r.id,
                "pass 1" if r.strict.passed else "FAIL 0",
                "VETO" if r.strict.veto else "-",
                _codes(r),
                "\n".join(dict.fromkeys(w.code for w in r.warnings)) or "-",
                f"{r.legacy:.2f}",
            )
        return table

    def _details(self) -> RenderResult:
        """Each failing case's violations and warnings, with their messages."""
        yield Text("Violations and warnings", justify="center", style="italic")
        for r in self.report.cases:
            issues = (*r.strict.violations, *r.warnings)
            if not issues:
                continue
            yield Text(f"\n{r.id}", style="bold")
            grid = Table.grid(padding=(0, 1), expand=True)
            grid.add_column(no_wrap=True, min_width=1)
            grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold", ratio=1)
            for v in issues:
                grid.add_row("", v.code, f"{v.call}: {v.message}" if v.call else v.message)
            yield grid

    def _errors(self) -> Table:
        table = Table(title="Bad lines (not scored)", box=box.SIMPLE_HEAD)
        table.add_column("line", justify="right")
        table.add_column("problem")
        for e in self.report.errors:
            table.add_row(str(e.line), e.message)
        return table

    def _summary(self) -> Table:
        s = self.report.summary
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

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._cases()
        if any(r.strict.violations or r.warnings for r in self.report.cases):
            yield from self._details()
            yield Text("")
        if self.report.errors:
            yield self._errors()
        yield self._summary()
        skipped = Counter(
            (level, why)
            for r in self.report.cases
            if not r.unreadable
            for level, why in r.strict.levels_skipped.items()
        )
        for (level, why), count in sorted(skipped.items()):
            yield Text(
                f"Level {level} skipped in {count} of {len(self.report.cases)} cases: {why}."
            )
        if self.report.errors:
            yield Text(f"{len(self.report.errors)} bad line(s) were not scored; exit code 2.")
