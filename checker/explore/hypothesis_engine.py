"""The Hypothesis engine: run the state machine, shrink, and report the minimal failure.

Hypothesis generates examples until one fails, shrinks it, then replays the minimal
example last when it reports; the machine records the failing execution of that final
replay. The engine re-executes its choices through ``txcheck.explore.session`` (the one
execution path replay and traces use) and checks it fails the same way. Failures are
saved to the example database, so the next run tries them first. The time budget is
enforced by the machine between rules; if it runs out while shrinking, the smallest
failure seen so far is reported.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.reporting import with_reporter
from hypothesis.stateful import run_state_machine_as_test

from txcheck.explore.engine import Budget, Counterexample, EngineReport, Target
from txcheck.explore.machine import (
    BudgetExpired,
    InvariantViolation,
    MachineConfig,
    Recorder,
    ShrinkBudgetSpent,
    Stats,
    machine_class,
)
from txcheck.explore.session import Execution, execute
from txcheck.models.errors import PolicyError, TxcheckError
from txcheck.models.world import World

__all__ = ["DEFAULT_DATABASE", "HypothesisEngine", "HypothesisOptions", "coverage_of"]

DEFAULT_DATABASE = ".txcheck/examples"
"""Where failures are kept, relative to the current directory."""

PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
"""Every phase but ``explain``: it reruns the shrunk example many times to say which
parts do not matter, which txcheck's trace already shows, and it cost most of the time."""


@attrs.frozen(kw_only=True)
class HypothesisOptions:
    """How to run Hypothesis: a seed (reproducible; no database then, see docs/explore.md),
    the example database directory (None: none), rule calls per example, how many
    examples shrinking may run after the first failure (then the smallest failure seen is
    kept; a count, not a time, so a seeded run stays reproducible), the world factory and
    a callback that receives the live ``Stats`` (for progress displays)."""

    seed: int | None = None
    database: str | None = None
    step_count: int = 16
    max_shrinks: int | None = 500
    world_factory: Callable[..., World] = World
    on_stats: Callable[[Stats], None] | None = None


def _quiet(_: Any) -> None:
    """Hypothesis' reporter: txcheck renders its own output."""


def _fewer_deviations(target: Target, execution: Execution, budget: Budget) -> Execution:
    """Hypothesis shrinks the choice sequence; dropping whole deviations while the same
    invariant still fails (the random engine's delta debugging) can go further, because
    removing one deviation shifts where the later ones land."""
    if execution.deviations <= 1:
        return execution
    try:
        random_walk = importlib.import_module("txcheck.explore.random_walk")
    except ImportError:  # the random engine is optional
        return execution
    shrunk: Execution = random_walk.shrink(target, execution.run.plans, execution, budget=budget)
    return shrunk


def coverage_of(stats: Stats, target: Target) -> dict[str, dict[str, int]]:
    """Fault kinds injected, invariant evaluations and how runs ended."""
    invariants = {
        check.name: stats.safety_checks
        if getattr(check, "kind", "always") == "always"
        else stats.liveness_checks
        for check in target.invariants
    }
    return {
        "faults": dict(sorted(stats.faults.items())),
        "invariants": dict(sorted(invariants.items())),
        "outcomes": dict(sorted(stats.outcomes.items())),
    }


class HypothesisEngine:
    """Rule-based state machine exploration with shrinking (``txcheck.explore.machine``)."""

    name = "hypothesis"

    def __init__(self, options: HypothesisOptions | None = None) -> None:
        self.options = options or HypothesisOptions()

    def _database(self) -> ExampleDatabase | None:
        if self.options.seed is not None or self.options.database is None:
            return None
        return DirectoryBasedExampleDatabase(self.options.database)

    def explore(self, target: Target, budget: Budget) -> EngineReport:
        started = time.monotonic()
        budget.start()
        stats, recorder = Stats(), Recorder()
        if self.options.on_stats is not None:
            self.options.on_stats(stats)
        config = MachineConfig(
            max_faults=budget.max_faults,
            deadline=budget.deadline,
            max_shrinks=self.options.max_shrinks,
            world_factory=self.options.world_factory,
        )
        machine = machine_class(target, config=config, stats=stats, recorder=recorder)
        if self.options.seed is not None:
            machine = hypothesis_seed(self.options.seed)(machine)
        hypothesis_settings = settings(
            max_examples=max(1, budget.max_examples),
            stateful_step_count=self.options.step_count,
            deadline=None,
            database=self._database(),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=Verbosity.quiet,
            phases=PHASES,
        )
        notes: list[str] = []
        found: Execution | None = None
        try:
            with with_reporter(_quiet):
                run_state_machine_as_test(machine, settings=hypothesis_settings)
        except InvariantViolation:
            found = recorder.best
        except ShrinkBudgetSpent:
            found = recorder.smallest
            notes.append(f"shrinking stopped after {self.options.max_shrinks} examples")
        except BudgetExpired:
            found = recorder.smallest
            notes.append(
                "time budget ran out while shrinking: the smallest failure seen is reported"
                if found is not None
                else "time budget ran out"
            )
        except Flaky as error:
            raise PolicyError(
                f"policy {target.policy_name!r} behaved differently on the same choices "
                f"(it must be deterministic): {type(error).__name__}"
            ) from None
        counterexample = None
        if found is not None:
            execution = self._confirm(target, found)
            if self.options.world_factory is World:
                execution = _fewer_deviations(target, execution, budget)
            counterexample = Counterexample(
                engine=self.name,
                plans=execution.run.plans,
                execution=execution,
                deviations=execution.deviations,
            )
        return EngineReport(
            engine=self.name,
            runs=stats.examples,
            steps=stats.steps,
            counterexample=counterexample,
            coverage=coverage_of(stats, target),
            seconds=time.monotonic() - started,
            notes=tuple(notes),
        )

    def _confirm(self, target: Target, found: Execution) -> Execution:
        """Re-execute the failure through the one execution path; it must fail alike."""
        if self.options.world_factory is not World:
            return found  # ``execute`` builds plain worlds; the machine's run is the record
        replayed = execute(
            policy=target.policy,
            contract=target.contract,
            plans=found.run.plans,
            fixture=target.fixture,
            invariants=target.invariants,
            choices=[s.choice for s in found.steps],
        )
        same = [f.name for f in replayed.failures] == [f.name for f in found.failures]
        if not same or (replayed.error is None) != (found.error is None):
            raise TxcheckError(
                f"policy {target.policy_name!r}: re-executing the counterexample did not "
                f"fail the same way ({[f.name for f in found.failures]} then "
                f"{[f.name for f in replayed.failures]}); is the policy deterministic?"
            )
        return replayed
