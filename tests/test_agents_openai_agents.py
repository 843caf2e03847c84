"""Agents checked unmodified (issue 25), the OpenAI Agents SDK: the SDK's own ``Runner`` loop
runs on the simulated loop with ``txcheck.adapters.openai_agents``'s scripted model and the
contract's tools served by the world; the checkout agent as usually written double-charges
under a late commit and the stable-key one does not; the model's retry decision is in the
trace and replays, and the same choices give the same trace bytes; ``--agent ...
--framework openai-agents`` runs a bare ``Agent`` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from tests.late_commit_runs import late_commit_on_first_charge as drive_late_commit
from txcheck import dumps_trace, load_trace, replay, trace_of
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.exploration.usercode.loading import load_policy
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import PolicyError
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.choices import Action, Outcome
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.requests import Invoke, ModelTurn, ToolResult
from txcheck.sim import AsyncPolicy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.agents import openai_agents_checkout as example  # noqa: E402

CONTRACT = default_contract()
FIXTURE = default_fixture()
SINGLE, _DOUBLE = representative_plans(CONTRACT, FIXTURE)
NAIVE = "examples.agents.openai_agents_checkout:OpenAIAgentsCheckoutAgent"
FIXED = "examples.agents.openai_agents_checkout:StableKeyOpenAIAgentsCheckoutAgent"
FACTORY = "examples.agents.openai_agents_checkout:make_agent"
SPEC = f"openai-agents:{FACTORY}"


def target(policy: Policy, *, skip: tuple[str, ...] = ()) -> Target:
    return Target(
        policy=policy,
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=(SINGLE,),
        invariants=tuple(i for i in DEFAULT_INVARIANTS if i.name not in skip),
        bounds=Bounds(max_faults=2, max_states=10**6),
    )


def late_commit_on_first_charge(
    policy: Policy, *, stop_at_first: bool = False, skip: tuple[str, ...] = ()
) -> Session:
    """The shared late-commit schedule (``tests.late_commit_runs``) on ``policy``."""
    return drive_late_commit(
        Session(target(policy, skip=skip), SINGLE, stop_at_first=stop_at_first)
    )


def charges(session: Session) -> list[dict[str, Any]]:
    return [op for op in session.run.world.operations if op["tool"] == "charge_payment"]


# -- the adapter's pieces -------------------------------------------------------------------


def test_the_model_reads_tool_outputs_as_feedback() -> None:
    from txcheck.adapters import openai_agents as adapter  # noqa: PLC0415
    from txcheck.adapters.model import Feedback, ToolCall  # noqa: PLC0415

    call = ToolCall(id="call_3", name="charge_payment", arguments={}, attempt=2)
    assert adapter.wire_id(call) == "call_3~2" and adapter.plan_call_id("call_3~2") == "call_3"
    assert adapter.wire_id(ToolCall(id="call_3", name="x", arguments={})) == "call_3"
    timeout = adapter.tool_output(ToolResult(status="timeout", code="timeout"))
    assert json.loads(timeout)["status"] == "timeout"
    assert adapter.feedback_of(call, timeout) == Feedback(call=call, ok=False, error="timeout")
    ok = adapter.tool_output(ToolResult(status="ok", receipt={"charge_id": "ch_1"}))
    assert adapter.feedback_of(call, ok).ok
    assert not adapter.feedback_of(call, '{"ok": false, "error": "conflict"}').ok
    # the SDK's own texts for a tool that raised or timed out are failures; plain text is ok
    raised = "An error occurred while running the tool. Please try again."
    assert adapter.feedback_of(call, raised).error == "error"
    late = "Tool 'charge_payment' timed out after 5 seconds."
    assert adapter.feedback_of(call, late).error == "timeout"
    assert adapter.feedback_of(call, "charged 12.50 USD").ok
    tools = adapter.contract_tools(CONTRACT, SINGLE[0], ports=None)
    assert [t.name for t in tools] == list(CONTRACT.tools)
    assert not any(t.strict_json_schema for t in tools)


def test_what_the_loop_cannot_control_is_off_or_refused() -> None:
    from agents import Agent, function_tool  # noqa: PLC0415
    from agents.tracing import get_trace_provider  # noqa: PLC0415

    from txcheck.adapters import openai_agents as adapter  # noqa: PLC0415
    from txcheck.adapters.model import ScriptedModel  # noqa: PLC0415

    assert adapter.RUN_CONFIG.tracing_disabled
    assert get_trace_provider()._disabled  # type: ignore[attr-defined]
    model = adapter.ScriptedAgentsModel(ScriptedModel(SINGLE[0], CONTRACT, ports=None))
    with pytest.raises(PolicyError, match=r"run_streamed.*use Runner\.run"):
        model.stream_response(None, [], None, [], None, [], None)

    @function_tool
    def charge_payment(order_id: str) -> str:
        return "charged"

    with pytest.raises(PolicyError, match=r"'charge_payment' is a sync function.*async def"):
        adapter.refuse_sync_tools([charge_payment])

    @function_tool
    async def lookup(order_id: str) -> str:
        return "found"

    adapter.refuse_sync_tools([lookup])  # an async tool is fine
    helper = Agent(name="helper")
    with pytest.raises(PolicyError, match="handoffs"):
        adapter.agent_policy(lambda: Agent(name="front", handoffs=[helper]))
    with pytest.raises(PolicyError, match=r"must return an agents\.Agent \(got str\)"):
        adapter.agent_policy(lambda: "not an agent")


# -- the agent under a late commit ----------------------------------------------------------


def test_the_agent_as_usually_written_double_charges_through_a_late_commit() -> None:
    session = late_commit_on_first_charge(AsyncPolicy(example.OpenAIAgentsCheckoutAgent))
    execution = session.finish()
    assert execution.failed("no_double_charge") and execution.failed("no_double_effect")
    paid = charges(session)
    assert len(paid) == 2 and paid[0]["key"] != paid[1]["key"]  # the model's fresh key
    turns = [s for s in execution.steps if s.request.get("kind") == "ModelTurn"]
    assert turns and turns[0].observed == {"decision": "fresh_key"}
    assert turns[0].request["error"] == "timeout" and not turns[0].deviation
    sent = [s.request for s in execution.steps if s.request.get("kind") == "Invoke"]
    retry = [r for r in sent if r["arguments"].get("idempotency_key", "").endswith("-retry2")]
    assert retry and {r["call"] for r in retry} == {"call_3"}  # "call_3~2" maps back


def test_the_stable_key_agent_survives_the_same_late_commit() -> None:
    agent = example.StableKeyOpenAIAgentsCheckoutAgent
    session = late_commit_on_first_charge(AsyncPolicy(agent))
    execution = session.finish()
    assert execution.ok, [f.name for f in execution.failures]
    assert len(charges(session)) == 1
    # after the timeout it asks the key's record: in flight under this agent, so the call
    # may still commit and no retry goes out; a person sees the calls listed
    asked = [s for s in execution.steps if s.request.get("kind") == "KeyLookup"]
    assert asked and asked[0].observed == {"record": "in_flight"}
    attempts = [s for s in execution.steps if s.request.get("tool") == "charge_payment"]
    assert {s.request.get("kind") for s in attempts} == {"Invoke"}
    assert not [s for s in execution.steps if s.request.get("kind") == "ModelTurn"]
    phases = [e.get("phase") for e in session.run.world.journals["orchestrator-1"]]
    assert phases[-1] == "MANUAL"


def test_the_default_schedule_completes_with_the_sdk() -> None:
    for agent in (example.OpenAIAgentsCheckoutAgent, example.StableKeyOpenAIAgentsCheckoutAgent):
        session = Session(target(AsyncPolicy(agent)), SINGLE)
        execution = session.finish()
        assert execution.ok, [f.name for f in execution.failures]
        tools = [s.request["tool"] for s in execution.steps if s.choice.action is Action.COMPLETE]
        assert tools == [c.name for c in SINGLE[0].calls]
        phases = [e.get("phase") for e in session.run.world.journals["orchestrator-1"]]
        assert phases[-1] == "RECONCILED"


def test_the_sdk_runs_on_the_simulated_loop_without_threads() -> None:
    """``Runner.run`` (its tool tasks, its disabled trace scope) runs on ``SimLoop``: no
    thread is started, and the agent's 10 s timeout is virtual."""
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    started: list[str] = []
    original = threading.Thread.start

    def record(thread: threading.Thread) -> None:
        started.append(thread.name)
        original(thread)

    threading.Thread.start = record  # type: ignore[method-assign]
    try:
        wall = time.monotonic()
        session = late_commit_on_first_charge(AsyncPolicy(example.OpenAIAgentsCheckoutAgent))
        session.finish()
        bare = load_policy(SPEC, timeout=None).policy
        Session(target(bare), SINGLE).finish()
        wall = time.monotonic() - wall
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
    assert started == []
    assert wall < 60  # the agent's 10 s timeout was never waited for in real time


