"""What an exploration proved: a counterexample, a pass, or nothing conclusive.

A pass is earned: a search that executed no run, committed no write in any run, or never
injected a fault it was asked to inject exercised nothing worth passing, and says so
(``inconclusive``, exit 3, naming what was never exercised). The same holds plan set by
plan set: a systematic plan set of valid plans that committed nothing, or never saw a tool
fault in a search with deviations, is named, counts toward exit 3, and no bound is claimed
for it. The bound the systematic
search actually completed is part of the verdict ("exhaustive to 2 of 3 deviations"), and
with ``require_exhaustive`` an unreached bound is inconclusive too.
"""

from __future__ import annotations

from typing import Any

import attrs

from txcheck.exploration.kernel.report import ExploreResult, PlanBound
from txcheck.exploration.kernel.session import ErrorKind
from txcheck.exploration.kernel.target import Target
from txcheck.models.sim.choices import Vocabulary

__all__ = ["ErrorKind", "ExploreOutcome", "ExploreVerdict", "verdict_of"]


class ExploreOutcome(Vocabulary):
    """What a search earned (``ExploreVerdict.outcome``); the values are what JSON results
    carry and what the CLI prints."""

    COUNTEREXAMPLE = "counterexample"
    """An invariant failed (exit 1)."""
    PASS = "pass"
    """Exercised, and nothing failed (exit 0)."""
    INCONCLUSIVE = "inconclusive"
    """Nothing worth passing was exercised (exit 3); ``unexercised`` says why."""
    ERROR = "error"
    """User code raised (exit 2); ``error_kind`` says whose."""


def _explore_outcome(value: str) -> ExploreOutcome:
    """An outcome from a member or its string; another string is refused."""
    return ExploreOutcome.parse(value)


def _error_kind(value: str | None) -> ErrorKind | None:
    """An error kind from a member or its string, or None."""
    return None if value is None else ErrorKind.parse(value)


@attrs.frozen(kw_only=True)
class ExploreVerdict:
    """``outcome`` is an ``ExploreOutcome``: ``counterexample``, ``pass``,
    ``inconclusive`` or ``error`` (user code raised: the policy, a service or an invariant,
    the ``ErrorKind`` in ``error_kind`` says which; the trace shows where, and the command
    exits 2, not 1); ``unexercised`` says why a search is inconclusive; ``bound`` states the
    deviation bound proved. Plain strings are accepted for both and converted."""

    outcome: ExploreOutcome = attrs.field(converter=_explore_outcome)
    unexercised: tuple[str, ...]
    bound: str
    exhaustive_to: int | None
    asked: int
    complete: bool
    runs: int
    writes: int
    faults: int
    error_kind: ErrorKind | None = attrs.field(default=None, converter=_error_kind)
    inapplicable: tuple[tuple[str, str], ...] = ()
    """Invariants with nothing to read for this contract (never evaluated), and why."""

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "error_kind": None if self.error_kind is None else self.error_kind.value,
            "unexercised": list(self.unexercised),
            "bound": self.bound,
            "exhaustive_to": self.exhaustive_to,
            "deviations_asked": self.asked,
            "complete": self.complete,
            "runs": self.runs,
            "writes": self.writes,
            "faults": self.faults,
            "inapplicable": [{"invariant": n, "reason": r} for n, r in self.inapplicable],
        }


def _deviations(n: int) -> str:
    return f"{n} deviation{'s' * (n != 1)}"


def _bound(result: ExploreResult, asked: int) -> tuple[str, int | None, bool]:
    systematic = [r for r in result.reports if r.engine == "systematic"]
    if not systematic:
        return "no exhaustive search ran (the systematic engine did not run)", None, False
    report = systematic[-1]
    searched = report.bound if report.bound is not None else asked
    reached = report.exhaustive_bound
    if report.counterexample is not None:
        below = "no level" if reached is None else _deviations(reached)
        return f"exhaustive to {below} before the counterexample", reached, report.complete
    idle = [p for p in report.plans if p.unexercised() is not None]
    if report.complete and idle:
        count, done = len(report.plans), len(report.plans) - len(idle)
        names = ", ".join(repr(p.label) for p in idle)
        text = f"exhaustive to {_deviations(searched)} on {done} of {count} plan sets"
        return f"{text} (not exercised: {names})", reached, False
    if report.complete:
        count = len(report.plans)
        on = f" on all {count} plan sets" if count > 1 else ""
        return f"exhaustive to {_deviations(searched)}{on}", reached, True
    shown = "no level" if reached is None else str(reached)
    text = f"exhaustive to {shown} of {searched} deviations"
    full = [p for p in report.plans if p.reached == searched]
    if full:
        lower = ", ".join(
            f"{p.label} {'none' if p.reached is None else p.reached}{_directed(p)}"
            for p in report.plans
            if p.reached != searched
        )
        text += f" ({searched} on {len(full)} of {len(report.plans)} plan sets; lower: {lower})"
    else:
        directed = "".join(
            f"; {p.label} directed to {p.directed}" for p in report.plans if p.directed is not None
        )
        text += f" ({report.stopped or 'stopped early'}{directed})"
    return text, reached, False


def _directed(plan: PlanBound) -> str:
    """How deep a directed search went on a plan set (ADR 013, not a bound), said after
    the bound it reached."""
    return "" if plan.directed is None else f" (directed to {plan.directed})"


def _idle_plan_sets(result: ExploreResult) -> list[str]:
    """The plan sets the systematic search ran without exercising them (no bound is
    claimed for those), one line each."""
    systematic = [r for r in result.reports if r.engine == "systematic"]
    if not systematic:
        return []
    return [why for p in systematic[-1].plans if (why := p.unexercised()) is not None]


def verdict_of(
    result: ExploreResult,
    target: Target,
    *,
    require_exhaustive: bool = False,
    interrupted: bool = False,
) -> ExploreVerdict:
    """The verdict of ``result``, a search of ``target``."""
    asked = target.bounds.max_faults
    runs = sum(r.runs for r in result.reports)
    writes = sum(r.writes for r in result.reports)
    coverage = result.coverage()
    faults = sum(coverage.get("faults", {}).values())
    bound, reached, complete = _bound(result, asked)
    missing: list[str] = []
    if interrupted:
        missing.append("the search was interrupted")
    if runs == 0:
        missing.append("no run was executed")
    elif writes == 0:
        missing.append(
            "no write was committed in any run (every plan was rejected, refused or read-only)"
        )
    if runs and asked > 0 and faults == 0:
        missing.append(f"no fault was injected (up to {asked} per run were asked for)")
    missing += _idle_plan_sets(result)
    if require_exhaustive and not complete and result.counterexample is None:
        missing.append(f"--require-exhaustive: {bound}")
    found = result.counterexample
    error_kind = None
    if found is not None and found.execution.raised:
        outcome, error_kind = ExploreOutcome.ERROR, found.execution.error_kind or ErrorKind.POLICY
    elif found is not None:
        outcome = ExploreOutcome.COUNTEREXAMPLE
    elif missing:
        outcome = ExploreOutcome.INCONCLUSIVE
    else:
        outcome = ExploreOutcome.PASS
    return ExploreVerdict(
        outcome=outcome,
        unexercised=tuple(missing),
        bound=bound,
        exhaustive_to=reached,
        asked=asked,
        complete=complete,
        runs=runs,
        writes=writes,
        faults=faults,
        error_kind=error_kind,
        inapplicable=tuple((i.name, why) for i, why in target.suite.inapplicable),
    )
