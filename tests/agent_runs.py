"""What the framework agents' tests share: the default world with its single-order plan,
a target for a policy, fixed schedules (a late commit on the first charge; a fault on the
charge followed by the scripted model repeating the call unchanged), a trace's round trip
through its bytes, a systematic search at one deviation, and ``txcheck`` in a subprocess.
Each test file keeps what is particular to its framework."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.late_commit_runs import late_commit_on_first_charge as drive_late_commit
from txcheck import dumps_trace, load_trace, replay, trace_of
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.choices import Outcome
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.requests import Invoke, ModelTurn
from txcheck.sim import AsyncPolicy

__all__ = [
    "CONTRACT",
    "FIXTURE",
    "ROOT",
    "SINGLE",
    "assert_cli_replays_the_double_charge",
    "assert_default_explore_passed",
    "assert_trace_round_trips",
    "charges",
    "explore",
    "late_commit_on_first_charge",
    "model_repeats_after",
    "search_at_one_deviation",
    "target",
    "txcheck",
    "write_trace",
]

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, _DOUBLE = representative_plans(CONTRACT, FIXTURE)


def target(policy: Policy, *, skip: tuple[str, ...] = (), faults: int = 2) -> Target:
    """The single-order plan on the default world, every default invariant but ``skip``."""
    return Target(
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=(SINGLE,),
        invariants=tuple(i for i in DEFAULT_INVARIANTS if i.name not in skip),
        bounds=Bounds(max_faults=faults, max_states=10**6),
    )


def late_commit_on_first_charge(
    policy: Policy, *, stop_at_first: bool = False, skip: tuple[str, ...] = ()
) -> Session:
    """The shared late-commit schedule (``tests.late_commit_runs``) on ``policy``."""
    return drive_late_commit(
        Session(target(policy, skip=skip), SINGLE, stop_at_first=stop_at_first)
    )


def charges(session: Session) -> list[dict[str, Any]]:
    """The charges the world committed, in order."""
    return [op for op in session.run.world.operations if op["tool"] == "charge_payment"]


def model_repeats_after(policy: Policy, fault: Outcome) -> tuple[Session, Any]:
    """The first charge meets ``fault``; the scripted model then repeats the call with the
    same arguments (a deviation); otherwise the default schedule. The session and its
    execution, both deviations taken."""
    session = Session(target(policy), SINGLE, stop_at_first=False)
    faulted = repeated = False
    while session.choices() and not session.done:
        options = session.choices()
        choice = options[0]
        for option in options:
            request = session.run.request_of(option.actor)
            if (
                not faulted
                and option.outcome is fault
                and isinstance(request, Invoke)
                and request.tool == "charge_payment"
            ):
                choice, faulted = option, True
            if (
                not repeated
                and option.outcome is Outcome.RETRY_SAME_ARGUMENTS
                and isinstance(request, ModelTurn)
            ):
                choice, repeated = option, True
        session.apply(choice)
    assert faulted and repeated
    return session, session.finish()


def assert_trace_round_trips(execution: Any, spec: str, policy: Policy, tmp_path: Path) -> str:
    """``execution``'s trace under ``spec``, written and loaded back: its replay on
    ``policy`` takes the same steps and gives the same bytes. The trace text."""
    first = dumps_trace(
        trace_of(execution, policy=spec, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
    )
    path = tmp_path / "trace.json"
    path.write_text(first, "utf-8")
    again = replay(load_trace(path), target(policy))
    assert [s.to_json() for s in again.steps] == [s.to_json() for s in execution.steps]
    second = dumps_trace(
        trace_of(again, policy=spec, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
    )
    assert first == second
    return first


def write_trace(execution: Any, spec: str, path: Path) -> Path:
    """``execution``'s trace under ``spec`` at ``path``."""
    text = dumps_trace(
        trace_of(execution, policy=spec, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
    )
    path.write_text(text, "utf-8")
    return path


def search_at_one_deviation(agent: type) -> Any:
    """The systematic engine's report on ``AsyncPolicy(agent)``: every schedule of the
    single-order plan with at most one deviation."""
    from txcheck.exploration.engines.systematic import SystematicEngine  # noqa: PLC0415
    from txcheck.exploration.kernel.context import SearchContext  # noqa: PLC0415

    tgt = target(AsyncPolicy(agent), faults=1)
    return SystematicEngine().explore(tgt, SearchContext.of(tgt))


def txcheck(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m txcheck ARGV`` from the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", "txcheck", *argv],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=3000,
    )  # fmt: skip


def explore(policy: str, seed: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``txcheck explore --policy POLICY --seed SEED`` with default settings, its trace at
    ``out``, the verdict as JSON."""
    return txcheck(
        "explore", "--policy", policy, "--seed", seed, "--trace-out", str(out), "--json", *extra
    )


def assert_cli_replays_the_double_charge(policy: Policy, spec: str, tmp_path: Path) -> None:
    """The usual agent under the late-commit schedule, stopped at its first failure as a
    search's run is (the hygiene rule a fresh key breaks at once left out): the double
    charge; ``txcheck replay`` of its trace under ``spec`` reports it again, the model's
    fresh key in the replayed steps, and a dropped run closes quietly."""
    skip = ("retries_reuse_key",)
    execution = late_commit_on_first_charge(policy, stop_at_first=True, skip=skip).finish()
    assert execution.failed("no_double_charge")
    path = write_trace(execution, spec, tmp_path / "trace.json")
    done = txcheck("replay", str(path), "--policy", spec, "--skip-invariant", *skip, "--json")
    assert done.returncode == 1, done.stderr  # the double charge again
    assert "no_double_charge" in done.stdout and "fresh_key" in done.stdout
    assert "Exception ignored" not in done.stderr


def assert_default_explore_passed(code: int, verdict: dict[str, Any]) -> None:
    """A default ``explore`` that passed and earned it: exit 0, outcome ``pass``, no
    counterexample, runs made and every plan set exhaustive to at least one deviation
    (docs/agents.md, "The fixed examples under default explore")."""
    assert code == 0, str(verdict.get("counterexample"))[-4000:]
    summary = verdict["verdict"]
    assert summary["outcome"] == "pass" and verdict["counterexample"] is None
    assert summary["runs"] > 10_000 and summary["exhaustive_to"] >= 1, summary
