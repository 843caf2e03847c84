"""Deviations from the default schedule, described by what they do rather than by index.

A scenario says "the charge's response is lost after commit" or "the orchestrator crashes
right after the reservation commits", not "choice 17 at step 23". A ``Deviations``
chooser walks the run on the default schedule and takes each deviation, in order, at the
first point where it matches. The resulting trace records the flat choices, so replay
does not need this module.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from txcheck.models.sim.choices import Choice
from txcheck.models.sim.runner import Run

__all__ = ["Deviation", "Deviations"]


@attrs.frozen(kw_only=True)
class Deviation:
    """Take a non-default choice at the first point that matches every given field.

    ``actor``, ``action`` and ``outcome`` select the choice; ``tool``, ``call`` and
    ``kind`` match the request the actor is about to make; ``after_tool`` waits until a
    call of that tool has completed (been answered) at least once; ``nth`` skips earlier
    matches.
    """

    action: str
    outcome: str = "ok"
    actor: str | None = None
    tool: str | None = None
    call: str | None = None
    kind: str | None = None
    after_tool: str | None = None
    nth: int = 1

    def describe(self) -> str:
        parts = [f"{self.action} {self.outcome}" if self.outcome != "ok" else self.action]
        for name in ("actor", "tool", "call", "kind", "after_tool"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value}")
        return " ".join(parts)


class Deviations:
    """A chooser for ``txcheck.exploration.kernel.session``: the default, except where a deviation
    matches. ``unused`` lists the deviations that never found their point."""

    def __init__(self, deviations: Sequence[Deviation]) -> None:
        self._queue = list(deviations)
        self._completed: set[str] = set()
        self._matches = 0

    @property
    def unused(self) -> list[Deviation]:
        return list(self._queue)

    def __call__(self, run: Run, options: Sequence[Choice]) -> Choice:
        if run.steps and run.steps[-1].choice.action == "complete":
            self._completed.add(str(run.steps[-1].request.get("tool")))
        if not self._queue:
            return options[0]
        wanted = self._queue[0]
        for choice in options:
            if self._matches_choice(run, wanted, choice, options[0]):
                self._matches += 1
                if self._matches >= wanted.nth:
                    self._queue.pop(0)
                    self._matches = 0
                    return choice
                break
        return options[0]

    def _matches_choice(self, run: Run, wanted: Deviation, choice: Choice, default: Choice) -> bool:
        if wanted.action == "deliver":  # a reordering: any delivery but the oldest
            if choice.action != "deliver" or choice == default:
                return False
        elif choice.action != wanted.action or choice.outcome != wanted.outcome:
            return False
        if wanted.actor is not None and choice.actor != wanted.actor:
            return False
        if wanted.after_tool is not None and wanted.after_tool not in self._completed:
            return False
        current = run.current(choice.actor)
        if wanted.tool is not None and current.get("tool") != wanted.tool:
            return False
        if wanted.call is not None and current.get("call") != wanted.call:
            return False
        return wanted.kind is None or current.get("kind") == wanted.kind
