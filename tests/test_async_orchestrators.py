"""Asyncio orchestrators checked unmodified (``txcheck.sim``): the async twins of naive,
guarded and the five controls give the generator policies' results request for request;
a late commit catches a fresh-key retry after ``asyncio.wait_for``; a crash runs no
``finally`` block and a stale port is refused in the trace; forks and replays agree."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.late_commit_runs import late_commit_on_first_charge as drive_late_commit
from txcheck.cli import main
from txcheck.exploration.engines.systematic import SystematicEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import EngineReport
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.exploration.spread.shipping import ShippingError, describe, rebuild
from txcheck.exploration.usercode.loading import load_policy
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import PolicyError, SimulationError
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.choices import Action, Choice, Outcome
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.requests import Invoke, Refused, Sleep
from txcheck.models.sim.runner import SERVICE, Run
from txcheck.models.sim.stored import Stores
from txcheck.models.stores.sqlite import SqliteIdempotencyStore, SqliteJournal
from txcheck.scenarios.run import run_all
from txcheck.sim import AsyncPolicy, Ports, is_async_entry
from txcheck.testing import txcheck_testcase
from txcheck.traces.document import trace_of, write_trace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.async_orchestrators import controls, guarded, naive, wait_for  # noqa: E402

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, DOUBLE = representative_plans(CONTRACT, FIXTURE)


def without_late_commits(cls: type) -> type:
    """The twin as the generator policies are checked: no late commits offered."""
    return type(cls.__name__, (cls,), {"late_commits": False})


TWINS: dict[str, type] = {
    "guarded": guarded.Guarded,
    "control-fresh-key": controls.FreshKeyRetry,
    "control-no-saga": controls.NoCompensation,
    "control-dual-write": controls.DualWrite,
    "control-no-dedupe": controls.NoDedupe,
    "control-lazy-validation": controls.LazyValidation,
}


def target(
    policy: Policy, plans: tuple[Any, ...] = SINGLE, k: int = 2, *, only: tuple[str, ...] = ()
) -> Target:
    invariants = tuple(i for i in DEFAULT_INVARIANTS if not only or i.name in only)
    return Target(
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=(plans,),
        invariants=invariants,
        bounds=Bounds(max_faults=k, max_states=10**6),
    )


def systematic(searched: Target) -> EngineReport:
    """The systematic engine's report on ``searched``, in this process."""
    return SystematicEngine().explore(searched, SearchContext.of(searched))


DUPLICATES = ("no_double_charge", "no_double_effect", "retries_reuse_key")
"""What a client that retries without a saga is held to (it leaves reservations behind
on a rejection by design)."""


def record_without_names(record: dict[str, Any]) -> str:
    data = {k: v for k, v in record.items() if k not in ("policy", "run")}
    return json.dumps(data, sort_keys=True)


# -- the twins ----------------------------------------------------------------------------


def test_every_scenario_and_control_gives_the_generator_twins_records() -> None:
    substitutes = {name: AsyncPolicy(without_late_commits(cls)) for name, cls in TWINS.items()}
    generators = run_all(contract=CONTRACT, fixture=FIXTURE)
    asyncs = run_all(contract=CONTRACT, fixture=FIXTURE, substitutes=substitutes)
    assert len(generators) == len(asyncs) == 19
    for plain, twin in zip(generators, asyncs, strict=True):
        assert twin.policy.endswith("-async") or twin.policy == "guarded-async"
        assert twin.met and plain.met, twin.scenario.id
        # the whole record: trace, journals, state before and after, assertions
        assert record_without_names(twin.record()) == record_without_names(plain.record())


def test_a_twin_that_differs_is_told_apart() -> None:
    """Positive control for the comparison above: a twin that backs off one tick longer
    gives other records on the scenario where it sleeps."""

    class SlowerBackoff(without_late_commits(guarded.Guarded)):  # type: ignore[misc]
        backoff = (2, 2, 4, 8)

    generators = run_all(contract=CONTRACT, fixture=FIXTURE)
    asyncs = run_all(
        contract=CONTRACT, fixture=FIXTURE, substitutes={"guarded": AsyncPolicy(SlowerBackoff)}
    )
    differ = [
        a.scenario.id
        for a, b in zip(generators, asyncs, strict=True)
        if record_without_names(a.record()) != record_without_names(b.record())
    ]
    assert "timeout-retries-exhausted" in differ


