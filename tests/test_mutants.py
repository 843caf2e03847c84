"""The mutant library: each mutant fails its catching invariant on its known shortest
run, and ``guarded`` survives the very same run; the committed trace of that run replays
to the same failure."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest

from txcheck.exploration.kernel.schedule import Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded
from txcheck.traces.document import load_trace, target_of, translate_deviations
from txcheck.traces.replaying import replay

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS, Mutant
from mutants.make_traces import policy_spec, trace_text
from mutants.shortest import PLANS, SHORTEST

CONTRACT = default_contract()
FIXTURE = default_fixture()
TRACES = Path(__file__).resolve().parent.parent / "examples" / "mutants" / "traces"


def test_the_library_has_at_least_fifteen_distinct_mutants() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) >= 15 and len(set(names)) == len(names)
    assert set(names) == set(SHORTEST)
    for mutant in MUTANTS:
        doc = mutant.policy.__doc__ or ""
        assert "Bug:" in doc and "Caught by:" in doc and "Shortest run:" in doc


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_mutant_fails_its_invariant_on_its_shortest_run(mutant: Mutant) -> None:
    script = SHORTEST[mutant.name]
    chooser = Deviations(script)
    execution = execute(
        Target(
            policy=mutant.policy(),
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLANS[mutant.plan]],
        chooser=chooser,
        stop_at_first=False,
    )
    assert chooser.unused == []
    fired = {f.name for f in execution.failures}
    assert fired & set(mutant.catches), fired
    assert execution.deviations == mutant.min_deviations == len(script)


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_guarded_survives_each_mutant_s_shortest_run(mutant: Mutant) -> None:
    execution = execute(
        Target(policy=Guarded(), contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS),
        [PLANS[mutant.plan]],
        chooser=Deviations(SHORTEST[mutant.name]),
        stop_at_first=False,
    )
    assert execution.failures == () and execution.quiesced


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_committed_trace_is_the_run_it_records(mutant: Mutant) -> None:
    """The committed file is what make_traces.py writes now, byte for byte: a stale one
    (the model moved on) is refused by ``txcheck replay`` as not the recorded run."""
    committed = (TRACES / f"{mutant.name}.json").read_text(encoding="utf-8")
    assert committed == trace_text(mutant), "run examples/mutants/make_traces.py"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_committed_trace_replays_to_the_same_failing_invariant(mutant: Mutant) -> None:
    path = TRACES / f"{mutant.name}.json"
    trace = load_trace(path)
    assert trace.policy == policy_spec(mutant)
    recorded = [v["invariant"] for v in trace.violations]
    assert set(recorded) & set(mutant.catches), recorded
    execution = replay(trace, target_of(trace, mutant.policy()))
    assert execution.divergence is None
    assert [f.name for f in execution.failures] == recorded
    assert execution.deviations == mutant.min_deviations
    assert len(execution.steps) == len(trace.choices)


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_guarded_does_not_fail_a_committed_mutant_trace(mutant: Mutant) -> None:
    """``guarded`` may diverge from the mutant's choices (it does something else at that
    point); on the choices up to there, then the default schedule, it fails nothing, and
    under the trace's faults (``translate_deviations``) it fails nothing either."""
    trace = load_trace(TRACES / f"{mutant.name}.json")
    execution = replay(trace, target_of(trace, Guarded()))
    assert execution.failures == () and execution.error is None
    if execution.divergence is not None:
        prefix = attrs.evolve(trace, choices=trace.choices[: execution.divergence.step])
        execution = replay(prefix, target_of(prefix, Guarded()))
    assert execution.ok and execution.quiesced
    same_faults = execute(
        Target(
            policy=Guarded(),
            contract=trace.contract,
            fixture=trace.fixture,
            invariants=DEFAULT_INVARIANTS,
        ),
        trace.plans,
        chooser=Deviations(translate_deviations(trace.document)),
    )
    assert same_faults.ok and same_faults.quiesced
