"""Shared by the benchmark scripts: run one engine on a target within given bounds."""

from __future__ import annotations

import attrs

from txcheck.exploration.kernel.context import Engine, SearchContext
from txcheck.exploration.kernel.report import EngineReport
from txcheck.exploration.kernel.target import Bounds, Budget, Deadline, Target

__all__ = ["bounded", "run_engine"]


def bounded(
    target: Target,
    *,
    max_faults: int = 2,
    max_examples: int = 10**6,
    seconds: float | None = None,
    seed: int | None = 0,
    max_states: int = 200_000,
    max_shrinks: int | None = 500,
) -> Target:
    """``target`` with these bounds and this budget (no example database)."""
    return attrs.evolve(
        target,
        bounds=Bounds(max_faults=max_faults, max_states=max_states),
        budget=Budget(
            max_examples=max_examples,
            time_budget=seconds,
            seed=seed,
            max_shrinks=max_shrinks,
            database=None,
        ),
    )


def run_engine(engine: Engine, target: Target, **limits: object) -> EngineReport:
    """``engine`` on ``bounded(target, **limits)``, stopped by its time budget."""
    chosen = bounded(target, **limits)  # type: ignore[arg-type]
    return engine.explore(chosen, SearchContext(deadline=Deadline(chosen.budget.time_budget)))
