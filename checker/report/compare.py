"""The comparison section: the recorded run beside the same trace under another policy.

``txcheck report TRACE --policy OTHER`` replays the trace under OTHER as ``replay
--policy OTHER`` does: the recorded choices, and where OTHER cannot follow them, the
recorded faults placed at the matching points of its own run. The section shows both
runs side by side, step by step, marks the first step where they part (a different
actor, action, outcome, request or answer; or one run ending first) and every step after
it, says what OTHER's run violates, and draws OTHER's run as a second sequence diagram
(its rows ``#cmp-d-N`` link to the comparison table's ``#cmp-N``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from txcheck.exploration.kernel.session import Execution
from txcheck.models.sim.runner import Step
from txcheck.report.diagram import sequence_svg
from txcheck.report.markup import compact, text

__all__ = ["comparison_section", "parting_step"]


def _key(step: Step) -> str:
    data: dict[str, Any] = step.to_json()
    data.pop("i", None)
    return json.dumps(data, sort_keys=True, default=str)


def parting_step(recorded: Sequence[Step], other: Sequence[Step]) -> int | None:
    """The first step index where the two runs differ, or None when they are the same."""
    for index, (a, b) in enumerate(zip(recorded, other, strict=False)):
        if _key(a) != _key(b):
            return index
    if len(recorded) != len(other):
        return min(len(recorded), len(other))
    return None


def _cell(step: Step | None) -> str:
    if step is None:
        return '<td class="json"></td>'
    request = dict(step.request)
    request.pop("arguments", None)
    words = f"{step.choice.actor} {step.choice.action} {step.choice.outcome}"
    answer = compact(dict(step.observed), 80) if step.observed else ""
    return (
        f'<td class="json">{text(words)}{"*" if step.deviation else ""} '
        f"{compact(request, 80) if request else ''} &#8594; {answer}</td>"
    )


def _verdict(execution: Execution) -> str:
    if execution.failures:
        names = ", ".join(f.name for f in execution.by_harm)
        return f'<span class="violation">violates {text(names)}</span>'
    if execution.error:
        return f'<span class="violation">raised an error: {text(execution.error, 200)}</span>'
    if execution.divergence is not None:
        return f"cannot follow the recorded run: {text(execution.divergence.message())}"
    return "no invariant failed"


def comparison_section(
    recorded: Execution,
    other: Execution,
    *,
    policy: str,
    recorded_policy: str,
    faults: tuple[int, int] | None = None,
) -> list[str]:
    """The section's markup. ``faults`` (placed, recorded): OTHER's run is the recorded
    faults placed in its own run, not the recorded choices."""
    parted = parting_step(recorded.steps, other.steps)
    how = (
        "the recorded choices"
        if faults is None
        else f"the recorded faults ({faults[0]} of {faults[1]} placed in its own run)"
    )
    where = (
        "The runs are the same step for step."
        if parted is None
        else f'The runs part at <a href="#cmp-{parted}">step {parted}</a>.'
    )
    out = [
        f'<h2 id="comparison">Comparison: policy {text(policy)}</h2>',
        f"<p>The same trace under policy {text(policy)}, replaying {how}: {_verdict(other)}. "
        f"{where}</p>",
        '<table class="steps comparison"><thead><tr><th>#</th>'
        f"<th>{text(recorded_policy)} (recorded)</th><th>{text(policy)}</th></tr></thead>"
        "<tbody>",
    ]
    for index in range(max(len(recorded.steps), len(other.steps))):
        left = recorded.steps[index] if index < len(recorded.steps) else None
        right = other.steps[index] if index < len(other.steps) else None
        classes = []
        if parted is not None and index >= parted:
            classes.append("parted")
        if index == parted:
            classes.append("part")
        out.append(
            f'<tr id="cmp-{index}" class="{" ".join(["step", *classes])}">'
            f'<td><a href="#cmp-d-{index}">{index}</a></td>{_cell(left)}{_cell(right)}</tr>'
        )
    out.append(
        '<tr id="cmp-end" class="step"><td>end</td><td colspan="2">the end of both runs'
        "</td></tr></tbody></table>"
    )
    failing = sorted({f.step for f in other.failures if f.step is not None})
    breaking = other.by_harm[0].step if other.failures else None
    out += [
        f"<h3>Sequence diagram under {text(policy)}</h3>",
        '<div class="figure">'
        + sequence_svg(
            other.steps,
            instances=other.run.instances,
            breaking=breaking,
            failing=failing,
            quiescence=any(f.step is None for f in other.failures),
            ids="cmp-d-",
            links="cmp-",
        )
        + "</div>",
    ]
    return out
