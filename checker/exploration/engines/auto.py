"""``explore``: every exploration engine behind one call, one target and one result.

``auto`` replays the seeds it is given first (regression seeds: plans and deviations, as
data; ``txcheck.exploration.search`` passes the scenario catalog's), then runs each engine
in ``AUTO_ORDER``, sharing the time budget, and stops at the first counterexample. An
engine is one line in ``ENGINES``.

With workers in the search context (``txcheck.exploration.kernel.context``), each engine
that ``spreads`` spreads its work over them; the others (and the seeds) run in this
process, and their reports say so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import attrs

from txcheck.exploration.engines.shrink import search_below
from txcheck.exploration.kernel.context import Engine, SearchContext
from txcheck.exploration.kernel.report import (
    Counterexample,
    EngineReport,
    ExploreResult,
)
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.readiness import check_ready
from txcheck.exploration.spread.shipping import describe
from txcheck.models.errors import InputError
from txcheck.models.plan.proposal import Plan

__all__ = [
    "AUTO_ORDER",
    "ENGINES",
    "Seed",
    "explore",
    "run_seeds",
]


def _systematic() -> Engine:
    from txcheck.exploration.engines.systematic import SystematicEngine  # noqa: PLC0415

    return SystematicEngine()


def _hypothesis() -> Engine:
    from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine  # noqa: PLC0415

    return HypothesisEngine()


def _random() -> Engine:
    from txcheck.exploration.engines.random_walk import RandomEngine  # noqa: PLC0415

    return RandomEngine()


ENGINES: dict[str, Callable[[], Engine]] = {
    "systematic": _systematic,
    "hypothesis": _hypothesis,
    "random": _random,
}
"""Engine name -> factory; add an engine with one line here. Each factory imports its
engine: a search imports only the engines it runs (Hypothesis, with its strategies and
hypothesis-jsonschema, costs about 0.2 s of CPU to import)."""

AUTO_ORDER: tuple[str, ...] = ("systematic", "random", "hypothesis")
"""The order ``auto`` runs the engines in: exhaustive first, then cheap deep walks, then
generated plans and schedules with Hypothesis's shrinking."""

Seed = tuple[tuple[Plan, ...], Sequence[Deviation]]
"""A regression seed: the plans of one run and the deviations its schedule takes."""


def run_seeds(target: Target, seeds: Sequence[Seed], context: SearchContext) -> EngineReport:
    """Replay every seed whose tools the contract has, on the target policy."""
    started = time.monotonic()
    counters = context.tally
    found = None
    for plans, deviations in seeds:
        if context.stop:
            break
        if any(target.contract.tool(c.name) is None for p in plans for c in p.calls):
            continue
        session = Session(target, plans)
        session.drive(Deviations(deviations))
        execution = session.finish()
        counters.runs += 1
        counters.session(session)
        for step in execution.steps:
            if step.kind is not None:
                counters.deviation(step.kind)
        if not execution.ok:
            found = Counterexample(found_by="seeds", plans=tuple(plans), execution=execution)
            break
    return EngineReport.tallied("seeds", counters, started=started, counterexample=found)


def _shorten(
    target: Target, context: SearchContext, found: Counterexample
) -> tuple[EngineReport | None, Counterexample]:
    """A scenario seed's run is hand-written, not minimal: search its plans exhaustively
    below its deviation count, briefly; the report and the (perhaps shorter) bug. When
    the seed shows only hygiene (a retry under a fresh key), the search also takes one
    deviation more, where the harm it leads to lives (a lost response before that
    retry: the double charge), and reports the harm if it finds it. A policy error is
    kept as it is."""
    if found.execution.error is not None:
        return None, found
    briefly = context.within(context.tuning.shorten_seconds).alone()
    below = found.deviations + (0 if found.execution.harmful else 2)
    report = search_below(target, found.plans, below, briefly)
    if report is None or report.counterexample is None:
        return report, found
    return report, found.shortened("systematic", report.counterexample.execution)


def _run(chosen: Engine, target: Target, context: SearchContext) -> EngineReport:
    """``chosen``'s search, over the context's workers when it can spread, else in this
    process (and its report says so)."""
    if context.workers is None or chosen.spreads:
        return chosen.explore(target, context)
    report = chosen.explore(target, context.alone())
    note = f"{report.engine} ran in-process (it does not spread over workers)"
    return attrs.evolve(report, notes=(*report.notes, note))


def explore(
    target: Target, context: SearchContext, *, engine: str = "auto", seeds: Sequence[Seed] = ()
) -> ExploreResult:
    """Search ``target`` for a counterexample within the context's deadline: with
    ``engine="auto"``, ``seeds`` first; the engines that can spread their work over the
    context's workers do."""
    if engine != "auto" and engine not in ENGINES:
        known = ", ".join(["auto", *ENGINES])
        raise InputError(f"'--engine' must be one of {known} (got {engine!r})", source="--engine")
    check_ready(target)
    if context.workers is not None:
        describe(target)  # what cannot be sent to workers is refused before any search
    reports: list[EngineReport] = []
    if engine == "auto" and seeds:
        report = run_seeds(target, seeds, context.for_engine("seeds").alone())
        reports.append(report)
        if report.counterexample is not None:
            shorter, found = _shorten(target, context, report.counterexample)
            if shorter is not None:
                reports.append(shorter)
            return ExploreResult(reports=tuple(reports), counterexample=found)
    names = list(AUTO_ORDER) if engine == "auto" else [engine]
    for index, name in enumerate(names):
        if context.stop:
            break
        chosen = ENGINES[name]()
        report = _run(chosen, target, context.for_engine(name, share=len(names) - index))
        reports.append(report)
        if report.counterexample is not None:
            return ExploreResult(reports=tuple(reports), counterexample=report.counterexample)
    return ExploreResult(reports=tuple(reports))
