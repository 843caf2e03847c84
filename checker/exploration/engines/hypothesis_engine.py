"""The Hypothesis engine: run the state machine, shrink, and report the minimal failure.

Hypothesis generates examples until one fails, shrinks it, then replays the minimal
example last when it reports; the machine records the failing execution of that final
replay. The engine confirms it by re-executing its choices once through a fresh
``Session`` of the same target (services included): a policy that does not fail the same
way is not deterministic, which is an error, not a counterexample. Failures are saved to
the example database, so the next run tries them first. The time budget is enforced by
the machine between rules; if it runs out while shrinking, the smallest failure seen so
far is reported.
"""

from __future__ import annotations

import time
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.reporting import with_reporter
from hypothesis.stateful import run_state_machine_as_test

from txcheck.exploration.engines.machine import (
    BudgetExpired,
    InvariantViolation,
    PolicyHung,
    Recorder,
    ShrinkBudgetSpent,
    machine_class,
)
from txcheck.exploration.engines.shrink import fewer_deviations
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import Counterexample, EngineReport
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.spread.example_db import (
    CacheDatabase,
    open_database,
    planted_database_link,
    warn_once,
)
from txcheck.exploration.spread.generated import spread
from txcheck.models.errors import PolicyError

__all__ = ["PHASES", "HypothesisEngine", "confirm", "example_database"]

PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
"""Every phase but ``explain``: it reruns the shrunk example many times to say which
parts do not matter, which txcheck's trace already shows, and it cost most of the time."""


def _quiet(_: Any) -> None:
    """Hypothesis' reporter: txcheck renders its own output."""


def example_database(target: Target) -> ExampleDatabase | None:
    """The target's example database (a directory or Redis, ``txcheck.exploration.
    example_db``), held as a cache (``CacheDatabase``: its failure never ends the search):
    none for a seeded (reproducible) search, and none, with a warning, when the default
    directory's path holds a planted symbolic link."""
    budget = target.budget
    if budget.seed is not None or budget.database is None:
        return None
    link = planted_database_link(budget.database)
    if link is not None:
        warn_once(
            f"{link} is a symbolic link; the example database {budget.database} is not "
            "used through it: the search runs without one (remove the link, or choose "
            "a database with --example-db)"
        )
        return None
    return CacheDatabase(open_database(budget.database), budget.database)


def confirm(target: Target, found: Execution) -> Execution:
    """Re-execute a failure's choices through a fresh session of ``target``: it must fail
    the same way, or the policy is not deterministic."""
    replayed = execute(target, found.plans, choices=[s.choice for s in found.steps])
    same = [f.name for f in replayed.failures] == [f.name for f in found.failures]
    if not same or (replayed.error is None) != (found.error is None):
        raise PolicyError(
            f"policy {target.policy_name!r}: re-executing the counterexample did not "
            f"fail the same way ({[f.name for f in found.failures]} then "
            f"{[f.name for f in replayed.failures]}); is the policy deterministic?"
        )
    return replayed


class HypothesisEngine:
    """Rule-based state machine exploration with shrinking
    (``txcheck.exploration.engines.machine``)."""

    name = "hypothesis"
    spreads = True

    def explore(self, target: Target, context: SearchContext) -> EngineReport:
        """Search ``target``; with the context's workers, the examples are spread over
        them (``txcheck.exploration.spread.generated``)."""
        if context.workers is not None:
            return spread(self, target, context)
        started = time.monotonic()
        counters = context.tally
        recorder = Recorder()
        budget = target.budget
        machine = machine_class(target, context=context, recorder=recorder)
        if budget.seed is not None:
            machine = hypothesis_seed(budget.seed)(machine)
        hypothesis_settings = settings(
            max_examples=budget.max_examples,
            stateful_step_count=budget.step_count,
            deadline=None,
            database=example_database(target),
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
        except PolicyHung:
            found = recorder.last
        except ShrinkBudgetSpent:
            found = recorder.smallest
            notes.append(f"shrinking stopped after {budget.max_shrinks} examples")
        except BudgetExpired:
            found = recorder.smallest
            why = "interrupted" if context.deadline.interrupted else "time budget ran out"
            notes.append(
                f"{why} while shrinking: the smallest failure seen is reported"
                if found is not None
                else why
            )
        except Flaky as error:
            raise PolicyError(
                f"policy {target.policy_name!r} behaved differently on the same choices "
                f"(it must be deterministic): {type(error).__name__}"
            ) from None
        if recorder.first_at is not None:
            # Example 1 when a failure kept in the example database was replayed first.
            notes.insert(0, f"first failure at example {recorder.first_at}")
        counterexample = None
        if found is not None and found.error is not None:
            # A policy error is reported as Hypothesis left it, not re-executed: a
            # policy that hung would hang again (twice its time limit).
            counterexample = Counterexample(found_by=self.name, plans=found.plans, execution=found)
        elif found is not None:
            execution = confirm(target, found)
            counterexample = Counterexample(
                found_by=self.name, plans=execution.plans, execution=execution
            )
            shorter = fewer_deviations(target, execution, context)
            if shorter is not execution:
                counterexample = counterexample.shortened("delta-debugging", shorter)
        return EngineReport.tallied(
            self.name, counters, started=started, counterexample=counterexample, notes=notes
        )
