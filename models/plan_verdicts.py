"""Whole-plan verdicts, computed once per (contract, plan).

Engines build thousands of runs of one plan, and each run (and ``guarded`` in it) asks
whether the plan is valid. Contracts and plans are immutable values, so the verdict is
memoised by their identity; each entry keeps both objects alive, so an id cannot be reused
while its entry exists.
"""

from __future__ import annotations

from txcheck.models.contract import Contract
from txcheck.models.proposal import Plan
from txcheck.models.validation import validate
from txcheck.models.verdict import Verdict

__all__ = ["plan_verdict", "violation_codes"]

_LIMIT = 1024
_VERDICTS: dict[tuple[int, int], tuple[Contract, Plan, Verdict, tuple[str, ...]]] = {}


def _entry(contract: Contract, plan: Plan) -> tuple[Contract, Plan, Verdict, tuple[str, ...]]:
    key = (id(contract), id(plan))
    entry = _VERDICTS.get(key)
    if entry is None or entry[0] is not contract or entry[1] is not plan:
        verdict = validate(contract, plan)
        if len(_VERDICTS) >= _LIMIT:
            _VERDICTS.clear()
        entry = _VERDICTS[key] = (contract, plan, verdict, tuple(sorted(set(verdict.codes()))))
    return entry


def plan_verdict(contract: Contract, plan: Plan) -> Verdict:
    """``validate(contract, plan)`` (without a business check), computed once. Treat the
    result as read-only: it is shared."""
    return _entry(contract, plan)[2]


def violation_codes(contract: Contract, plan: Plan) -> tuple[str, ...]:
    """The plan's distinct violation codes, sorted (empty when it is valid)."""
    return _entry(contract, plan)[3]
