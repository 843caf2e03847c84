"""The systematic search spread over workers, level by level in chunks, proves what the
in-process search proves: the same verdict, the same minimal counterexample (deviations
and steps), the same bound; the same report whatever the number of workers; and a time or
state budget still stops it honestly."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

import txcheck.exploration.engines.systematic_split as split_module
from txcheck.exploration.engines.systematic import SystematicEngine, _Node
from txcheck.exploration.engines.systematic_split import _cut
from txcheck.exploration.engines.visited import FingerprintTable, Overlay
from txcheck.exploration.kernel.context import DEFAULT_TUNING, SearchContext
from txcheck.exploration.kernel.report import EngineReport, StopKind, StopReason
from txcheck.exploration.kernel.target import Bounds, Budget, Deadline, Target
from txcheck.exploration.kernel.workers import InProcess
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS

SINGLE = representative_plans(default_contract(), default_fixture())[0]
POLICIES = ["guarded", "naive", *(m.name for m in MUTANTS)]


def _policy(name: str) -> Any:
    return builtin_policy(name) or next(m.policy() for m in MUTANTS if m.name == name)


_SEARCHED: dict[tuple[str, str], EngineReport] = {}


def _searched(name: str, where: str, workers: Any = None) -> EngineReport:
    """The k=2 search of the checkout plan under policy ``name``, ``alone`` (one process),
    ``here`` (chunks, in-process) or ``dask`` (chunks on ``workers``); each made once."""
    key = (name, where)
    if key not in _SEARCHED:
        chosen = {"alone": None, "here": InProcess(), "dask": workers}[where]
        target = _target(_policy(name), 2)
        _SEARCHED[key] = SystematicEngine().explore(target, SearchContext(workers=chosen))
    return _SEARCHED[key]


def _target(policy: Any, k: int, *, single: bool = True, max_states: int = 10**7) -> Target:
    return Target(
        policy=policy,
        plans=(SINGLE,) if single else (),
        bounds=Bounds(max_faults=k, max_states=max_states),
        budget=Budget(seed=1, database=None),
    )


def _proved(report: EngineReport) -> tuple[Any, ...]:
    """What a systematic search proves: pass or the minimal counterexample's deviations
    and steps, and the bound it searched every state within."""
    found = report.counterexample
    minimal = None if found is None else (found.deviations, len(found.execution.steps))
    return minimal, report.exhaustive_bound, report.complete


def _counted(report: EngineReport) -> tuple[Any, ...]:
    """Everything a report counts, and the counterexample's every step."""
    found = report.counterexample
    steps = None if found is None else [s.to_json() for s in found.execution.steps]
    return (
        report.states,
        report.runs,
        report.steps,
        report.writes,
        report.coverage,
        report.plans,
        steps,
    )


# -- the pieces --------------------------------------------------------------------------------


def _digest(number: int) -> bytes:
    return number.to_bytes(8, "little") + bytes(8)


def test_merging_visited_sets_keeps_the_lower_reach_and_counts_new_states() -> None:
    mine, theirs = FingerprintTable(), FingerprintTable()
    mine.put(_digest(1), 1, 10)
    mine.put(_digest(2), 2, 5)
    theirs.put(_digest(1), 1, 8)  # fewer steps: lower
    theirs.put(_digest(2), 3, 1)  # more deviations: not lower
    for number in range(3, 3000):  # enough to make the table grow while merging
        theirs.put(_digest(number), 2, number)
    assert mine.merge(theirs) == 2997
    assert mine.get(_digest(1)) == (1, 8)
    assert mine.get(_digest(2)) == (2, 5)
    assert mine.get(_digest(2999)) == (2, 2999)
    assert len(mine) == 2999


def test_an_overlay_reads_both_tables_and_writes_only_its_own() -> None:
    base = FingerprintTable()
    base.put(_digest(1), 1, 10)
    overlay = Overlay(base)
    assert overlay.get(_digest(1)) == (1, 10)
    overlay.put(_digest(1), 0, 20)
    overlay.put(_digest(2), 2, 2)
    assert overlay.get(_digest(1)) == (0, 20)
    assert base.get(_digest(1)) == (1, 10) and base.get(_digest(2)) is None
    assert len(overlay.own) == 2


@pytest.mark.parametrize("count", [0, 1, 5, 16, 17, 100])
def test_a_level_is_cut_into_contiguous_chunks_in_order(count: int) -> None:
    nodes = [_Node(path=None, cut=i, alt=None) for i in range(count)]  # type: ignore[arg-type]
    chunks = _cut(nodes, DEFAULT_TUNING.chunks)
    assert [n for chunk in chunks for n in chunk] == nodes
    assert len(chunks) == min(count, DEFAULT_TUNING.chunks)
    assert all(chunks) and max(map(len, chunks), default=0) - min(map(len, chunks), default=0) <= 1


# -- what it proves ----------------------------------------------------------------------------


