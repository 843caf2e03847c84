"""The coverage page of a passing (or inconclusive) explore: what the search exercised.

Per plan set of the systematic search: the deviation bound it finished, its distinct
states, runs, writes committed, faults injected by kind, the states its runs checked
every safety invariant at and the run ends every liveness one, and whether it was
exercised at all; then the states each invariant was evaluated at, summed over the
engines, and the invariants set apart as inapplicable. A small SVG bar chart draws the
states per plan set. Everything comes from the search's own counts; every name is
escaped (``txcheck.report.markup``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from txcheck.exploration.kernel.report import ExploreResult, PlanBound
from txcheck.exploration.kernel.verdict import ExploreVerdict
from txcheck.report.markup import text
from txcheck.report.page import html_document

__all__ = ["coverage_page", "states_chart"]

_BAR = 360
"""The longest bar, in pixels."""


def states_chart(plans: Sequence[PlanBound]) -> str:
    """Horizontal bars of the distinct states per plan set (a linear scale)."""
    most = max((p.states for p in plans), default=0) or 1
    row, left = 20, 260
    height = row * len(plans) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{left + _BAR + 90}" '
        f'height="{height}" role="img" aria-label="states per plan set">'
    ]
    for position, plan in enumerate(plans):
        y = 5 + position * row
        width = round(_BAR * plan.states / most)
        classes = "bar" + (" unexercised" if plan.unexercised() is not None else "")
        out.append(
            f'<g class="{classes}" data-plans="{text(plan.label)}">'
            f'<text x="0" y="{y + 13}">{text(plan.label, 40)}</text>'
            f'<rect x="{left}" y="{y}" width="{width}" height="{row - 6}"/>'
            f'<text x="{left + width + 6}" y="{y + 13}">{plan.states:,}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _faults(faults: Mapping[str, int]) -> str:
    return ", ".join(f"{text(k)} {v:,}" for k, v in sorted(faults.items()) if v) or "none"


def _plans_table(plans: Sequence[PlanBound], asked: int) -> list[str]:
    out = [
        '<table class="steps coverage"><thead><tr><th>plan set</th><th>bound</th>'
        "<th>states</th><th>runs</th><th>writes</th><th>faults by kind</th>"
        "<th>invariants checked</th><th>not exercised</th></tr></thead><tbody>"
    ]
    for plan in plans:
        reached = "none" if plan.reached is None else str(plan.reached)
        why = plan.unexercised()
        out.append(
            f'<tr class="plan-set{" fails" if why else ""}" data-plans="{text(plan.label)}">'
            f"<td>{text(plan.label)}</td><td>{reached} of {asked}"
            f"{(' (' + text(plan.stopped) + ')') if plan.stopped else ''}</td>"
            f"<td>{plan.states:,}</td><td>{plan.runs:,}</td><td>{plan.writes:,}</td>"
            f"<td>{_faults(plan.faults)}</td>"
            f'<td class="checks">safety at {plan.safety_checks:,} states, liveness at '
            f"{plan.liveness_checks:,} run ends</td><td>{text(why) if why else ''}</td></tr>"
        )
    out.append("</tbody></table>")
    return out


def coverage_page(policy: str, result: ExploreResult, verdict: ExploreVerdict) -> str:
    """The whole page (see the module docstring)."""
    systematic = [r for r in result.reports if r.engine == "systematic"]
    plans = systematic[-1].plans if systematic else ()
    coverage = result.coverage()
    body = [
        f"<h1>Policy {text(policy)}: {text(verdict.outcome.value)}</h1>",
        '<dl class="header">',
        f'<dt>Bound</dt><dd id="bound">{text(verdict.bound)}</dd>',
        f"<dt>Runs</dt><dd>{verdict.runs:,} runs, {verdict.writes:,} writes committed, "
        f"{verdict.faults:,} faults injected</dd>",
        "<dt>Engines</dt><dd>"
        + text(", ".join(f"{r.engine} ({r.runs:,} runs)" for r in result.reports))
        + "</dd>",
        "<dt>Not exercised</dt><dd><ul>"
        + ("".join(f"<li>{text(u)}</li>" for u in verdict.unexercised) or "<li>none</li>")
        + "</ul></dd>",
        "</dl>",
        "<h2>Plan sets (systematic search)</h2>",
    ]
    if plans:
        body += [*_plans_table(plans, verdict.asked), states_chart(plans)]
    else:
        body.append("<p>The systematic engine did not run: no bound per plan set.</p>")
    body += [
        "<h2>Faults injected, all engines</h2>",
        f"<p>{_faults(coverage.get('deviations', {}))}</p>",
        "<h2>Invariants evaluated (states checked at)</h2>",
        '<table class="steps invariants"><tbody>',
        *(
            f'<tr data-invariant="{text(n)}"><td>{text(n)}</td><td>{c:,}</td></tr>'
            for n, c in coverage.get("invariants", {}).items()
        ),
        *(
            f'<tr class="fails" data-invariant="{text(n)}"><td>{text(n)}</td>'
            f"<td>not evaluated: {text(why)}</td></tr>"
            for n, why in verdict.inapplicable
        ),
        "</tbody></table>",
    ]
    return html_document(f"txcheck coverage: policy {policy}", body)