# -- the model's decision: taken, recorded, replayed ----------------------------------------


def test_a_model_deviation_is_taken_recorded_and_replayed(tmp_path: Path) -> None:
    """The model repeats the timed-out charge with the same arguments (a deviation): the
    trace records the decision, a replay reproduces it, and the same choices give the
    same trace bytes."""
    policy = AsyncPolicy(example.OpenAIAgentsCheckoutAgent)
    session = Session(target(policy), SINGLE, stop_at_first=False)
    timed_out = decided = False
    while session.choices() and not session.done:
        options = session.choices()
        choice = options[0]
        for option in options:
            request = session.run.request_of(option.actor)
            if (
                not timed_out
                and option.outcome is Outcome.TIMEOUT_BEFORE_COMMIT
                and isinstance(request, Invoke)
                and request.tool == "charge_payment"
            ):
                choice, timed_out = option, True
            if (
                not decided
                and option.outcome is Outcome.RETRY_SAME_ARGUMENTS
                and isinstance(request, ModelTurn)
            ):
                choice, decided = option, True
        session.apply(choice)
    execution = session.finish()
    assert timed_out and decided
    turn = next(s for s in execution.steps if s.request.get("kind") == "ModelTurn")
    assert turn.deviation and turn.observed == {"decision": "same_arguments"}
    paid = charges(session)
    assert len(paid) == 1  # the same key: the repeat committed once
    document = trace_of(execution, policy=NAIVE, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
    first = dumps_trace(document)
    path = tmp_path / "trace.json"
    path.write_text(first, "utf-8")
    again = replay(load_trace(path), target(policy))
    assert [s.to_json() for s in again.steps] == [s.to_json() for s in execution.steps]
    second = dumps_trace(
        trace_of(again, policy=NAIVE, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
    )
    assert first == second
    assert '"decision": "same_arguments"' in first


def test_txcheck_replay_reproduces_the_model_decision(tmp_path: Path) -> None:
    # the run stops at its first failure, as a search's does: the double charge, once the
    # hygiene rule that a fresh key breaks at once is left out
    policy = AsyncPolicy(example.OpenAIAgentsCheckoutAgent)
    skip = ("retries_reuse_key",)
    session = late_commit_on_first_charge(policy, stop_at_first=True, skip=skip)
    execution = session.finish()
    assert execution.failed("no_double_charge")
    path = tmp_path / "trace.json"
    path.write_text(
        dumps_trace(
            trace_of(execution, policy=NAIVE, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE)
        ),
        "utf-8",
    )
    done = txcheck("replay", str(path), "--policy", NAIVE, "--skip-invariant", *skip, "--json")
    assert done.returncode == 1, done.stderr  # the double charge again
    assert "no_double_charge" in done.stdout and "fresh_key" in done.stdout
    assert "Exception ignored" not in done.stderr  # a dropped run closes quietly


# -- the search, with default settings ------------------------------------------------------


def txcheck(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "txcheck", *argv],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=3000,
    )  # fmt: skip


def explore(policy: str, seed: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return txcheck(
        "explore", "--policy", policy, "--seed", seed, "--trace-out", str(out), "--json", *extra
    )


@pytest.mark.parametrize(
    "seed",
    ["1", pytest.param("2", marks=pytest.mark.slow), pytest.param("3", marks=pytest.mark.slow)],
)  # seeds 2 and 3 in the slow tier: the default suite keeps under ten minutes
def test_default_explore_catches_the_usual_agents_double_charge(seed: str, tmp_path: Path) -> None:
    """Default settings: a scenario seed shows the model's fresh key (``retries_reuse_key``,
    hygiene) and the search one deviation deeper on its plan finds the double charge it
    leads to (a lost response or a late commit, then the fresh key), which the
    counterexample leads with, the model's decision in the trace."""
    out = tmp_path / "naive.json"
    caught = explore(NAIVE, seed, out)
    assert caught.returncode == 1, caught.stderr[-2000:]
    found = json.loads(caught.stdout)["counterexample"]
    assert found["invariant"] == "no_double_charge" and found["deviations"] == 1
    fired = {v["invariant"] for v in found["violations"]}
    assert {"no_double_effect", "retries_reuse_key"} <= fired
    trace = out.read_text("utf-8")
    assert '"kind": "ModelTurn"' in trace and '"decision": "fresh_key"' in trace
    assert "Exception ignored" not in caught.stderr


def test_a_bare_agent_runs_end_to_end_with_agent_and_framework(tmp_path: Path) -> None:
    """``--agent MODULE:make_agent --framework openai-agents``: the bare SDK agent (no
    validation, no journal) is explored, its trace names the spec, and ``txcheck replay``
    with ``--policy SPEC`` reproduces it."""
    out = tmp_path / "bare.json"
    found = txcheck(
        "explore", "--agent", FACTORY, "--framework", "openai-agents", "--seed", "1",
        "--trace-out", str(out), "--json",
    )  # fmt: skip
    assert found.returncode == 1, found.stderr[-2000:]
    verdict = json.loads(found.stdout)
    assert verdict["verdict"]["outcome"] == "counterexample"
    document = json.loads(out.read_text("utf-8"))
    assert document["policy"] == SPEC
    again = txcheck("replay", str(out), "--policy", SPEC)
    assert again.returncode == 1, again.stderr[-2000:]
    assert "reproduced" in again.stdout.lower()
    policy = load_policy(SPEC, timeout=None).policy
    assert policy.model_turns and getattr(policy, "import_path", None) == SPEC


@pytest.mark.slow
@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_default_explore_passes_the_fixed_agent(seed: str, tmp_path: Path) -> None:
    passed = explore(FIXED, seed, tmp_path / "fixed.json")
    assert passed.returncode == 0, passed.stdout[-4000:]
