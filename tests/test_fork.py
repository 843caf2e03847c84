"""Run.fork: a copy of a run where it stands that goes on exactly as a replay of its
choices would, shares nothing that either changes, and refuses (None) when the policy,
fed the same responses again, goes another way. The systematic engine forks branches off
a run walking their parent's path; with and without forking it gives the same report."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import EngineReport
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.kernel.workers import InProcess
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded, builtin_policy
from txcheck.models.sim.policies.base import ActorGen, OrchestratorContext, Policy
from txcheck.models.sim.requests import Request, Sleep, ToolResult
from txcheck.models.sim.runner import Run, Unforkable

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, DOUBLE = representative_plans(CONTRACT, FIXTURE)


def target(policy: Policy, plans: tuple[Any, ...] = DOUBLE, k: int = 1) -> Target:
    return Target(
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=(plans,),
        bounds=Bounds(max_faults=k, max_states=10**7),
    )


def pick(run: Run, step: int) -> Choice:
    """A fixed, fault-rich schedule: mostly the default, now and then another choice."""
    options = run.choices()
    return options[(step * 7) % len(options)] if step % 3 == 0 else options[0]


def walk(run: Run, steps: int) -> list[Choice]:
    taken = []
    for step in range(steps):
        if not run.choices():
            break
        choice = pick(run, step)
        run.apply(choice)
        taken.append(choice)
    return taken


def state(run: Run) -> tuple[Any, ...]:
    return (
        [s.to_json() for s in run.steps],
        run.world.snapshot(),
        run.fingerprint(),
        run.choices(),
    )


@pytest.mark.parametrize("name", ["guarded", "naive", "control-fresh-key"])
@pytest.mark.parametrize("at", [0, 5, 17, 30])
def test_a_fork_goes_on_exactly_as_a_replay_of_its_choices(name: str, at: int) -> None:
    policy = builtin_policy(name)
    assert policy is not None
    tgt = target(policy)
    original = tgt.run(DOUBLE, track_positions=True)
    prefix = walk(original, at)
    twin = original.fork()
    assert twin is not None
    replayed = tgt.run(DOUBLE, track_positions=True)
    for choice in prefix:
        replayed.apply(choice)
    assert state(twin) == state(replayed)
    # the same continuation, fault-rich, on both: the same steps and states throughout
    for step in range(at, at + 80):
        if not replayed.choices():
            break
        choice = pick(replayed, step)
        twin.apply(choice)
        replayed.apply(choice)
        assert twin.fingerprint() == replayed.fingerprint(), step
    assert state(twin) == state(replayed)


def test_the_original_and_its_fork_share_nothing_either_changes() -> None:
    tgt = target(Guarded())
    original = tgt.run(DOUBLE, track_positions=True)
    walk(original, 12)
    before = state(original)
    twin = original.fork()
    assert twin is not None
    walk(original, 200)  # the original to its end ...
    assert state(original) != before
    assert state(twin) == before  # ... leaves the fork where it was
    walk(twin, 200)
    assert state(twin)[0][:12] == before[0]


# What each attribute of a world or a run may share with its fork: an immutable value, or
# a container nothing writes to once the run is built. Every other container must be a
# copy. A new mutable attribute fails here until it is copied by ``fork`` or listed.
SHARED_WORLD = {"_table", "contract", "fixture", "services"}
SHARED_RUN = {"_contexts", "_initial", "invalid_plans", "plans", "instances", "contract"}


def containers(obj: object) -> Iterator[tuple[str, object]]:
    for name, value in vars(obj).items():
        if isinstance(value, (dict, list, set)) or hasattr(value, "__dict__"):
            yield name, value


def test_every_mutable_attribute_is_copied_or_declared_shared() -> None:
    run = target(Guarded()).run(DOUBLE, track_positions=True)
    walk(run, 20)
    twin = run.fork()
    assert twin is not None
    for name, value in containers(run.world):
        if name not in SHARED_WORLD and not isinstance(value, (str, bytes, int)):
            assert getattr(twin.world, name) is not value, f"World.{name} is shared"
    for name, value in containers(run):
        if name not in SHARED_RUN and name != "policy":
            assert getattr(twin, name) is not value, f"Run.{name} is shared"
    for name, actor in run._actors.items():
        copied = twin._actors[name]
        assert copied is not actor and copied.inputs is not actor.inputs
        assert copied.asked is not actor.asked
        assert actor.gen is None or copied.gen is not actor.gen


class MarksResponses(Guarded):
    """Writes into the receipts it gets, and asks for something else when a receipt is
    already marked: fed the same (now marked) responses again, it goes another way. A
    replay hands it fresh receipts, so it is deterministic all the same."""

    name = "marks-responses"

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        inner = super().orchestrate(ctx)
        request: Request = next(inner)
        while True:
            response = yield request
            if isinstance(response, ToolResult) and isinstance(response.receipt, dict):
                if response.receipt.get("marked"):
                    yield Sleep(ticks=1)
                response.receipt["marked"] = True
                clean = {k: v for k, v in response.receipt.items() if k != "marked"}
                response = attrs.evolve(response, receipt=clean)
            try:
                request = inner.send(response)
            except StopIteration:
                return


def test_a_policy_that_changes_its_responses_is_not_forked() -> None:
    """The fork stands; moving it builds the actors anew, and they go another way."""
    run = target(MarksResponses()).run(DOUBLE)
    walk(run, 20)
    twin = run.fork()
    assert twin is not None
    with pytest.raises(Unforkable):
        twin.build_forked()


class CountsStarts(Guarded):
    """Guarded, counting the generators it builds."""

    name = "counts-starts"

    def __init__(self) -> None:
        self.started = 0

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        self.started += 1
        return super().orchestrate(ctx)


def test_a_fork_builds_an_actor_only_when_it_first_moves() -> None:
    """Forking runs none of the policy's code; the first step of an actor builds that
    actor's generator (fed what the original got), not the others'."""
    policy = CountsStarts()
    run = target(policy).run(DOUBLE)
    walk(run, 6)
    started = policy.started
    twin = run.fork()
    assert twin is not None and policy.started == started
    while (mover := twin.choices()[0]).actor not in twin.instances:
        twin.apply(mover, deviation=False, kind=None)  # the clock, the relay, a service
    while policy.started == started:  # a call completes, then its caller hears of it
        twin.apply(twin.choices()[0], deviation=False, kind=None)
    assert policy.started == started + 1
    twin.build_forked()
    assert policy.started == started + len(run.instances)


def same_search(policy: Policy, plans: tuple[Any, ...], k: int) -> EngineReport:
    """The search with and without forking: equal reports but for how prefixes were
    made; the forking one returned."""
    return both_searches(policy, plans, k)[0]


def both_searches(
    policy: Policy, plans: tuple[Any, ...], k: int
) -> tuple[EngineReport, EngineReport]:
    """``same_search``'s two reports: forked, replayed."""
    tgt = target(policy, plans, k)
    forked = SystematicEngine().explore(tgt, SearchContext())
    replayed = SystematicEngine(fork=False).explore(tgt, SearchContext())

    def comparable(report: EngineReport) -> dict[str, Any]:
        data = report.to_json()
        data["notes"] = [
            n for n in data["notes"] if "prefix steps" not in n and "something else" not in n
        ]
        data.pop("seconds", None)
        return data

    assert comparable(forked) == comparable(replayed)
    assert (forked.counterexample is None) == (replayed.counterexample is None)
    if forked.counterexample is not None and replayed.counterexample is not None:
        steps = [s.to_json() for s in forked.counterexample.execution.steps]
        assert steps == [s.to_json() for s in replayed.counterexample.execution.steps]
    return forked, replayed


