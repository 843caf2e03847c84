"""``explore``: put every exploration engine behind one call, one budget and one result.

``auto`` replays the scenario seeds first (regression seeds; ``seeds=False`` turns them
off), then runs each available engine in ``AUTO_ORDER``, sharing the time budget, and
stops at the first counterexample. An engine is one line in ``ENGINES``: a factory from
the options to an object with the ``txcheck.explore.engine.Engine`` protocol.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

import attrs

from txcheck.explore.engine import Budget, Counterexample, Engine, EngineReport, Target
from txcheck.explore.faults import kind_of
from txcheck.explore.hypothesis_engine import HypothesisEngine, HypothesisOptions
from txcheck.explore.schedule import Deviations
from txcheck.explore.session import Execution, execute
from txcheck.models.errors import InputError
from txcheck.models.runner import Run
from txcheck.scenarios.catalog import scenario_seeds

__all__ = [
    "AUTO_ORDER",
    "ENGINES",
    "ExploreResult",
    "available_engines",
    "explore",
    "run_seeds",
]


def _load(path: str) -> Callable[[], Engine]:
    """The engine class at ``module:Name`` (engines import lazily: each is optional)."""
    module, _, name = path.partition(":")
    factory: Callable[[], Engine] = getattr(importlib.import_module(module), name)
    return factory


ENGINES: dict[str, Callable[[HypothesisOptions], Engine]] = {
    "systematic": lambda options: _load("txcheck.explore.systematic:SystematicEngine")(),
    "hypothesis": HypothesisEngine,
    "random": lambda options: _load("txcheck.explore.random_walk:RandomEngine")(),
}
"""Engine name -> factory; add an engine with one line here."""

AUTO_ORDER: tuple[str, ...] = ("systematic", "hypothesis", "random")
"""The order ``auto`` runs the engines in: exhaustive first, then generated, then deep."""


def available_engines() -> list[str]:
    """The engines that can be built here (a missing optional module is skipped)."""
    names = []
    for name, factory in ENGINES.items():
        try:
            factory(HypothesisOptions())
        except ImportError:
            continue
        names.append(name)
    return names


@attrs.frozen(kw_only=True)
class ExploreResult:
    """Every engine's report, in order, and the counterexample that stopped the search."""

    reports: tuple[EngineReport, ...]
    counterexample: Counterexample | None = None

    @property
    def found(self) -> bool:
        return self.counterexample is not None

    def coverage(self) -> dict[str, dict[str, int]]:
        """Coverage summed over the engines."""
        total: dict[str, dict[str, int]] = {}
        for report in self.reports:
            for section, counts in report.coverage.items():
                merged = total.setdefault(section, {})
                for key, count in counts.items():
                    merged[key] = merged.get(key, 0) + count
        return {s: dict(sorted(c.items())) for s, c in sorted(total.items())}


def run_seeds(target: Target, budget: Budget) -> EngineReport:
    """Replay every scenario seed whose tools the contract has, on the target policy."""
    started = time.monotonic()
    runs = steps = 0
    faults: dict[str, int] = {}
    found = None
    for plans, deviations in scenario_seeds():
        if budget.expired():
            break
        if any(target.contract.tool(c.name) is None for p in plans for c in p.calls):
            continue
        execution = execute(
            policy=target.policy,
            contract=target.contract,
            plans=plans,
            fixture=target.fixture,
            invariants=target.invariants,
            chooser=Deviations(deviations),
        )
        runs += 1
        steps += len(execution.steps)
        for kind in _kinds(execution):
            faults[kind] = faults.get(kind, 0) + 1
        if not execution.ok:
            found = Counterexample(
                engine="seeds",
                plans=tuple(plans),
                execution=execution,
                deviations=execution.deviations,
            )
            break
    return EngineReport(
        engine="seeds",
        runs=runs,
        steps=steps,
        counterexample=found,
        coverage={"faults": dict(sorted(faults.items()))},
        seconds=time.monotonic() - started,
    )


