"""Human output for ``txcheck evaluate``: the four tables, and the model/orchestration split.

Stage one (call accuracy) is one row per case. The stage-two tables (state consistency,
fault recovery, efficiency) have one row per case and policy, then one total row per
policy; the details under them say which writes were unexpected, how the final state
differs, which invariants failed and under which fault kinds. Case ids, call ids, bad-line
messages and state paths come from the cases file or the model: each is a plain ``Text``
through ``txcheck.cli.safe_text`` (never markup, control characters escaped).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from txcheck.cli.safe_text import one_line, plain
from txcheck.evaluate.evaluation import GATE_POLICY, POLICIES, EvaluationReport, PolicyEvaluation
from txcheck.evaluate.fault_schedule import SCHEDULE_KINDS
from txcheck.evaluate.metrics import Efficiency, Recovery, VetoCount
from txcheck.evaluate.stage2 import RunResult
from txcheck.scoring.scorer import CaseResult

__all__ = ["EvaluationView"]

_DIFF_LINES = 6
"""Final-state differences shown per case and policy (the JSON has all of them)."""


def _fraction(value: float | bool | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:.2f}"


def _counts(counts: Mapping[str, int]) -> str:
    return "\n".join(f"{name} x{n}" for name, n in counts.items()) or "-"


def _pair(p50: int | None, p95: int | None) -> str:
    return "-" if p50 is None else f"{p50} / {p95}"


def _state(e: PolicyEvaluation) -> str:
    if e.final_state_match is None:
        return "n/a"
    return "match" if e.final_state_match else f"DIFFERS ({len(e.state_diff)})"


def _value(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _difference(d: Mapping[str, Any]) -> str:
    """One final-state difference, from the expected calls' run to the proposal's."""
    if d["op"] == "add":
        return f"{d['path']}: not expected, got {_value(d['after'])}"
    if d["op"] == "remove":
        return f"{d['path']}: missing, expected {_value(d['before'])}"
    return f"{d['path']}: expected {_value(d['before'])}, got {_value(d['after'])}"


def _id(case_id: str) -> Text:
    """A case id as a table cell: whole (the column folds it), never markup."""
    return plain(case_id, None)


def _titled(title: str) -> Iterator[Text]:
    yield Text("")
    yield Text(title, style="bold")


def _table() -> Table:
    return Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )


class EvaluationView:
    """Renders an ``EvaluationReport`` with rich."""

    def __init__(self, report: EvaluationReport) -> None:
        self.report = report
        self.executed = [c for c in report.cases if c.stage2 is not None]

    def _rows(self) -> Iterator[tuple[Text, str, PolicyEvaluation, bool]]:
        """(case id on its first row, policy, evaluation, last row of the case)."""
        for case in self.executed:
            assert case.stage2 is not None
            names = [n for n in POLICIES if n in case.stage2]
            for i, name in enumerate(names):
                label = _id(case.id) if i == 0 else Text("")
                yield label, name, case.stage2[name], i == len(names) - 1

    def _runs(self, policy: str) -> list[RunResult]:
        return [r for c in self.executed if c.stage2 for r in c.stage2[policy].runs]

    # -- stage 1 ----------------------------------------------------------------------------

    def _accuracy(self) -> Table:
        table = _table()
        table.add_column("case", overflow="fold")
        for name in ("strict", "tools", "schema", "args", "no call"):
            table.add_column(name, no_wrap=True)
        table.add_column("vetoes", no_wrap=True, overflow="fold")
        table.add_column("stage 2", no_wrap=True)

        def row(label: Text, result: CaseResult, stage2: str) -> None:
            s = result.strict
            table.add_row(
                label,
                "pass" if s.passed else "FAIL",
                _fraction(s.tool_selection),
                _fraction(s.schema_valid),
                _fraction(s.exact_arguments),
                _fraction(s.irrelevance),
                "\n".join(s.vetoes) or "-",
                stage2,
            )

        for case in self.report.cases:
            row(_id(case.id), case.stage1, "run" if case.stage2 is not None else "skipped")
        s = self.report.score.summary
        vetoes = Counter(v for c in self.report.cases for v in c.stage1.strict.vetoes)
        table.add_section()
        table.add_row(
            "all cases",
            f"{s.passed}/{s.cases}",
            _fraction(s.means["tool_selection"]),
            _fraction(s.means["schema_valid"]),
            _fraction(s.means["exact_arguments"]),
            _fraction(s.means["irrelevance"]),
            _counts(dict(sorted(vetoes.items()))),
            f"{len(self.executed)} run",
        )
        return table

    def _skipped(self) -> Iterator[Text]:
        skipped = [c for c in self.report.cases if c.skipped is not None]
        if skipped:
            yield Text("")
            yield Text("Not run in stage 2 (an invalid proposal is a stage-1 failure):")
            for case in skipped:
                yield Text(f"  {one_line(case.id, None)}: {one_line(case.skipped or '', None)}")

    # -- stage 2 ----------------------------------------------------------------------------

    def _consistency(self) -> Table:
        table = _table()
        table.add_column("case", overflow="fold")
        table.add_column("policy", no_wrap=True)
        table.add_column("final state", no_wrap=True)
        table.add_column("invariants failed", no_wrap=True, overflow="fold")
        table.add_column("unexpected writes", justify="right", no_wrap=True)
        for case_id, policy, e, last in self._rows():
            clean = e.fault_free
            table.add_row(
                case_id,
                policy,
                _state(e),
                "\n".join(clean.failed) or "-",
                "n/a" if clean.unexpected is None else str(len(clean.unexpected)),
                end_section=last,
            )
        for policy in POLICIES:
            evals = [c.stage2[policy] for c in self.executed if c.stage2]
            failing = Counter(n for e in evals for n in e.fault_free.failed)
            table.add_row(
                "all cases",
                policy,
                f"{sum(e.final_state_match is True for e in evals)}/{len(evals)} match",
                _counts(dict(sorted(failing.items()))),
                str(sum(len(e.fault_free.unexpected or ()) for e in evals)),
            )
        return table

    def _vetoes(self) -> Table:
        table = _table()
        table.add_column("case", overflow="fold")
        table.add_column("stage 1 (model)", no_wrap=True, overflow="fold")
        for policy in POLICIES:
            table.add_column(f"{policy} (runs)", no_wrap=True, overflow="fold")
        for case in self.report.cases:
            cells = [
                "not run" if case.stage2 is None else _counts(case.stage2[p].vetoes.fired)
                for p in POLICIES
            ]
            table.add_row(_id(case.id), "\n".join(case.stage1.strict.vetoes) or "-", *cells)
        stage1 = Counter(v for c in self.report.cases for v in c.stage1.strict.vetoes)
        table.add_section()
        table.add_row(
            "all cases",
            _counts(dict(sorted(stage1.items()))),
            *(_counts(VetoCount.of(self._runs(p)).fired) for p in POLICIES),
        )
        return table

    def _state_details(self) -> Iterator[Any]:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for case in self.executed:
            assert case.stage2 is not None
            for policy, e in case.stage2.items():
                where = Text(f"  {one_line(case.id, None)} ({policy})")
                for effect in e.fault_free.unexpected or ():
                    grid.add_row(where, plain(f"unexpected write: {effect.describe()}", None))
                for d in e.state_diff[:_DIFF_LINES]:
                    grid.add_row(where, plain(_difference(d), None))
                if len(e.state_diff) > _DIFF_LINES:
                    more = len(e.state_diff) - _DIFF_LINES
                    grid.add_row(where, Text(f"... and {more} more difference(s) (see --json)"))
        if grid.row_count:
            yield Text("")
            yield Text("The fault-free run against the expected calls' run:")
            yield grid

    def _recovery(self) -> Table:
        table = _table()
        table.add_column("case", overflow="fold")
        table.add_column("policy", no_wrap=True)
        for name in ("runs", "recovered", "UNKNOWN\nresolved", "compensated", "MANUAL", "failed"):
            table.add_column(name, justify="right", no_wrap=True)

        def cells(r: Recovery) -> list[str]:
            return [
                str(r.runs),
                f"{r.recovered}/{r.faulty}",
                f"{r.unknown_resolved}/{r.unknown_injected}",
                str(r.compensated),
                str(r.manual),
                str(r.failed_runs),
            ]

        for case_id, policy, e, last in self._rows():
            table.add_row(case_id, policy, *cells(e.recovery), end_section=last)
        for policy in POLICIES:
            table.add_row("all cases", policy, *cells(Recovery.of(self._runs(policy))))
        return table

    def _by_invariant(self) -> Table:
        table = _table()
        table.add_column("invariant", no_wrap=True)
        for policy in POLICIES:
            table.add_column(policy, justify="right", no_wrap=True)
        totals = {p: Recovery.of(self._runs(p)).failed_by_invariant for p in POLICIES}
        names = sorted({n for counts in totals.values() for n in counts})
        for name in names:
            table.add_row(name, *(str(totals[p].get(name, 0)) for p in POLICIES))
        if not names:
            table.add_row("(no failed run)", *("0" for _ in POLICIES))
        return table

    def _by_kind(self) -> Table:
        table = _table()
        table.add_column("case", overflow="fold")
        table.add_column("policy", no_wrap=True)
        table.add_column("fault", no_wrap=True)
        table.add_column("failed", justify="right", no_wrap=True)
        table.add_column("invariants failed (runs)", no_wrap=True, overflow="fold")
        for case_id, policy, e, last in self._rows():
            rows = []
            for kind in ("no fault", *SCHEDULE_KINDS):
                runs = [r for r in e.runs if (r.fault.kind if r.fault else "no fault") == kind]
                failed = [r for r in runs if not r.ok]
                if failed:
                    names = Counter(n for r in failed for n in r.failed)
                    counts = _counts(dict(sorted(names.items())))
                    rows.append((kind, f"{len(failed)}/{len(runs)}", counts))
            rows = rows or [("(none failed)", f"0/{len(e.runs)}", "-")]
            for i, (kind, share, names_text) in enumerate(rows):
                table.add_row(
                    case_id if i == 0 else Text(""),
                    policy if i == 0 else "",
                    kind,
                    share,
                    names_text,
                    end_section=last and i == len(rows) - 1,
                )
        return table

    def _efficiency(self) -> Table:
        table = _table()
        table.add_column("case", overflow="fold")
        table.add_column("policy", no_wrap=True)
        for name in ("runs", "logical clock", "steps", "tool calls", "retries"):
            table.add_column(name, justify="right", no_wrap=True)

        def cells(f: Efficiency) -> list[str]:
            measures = ("clock", "steps", "tool_calls", "retries")
            return [str(f.runs), *(_pair(f.p50[m], f.p95[m]) for m in measures)]

        for case_id, policy, e, last in self._rows():
            table.add_row(case_id, policy, *cells(e.efficiency), end_section=last)
        for policy in POLICIES:
            table.add_row("all cases", policy, *cells(Efficiency.of(self._runs(policy))))
        return table

    # -- the rest ---------------------------------------------------------------------------

    def _errors(self) -> Table:
        table = _table()
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("problem", overflow="fold")
        for e in self.report.errors:
            table.add_row(str(e.line), plain(e.message, None))
        return table

    def _summary(self) -> Table:
        summary = self.report.summary()
        table = _table()
        table.show_header = False
        table.add_column("metric", no_wrap=True)
        table.add_column("value", overflow="fold")
        cases = summary["cases"]
        table.add_row("cases evaluated", str(cases))
        table.add_row("model errors (stage 1 failures)", f"{summary['model_errors']} of {cases}")
        table.add_row(
            "proposals run in the sandbox",
            f"{summary['executed']} ({summary['skipped']} invalid, not run)",
        )
        right = summary["stage1_passed"]
        for policy in POLICIES:
            got = summary["orchestration_failures"][policy]
            table.add_row(
                f"orchestration failures, {policy}",
                f"{got['cases']} of {right} correct proposal(s); {got['runs']} failed run(s)",
            )
        for policy in POLICIES:
            got = summary["failures_on_model_errors"][policy]
            table.add_row(
                f"wrong proposals failing, {policy}",
                f"{got['cases']} case(s); {got['runs']} failed run(s)",
            )
        table.add_row("bad lines", str(summary["errors"]))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("Stage 1: call accuracy (the model; the same for every policy)", style="bold")
        yield self._accuracy()
        yield from self._skipped()
        if self.executed:
            yield from _titled("Stage 2: state consistency (fault-free run vs expected calls' run)")
            yield self._consistency()
            yield from self._state_details()
            yield from _titled("Vetoes: counted, never averaged (stage 2: runs per policy)")
            yield self._vetoes()
            yield from _titled("Stage 2: fault recovery (the fault-free run + one run per fault)")
            yield self._recovery()
            yield from _titled("Stage 2: failed runs by invariant (all cases)")
            yield self._by_invariant()
            yield from _titled("Stage 2: failed runs by fault kind")
            yield self._by_kind()
            yield from _titled("Stage 2: efficiency (p50 / p95 over the runs)")
            yield self._efficiency()
        if self.report.errors:
            yield from _titled("Bad lines (not evaluated)")
            yield self._errors()
        yield from _titled("Summary: model errors vs orchestration failures")
        yield self._summary()
        yield Text("")
        if self.report.exit_code == 3:
            yield Text("Exit code 3: inconclusive, no case was evaluated.")
            return
        yield Text(
            f"Exit code {self.report.exit_code}: 2 for bad lines, else 1 when a case fails "
            f"stage 1 or {GATE_POLICY} fails any run, else 0. naive's failed runs never change "
            "it: naive is the baseline guarded is compared with."
        )
