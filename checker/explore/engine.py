"""What every exploration engine shares: the target, the budget and the report.

Engines (Hypothesis, systematic, random walks) differ in how they pick choices; they all
run through ``txcheck.explore.session``, check the same invariants and return the same
report, so ``txcheck explore`` can put them behind one command and one trace format.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from txcheck.explore.session import Execution
from txcheck.models.contract import Contract
from txcheck.models.fixture import WorldFixture
from txcheck.models.policies.base import Policy
from txcheck.models.proposal import Plan
from txcheck.models.runner import Check

__all__ = ["Budget", "Counterexample", "Engine", "EngineReport", "Target"]


@attrs.frozen(kw_only=True)
class Target:
    """What to check: a policy (and its stable name), a contract, a world and invariants.

    ``plans`` are given plans (``--plan``, representative plans, scenario seeds); an
    engine that generates plans itself may ignore them.
    """

    policy_name: str
    policy: Policy = attrs.field(eq=False)
    contract: Contract = attrs.field(eq=False)
    fixture: WorldFixture = attrs.field(eq=False)
    invariants: tuple[Check, ...] = attrs.field(eq=False)
    plans: tuple[tuple[Plan, ...], ...] = attrs.field(default=(), eq=False)


@attrs.define
class Budget:
    """Bounds shared by every engine: examples, deviations (faults), wall time, states.

    ``deadline`` is a ``time.monotonic()`` instant; it bounds the search only and never
    appears in results.
    """

    max_examples: int = 1000
    max_faults: int = 2
    time_budget: float | None = None
    max_states: int = 200_000
    seed: int = 0
    deadline: float | None = None

    def start(self) -> Budget:
        if self.time_budget is not None and self.deadline is None:
            self.deadline = time.monotonic() + self.time_budget
        return self

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


@attrs.frozen(kw_only=True)
class Counterexample:
    """A failing execution, the plans it ran and how many deviations it took."""

    engine: str
    plans: tuple[Plan, ...] = attrs.field(eq=False)
    execution: Execution = attrs.field(eq=False)
    deviations: int

    @property
    def invariant(self) -> str:
        failures = self.execution.failures
        if failures:
            return failures[0].name
        return "policy_error" if self.execution.error else "divergence"


@attrs.frozen(kw_only=True)
class EngineReport:
    """What an engine covered and what it found.

    ``exhaustive_bound`` is the largest deviation bound for which every run was explored
    (systematic engine only); ``coverage`` counts fault kinds injected and invariants
    evaluated; ``seconds`` is wall time for humans and is kept out of JSON results that
    must be reproducible.
    """

    engine: str
    runs: int
    steps: int
    counterexample: Counterexample | None = None
    states: int | None = None
    exhaustive_bound: int | None = None
    complete: bool = False
    coverage: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    seconds: float = 0.0
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "runs": self.runs,
            "steps": self.steps,
            "states": self.states,
            "exhaustive_bound": self.exhaustive_bound,
            "complete": self.complete,
            "coverage": {k: dict(sorted(v.items())) for k, v in sorted(self.coverage.items())},
            "found": None
            if self.counterexample is None
            else {
                "invariant": self.counterexample.invariant,
                "deviations": self.counterexample.deviations,
                "steps": len(self.counterexample.execution.steps),
            },
            "notes": list(self.notes),
        }


class Engine(Protocol):
    """An exploration engine: ``explore`` searches within ``budget`` and reports."""

    name: str

    def explore(self, target: Target, budget: Budget) -> EngineReport: ...
