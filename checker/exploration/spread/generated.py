"""Spreading a generating engine (Hypothesis, random walks) over workers, reproducibly.

The engine's example budget is cut into one share per worker; share ``i`` runs the same
engine, in-process, on the same target with its part of the examples and a seed derived
from the search's seed (``derived_seed``: share 0 keeps the seed itself, so one worker is
the in-process search). A share that fails shrinks its failure where it ran and sends back
the plans and choices of the shrunk run; the counterexample is re-executed here, so it is
the same ``Execution`` an in-process search reports, and a policy that does not fail the
same way again is reported as not deterministic.

The merge never depends on which share finished first: the counterexample is the lowest
share's that found one, the counts are those of that share and every share below it
(shares above it are stopped, and what they did is not counted), and without a
counterexample every share is counted. So ``--seed S --workers N`` gives the same report
on every run.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from txcheck.exploration.kernel.context import DEFAULT_TUNING, Engine, SearchContext, Tuning
from txcheck.exploration.kernel.report import Counterexample, EngineReport
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Budget, Target
from txcheck.exploration.kernel.workers import Job
from txcheck.exploration.spread.shipping import TargetSpec, describe, rebuild
from txcheck.models.errors import PolicyError
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Choice

__all__ = ["Found", "Share", "ShareResult", "derived_seed", "run_share", "shares_of", "spread"]


def derived_seed(seed: int, engine: str, index: int) -> int:
    """Share ``index``'s seed: ``seed`` itself for share 0, else 63 bits of
    SHA-256(seed, engine, index), the same on every machine and Python."""
    if index == 0:
        return seed
    digest = hashlib.sha256(f"{seed}:{engine}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@attrs.frozen(kw_only=True)
class Share:
    """One worker's part of an engine's search: the engine class and its options, the
    target (with this share's examples and seed), and which share of how many it is."""

    engine: type[Engine]
    options: Mapping[str, Any]
    target: TargetSpec
    index: int
    of: int
    hypothesis_home: str | None = None
    """Where Hypothesis keeps its files, when the caller chose a relative folder (the
    command's ``.txcheck/hypothesis``): a worker keeps its files there too."""
    tuning: Tuning = DEFAULT_TUNING
    """The search context's tuning, which the share's search keeps."""


@attrs.frozen(kw_only=True)
class Found:
    """A counterexample as plain data: who found and shortened it, its plans, the choice
    taken at each step, and what failed (to check that re-executing it agrees)."""

    found_by: str
    shortened_by: str | None
    plans: tuple[Plan, ...]
    choices: tuple[Choice, ...]
    failures: tuple[str, ...]
    error: str | None

    @classmethod
    def of(cls, found: Counterexample) -> Found:
        execution = found.execution
        return cls(
            found_by=found.found_by,
            shortened_by=found.shortened_by,
            plans=tuple(found.plans),
            choices=tuple(s.choice for s in execution.steps),
            failures=tuple(f.name for f in execution.failures),
            error=execution.error,
        )

    def again(self, target: Target) -> Counterexample:
        """Re-execute it on ``target``: it must fail the same way."""
        execution = execute(target, self.plans, choices=self.choices)
        same = tuple(f.name for f in execution.failures) == self.failures
        if not same or (execution.error is None) != (self.error is None):
            raise PolicyError(
                f"policy {target.policy_name!r}: re-executing a worker's counterexample did "
                f"not fail the same way ({list(self.failures)} then "
                f"{[f.name for f in execution.failures]}); is the policy deterministic?"
            )
        return Counterexample(
            found_by=self.found_by,
            plans=execution.plans,
            execution=execution,
            shortened_by=self.shortened_by,
        )


@attrs.frozen(kw_only=True)
class ShareResult:
    """What a share sends back: its report (without the live counterexample) and the
    counterexample as data."""

    report: EngineReport
    found: Found | None


def run_share(share: Share, job: Job) -> ShareResult:
    """Run one share in this process (on a worker)."""
    if share.hypothesis_home is not None:
        from hypothesis import configuration  # noqa: PLC0415 (start-up)

        configuration.set_hypothesis_home_dir(share.hypothesis_home)
    target = rebuild(share.target)
    engine = share.engine(**share.options)
    report = engine.explore(target, attrs.evolve(job.context(), tuning=share.tuning))
    found = None if report.counterexample is None else Found.of(report.counterexample)
    return ShareResult(report=attrs.evolve(report, counterexample=None), found=found)


def _budget(budget: Budget, engine: str, index: int, examples: int) -> Budget:
    seed = budget.seed
    if seed is None and engine != "hypothesis":
        seed = 0  # the in-process random engine's seed when none is given
    if seed is not None:
        seed = derived_seed(seed, engine, index)
    return attrs.evolve(budget, max_examples=examples, seed=seed)


def shares_of(
    engine: Engine,
    options: Mapping[str, Any],
    target: Target,
    count: int,
    *,
    tuning: Tuning = DEFAULT_TUNING,
) -> list[Share]:
    """``count`` shares of ``engine``'s examples on ``target`` (fewer when there are fewer
    examples than shares). A search without a seed keeps Hypothesis unseeded (it then
    uses the example database) and gives the random walks seed 0, as in-process."""
    spec = describe(target)
    home = _hypothesis_home()
    relative = None if home is None or Path(home).is_absolute() else str(home)
    total = target.budget.max_examples
    parts = [total // count + (1 if i < total % count else 0) for i in range(count)]
    parts = [p for p in parts if p > 0]
    return [
        Share(
            engine=type(engine),
            options=dict(options),
            target=attrs.evolve(spec, budget=_budget(spec.budget, engine.name, i, part)),
            index=i,
            of=len(parts),
            hypothesis_home=relative,
            tuning=tuning,
        )
        for i, part in enumerate(parts)
    ]


def _coverage(reports: Sequence[EngineReport]) -> dict[str, dict[str, int]]:
    total: dict[str, dict[str, int]] = {}
    for report in reports:
        for section, counts in report.coverage.items():
            merged = total.setdefault(section, {})
            for key, count in counts.items():
                merged[key] = merged.get(key, 0) + count
    return {s: dict(sorted(c.items())) for s, c in sorted(total.items())}


def spread(
    engine: Engine,
    target: Target,
    context: SearchContext,
    *,
    options: Mapping[str, Any] | None = None,
) -> EngineReport:
    """``engine``'s search of ``target`` spread over the context's workers; one merged
    report."""
    started = time.monotonic()
    workers = context.workers
    if workers is None:
        raise ValueError("spreading a search needs workers in its context")
    shares = shares_of(engine, options or {}, target, workers.count, tuning=context.tuning)
    results: dict[int, ShareResult] = {}
    cut: int | None = None
    for index, result in workers.map_unordered(run_share, shares, context):
        results[index] = result
        if result.found is not None and (cut is None or index < cut):
            cut = index
        if cut is not None and all(i in results for i in range(cut)):
            workers.cancel()  # what shares above ``cut`` find is never used
            break
    counted = [i for i in sorted(results) if cut is None or i <= cut]
    reports = [results[i].report for i in counted]
    notes = [_where(engine.name, workers.where, shares, target.budget)]
    for share in shares:
        if share.index not in results and (cut is None or share.index < cut):
            notes.append(f"share {share.index + 1} of {share.of} did not finish (interrupted)")
    for i in counted:
        notes += [f"share {i + 1}: {note}" for note in results[i].report.notes]
    if cut is not None and cut + 1 < len(shares):
        above = (
            f"share {cut + 2} was stopped once share {cut + 1} found a counterexample; "
            "what it ran is not counted"
            if cut + 2 == len(shares)
            else f"shares {cut + 2}-{len(shares)} were stopped once share {cut + 1} found a "
            "counterexample; what they ran is not counted"
        )
        notes.append(above)
    notes += workers.notes
    counterexample = None if cut is None else results[cut].found
    return EngineReport(
        engine=engine.name,
        runs=sum(r.runs for r in reports),
        steps=sum(r.steps for r in reports),
        counterexample=None if counterexample is None else counterexample.again(target),
        coverage=_coverage(reports),
        writes=sum(r.writes for r in reports),
        seconds=time.monotonic() - started,
        notes=tuple(notes),
    )


def _where(engine: str, where: str, shares: Sequence[Share], budget: Budget) -> str:
    sizes = sorted({s.target.budget.max_examples for s in shares})
    each = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
    if budget.seed is not None or engine != "hypothesis":
        seeds = f"seeds derived from {budget.seed or 0}"
    elif budget.database is not None:
        seeds = "unseeded, sharing the example database"
    else:
        seeds = "unseeded"
    return f"spread over {where}: {len(shares)} share(s) of {each} examples, {seeds}"


def _hypothesis_home() -> str | Path | None:
    """The home Hypothesis uses in this process, if one was chosen: set in it, else (not
    yet looked up: Hypothesis may not even be imported) ``HYPOTHESIS_STORAGE_DIRECTORY``,
    which it reads the first time it needs a folder (``txcheck.cli`` sets it)."""
    configuration = sys.modules.get("hypothesis.configuration")
    home = getattr(configuration, "__hypothesis_home_directory", None)
    return home if home is not None else os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or None
