"""Human output for ``txcheck scenarios``: results by dimension, the controls, failures.

``ScenariosReport`` is a rich renderable over the finished runs and the summary document;
``--json`` prints the summary instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.cli.safe_text import one_line, plain
from txcheck.scenarios.catalog import DIMENSIONS
from txcheck.scenarios.run import ScenarioRun

__all__ = ["ScenariosReport"]


def _short(policy: str) -> str:
    return policy.removeprefix("control-")


def _words(code: str) -> str:
    return code.replace("_", " ")


@attrs.frozen(kw_only=True)
class ScenariosReport:
    """The runs as rich renders them; ``where`` is the output folder as the user gave it."""

    runs: Sequence[ScenarioRun]
    summary: Mapping[str, Any]
    where: str

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._dimensions()
        yield self._controls()
        yield from self._failures()
        yield from self._footer()

    def _dimensions(self) -> Table:
        table = Table(title="Scenarios by dimension", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("dimension", no_wrap=True)
        table.add_column("scenarios", justify="right", no_wrap=True)
        table.add_column("passed", justify="right", no_wrap=True)
        table.add_column("guarded result", overflow="fold")
        table.add_column("control result", overflow="fold")
        for dimension in DIMENSIONS:
            own = [r for r in self.runs if r.scenario.dimension == dimension]
            scenarios = [r for r in own if r.control is None]
            controls = [r for r in own if r.control is not None]
            failed = [r.scenario.id for r in scenarios if not r.met]
            guarded = one_line(f"FAIL: {', '.join(failed)}", None) if failed else "all pass"
            shown = [f"{_short(r.policy)}: {'seen' if r.met else 'NOT SEEN'}" for r in controls]
            table.add_row(
                Text(dimension),
                Text(str(len(scenarios))),
                Text(str(len(scenarios) - len(failed))),
                Text(guarded),
                Text("\n".join(shown) or "-"),
            )
        return table

    def _controls(self) -> Table:
        table = Table(title="Positive controls", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("control", no_wrap=True)
        table.add_column("scenario", overflow="fold")
        table.add_column("expected failure / invariant", overflow="fold")
        table.add_column("result", no_wrap=True)
        for run in self.runs:
            if run.control is None:
                continue
            table.add_row(
                plain(run.policy, None),
                plain(run.scenario.id, None),
                Text(f"{_words(run.expectation)}\n{run.control.designated}"),
                "seen" if run.met else "NOT SEEN",
            )
        return table

    def _failures(self) -> Iterator[Any]:
        for run in self.runs:
            wrong = [r for r in run.results if not r.passed]
            if not wrong:
                continue
            yield plain(f"{run.scenario.id} under {run.policy}:", None, style="bold red")
            for result in wrong:
                yield Text(f"  {one_line(result.describe(), None)}")

    def _footer(self) -> Iterator[Any]:
        scenarios, controls = self.summary["scenarios"], self.summary["controls"]
        style = "bold green" if self.summary["ok"] else "bold red"
        under = next((r.policy for r in self.runs if r.control is None), "guarded")
        yield Text(
            f"{scenarios['passed']}/{scenarios['total']} scenarios passed under "
            f"{one_line(under, None)}; "
            f"{controls['seen']}/{controls['total']} controls showed their expected failure.",
            style=style,
        )
        raw = self.summary["raw_results"]
        where = one_line(self.where, None)
        yield Text(f"Wrote {where}/{raw['file']} ({raw['runs']} runs) and summary.json.")
        yield Text(f"sha256 {raw['sha256']}")