@pytest.mark.parametrize(
    ("plans", "k"),
    [(SINGLE, 1), (DOUBLE, 1), pytest.param(SINGLE, 2, marks=pytest.mark.slow)],
)
def test_systematic_search_of_the_twins_visits_the_same_states(
    plans: tuple[Any, ...], k: int
) -> None:
    reports = []
    for policy in (
        builtin_policy("guarded"),
        AsyncPolicy(without_late_commits(guarded.Guarded)),
    ):
        assert policy is not None
        tgt = target(policy, plans, k)
        reports.append(systematic(tgt))
    plain, twin = reports
    assert plain.counterexample is None and twin.counterexample is None
    assert (twin.runs, twin.steps, twin.states) == (plain.runs, plain.steps, plain.states)
    assert twin.states > 100


def test_the_naive_twin_is_caught_like_naive() -> None:
    found = []
    for policy in (builtin_policy("naive"), AsyncPolicy(without_late_commits(naive.Naive))):
        assert policy is not None
        tgt = target(policy, SINGLE, 1)
        report = systematic(tgt)
        assert report.counterexample is not None
        found.append([s.to_json() for s in report.counterexample.execution.steps])
    assert found[0] == found[1]


# -- late commits -------------------------------------------------------------------------


WaitForFreshKey = wait_for.FreshKey
WaitForStableKey = wait_for.StableKey


def late_commit_on_first_charge(
    policy: Policy, *, stop_at_first: bool = False, only: tuple[str, ...] = DUPLICATES
) -> Session:
    """The shared late-commit schedule (``tests.late_commit_runs``) on ``policy``."""
    return drive_late_commit(
        Session(target(policy, only=only), SINGLE, stop_at_first=stop_at_first)
    )


def test_a_fresh_key_after_wait_for_double_charges_through_a_late_commit() -> None:
    session = late_commit_on_first_charge(AsyncPolicy(WaitForFreshKey))
    execution = session.finish()
    assert "no_double_effect" in {f.name for f in execution.failures}
    landed = [s for s in execution.steps if s.choice.actor == SERVICE]
    assert len(landed) == 1 and landed[0].request["tool"] == "charge_payment"
    charges = [op for op in session.run.world.operations if op["tool"] == "charge_payment"]
    assert len(charges) == 2  # the retry's, then the abandoned call's, landing late
    assert charges[0]["key"] != charges[1]["key"]


def test_the_stable_key_version_survives_the_same_late_commit() -> None:
    session = late_commit_on_first_charge(AsyncPolicy(WaitForStableKey))
    execution = session.finish()
    assert execution.ok, [f.name for f in execution.failures]
    charges = [op for op in session.run.world.operations if op["tool"] == "charge_payment"]
    assert len(charges) == 1
    conflicts = [s for s in execution.steps if s.observed.get("code") == "idempotency_conflict"]
    assert conflicts  # the retries met the key in flight, then the late call landed
    landed = [s.index for s in execution.steps if s.choice.actor == SERVICE]
    assert landed and landed[0] > conflicts[-1].index


def test_the_search_finds_the_late_commit_and_passes_the_stable_key() -> None:
    # One deviation: the stable key holds (with two, a lost response and a clock jump past
    # the key's lifetime make its blind retry charge again: why guarded looks up first).
    tgt = target(AsyncPolicy(WaitForStableKey), SINGLE, 1, only=DUPLICATES)
    report = systematic(tgt)
    assert report.counterexample is None and report.states > 50
    assert report.coverage["deviations"].get("late_commit", 0) > 0
    tgt = target(AsyncPolicy(WaitForFreshKey), SINGLE, 1, only=DUPLICATES)
    report = systematic(tgt)
    assert report.counterexample is not None


def test_late_commits_are_offered_only_to_policies_that_ask() -> None:
    def charge_outcomes(policy: Policy) -> set[str]:
        run = target(policy).run(SINGLE)
        seen: set[str] = set()
        while run.choices():
            options = run.choices()
            seen |= {str(o.outcome) for o in options if o.action is Action.COMPLETE}
            run.apply(options[0])
        return seen

    generator = builtin_policy("guarded")
    assert generator is not None
    assert "late_commit" not in charge_outcomes(generator)
    assert "late_commit" in charge_outcomes(AsyncPolicy(guarded.InFlightAware))
    assert "late_commit" in charge_outcomes(AsyncPolicy(WaitForStableKey))  # the default
    assert "late_commit" not in charge_outcomes(AsyncPolicy(guarded.Guarded))  # its twin's


