"""Whole-plan verdicts, computed once per (contract, plan).

Engines build thousands of runs of one plan, and each run (and ``guarded`` in it) asks
whether the plan is valid. Contracts and plans are immutable values, so the verdict is
memoised by their identity (``IdentityMemo``).
"""

from __future__ import annotations

from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.validation import validate
from txcheck.models.plan.verdict import Verdict

__all__ = ["plan_verdict", "violation_codes"]

_VERDICTS: IdentityMemo[tuple[Verdict, tuple[str, ...]]] = IdentityMemo()


def _entry(contract: Contract, plan: Plan) -> tuple[Verdict, tuple[str, ...]]:
    def compute() -> tuple[Verdict, tuple[str, ...]]:
        verdict = validate(contract, plan)
        return verdict, tuple(sorted(set(verdict.codes())))

    return _VERDICTS((contract, plan), compute)


def plan_verdict(contract: Contract, plan: Plan) -> Verdict:
    """``validate(contract, plan)`` (without a business check), computed once. Treat the
    result as read-only: it is shared."""
    return _entry(contract, plan)[0]


def violation_codes(contract: Contract, plan: Plan) -> tuple[str, ...]:
    """The plan's distinct violation codes, sorted (empty when it is valid)."""
    return _entry(contract, plan)[1]
