"""The guarded policy's durable journal, and how a restarted instance reads it back.

Entries are plain JSON objects appended through ``JournalAppend``. Phases follow the
production chain: PROPOSED -> VALIDATED -> EXECUTING -> RECONCILED, or REJECTED, or MANUAL; a second
submission of the same operation ends ATTACHED to the instance that owns it. Per call the
journal records each attempt *before* it is sent (so the attempt count survives crashes),
then the call's result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from txcheck.models.sim.choices import Vocabulary

__all__ = ["TERMINAL_PHASES", "JournalState", "Phase"]


class Phase(Vocabulary):
    """The phases a journal entry's ``"phase"`` names, which the invariants read
    (``MANUAL``, ``TERMINAL_PHASES``). Members equal their strings (``"MANUAL"``), so a
    journal written with plain strings reads the same; a member written into an entry is
    stored and traced as its string."""

    PROPOSED = "PROPOSED"
    VALIDATED = "VALIDATED"
    EXECUTING = "EXECUTING"
    COMPENSATING = "COMPENSATING"
    RECONCILED = "RECONCILED"
    REJECTED = "REJECTED"
    MANUAL = "MANUAL"
    """Handed to a person, with the diverging records listed (``"diverging"``)."""
    ATTACHED = "ATTACHED"
    """A second submission of an operation another instance already owns."""


TERMINAL_PHASES: frozenset[Phase] = frozenset(
    {Phase.RECONCILED, Phase.REJECTED, Phase.MANUAL, Phase.ATTACHED}
)
"""Where a journal may end; ``"MANUAL" in TERMINAL_PHASES`` holds for plain strings too."""

_PHASES: dict[str, str] = {p.value: p for p in Phase}


@attrs.define
class JournalState:
    """A journal folded into what the orchestrator needs to resume. ``phase`` is the last
    phase written: a ``Phase`` member when it is one of them, else the string as written
    (a policy's own phase)."""

    phase: str | None = None
    order: list[str] = attrs.field(factory=list)
    attempts: dict[str, int] = attrs.field(factory=dict)
    receipts: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    completed: list[str] = attrs.field(factory=list)
    failed: dict[str, str] = attrs.field(factory=dict)
    unresolved: set[str] = attrs.field(factory=set)
    compensated: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    @classmethod
    def fold(cls, entries: Iterable[Mapping[str, Any]]) -> JournalState:
        state = cls()
        for entry in entries:
            state.apply(entry)
        return state

    def apply(self, entry: Mapping[str, Any]) -> None:
        if "phase" in entry:
            phase = str(entry["phase"])
            self.phase = _PHASES.get(phase, phase)
            if "order" in entry:
                self.order = [str(c) for c in entry["order"]]
            return
        call = str(entry["call"])
        event = entry["event"]
        if event == "attempt":
            self.attempts[call] = self.attempts.get(call, 0) + 1
            self.unresolved.add(call)
        elif event == "done":
            self.receipts[call] = dict(entry.get("receipt") or {})
            if call not in self.completed:
                self.completed.append(call)
            self.unresolved.discard(call)
        elif event == "failed":
            self.failed[call] = str(entry.get("code", ""))
            self.unresolved.discard(call)
        elif event == "unknown":
            self.unresolved.add(call)
        elif event == "not_committed":
            self.unresolved.discard(call)
        elif event == "compensated":
            self.compensated[call] = dict(entry.get("receipt") or {})

    @property
    def terminal(self) -> bool:
        return self.phase in TERMINAL_PHASES
