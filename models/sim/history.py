"""What the runner remembers about a run for properties that look at history.

The world holds durable state; this holds the monitor's record: every attempt of every
plan call with the key it used, and the faults the checker injected. Invariants read both.
``changed`` says whether it changed since the checker last cleared it, as ``World.changed``
does for the world's parts.
"""

from __future__ import annotations

import attrs

__all__ = ["Attempt", "History"]


@attrs.frozen(kw_only=True)
class Attempt:
    """One tool request an orchestrator sent for a plan call or a compensation."""

    step: int
    instance: str
    call_id: str
    tool: str
    key: str | None
    compensates: str | None


@attrs.define
class History:
    """Attempts in send order, plus counts of injected faults by kind."""

    attempts: list[Attempt] = attrs.field(factory=list)
    faults: dict[str, int] = attrs.field(factory=dict)
    changed: bool = True

    def fork(self) -> History:
        """An independent copy (attempts are frozen values, so they are shared)."""
        return History(attempts=list(self.attempts), faults=dict(self.faults), changed=self.changed)

    def record_attempt(self, attempt: Attempt) -> None:
        self.changed = True
        self.attempts.append(attempt)

    def record_fault(self, kind: str) -> None:
        self.changed = True
        self.faults[kind] = self.faults.get(kind, 0) + 1

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())

    def attempts_by_call(self) -> dict[tuple[str, str], list[Attempt]]:
        """Plan-call attempts (not compensations) grouped by (instance, call id)."""
        grouped: dict[tuple[str, str], list[Attempt]] = {}
        for attempt in self.attempts:
            if attempt.compensates is None:
                grouped.setdefault((attempt.instance, attempt.call_id), []).append(attempt)
        return grouped