def test_without_a_bug_the_distinct_states_are_those_of_one_process() -> None:
    # Duplicate work across chunks is explored, and said, but not counted as states.
    alone, split = _searched("guarded", "alone"), _searched("guarded", "here")
    assert _proved(split) == _proved(alone) == (None, 2, True)
    assert split.states == alone.states > 10_000
    assert split.runs > alone.runs  # the duplicate work
    assert split.notes[0].startswith("spread over in-process: each level's branches in up to 16")
    assert any("explored by more than one chunk" in note for note in split.notes)


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
def test_chunked_levels_on_every_plan_set_prove_what_one_process_proves(policy: str) -> None:
    target = _target(_policy(policy), 2, single=False)
    alone = SystematicEngine().explore(target, SearchContext())
    split = SystematicEngine().explore(target, SearchContext(workers=InProcess()))
    assert _proved(split) == _proved(alone)


def test_a_time_budget_stops_the_levels_and_proves_no_bound() -> None:
    target = _target(builtin_policy("guarded"), 3)
    report = SystematicEngine().explore(
        target, SearchContext(deadline=Deadline(0.3), workers=InProcess())
    )
    assert "stopped early: time budget exhausted" in report.notes
    assert report.stopped is not None and report.stopped.kind is StopKind.TIME
    assert not report.complete and report.exhaustive_bound != 3
    assert report.plans[0].stopped == "time budget exhausted"


def test_an_interrupted_search_says_so_and_proves_no_bound() -> None:
    deadline = Deadline()
    deadline.interrupt()  # as SIGINT does, before the first chunk ran
    target = _target(builtin_policy("guarded"), 1)
    report = SystematicEngine().explore(
        target, SearchContext(deadline=deadline, workers=InProcess())
    )
    assert "stopped early: interrupted" in report.notes
    assert report.stopped == StopReason(StopKind.INTERRUPTED, "interrupted")
    assert report.exhaustive_bound is None and not report.complete
    assert report.plans[0].stopped == "interrupted"


def test_a_state_budget_stops_a_level_below_the_bound() -> None:
    target = _target(builtin_policy("guarded"), 2, max_states=3000)
    report = SystematicEngine().explore(target, SearchContext(workers=InProcess()))
    assert not report.complete
    assert report.exhaustive_bound == 1  # level 1 fits in 3,000 states, level 2 does not
    assert report.plans[0].stopped == "the state budget ran out at 2 deviations"
    assert report.states <= 3000


def test_a_state_budget_finishes_one_plan_set_rather_than_two_halves() -> None:
    # Two copies of the checkout plan, each needing about 69,000 states at k=2, and room
    # for one: the first finishes its level, the second says where it stopped.
    target = attrs.evolve(
        _target(builtin_policy("guarded"), 2, max_states=100_000), plans=(SINGLE, SINGLE)
    )
    report = SystematicEngine().explore(target, SearchContext(workers=InProcess()))
    first, second = report.plans
    assert (first.reached, first.stopped) == (2, "")
    assert (second.reached, second.stopped) == (1, "the state budget ran out at 2 deviations")
    assert report.exhaustive_bound == 1 and report.states <= 100_000


# -- on a real cluster of two worker processes ---------------------------------------------------


# the five slowest here in a default-suite run under load (over 10 s each; uncontended, in
# CI, the five together took about 11 s): the slow tier runs them, as it runs every policy
# over every plan set
_SLOW_ON_WORKERS = {
    "mutant-validate-first-call-only",
    "mutant-validate-list-order",
    "mutant-compensate-forward",
    "mutant-retry-rejections",
    "mutant-skip-timed-out-compensation",
}


@pytest.mark.parametrize(
    "policy",
    [pytest.param(p, marks=pytest.mark.slow) if p in _SLOW_ON_WORKERS else p for p in POLICIES],
)
def test_two_workers_prove_what_one_process_proves(dask_workers: Any, policy: str) -> None:
    alone, spread = _searched(policy, "alone"), _searched(policy, "dask", dask_workers)
    assert _proved(spread) == _proved(alone)
    assert spread.notes[0].startswith("spread over 2 local worker processes: each level's")
    if spread.counterexample is not None:
        assert spread.counterexample.execution.failures  # re-executed here: a full execution
        assert spread.counterexample.invariant == alone.counterexample.invariant  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["guarded", "mutant-lookup-by-key-only"])
def test_any_number_of_workers_gives_the_same_report(dask_workers: Any, name: str) -> None:
    spread, here = _searched(name, "dask", dask_workers), _searched(name, "here")
    assert _counted(spread) == _counted(here)  # two processes count what one counts


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
def test_two_workers_on_every_plan_set_prove_what_one_process_proves(
    dask_workers: Any, policy: str
) -> None:
    target = _target(_policy(policy), 2, single=False)
    alone = SystematicEngine().explore(target, SearchContext())
    spread = SystematicEngine().explore(target, SearchContext(workers=dask_workers))
    assert _proved(spread) == _proved(alone)


def test_a_broken_chunk_merge_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Positive control: a split that drops the branches of every chunk but the first
    misses the bug the full split finds (so the tests above can fail)."""
    assert _searched("mutant-lookup-by-key-only", "here").counterexample is not None
    target = _target(_policy("mutant-lookup-by-key-only"), 2)
    real = split_module._Split._merge

    def first_only(self: Any, chunk: Any, index: int, done: Any) -> None:
        if index > 0:
            done = attrs.evolve(done, children={}, found=None)
        real(self, chunk, index, done)

    monkeypatch.setattr(split_module._Split, "_merge", first_only)
    broken = SystematicEngine().explore(target, SearchContext(workers=InProcess()))
    assert broken.counterexample is None
