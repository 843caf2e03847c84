"""``explore``: every exploration engine behind one call, one target and one result.

``auto`` replays the scenario seeds first (regression seeds; ``seeds=False`` turns them
off), then runs each engine in ``AUTO_ORDER``, sharing the time budget, and stops at the
first counterexample. An engine is one line in ``ENGINES``.

With ``workers`` (``txcheck.exploration.workers``), each engine whose ``explore`` takes a
``workers`` argument spreads its work over them; the others (and the scenario seeds) run
in this process, and their reports say so.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Protocol

import attrs

from txcheck.exploration.readiness import check_ready
from txcheck.exploration.report import Counterexample, Engine, EngineReport, Tally
from txcheck.exploration.schedule import Deviations
from txcheck.exploration.session import Session
from txcheck.exploration.shipping import describe
from txcheck.exploration.shrink import search_below
from txcheck.exploration.target import Deadline, Target
from txcheck.exploration.workers import Workers
from txcheck.models.errors import InputError

__all__ = [
    "AUTO_ORDER",
    "ENGINES",
    "SHORTEN_SECONDS",
    "ExploreResult",
    "Observer",
    "explore",
    "run_seeds",
]


def _systematic() -> Engine:
    from txcheck.exploration.systematic import SystematicEngine  # noqa: PLC0415 (start-up)

    return SystematicEngine()


def _hypothesis() -> Engine:
    from txcheck.exploration.hypothesis_engine import HypothesisEngine  # noqa: PLC0415

    return HypothesisEngine()


def _random() -> Engine:
    from txcheck.exploration.random_walk import RandomEngine  # noqa: PLC0415 (start-up)

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

SHORTEN_SECONDS = 10.0
"""How long ``auto`` may search for a shorter counterexample than a seed's."""

Observer = Callable[[str, Tally], None]
"""Told when each search starts: its name and the counters it fills as it goes."""


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


def run_seeds(target: Target, deadline: Deadline, tally: Tally | None = None) -> EngineReport:
    """Replay every scenario seed whose tools the contract has, on the target policy."""
    from txcheck.scenarios.catalog import scenario_seeds  # noqa: PLC0415 (start-up)

    started = time.monotonic()
    counters = tally if tally is not None else Tally()
    found = None
    for plans, deviations in scenario_seeds():
        if deadline.expired():
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
    return EngineReport(
        engine="seeds",
        runs=counters.runs,
        steps=counters.steps,
        counterexample=found,
        coverage=counters.coverage(),
        seconds=time.monotonic() - started,
        writes=counters.writes,
    )


def _shorten(
    target: Target, deadline: Deadline, found: Counterexample
) -> tuple[EngineReport | None, Counterexample]:
    """A scenario seed's run is hand-written, not minimal: search its plans exhaustively
    below its deviation count, briefly; the report and the (perhaps shorter) bug. A
    policy error is kept as it is."""
    if found.execution.error is not None:
        return None, found
    report = search_below(target, found.plans, found.deviations, deadline.within(SHORTEN_SECONDS))
    if report is None or report.counterexample is None:
        return report, found
    return report, found.shortened("systematic", report.counterexample.execution)


class _Spreads(Protocol):
    """An engine whose ``explore`` can spread its work over ``workers``."""

    def explore(
        self, target: Target, deadline: Deadline, tally: Tally | None = ..., *, workers: Workers
    ) -> EngineReport: ...


def _run(
    chosen: Engine, target: Target, deadline: Deadline, tally: Tally, workers: Workers | None
) -> EngineReport:
    """``chosen``'s search, over ``workers`` when it can spread, else in this process."""
    if workers is None:
        return chosen.explore(target, deadline, tally)
    if "workers" in inspect.signature(chosen.explore).parameters:
        spreads: _Spreads = chosen  # type: ignore[assignment]
        return spreads.explore(target, deadline, tally, workers=workers)
    report = chosen.explore(target, deadline, tally)
    note = f"{report.engine} ran in-process (it does not spread over workers)"
    return attrs.evolve(report, notes=(*report.notes, note))


def explore(
    target: Target,
    *,
    engine: str = "auto",
    seeds: bool = True,
    deadline: Deadline | None = None,
    observe: Observer | None = None,
    workers: Workers | None = None,
) -> ExploreResult:
    """Search ``target`` for a counterexample, within its budget (or ``deadline``); with
    ``workers``, the engines that can spread their work over them do."""
    if engine != "auto" and engine not in ENGINES:
        known = ", ".join(["auto", *ENGINES])
        raise InputError(f"'--engine' must be one of {known} (got {engine!r})", source="--engine")
    check_ready(target)
    if workers is not None:
        describe(target)  # what cannot be sent to workers is refused before any search
    deadline = deadline or Deadline(target.budget.time_budget)
    reports: list[EngineReport] = []

    def tally(name: str) -> Tally:
        counters = Tally()
        if observe is not None:
            observe(name, counters)
        return counters

    if engine == "auto" and seeds:
        report = run_seeds(target, deadline, tally("seeds"))
        reports.append(report)
        if report.counterexample is not None:
            shorter, found = _shorten(target, deadline, report.counterexample)
            if shorter is not None:
                reports.append(shorter)
            return ExploreResult(reports=tuple(reports), counterexample=found)
    names = list(AUTO_ORDER) if engine == "auto" else [engine]
    for index, name in enumerate(names):
        if deadline.expired():
            break
        chosen = ENGINES[name]()
        report = _run(chosen, target, deadline.share(len(names) - index), tally(name), workers)
        reports.append(report)
        if report.counterexample is not None:
            return ExploreResult(reports=tuple(reports), counterexample=report.counterexample)
    return ExploreResult(reports=tuple(reports))