SHORTEN_SECONDS = 10.0
"""How long ``auto`` may search for a shorter counterexample than a seed's."""


def _shorten(target: Target, budget: Budget, found: Counterexample) -> EngineReport | None:
    """A scenario seed's run is hand-written, not minimal: search its plans exhaustively
    below its deviation count, briefly, and return the report if that finds a shorter
    counterexample (any invariant; the systematic engine returns the fewest deviations)."""
    if found.deviations == 0:
        return None
    try:
        engine = ENGINES["systematic"](HypothesisOptions())
    except ImportError:
        return None
    left = SHORTEN_SECONDS
    if budget.deadline is not None:
        left = min(left, max(0.0, budget.deadline - time.monotonic()))
    narrow = Budget(
        max_examples=budget.max_examples,
        max_faults=found.deviations - 1,
        max_states=budget.max_states,
        seed=budget.seed,
        deadline=time.monotonic() + left,
    )
    report = engine.explore(attrs.evolve(target, plans=(found.plans,)), narrow)
    return report if report.counterexample is not None else None


def _kinds(execution: Execution) -> list[str]:
    """The fault kind of each deviation, re-deriving the options at each step."""
    old = execution.run
    run = Run(
        policy=old.policy,
        contract=old.contract,
        plans=old.plans,
        fixture=old.world.fixture,
        max_steps=old.max_steps,
    )
    kinds = []
    for step in execution.steps:
        if step.deviation:
            kind = kind_of(step.choice, run.choices())
            if kind is not None:
                kinds.append(kind)
        run.apply(step.choice, deviation=step.deviation)
    return kinds


def _share(budget: Budget, engines_left: int) -> Budget:
    """This engine's part of the budget: an equal share of the time that is left."""
    deadline = budget.deadline
    if deadline is not None:
        left = max(0.0, deadline - time.monotonic())
        deadline = time.monotonic() + left / max(1, engines_left)
    return Budget(
        max_examples=budget.max_examples,
        max_faults=budget.max_faults,
        time_budget=budget.time_budget,
        max_states=budget.max_states,
        seed=budget.seed,
        deadline=deadline,
    )


def explore(
    target: Target,
    budget: Budget,
    *,
    engine: str = "auto",
    seeds: bool = True,
    options: HypothesisOptions | None = None,
    on_engine: Callable[[str], None] | None = None,
) -> ExploreResult:
    """Search ``target`` for a counterexample within ``budget``."""
    options = options or HypothesisOptions()
    if engine != "auto" and engine not in ENGINES:
        known = ", ".join(["auto", *ENGINES])
        raise InputError(f"'--engine' must be one of {known} (got {engine!r})", source="--engine")
    budget.start()
    reports: list[EngineReport] = []
    if engine == "auto" and seeds:
        if on_engine is not None:
            on_engine("seeds")
        report = run_seeds(target, budget)
        reports.append(report)
        if report.counterexample is not None:
            shorter = _shorten(target, budget, report.counterexample)
            if shorter is not None:
                reports.append(shorter)
                found = shorter.counterexample
            else:
                found = report.counterexample
            return ExploreResult(reports=tuple(reports), counterexample=found)
    names = list(AUTO_ORDER) if engine == "auto" else [engine]
    built: list[Engine] = []
    for name in names:
        try:
            built.append(ENGINES[name](options))
        except ImportError:
            if engine != "auto":
                raise InputError(
                    f"engine {name!r} is not available in this installation", source="--engine"
                ) from None
    for index, chosen in enumerate(built):
        if budget.expired():
            break
        if on_engine is not None:
            on_engine(chosen.name)
        report = chosen.explore(target, _share(budget, len(built) - index))
        reports.append(report)
        if report.counterexample is not None:
            return ExploreResult(reports=tuple(reports), counterexample=report.counterexample)
    return ExploreResult(reports=tuple(reports))
