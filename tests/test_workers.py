"""Spreading work without Dask: the in-process executor, shares and derived seeds, the
merge, and describing a target so another process can rebuild it. The real cluster is in
tests/test_distributed.py."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.engines.random_walk import RandomEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import EngineReport, Tally
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.kernel.workers import InProcess, Job
from txcheck.exploration.search import explore
from txcheck.exploration.spread.generated import derived_seed, shares_of, spread
from txcheck.exploration.spread.shipping import ShippingError, describe, rebuild
from txcheck.invariants import DEFAULT_INVARIANTS, always
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded, builtin_policy
from txcheck.models.sim.services import ServiceSet


def _target(name: str, *, examples: int = 120, seed: int | None = 1) -> Target:
    policy = builtin_policy(name)
    assert policy is not None
    return Target(
        policy=policy,
        bounds=Bounds(max_faults=2),
        budget=Budget(max_examples=examples, seed=seed, database=None),
    )


def _square(item: int, job: Job) -> int:
    job.tally.runs += item
    return item * item


def test_in_process_maps_every_item_sums_the_counters_and_stops_when_cancelled() -> None:
    workers = InProcess()
    progress = Tally()
    got = list(workers.map_unordered(_square, [1, 2, 3], SearchContext(tally=progress)))
    assert got == [(0, 1), (1, 4), (2, 9)] and progress.runs == 6
    seen = []
    for index, result in workers.map_unordered(_square, [1, 2, 3], SearchContext()):
        seen.append((index, result))
        workers.cancel()
    assert seen == [(0, 1)]


def test_a_tally_travels_as_plain_data_and_adds_up() -> None:
    tally = Tally(runs=2, steps=7, writes=1)
    tally.deviation("crash")
    tally.invariants["no_double_charge"] += 3
    again = Tally.of(json.loads(json.dumps(tally.snapshot())))
    assert again.snapshot() == tally.snapshot()
    again.add(tally)
    assert (again.runs, again.steps, again.deviations["crash"]) == (4, 14, 2)


def test_derived_seeds_keep_the_seed_for_share_zero_and_never_change() -> None:
    assert derived_seed(7, "random", 0) == 7
    assert derived_seed(7, "random", 1) == 2265020522442008836  # pinned: runs must reproduce
    assert derived_seed(7, "random", 1) != derived_seed(7, "hypothesis", 1)
    assert len({derived_seed(7, "random", i) for i in range(50)}) == 50


def test_shares_split_the_examples_and_derive_their_seeds() -> None:
    shares = shares_of(RandomEngine(), {}, _target("guarded", examples=10, seed=5), 3)
    budgets = [s.target.budget for s in shares]
    assert [b.max_examples for b in budgets] == [4, 3, 3]
    assert [b.seed for b in budgets] == [derived_seed(5, "random", i) for i in range(3)]
    few = shares_of(RandomEngine(), {}, _target("guarded", examples=2), 4)
    assert [s.target.budget.max_examples for s in few] == [1, 1]
    assert {s.of for s in few} == {2}


def test_hypothesis_shares_stay_unseeded_without_a_seed_so_they_use_the_database() -> None:
    target = attrs.evolve(_target("guarded", seed=None), budget=Budget(max_examples=4))
    shares = shares_of(HypothesisEngine(), {}, target, 2)
    assert [s.target.budget.seed for s in shares] == [None, None]
    assert {s.target.budget.database for s in shares} == {".txcheck/examples"}


def _without_notes(report: EngineReport) -> dict[str, Any]:
    data = report.to_json()
    data.pop("notes")
    return data


@pytest.mark.parametrize("engine", [RandomEngine(), HypothesisEngine()], ids=lambda e: e.name)
@pytest.mark.parametrize("policy", ["naive", "guarded"])
def test_one_share_in_process_is_the_in_process_search(engine: Any, policy: str) -> None:
    target = _target(policy)
    alone = engine.explore(target, SearchContext())
    shared = engine.explore(target, SearchContext(workers=InProcess()))
    assert _without_notes(shared) == _without_notes(alone)
    assert shared.notes[0].startswith("spread over in-process: 1 share(s) of 120 examples")
    if alone.counterexample is not None:
        assert shared.counterexample is not None
        assert [s.to_json() for s in shared.counterexample.execution.steps] == [
            s.to_json() for s in alone.counterexample.execution.steps
        ]


class _TwoShares(InProcess):
    @property
    def count(self) -> int:
        return 2


def test_the_lowest_share_that_fails_is_reported_and_only_shares_up_to_it_are_counted() -> None:
    target = _target("naive", examples=200)
    report = spread(RandomEngine(), target, SearchContext(workers=_TwoShares()))
    assert report.counterexample is not None
    assert any(n.startswith("share 2 was stopped once share 1 found") for n in report.notes)
    alone = RandomEngine().explore(
        attrs.evolve(target, budget=attrs.evolve(target.budget, max_examples=100)), SearchContext()
    )
    assert report.runs == alone.runs


def test_explore_with_workers_spreads_every_engine() -> None:
    target = attrs.evolve(_target("guarded", examples=20), bounds=Bounds(max_faults=1))
    result = explore(target, seeds=False, workers=InProcess())
    notes = {r.engine: r.notes for r in result.reports}
    assert notes["systematic"][0].startswith("spread over in-process: each level")
    assert notes["hypothesis"][0].startswith("spread over in-process")
    assert notes["random"][0].startswith("spread over in-process")


# -- describing a target ------------------------------------------------------------------

MODULE = """
from txcheck.invariants import always
from txcheck.models.sim.checkout import checkout_state, CHECKOUT
from txcheck.models.sim.policies import Guarded
from txcheck.models.sim.services import ServiceSet


