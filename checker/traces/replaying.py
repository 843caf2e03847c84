"""Replaying a trace: what it may import, and whether the replay is the recorded run.

A trace is data. Replaying it imports only what the user names: a policy the trace names
is loaded only when it is built in, or the user passes it with ``--policy`` (or
``--trust-trace``); the user's services and invariants it names, only when the user passes
the same ``--services``/``--invariants`` (or ``--trust-trace``).

Under the recorded policy, replay is a check that the trace *is* the run it records: every
recorded step (choice, request, what was observed, whether it deviated) must come back the
same, and the recorded violations must reproduce. The first difference is an error (exit
2), not a pass. Under another policy, the exact choices usually stop fitting at some step;
the recorded *faults* are then replayed at the matching points of that policy's own run,
and the report says how many of them found no place.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from txcheck.exploration.kernel.schedule import Deviations
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.models.canonical import canonical_json
from txcheck.models.errors import InputError
from txcheck.models.plan.proposal import Plan, plan_to_json
from txcheck.models.sim.policies import BUILTIN_POLICIES
from txcheck.traces.document import Trace, translate_deviations

__all__ = [
    "Translated",
    "check_trust",
    "first_difference",
    "replay",
    "replay_faults",
    "rerun_difference",
    "shared_plans",
]


def shared_plans(plans: Sequence[Plan]) -> tuple[Plan, ...]:
    """Identical plans as one object: a plan submitted twice is the same plan (invariants
    group instances by plan identity)."""
    seen: dict[str, Plan] = {}
    return tuple(seen.setdefault(canonical_json(plan_to_json(p)), p) for p in plans)


def check_trust(
    trace: Trace,
    *,
    policy: str | None,
    services: Sequence[str],
    invariants: Sequence[str],
    trust: bool,
    source: str,
) -> None:
    """Refuse (``InputError``) to import code the trace names that the user did not."""
    if trust:
        return
    if policy is None and trace.policy not in BUILTIN_POLICIES:
        raise InputError(
            f"the trace names policy {trace.policy!r}, which is not built in; a trace is data, "
            "so replay imports a policy only when you name it: pass --policy "
            f"{trace.policy} (or --trust-trace)",
            source=source,
        )
    for what, recorded, given in (
        ("services", trace.services, services),
        ("invariants", trace.invariants, invariants),
    ):
        missing = [spec for spec in recorded if spec not in given]
        if missing:
            option = " ".join(f"--{what} {spec}" for spec in missing)
            raise InputError(
                f"the trace was recorded with {what} {', '.join(missing)}; replay imports "
                f"them only when you pass the same: {option} (or --trust-trace)",
                source=source,
            )


def replay(trace: Trace, target: Target) -> Execution:
    """Re-execute the recorded choices, in order, under ``target`` (the recorded policy or
    another; ``first_difference`` says where the run stops being the recorded one). Plans
    recorded twice are one plan again, as they were in the run."""
    return execute(target, shared_plans(trace.plans), choices=trace.choices, settle=trace.settles)


@attrs.frozen(kw_only=True)
class Translated:
    """A replay of the trace's faults under another policy, and how many found no place."""

    execution: Execution
    faults: int
    unplaced: int


def replay_faults(trace: Trace, target: Target) -> Translated:
    """The trace's deviations (``translate_deviations``) at the matching points of
    ``target``'s policy's own run."""
    deviations = translate_deviations(trace.document)
    chooser = Deviations(deviations)
    execution = execute(target, shared_plans(trace.plans), chooser=chooser, settle=trace.settles)
    return Translated(execution=execution, faults=len(deviations), unplaced=len(chooser.unused))


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


_FIELDS = ("actor", "action", "outcome", "deviation", "request", "observed")
_MISSING = object()


def _first_change(where: str, old: Any, new: Any) -> tuple[str, Any, Any]:
    """The first place (a dotted path into the step) where two JSON values differ, and
    what each holds there, so a change deep in a long request is named, not cut off."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            a, b = old.get(key, _MISSING), new.get(key, _MISSING)
            if a != b:
                return _first_change(f"{where}.{key}", a, b)
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for position, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                return _first_change(f"{where}[{position}]", a, b)
    return where, old, new


def _shown(value: Any, limit: int = 120) -> str:
    """A value as JSON in at most ``limit`` characters (an ellipsis says it was cut)."""
    if value is _MISSING:
        return "nothing"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_difference(trace: Trace, execution: Execution) -> str | None:
    """Where the replay under the recorded policy stops being the recorded run: the first
    step whose choice is impossible or whose request, observation or deviation differs,
    a different length, or violations that do not reproduce; None when it is the same."""
    return _difference(
        list(trace.document.get("steps", [])),
        trace.violations,
        "error" in trace.document,
        execution,
    )


def rerun_difference(target: Target, execution: Execution) -> str | None:
    """Where running ``execution``'s choices again under ``target`` gives another run (a
    policy, service or invariant that is not a function of what it was told: its trace
    would not replay), or None. A counterexample is checked so before it is reported."""
    again = execute(
        target, shared_plans(execution.plans), choices=[s.choice for s in execution.steps]
    )
    return _difference(
        [s.to_json() for s in execution.steps],
        [f.to_json() for f in execution.failures],
        execution.error is not None,
        again,
    )


def _difference(
    recorded: list[Any],
    violations: Sequence[Any],
    error: bool,
    execution: Execution,
) -> str | None:
    if execution.divergence is not None:
        return execution.divergence.message()
    replayed = [s.to_json() for s in execution.steps]
    for index, (want, got) in enumerate(zip(recorded, replayed, strict=False)):
        for field in _FIELDS:
            old, new = _plain(want.get(field)), _plain(got.get(field))
            if old != new:
                where, old, new = _first_change(field, old, new)
                return (
                    f"step {index}: the trace records {where} {_shown(old)}, "
                    f"the replay gives {_shown(new)}"
                )
    if len(recorded) != len(replayed):
        return (
            f"the trace records {len(recorded)} steps, the replay takes {len(replayed)} "
            f"(from step {min(len(recorded), len(replayed))} on they differ)"
        )
    want_violations = [(v.get("invariant"), v.get("step")) for v in violations]
    got_violations = [(f.name, f.step) for f in execution.failures]
    if want_violations != got_violations:
        shown = ", ".join(f"{n} at step {s}" for n, s in got_violations) or "none"
        wanted = ", ".join(f"{n} at step {s}" for n, s in want_violations) or "none"
        return f"the recorded violations ({wanted}) do not reproduce (the replay finds: {shown})"
    if (execution.error is None) == error:
        return "the recorded policy error does not reproduce"
    return None