# -- crashes ------------------------------------------------------------------------------

FINALLY_RAN: list[str] = []
KEPT: list[Ports] = []


class CrashProbe:
    """Journals, then waits on a call inside try/finally; keeps its ports in a global (a
    client cached across restarts) and uses the first generation's after a restart."""

    name = "crash-probe"
    late_commits = False

    async def orchestrate(self, ctx: Any, ports: Ports) -> None:
        KEPT.append(ports)
        if ports.generation > 1:
            with contextlib.suppress(RuntimeError):
                await KEPT[0].journal.append({"stale": True})
            await ports.journal.append({"restarted": ports.generation})
            return
        try:
            await ports.journal.append({"started": True})
            first = ctx.plan.calls[0]
            await ports.tools.call(first.name, first.arguments, call_id=first.id)
        except BaseException:
            FINALLY_RAN.append("except")
            raise
        finally:
            FINALLY_RAN.append("finally")


def test_a_crash_runs_no_finally_block_and_a_stale_port_is_refused() -> None:
    FINALLY_RAN.clear()
    KEPT.clear()
    run = target(AsyncPolicy(CrashProbe)).run(SINGLE)
    instance = run.instances[0]
    run.apply(run.choices()[0])  # journal.append(started)
    run.apply(run.choices()[0])  # the call is sent
    assert isinstance(run.request_of(instance), Invoke)
    step = run.apply(Choice(instance, Action.CRASH), deviation=True)
    assert step.observed.get("restarted") is True
    while run.choices():
        run.apply(run.choices()[0])
    assert FINALLY_RAN == []  # neither the except nor the finally of generation 1 ran
    refused = [s for s in run.steps if s.request.get("kind") == Refused.kind.value]
    assert len(refused) == 1
    assert refused[0].request == {"kind": "Refused", "port": "journal.append", "generation": 1}
    assert "crashed" in refused[0].observed["refused"]
    assert list(run.world.journals[instance]) == [{"started": True}, {"restarted": 2}]


# -- forks, replays, determinism ----------------------------------------------------------


def test_a_fork_of_an_async_run_goes_on_as_a_replay_would() -> None:
    tgt = target(AsyncPolicy(guarded.Guarded), DOUBLE)
    original = tgt.run(DOUBLE, track_positions=True)
    for step in range(25):
        options = original.choices()
        if not options:
            break
        original.apply(options[(step * 7) % len(options)] if step % 3 == 0 else options[0])
    twin = original.fork()
    assert twin is not None
    replayed = tgt.run(DOUBLE, track_positions=True)
    for step in original.steps:
        replayed.apply(step.choice)
    assert twin.fingerprint() == replayed.fingerprint()
    for step in range(200):  # a fixed fault-rich schedule, as test_fork's ``pick``
        options = replayed.choices()
        if not options:
            break
        choice = options[(step * 5) % len(options)] if step % 4 == 0 else options[0]
        twin.apply(choice)
        replayed.apply(choice)
        assert twin.fingerprint() == replayed.fingerprint()


def explore_trace(tmp: Path, cwd: Path, hashseed: str) -> bytes:
    out = tmp / f"trace-{hashseed}.json"
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable, "-m", "txcheck", "explore", "--policy",
            "examples.async_orchestrators.naive:Naive", "--seed", "1", "--no-seeds",
            "--engine", "random", "--max-examples", "20", "--trace-out", str(out),
        ],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    return out.read_bytes()


