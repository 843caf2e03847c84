"""Each step of a run with the world before and after it, from re-running the run.

A trace stores choices, not world snapshots: ``step_views`` applies the execution's
choices one by one to a fresh run of the same target and takes a snapshot after each, so
the diff shown for a step is what that step did in the code as it is now. The parts a
reader asks for on demand (the journal, the idempotency records, the outbox, the inbox)
are kept for a step only where that step changed them, so a long run stays small.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.exploration.kernel.session import Execution, Session
from txcheck.exploration.kernel.target import Target
from txcheck.models.sim.runner import Step
from txcheck.traces.json_diff import json_diff

__all__ = ["PARTS", "StepView", "step_views"]

PARTS: tuple[tuple[str, str], ...] = (
    ("journals", "journal"),
    ("idempotency", "idempotency records"),
    ("outbox", "outbox"),
    ("consumer", "inbox"),
)
"""The world's parts shown on demand per step: snapshot key, then the label."""


@attrs.frozen(kw_only=True)
class StepView:
    """One step as the report shows it."""

    step: Step
    diff: tuple[Mapping[str, Any], ...]
    """``json_diff`` of the world before and after the step (JSON Pointer paths)."""
    parts: tuple[tuple[str, Any], ...]
    """The parts of ``PARTS`` this step changed, by label, as they are after it (of an
    object, the entries that changed)."""
    failures: tuple[str, ...] = ()
    """The invariants that failed after this step."""


def step_views(execution: Execution, target: Target) -> tuple[StepView, ...]:
    """Every step of ``execution`` re-taken in a fresh run of ``target``, with its diff.
    Never for a run that ended in a user-code error (it would raise or hang again): its
    steps come without diffs."""
    failed: dict[int, list[str]] = {}
    for failure in execution.failures:
        if failure.step is not None:
            failed.setdefault(failure.step, []).append(failure.name)
    steps: Sequence[Step] = execution.steps
    if execution.error is not None:
        return tuple(
            StepView(step=s, diff=(), parts=(), failures=tuple(failed.get(s.index, ())))
            for s in steps
        )
    session = Session(target, execution.plans)
    before = session.run.world.snapshot()
    before_text = _texts(before)
    views = []
    for step in steps:
        session.retake(step.choice, kind=step.kind, deviation=step.deviation)
        after = session.run.world.snapshot()
        after_text = _texts(after)
        views.append(
            StepView(
                step=step,
                diff=tuple(_diff(before, after, before_text, after_text)),
                parts=_changed_parts(before, after),
                failures=tuple(failed.get(step.index, ())),
            )
        )
        before, before_text = after, after_text
    return tuple(views)


def _texts(snapshot: Mapping[str, Any]) -> dict[str, str]:
    """Each top-level part as JSON text: equal text is an equal part (``==`` would take
    ``True`` for ``1``, which JSON and ``json_diff`` do not)."""
    return {key: json.dumps(value, default=str) for key, value in snapshot.items()}


def _diff(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    before_text: Mapping[str, str],
    after_text: Mapping[str, str],
) -> list[dict[str, Any]]:
    """``json_diff(before, after)``, walking only the top-level parts whose JSON text
    changed (the same entries, in the same order: ``json_diff`` sorts keys as strings; a
    part only rebuilt in another key order is walked and gives nothing)."""
    changes: list[dict[str, Any]] = []
    for key in sorted(set(before) | set(after), key=str):
        if before_text.get(key) == after_text.get(key):
            continue
        sides = [{key: side[key]} if key in side else {} for side in (before, after)]
        changes += json_diff(sides[0], sides[1])
    return changes


_MISSING = object()


def _changed_parts(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[tuple[str, Any], ...]:
    """The parts of ``PARTS`` the step changed, as they are after it; of a part that is an
    object, only its entries that changed (one journal, one idempotency record), so a
    long run does not repeat every journal at every step."""
    parts = []
    for key, label in PARTS:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            new = {k: v for k, v in sorted(new.items()) if old.get(k, _MISSING) != v}
        parts.append((label, new))
    return tuple(parts)
