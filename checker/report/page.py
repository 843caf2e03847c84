"""The report page: header, sequence diagram, steps table, as one self-contained file.

The page loads nothing (no script, font, image or style sheet from anywhere): its one
style element is allowed by its hash in a Content-Security-Policy whose default is
``'none'``, so even markup that slipped through could not run or fetch. Links between the
diagram and the table are fragments (``#d-N``, ``#step-N``), highlighted with CSS
``:target``; the per-step world parts open with ``<details>``. The trace itself is kept
in a ``<script type="application/json">`` data block (never executed) whose text cannot
close its element (``txcheck.report.markup.script_json``). No clock, no path from the
machine: the same report input gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.exploration.kernel.session import Execution, Failure
from txcheck.report.diagram import sequence_svg
from txcheck.report.markup import compact, script_json, text
from txcheck.report.steps import StepView

__all__ = ["GENERATOR", "Report", "html_document", "render_page"]

GENERATOR = '<meta name="generator" content="txcheck report">'
"""Marks a file as a txcheck report (``--html`` replaces such a file without ``--force``)."""

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1b1b;background:#fff}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}
dl.header{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
dl.header dt{font-weight:bold}dl.header dd{margin:0}
code,pre,td.json{font-family:ui-monospace,monospace;font-size:12px}
pre{white-space:pre-wrap;word-break:break-all;margin:.2em 0}
.violation{color:#a40000}
.figure{overflow:auto;border:1px solid #ccc}
svg.sequence text{font:11px ui-monospace,monospace;fill:#1b1b1b}
svg.sequence .lifeline rect{fill:#eef2f7;stroke:#5b6b7f}
svg.sequence .lifeline.tool rect{fill:#eef7ee}svg.sequence .lifeline.store rect{fill:#f7f3e8}
svg.sequence .lifeline text{text-anchor:middle;font-weight:bold}
svg.sequence .lifeline line{stroke:#9aa5b1;stroke-dasharray:2 3}
svg.sequence line,svg.sequence path{stroke:#1b1b1b;fill:none;stroke-width:1.2}
svg.sequence polygon{fill:#1b1b1b}
svg.sequence .dashed{stroke-dasharray:5 4}
svg.sequence .band{fill:transparent;stroke:none}
svg.sequence .dev .band{fill:#fff4d6}svg.sequence .fails .band{fill:#fde2e2}
svg.sequence .break .band{fill:#f9b3b3}
svg.sequence .step:target .band,svg.sequence .step:hover .band{fill:#cfe3ff}
svg.sequence .error line,svg.sequence .error polygon{stroke:#a40000;fill:#a40000}
svg.sequence .x{stroke:#a40000;stroke-width:3}
svg.sequence .activation{fill:#fff;stroke:#1b1b1b}
svg.sequence .jump-mark{fill:#ffd24d;stroke:#7a5d00}
table.steps{border-collapse:collapse;width:100%}
table.steps th,table.steps td{border-bottom:1px solid #ddd;padding:.2em .4em}
table.steps th,table.steps td{vertical-align:top;text-align:left}
table.steps tr.dev{background:#fff4d6}table.steps tr.fails{background:#fde2e2}
table.steps tr.break{background:#f9b3b3}table.steps tr:target{outline:2px solid #2f6fdf}
table.diff{border-collapse:collapse}table.diff td{border:none;padding:0 .5em 0 0}
table.diff td.path{white-space:nowrap}
table.diff td.before,table.diff td.after{overflow-wrap:anywhere;min-width:12em}
svg.chart text{font:11px ui-monospace,monospace}svg.chart rect{fill:#5b8bd6}
svg.chart .unexercised rect{fill:#d65b5b}
table.comparison tr.parted{background:#f3f3f3}table.comparison tr.part{background:#f9b3b3}
.op-add .op{color:#146c14}.op-remove .op{color:#a40000}.op-change .op{color:#7a5d00}
""".strip()


