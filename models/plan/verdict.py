"""The verdict on a whole plan: every violation at every level that ran."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

__all__ = ["LEVELS", "Level", "Verdict", "Violation"]

Level = Literal["json", "schema", "business", "plan"]
LEVELS: tuple[Level, ...] = ("json", "schema", "business", "plan")


@attrs.frozen(kw_only=True)
class Violation:
    """One problem with a plan. ``code`` is stable; ``message`` is for people."""

    code: str
    level: Level | Literal["scorer"]
    call: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "level": self.level, "call": self.call, "message": self.message}


@attrs.frozen(kw_only=True)
class Verdict:
    """``valid`` is true when no level that ran found a violation.

    ``plan`` summarises the plan graph: the call order it implies and the groups of calls
    that may run in parallel.
    """

    violations: tuple[Violation, ...]
    levels_checked: tuple[Level, ...]
    levels_skipped: Mapping[str, str] = attrs.field(factory=dict)
    plan: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    @property
    def valid(self) -> bool:
        return not self.violations

    def codes(self) -> list[str]:
        return [v.code for v in self.violations]

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "violations": [v.to_json() for v in self.violations],
            "plan": dict(self.plan),
            "levels_checked": list(self.levels_checked),
            "levels_skipped": dict(self.levels_skipped),
        }
