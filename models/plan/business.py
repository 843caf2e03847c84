"""The extension point for level ``business``: rules that need a world's state.

Validation calls a ``BusinessCheck`` only when one is given (the CLI builds one from
``--world FILE``). It receives the plan's calls that passed levels ``json`` and ``schema``,
in execution order, and projects the world's state through the earlier calls itself, so a
rule can ask "does the order exist *by then*". It yields ``Violation``s with level
``business``; it must not raise for a bad plan, only for bugs. A check may also have
``not_applicable(contract, calls) -> str | None``: why it has nothing to judge those calls
by (no rule would read anything); the level is then reported as skipped, with that reason,
never as checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.verdict import Violation

__all__ = ["NO_WORLD", "BusinessCheck"]

NO_WORLD = "no world fixture given (--world FILE)"
"""Why the business level is skipped when no ``BusinessCheck`` is given."""


@runtime_checkable
class BusinessCheck(Protocol):
    """Checks business rules over a plan's well-formed calls, in execution order."""

    def check(self, contract: Contract, calls: Sequence[Call]) -> Iterable[Violation]:
        """Every business violation of ``calls``; an empty iterable when they all pass."""
        ...