class MyPolicy(Guarded):
    name = "my-policy"


MINE = ServiceSet(name="mine", initial_state=checkout_state, handlers={})


@always(name="never_fails")
def never_fails(view):
    \"\"\"Never fails: it shows a user's invariant reaches the workers.\"\"\"
    return []
"""


def test_a_user_target_is_described_by_import_paths_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shipme.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    script = textwrap.dedent(
        """
        import pickle, sys
        from txcheck.exploration.usercode.loading import load_invariants, load_policy, load_services
        from txcheck.exploration.spread.shipping import describe, rebuild
        from txcheck.exploration.kernel.target import Target
        from txcheck.invariants import DEFAULT_INVARIANTS
        loaded = load_policy("shipme:MyPolicy")
        target = Target(
            policy=loaded.policy,
            policy_name=loaded.spec,
            services=(*load_services(["txcheck.models.sim.checkout:CHECKOUT"]),
                      *load_services(["shipme:MINE"])),
            invariants=(*DEFAULT_INVARIANTS, *load_invariants(["shipme:never_fails"])),
        )
        spec = describe(target)
        named = spec.description
        print(named.policy, spec.policy_timeout, named.services, named.invariants[-1])
        again = rebuild(pickle.loads(pickle.dumps(spec)))
        print(type(again.policy.inner).__name__, [s.name for s in again.services])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == (
        "shipme:MyPolicy 5.0 ('txcheck.models.sim.checkout:CHECKOUT', 'shipme:MINE')"
        " shipme:never_fails"
    )
    assert second == "MyPolicy ['checkout', 'mine']"


def test_the_built_in_parts_are_named_and_rebuilt() -> None:
    spec = pickle.loads(pickle.dumps(describe(_target("naive"))))
    named = spec.description
    assert (named.policy, spec.policy_timeout) == ("naive", None)
    # the bundled documents travel as None and are the bundled objects again
    assert named.contract is default_contract() and named.fixture is default_fixture()
    assert named.services == ("txcheck.models.sim.checkout:CHECKOUT",)
    assert named.invariants[0] == "txcheck.invariants.checkout:no_double_charge"
    assert not named.defaults  # a Python target names every part, built-in ones too
    again = rebuild(spec)
    assert [i.name for i in again.invariants] == [i.name for i in DEFAULT_INVARIANTS]


def test_what_cannot_be_named_is_refused_in_one_line() -> None:
    class Local(Guarded):
        name = "local"

    with pytest.raises(ShippingError, match=r"class 'test_what.*Local' is not importable"):
        describe(Target(policy=Local()))

    @always(name="local_check")
    def local_check(view: Any) -> list[str]:
        """Never fails."""
        return []

    with pytest.raises(ShippingError, match="invariant 'local_check' cannot be sent"):
        describe(Target(policy=Guarded(), invariants=(*DEFAULT_INVARIANTS, local_check)))
    lonely = ServiceSet(name="lonely", initial_state=CHECKOUT.initial_state, handlers={})
    with pytest.raises(ShippingError, match="service set 'lonely' cannot be sent") as caught:
        describe(Target(policy=Guarded(), services=(CHECKOUT, lonely)))
    assert "\n" not in str(caught.value)


def test_a_policy_configured_after_it_was_made_is_refused() -> None:
    policy = Guarded()
    policy.max_attempts = 9
    with pytest.raises(ShippingError, match="configured after it was made"):
        describe(Target(policy=policy))