def _style_hash() -> str:
    digest = hashlib.sha256(STYLE.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


CSP = (
    f"default-src 'none'; style-src '{_style_hash()}'; img-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
"""Nothing may load or run; only the page's own style element applies."""


@attrs.frozen(kw_only=True)
class Report:
    """Everything the page shows (all of it data: escaped when rendered)."""

    document: Mapping[str, Any] = attrs.field(repr=False)
    """The trace document (shown in part, embedded whole)."""
    policy: str
    execution: Execution = attrs.field(eq=False)
    views: tuple[StepView, ...] = attrs.field(eq=False)
    replay: str
    """The exact command that replays the trace."""
    safety: tuple[str, ...] = ()
    """The invariants checked after every step."""
    liveness: tuple[str, ...] = ()
    """The invariants checked when the run ends."""
    title: str = ""
    details: Mapping[str, str] = attrs.field(factory=dict)
    """Header fields the trace does not record (``seed``, ``shortened_by``, ``bound``),
    when the command that found the run knows them."""
    sections: tuple[str, ...] = ()
    """More of the page (trusted markup, its data escaped), before the trace: the
    comparison with another policy."""


def _recorded(report: Report, key: str) -> str:
    value = report.details.get(key, report.document.get(key))
    return "not recorded in the trace" if value is None else text(value)


def _failure(failure: Failure) -> str:
    where = f"after step {failure.step}" if failure.step is not None else "at quiescence"
    anchor = f"#step-{failure.step}" if failure.step is not None else "#step-end"
    messages = "".join(f"<li>{text(m)}</li>" for m in failure.messages)
    return (
        f'<li class="violation" data-invariant="{text(failure.name)}"><strong>'
        f'{text(failure.name)}</strong> ({text(str(failure.kind))}, <a href="{anchor}">'
        f"{where}</a>)<ul>{messages}</ul></li>"
    )


def _contract(document: Mapping[str, Any]) -> str:
    contract = document.get("contract")
    tools = contract.get("tools") if isinstance(contract, Mapping) else contract
    names: list[str] = []
    if isinstance(tools, Mapping):
        names = [str(n) for n in tools]
    elif isinstance(tools, list):
        for tool in tools:
            if isinstance(tool, Mapping):
                inner = tool.get("function", tool)
                names.append(str(inner.get("name", "?") if isinstance(inner, Mapping) else "?"))
    return f"{len(names)} tools: " + ", ".join(text(n) for n in names)


def _header(report: Report) -> list[str]:
    execution, document = report.execution, report.document
    failures = execution.by_harm
    if failures:
        verdict = f"violates {text(', '.join(f.name for f in failures))}"
    elif execution.error:
        verdict = "raised an error"
    else:
        verdict = "passes this trace"
    out = [
        f"<h1>Policy {text(report.policy)} {verdict}</h1>",
        '<dl class="header">',
        "<dt>Violated</dt><dd><ul>"
        + ("".join(_failure(f) for f in failures) or "<li>nothing</li>")
        + "</ul></dd>",
    ]
    if execution.error:
        out.append(f"<dt>Error</dt><dd><pre>{text(execution.error)}</pre></dd>")
    out += [
        f'<dt>Policy</dt><dd id="policy">{text(report.policy)}</dd>',
        f"<dt>Contract</dt><dd>{_contract(document)}</dd>",
        f"<dt>Engine</dt><dd>{_recorded(report, 'engine')}</dd>",
        f"<dt>Shortened by</dt><dd>{_recorded(report, 'shortened_by')}</dd>",
        f"<dt>Seed</dt><dd>{_recorded(report, 'seed')}</dd>",
        f"<dt>Bound</dt><dd>{_recorded(report, 'bound')}</dd>",
        f"<dt>Run</dt><dd>{len(execution.steps)} steps, {execution.deviations} deviation"
        f"{'' if execution.deviations == 1 else 's'} from the default schedule</dd>",
        f"<dt>Checked after every step</dt><dd>{text(', '.join(report.safety)) or 'none'}</dd>",
        f"<dt>Checked at the end</dt><dd>{text(', '.join(report.liveness)) or 'none'}</dd>",
        f'<dt>Replay</dt><dd><code id="replay">{text(report.replay)}</code></dd>',
        "</dl>",
    ]
    return out


def _diff(view: StepView) -> str:
    if not view.diff:
        return ""
    rows = []
    for change in view.diff:
        op = str(change["op"])
        sign = {"add": "+", "remove": "-"}.get(op, "~")
        before = compact(change["before"], 200) if "before" in change else ""
        after = compact(change["after"], 200) if "after" in change else ""
        rows.append(
            f'<tr class="diff-row op-{text(op)}"><td class="op">{sign}</td>'
            f'<td class="json path">{text(change["path"])}</td><td class="json before">'
            f'{before}</td><td class="json after">{after}</td></tr>'
        )
    return '<table class="diff">' + "".join(rows) + "</table>"


def _parts(view: StepView) -> str:
    if not view.parts:
        return ""
    labels = ", ".join(label for label, _ in view.parts)
    blocks = "".join(
        f"<h4>{text(label)}</h4><pre>{text(json.dumps(value, sort_keys=True, indent=1))}</pre>"
        for label, value in view.parts
    )
    return f"<details><summary>{text(labels)}</summary>{blocks}</details>"


def _answer(observed: Mapping[str, Any]) -> str:
    return compact(dict(observed), 160) if observed else ""


def _steps_table(report: Report, breaking: int | None) -> list[str]:
    out = [
        '<table class="steps"><thead><tr><th>#</th><th>actor</th><th>action</th>'
        "<th>outcome</th><th>request</th><th>answer</th><th>world diff</th>"
        "<th>world parts</th><th>failed</th></tr></thead><tbody>"
    ]
    for shown in report.views:
        step = shown.step
        index = step.index
        classes = ["dev"] if step.deviation else []
        if index == breaking:
            classes.append("break")
        elif shown.failures:
            classes.append("fails")
        request = dict(step.request)
        out.append(
            f'<tr id="step-{index}" class="{" ".join(["step", *classes])}">'
            f'<td><a href="#d-{index}">{index}</a>{"*" if step.deviation else ""}</td>'
            f"<td>{text(step.choice.actor)}</td><td>{text(step.choice.action)}</td>"
            f"<td>{text(step.choice.outcome)}</td>"
            f'<td class="json">{compact(request, 200) if request else ""}</td>'
            f'<td class="json">{_answer(step.observed)}</td>'
            f"<td>{_diff(shown)}</td><td>{_parts(shown)}</td>"
            f'<td class="violation">{text(", ".join(shown.failures))}</td></tr>'
        )
    at_end = [f.name for f in report.execution.failures if f.step is None]
    if at_end:
        end_classes = "step quiescence" + (" break" if breaking is None else " fails")
        out.append(
            f'<tr id="step-end" class="{end_classes}"><td><a href="#d-end">end</a></td>'
            '<td colspan="7">quiescence: the run ends, the eventual invariants are checked</td>'
            f'<td class="violation">{text(", ".join(at_end))}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def _breaking(execution: Execution) -> int | None:
    failures = execution.by_harm
    return failures[0].step if failures else None


def render_page(report: Report) -> str:
    """The whole HTML document (see the module docstring)."""
    execution = report.execution
    breaking = _breaking(execution)
    failing: Sequence[int] = sorted({f.step for f in execution.failures if f.step is not None})
    quiescence = any(f.step is None for f in execution.failures)
    svg = sequence_svg(
        execution.steps,
        instances=execution.run.instances,
        breaking=breaking,
        failing=failing,
        quiescence=quiescence,
    )
    title = report.title or f"txcheck report: policy {report.policy}"
    body = [
        *_header(report),
        "<h2>Sequence diagram</h2>",
        "<p>One row per step; * marks a deviation from the default schedule; a dashed "
        "answer is one the actor never learned; X is a crash, a box its restart. Click a "
        "row for its line in the steps table.</p>",
        f'<div class="figure">{svg}</div>',
        "<h2>Steps</h2>",
        *_steps_table(report, breaking),
        *report.sections,
        "<h2>Trace</h2>",
        "<p>The trace this report was made from is embedded in this file as JSON "
        "(the element with id <code>txcheck-trace</code>).</p>",
        '<script type="application/json" id="txcheck-trace">'
        + script_json(dict(report.document))
        + "</script>",
    ]
    return html_document(title, body)


def html_document(title: str, body: Sequence[str]) -> str:
    """A whole page around ``body`` (trusted markup): the policy, the style, the title
    (escaped here)."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="referrer" content="no-referrer">',
        GENERATOR,
        f"<title>{text(title, 200)}</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
        *body,
        "</body></html>",
        "",
    ]
    return "\n".join(parts)
