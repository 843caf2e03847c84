"""What a plan set should exercise: whether its runs should commit writes.

A plan set of the systematic search is *exercised* when its runs did what its plans are
for: plans made to be valid (a workflow, its double click) commit writes; plans made to be
refused (a near-valid variant) are refused. The verdict claims a bound only for plan sets
that were exercised (``PlanBound.unexercised``). Plain validation, no Hypothesis: the
engine imports this.
"""

from __future__ import annotations

from collections.abc import Sequence

from txcheck.exploration.kernel.target import Target
from txcheck.models.errors import UserCodeError
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.validation import validate
from txcheck.models.sim.world_rules import WorldBusinessCheck

__all__ = ["expects_writes", "plan_problem"]


def plan_problem(target: Target, plans: Sequence[Plan], *, business: bool = True) -> str | None:
    """The first violation of ``plans`` at any level, the world's business rules included
    (run on the target's services; not with ``business=False``: after a service hung), or
    None when every plan is valid. A user's service that fails there failed the search's
    runs first, which report it: here it only means the rules could not judge."""
    check = WorldBusinessCheck(fixture=target.fixture, services=target.services)
    for plan in plans:
        try:
            verdict = validate(target.contract, plan, business=check if business else None)
        except UserCodeError as error:
            return f"the business level could not judge it ({error.kind} error)"
        if verdict.violations:
            first = verdict.violations[0]
            return f"{first.call}: {first.code}" if first.call else first.code
    return None


def expects_writes(
    target: Target,
    plans: Sequence[Plan],
    meant_valid: bool | None = None,
    *,
    business: bool = True,
) -> tuple[bool, str]:
    """Whether runs of ``plans`` should commit writes, and the first violation of the plans
    (empty: none). Plans made to be valid (``meant_valid``) should, whatever they turned out
    to be; plans made to be refused should not; given plans (None) should when each writes
    and is valid at every level. A near-valid plan, or one the world refuses, is exercised
    by being refused instead."""
    problem = plan_problem(target, plans, business=business) or ""
    if meant_valid is not None:
        return meant_valid, problem
    writes = all(
        any(t.has_side_effect for c in plan.calls if (t := target.contract.tool(c.name)))
        for plan in plans
    )
    return writes and not problem, problem
