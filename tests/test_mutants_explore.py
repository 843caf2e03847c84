"""A positive control for the checker itself: ``explore`` kills every mutant.

Each mutant is ``guarded`` with one realistic bug (``examples/mutants``). ``explore`` runs
it the way ``txcheck explore`` does (``auto``: the scenario seeds, then the engines), on
the representative checkout plan with at most two deviations, and must report a
counterexample that fails an invariant the mutant's docstring names, on choices that
``guarded`` survives. Mutants whose shortest known run needs two deviations take the
systematic engine a few seconds, so they are in the slow tier (``pytest -m slow``), as is
the run with ``txcheck explore``'s own defaults (every representative plan, three faults).
``benchmarks/mutants.py`` measures how fast each method is; nothing here is timed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import build_parser
from txcheck.exploration.kernel.report import Counterexample
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.exploration.search import explore
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS, Mutant

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE = representative_plans(CONTRACT, FIXTURE)[0]
SAFETY_NET_S = 60.0
"""A time budget only so a regression cannot hang the suite; nothing asserts on time."""


def _params(slow: bool) -> list[Any]:
    return [
        pytest.param(m, id=m.name, marks=[pytest.mark.slow] if slow else [])
        for m in MUTANTS
        if (m.min_deviations >= 2) == slow
    ]


def _explore(
    mutant: Mutant, plans: tuple[Any, ...], bounds: Bounds, budget: Budget
) -> Counterexample:
    target = Target(
        policy_name=mutant.name,
        policy=mutant.policy(),
        contract=CONTRACT,
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        plans=plans,
        bounds=bounds,
        budget=budget,
    )
    result = explore(target, engine="auto")
    assert result.counterexample is not None, f"{mutant.name} survived: {result.reports}"
    return result.counterexample


def _guarded_run(plans: tuple[Plan, ...], choices: list[Choice]) -> Execution:
    """``guarded`` on the same choices; where it diverges from them (it does something
    else there), on the choices up to that point and then the default schedule."""

    def again(upto: int) -> Execution:
        return execute(
            Target(
                policy=Guarded(), contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
            ),
            plans,
            choices=choices[:upto],
        )

    run = again(len(choices))
    if run.divergence is not None and not run.failures:
        run = again(run.divergence.step)
    return run


def _assert_killed(mutant: Mutant, found: Counterexample) -> None:
    """The first failing invariant is one the mutant names, and ``guarded`` survives the
    same choices (so the failure is the mutant's bug, not a checker artefact)."""
    assert found.invariant in mutant.catches, (found.found_by, found.invariant, mutant.catches)
    guarded = _guarded_run(found.plans, [s.choice for s in found.execution.steps])
    assert guarded.ok and guarded.quiesced


def _small_budget() -> Budget:
    return Budget(max_examples=200, time_budget=SAFETY_NET_S, seed=0)


def test_every_mutant_is_in_exactly_one_tier() -> None:
    assert len(_params(False)) + len(_params(True)) == len(MUTANTS) >= 15
    assert _params(False) and _params(True)


@pytest.mark.parametrize("mutant", _params(False))
def test_explore_kills_each_one_deviation_mutant(mutant: Mutant) -> None:
    found = _explore(mutant, (SINGLE,), Bounds(max_faults=2), _small_budget())
    _assert_killed(mutant, found)
    assert found.deviations <= mutant.min_deviations + 1


@pytest.mark.parametrize("mutant", _params(True))
def test_explore_kills_each_two_deviation_mutant(mutant: Mutant) -> None:
    found = _explore(mutant, (SINGLE,), Bounds(max_faults=2), _small_budget())
    _assert_killed(mutant, found)
    assert found.deviations <= mutant.min_deviations + 1


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_explore_with_the_cli_defaults_kills_each_mutant(mutant: Mutant) -> None:
    """Issue 8's setting: ``txcheck explore``'s defaults, the engines' own plans."""
    args = build_parser().parse_args(["explore"])
    budget = Budget(max_examples=args.max_examples, time_budget=SAFETY_NET_S, seed=0)
    found = _explore(mutant, (), Bounds(max_faults=args.max_faults), budget)
    _assert_killed(mutant, found)
    assert found.deviations <= mutant.min_deviations + 1