def replayed_steps(report: EngineReport) -> int:
    note = next(n for n in report.notes if "prefix steps" in n)
    return int(note.split()[1])


def test_forking_changes_no_report_and_replays_far_less() -> None:
    forked, replayed = both_searches(Guarded(), SINGLE, 2)
    assert forked.counterexample is None and forked.complete
    assert replayed_steps(forked) * 3 < replayed_steps(replayed)


@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.slow)])  # 2: 16 s
def test_a_policy_that_cannot_be_forked_is_searched_by_replay_and_the_report_says_so(
    k: int,
) -> None:
    """Found out only when a forked branch first moves the actor, a few states in: the
    branch is replayed, and the states it had recorded are not taken as covered."""
    forked = same_search(MarksResponses(), DOUBLE, k)
    assert any("asked for something else" in note for note in forked.notes)


def test_the_search_spread_over_workers_forks_or_replays_as_asked() -> None:
    tgt = target(Guarded(), SINGLE, 1)
    forked = SystematicEngine().explore(tgt, SearchContext(workers=InProcess()))
    replayed = SystematicEngine(fork=False).explore(tgt, SearchContext(workers=InProcess()))
    assert forked_runs(forked) > 0 and forked_runs(replayed) == 0
    assert replayed_steps(forked) < replayed_steps(replayed)
    assert (replayed.states, replayed.exhaustive_bound) == (forked.states, forked.exhaustive_bound)


def forked_runs(report: EngineReport) -> int:
    note = next(n for n in report.notes if "prefix steps" in n)
    return int(note.split("(")[1].split()[0])


@pytest.mark.parametrize("name", ["naive", "control-fresh-key", "control-no-saga"])
def test_forking_finds_the_same_counterexamples(name: str) -> None:
    policy = builtin_policy(name)
    assert policy is not None
    assert same_search(policy, DOUBLE, 1).counterexample is not None


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_forking_changes_no_report_on_any_mutant_at_two_deviations(mutant: Any) -> None:
    for plans in (SINGLE, DOUBLE):
        same_search(mutant.policy(), plans, 2)
