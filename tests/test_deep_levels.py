"""The third deviation level where concurrency lives (issue 30, item 2; ADR 013): after the
exhaustive search finds nothing, a directed search takes the plan sets of two instances or
more (the double click first) towards their third level, proving no bound. The controls of
tests/deep_controls.py (and ``FailedLookupNotCommitted`` of tests/blind_spots.py) need
three deviations on "checkout, submitted twice": default ``explore`` must find each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.blind_spots import FailedLookupNotCommitted
from tests.deep_controls import DEEP_CATCHES, ProposedBeforeClaim, StaleClaimTakenOver
from txcheck.cli import main
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import SearchContext, Tuning
from txcheck.exploration.kernel.report import EngineReport, ExploreResult
from txcheck.exploration.kernel.target import Bounds, Deadline, Target
from txcheck.exploration.kernel.verdict import verdict_of
from txcheck.exploration.kernel.workers import InProcess
from txcheck.exploration.plansets.representative import search_plans
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded, Policy

TWICE = next(
    s.plans
    for s in search_plans(default_contract(), default_fixture())
    if s.label == "checkout, submitted twice"
)
DEEP = Tuning(directed_share=60.0)
"""A directed search of 120,000 states after an exhaustive one of 2,000: the double click
to its third level (about 107,000 states with guarded)."""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _search(
    policy: Policy, *, max_faults: int = 3, tuning: Tuning = DEEP, workers: bool = False
) -> EngineReport:
    target = Target(
        policy=policy, plans=(TWICE,), bounds=Bounds(max_faults=max_faults, max_states=2000)
    )
    spread = InProcess() if workers else None
    context = SearchContext(deadline=Deadline(600), tuning=tuning, workers=spread)
    return SystematicEngine().explore(target, context)


def test_guarded_passes_the_double_click_directed_to_three_and_no_bound_is_claimed() -> None:
    report = _search(Guarded())
    assert report.counterexample is None and not report.complete
    (plans,) = report.plans
    assert plans.reached is not None and plans.reached < 3  # what the exhaustive search proved
    assert plans.directed == 3
    assert report.exhaustive_bound == plans.reached  # the directed level is no bound
    assert plans.to_json()["directed_to"] == 3
    assert any(note.startswith("directed search (not exhaustive") for note in report.notes)
    target = Target(policy=Guarded(), plans=(TWICE,), bounds=Bounds(max_states=2000))
    verdict = verdict_of(ExploreResult(reports=(report,)), target)
    assert verdict.bound.startswith(f"exhaustive to {plans.reached} of 3 deviations")
    assert verdict.bound.endswith("; the plans directed to 3)")
    assert verdict.exhaustive_to == plans.reached


def test_without_a_directed_share_the_exhaustive_search_is_unchanged() -> None:
    off = _search(Guarded(), tuning=Tuning(directed_share=0))
    on = _search(Guarded(), max_faults=3, tuning=Tuning(directed_share=1.0))
    assert not any(note.startswith("directed search") for note in off.notes)
    assert any(note.startswith("directed search") for note in on.notes)
    assert (off.exhaustive_bound, off.states) == (on.exhaustive_bound, on.states)
    assert off.plans[0].reached == on.plans[0].reached


@pytest.mark.parametrize("policy", [ProposedBeforeClaim(), StaleClaimTakenOver()])
def test_a_claim_protocol_bug_is_found_at_the_third_level_of_the_double_click(
    policy: Guarded,
) -> None:
    missed = _search(policy, tuning=Tuning(directed_share=0))
    assert missed.counterexample is None  # beyond the exhaustive search's reach here
    found = _search(policy).counterexample
    assert found is not None and found.deviations == 3
    assert found.invariant in DEEP_CATCHES[type(policy).__name__]
    assert found.execution.failed("no_double_charge")


def test_the_directed_search_follows_a_search_over_workers() -> None:
    """With --workers the spread exhaustive search is followed by the same directed search
    (in the coordinating process): same depth, same counterexample as in one process."""
    shallow = Tuning(directed_share=3.0)  # 6,000 directed states: quick, not to level 3
    one, spread = (_search(Guarded(), tuning=shallow, workers=w) for w in (False, True))
    assert one.counterexample is None and spread.counterexample is None
    assert spread.plans[0].directed is not None
    assert spread.plans[0].directed == one.plans[0].directed
    assert spread.exhaustive_bound == one.exhaustive_bound  # still no bound from it
    assert any(note.startswith("directed search (not exhaustive") for note in spread.notes)
    found = _search(ProposedBeforeClaim(), workers=True).counterexample
    assert found is not None and found.deviations == 3
    assert found.execution.failed("no_double_charge")


@pytest.mark.slow
@pytest.mark.parametrize("policy", [ProposedBeforeClaim(), StaleClaimTakenOver()])
def test_each_claim_protocol_control_survives_two_deviations(policy: Guarded) -> None:
    """Each is a bug of three deviations: every run with two passes."""
    target = Target(policy=policy, plans=(TWICE,), bounds=Bounds(max_faults=2, max_states=10**6))
    report = SystematicEngine().explore(target, SearchContext(deadline=Deadline(900)))
    assert report.counterexample is None and report.complete


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(
    "spec",
    [
        "tests.deep_controls:ProposedBeforeClaim",
        "tests.deep_controls:StaleClaimTakenOver",
        "tests.blind_spots:FailedLookupNotCommitted",
    ],
)
def test_default_explore_finds_each_three_deviation_control(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spec: str, seed: int
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    # no --time-budget: the default has none, and a wall-clock one fails on a loaded machine
    argv = ["explore", "--policy", spec, "--seed", str(seed), "--json"]
    assert main(argv) == 1, spec
    found = json.loads(capsys.readouterr().out)["counterexample"]
    assert found["found_by"] == "systematic" and found["deviations"] == 3
    assert found["invariant"] in {"no_double_charge", "acceptable_outcome"}


def test_the_failed_lookup_control_needs_the_double_click_directed_search_here() -> None:
    """On the double click it is a three-deviation bug too: found by the directed search."""
    found = _search(FailedLookupNotCommitted()).counterexample
    assert found is not None and found.deviations == 3
    assert found.invariant in {"no_double_charge", "acceptable_outcome"}