def test_the_same_seed_gives_the_same_trace_bytes_anywhere(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = explore_trace(tmp_path, ROOT, "0")
    second = explore_trace(tmp_path, elsewhere, "12345")
    assert first == second
    assert b'"policy": "examples.async_orchestrators.naive:Naive"' in first


# -- loading and refusals -----------------------------------------------------------------


async def bare_entry(ctx: Any, ports: Ports) -> None:
    await ports.journal.append({"hello": ctx.instance})


def test_entries_are_recognised_and_named_by_their_import_path() -> None:
    assert is_async_entry(bare_entry) and is_async_entry(guarded.Guarded)
    assert is_async_entry(guarded.Guarded())
    assert not is_async_entry(builtin_policy("guarded")) and not is_async_entry(len)
    loaded = load_policy(guarded.Guarded, timeout=None)
    assert loaded.spec == "examples.async_orchestrators.guarded:Guarded"
    assert isinstance(loaded.policy, AsyncPolicy) and loaded.policy.max_attempts == 4
    assert not loaded.policy.late_commits and loaded.policy.uses_outbox  # declared off
    assert load_policy(guarded.InFlightAware, timeout=None).policy.late_commits  # the default
    assert load_policy(bare_entry, timeout=None).spec.endswith(":bare_entry")


class Deadlocked:
    name = "deadlocked"

    async def orchestrate(self, ctx: Any, ports: Ports) -> None:
        await asyncio.Event().wait()


class ToThread:
    name = "to-thread"

    async def orchestrate(self, ctx: Any, ports: Ports) -> None:
        await asyncio.to_thread(print, "never")


class Raises:
    name = "raises"

    async def orchestrate(self, ctx: Any, ports: Ports) -> None:
        await ports.journal.append({})
        raise KeyError("boom")


def first_error(policy: Policy) -> BaseException:
    with pytest.raises((SimulationError, PolicyError)) as caught:
        run = target(policy).run(SINGLE)
        while run.choices():
            run.apply(run.choices()[0])
    return caught.value


def test_a_deadlock_a_fence_and_an_exception_are_reported_not_hung() -> None:
    deadlock = first_error(AsyncPolicy(Deadlocked))
    assert isinstance(deadlock, SimulationError) and "deadlock" in str(deadlock)
    fence = first_error(AsyncPolicy(ToThread))
    assert isinstance(fence, SimulationError) and "test_async_orchestrators.py" in str(fence)
    raised = first_error(AsyncPolicy(Raises))
    assert isinstance(raised, PolicyError) and "KeyError" in str(raised)
    assert "at step 0" in str(raised)  # resumed by step 0, its journal append


def test_a_backoff_sleep_is_a_sleep_of_the_world_clock() -> None:
    class Backoff:
        name = "backoff"

        async def orchestrate(self, ctx: Any, ports: Ports) -> None:
            await asyncio.sleep(2.5)
            await ports.journal.append({"at": asyncio.get_running_loop().time()})

    run = target(AsyncPolicy(Backoff)).run(SINGLE)
    asked = run.request_of(run.instances[0])
    assert asked == Sleep(ticks=3)
    while run.choices():
        run.apply(run.choices()[0])
    assert run.world.clock == 3
    assert list(run.world.journals[run.instances[0]]) == [{"at": 2.5}]


def iter_kinds(run: Run) -> Iterator[str]:
    for step in run.steps:
        yield str(step.request.get("kind", ""))


# -- the command line ---------------------------------------------------------------------


def test_scenarios_runs_the_async_twins_in_place_of_the_built_ins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "examples.async_orchestrators"
    argv = ["scenarios", "--out", str(tmp_path), "--policy", f"{spec}.guarded:Guarded"]
    argv += ["--control", f"control-no-dedupe={spec}.controls:NoDedupe"]
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert f"14/14 scenarios passed under {spec}.guarded:Guarded" in shown
    lines = (tmp_path / "raw_results.jsonl").read_text("utf-8").splitlines()
    policies = [json.loads(line)["policy"] for line in lines]
    assert policies.count(f"{spec}.guarded:Guarded") == 14  # named as given
    assert f"{spec}.controls:NoDedupe" in policies and "control-no-saga" in policies
    # a control that is not one, or an entry that is not a policy: exit 2, one line
    assert main([*argv[:3], "--control", "guarded=x:y"]) == 2
    assert "expected NAME=SPEC" in capsys.readouterr().err
    assert main([*argv[:3], "--policy", "json:dumps"]) == 2
    assert "must be a Policy" in capsys.readouterr().err


def explore_json(policy: str, seed: int, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["explore", "--policy", policy, "--seed", str(seed), "--json"])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    data["exit"] = code
    return data


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_default_explore_gives_the_twins_the_same_verdicts(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # counterexample traces land here
    spec = "examples.async_orchestrators"
    plain = explore_json("guarded", seed, capsys)
    twin = explore_json(f"{spec}.guarded:Guarded", seed, capsys)
    assert plain["exit"] == twin["exit"] == 0
    for key in ("bound", "runs", "outcome", "exhaustive_to", "faults"):
        assert twin["verdict"][key] == plain["verdict"][key], key
    caught = explore_json("naive", seed, capsys)
    caught_twin = explore_json(f"{spec}.naive:Naive", seed, capsys)
    assert caught["exit"] == caught_twin["exit"] == 1
    assert caught_twin["verdict"]["outcome"] == caught["verdict"]["outcome"] == "counterexample"


def test_txcheck_testcase_checks_an_async_orchestrator(tmp_path: Path) -> None:
    def outcome(entry: Any) -> unittest.TestResult:
        case = txcheck_testcase(
            entry, plans=[SINGLE], max_examples=30, trace_dir=str(tmp_path), database=None
        )
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
        assert result.testsRun == 1
        return result

    assert outcome(naive.Naive).failures  # caught
    assert not outcome(guarded.Guarded).failures and not outcome(guarded.Guarded).errors


def test_an_async_target_ships_to_workers_by_its_entry_path() -> None:
    loaded = load_policy("examples.async_orchestrators.guarded:InFlightAware")
    spec = describe(target(loaded.policy))
    assert spec.description.policy == "examples.async_orchestrators.guarded:InFlightAware"
    rebuilt = rebuild(spec).policy
    assert isinstance(getattr(rebuilt, "inner", rebuilt), AsyncPolicy)
    assert rebuilt.late_commits and rebuilt.name == spec.description.policy

    class Local:  # not importable: refused before any search, naming why
        async def orchestrate(self, ctx: Any, ports: Ports) -> None:
            await ports.journal.read()

    with pytest.raises(ShippingError, match="entry point is not importable"):
        describe(target(AsyncPolicy(Local)))


def test_a_late_commit_trace_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    spec = "examples.async_orchestrators.wait_for:FreshKey"
    harms = ("no_double_charge", "no_double_effect")
    session = late_commit_on_first_charge(load_policy(spec).policy, stop_at_first=True, only=harms)
    execution = session.finish()
    document = trace_of(execution, policy=spec, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
    outcomes = [step["outcome"] for step in document["steps"]]
    assert "late_commit" in outcomes
    assert any(step["actor"] == SERVICE for step in document["steps"])
    path = tmp_path / "late.json"
    write_trace(document, path)
    argv = ["replay", str(path), "--policy", spec, "--invariants-only", *harms]
    assert main(argv) == 1
    assert "Reproduced: no_double_charge" in capsys.readouterr().out


def test_late_commits_catch_guarded_and_in_flight_aware_holds() -> None:
    """The finding docs/async.md reports: with late commits, guarded rolls back a plan
    whose first call then lands; asking the key record before giving up holds (here to
    one deviation on the checkout plan, where the finding needs one)."""
    late = type("GuardedWithLateCommits", (guarded.Guarded,), {"late_commits": True})
    tgt = target(AsyncPolicy(late), SINGLE, 1)
    report = systematic(tgt)
    assert report.counterexample is not None
    steps = report.counterexample.execution.steps
    assert [s.choice.outcome for s in steps if s.deviation] == [Outcome.LATE_COMMIT]
    assert {f.name for f in report.counterexample.execution.failures} >= {"acceptable_outcome"}
    tgt = target(AsyncPolicy(guarded.InFlightAware), SINGLE, 1)
    report = systematic(tgt)
    assert report.counterexample is None, report.counterexample
    assert report.coverage["deviations"].get("late_commit", 0) > 0


def test_an_async_orchestrator_on_sqlite_stores_gets_the_in_memory_verdict() -> None:
    """Issue 26's real stores under an asyncio orchestrator: its journal and idempotency
    records in SQLite, crashes closing its connections, the same search as in memory."""
    in_memory = target(AsyncPolicy(guarded.Guarded), DOUBLE, 1)
    on_sqlite = attrs.evolve(
        in_memory, stores=Stores(journal=SqliteJournal, idempotency=SqliteIdempotencyStore)
    )
    reports = [systematic(t) for t in (in_memory, on_sqlite)]
    assert reports[0].counterexample is None and reports[1].counterexample is None
    assert (reports[1].runs, reports[1].states) == (reports[0].runs, reports[0].states)
    assert reports[0].coverage["deviations"].get("crash", 0) > 0
