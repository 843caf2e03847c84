"""From a run to the page: ``html_report`` re-takes the steps and renders the report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from txcheck.exploration.kernel.session import Execution
from txcheck.exploration.kernel.target import Target
from txcheck.report.page import Report, render_page
from txcheck.report.steps import step_views

__all__ = ["html_report"]


def html_report(
    execution: Execution,
    *,
    target: Target,
    document: Mapping[str, Any],
    replay: str,
    details: Mapping[str, str] | None = None,
    sections: Sequence[str] = (),
) -> str:
    """The report page of ``execution`` (a run of ``target``), whose trace is
    ``document`` and which ``replay`` (a command line) re-runs; ``details``: header
    fields the trace does not record (``seed``, ``shortened_by``, ``bound``);
    ``sections``: more of the page (``txcheck.report.compare``)."""
    suite = target.suite
    report = Report(
        document=document,
        policy=target.policy_name,
        execution=execution,
        views=step_views(execution, target),
        replay=replay,
        safety=tuple(i.name for i in suite.safety),
        liveness=tuple(i.name for i in suite.liveness),
        details=dict(details or {}),
        sections=tuple(sections),
    )
    return render_page(report)
