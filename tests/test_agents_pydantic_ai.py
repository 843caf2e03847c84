"""pydantic-ai agents checked unmodified (issue 25): the framework's own loop runs on the
simulated loop with the scripted model as its model (``Agent.override``) and the contract's
tools bound to the world; what the loop cannot control is off or refused; default explore
catches the usual agent and passes the fixed one; ``--agent ... --framework pydantic-ai``
runs a bare agent end to end. What every framework shares (late commit, the decision in
the trace and its replay) is in test_agents_common.py."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from tests.agent_runs import (
    CONTRACT,
    FIXTURE,
    ROOT,
    SINGLE,
    assert_default_explore_passed,
    explore,
    late_commit_on_first_charge,
    target,
    txcheck,
)
from txcheck.adapters import pydantic_ai as adapter
from txcheck.adapters.model import ToolCall
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.kernel.target import Bounds, Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.exploration.usercode.loading import load_policy
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import PolicyError
from txcheck.models.sim.choices import Action, Outcome
from txcheck.sim import AsyncPolicy

sys.path.insert(0, str(ROOT))

from examples.agents import pydantic_ai_checkout as example

NAIVE = "examples.agents.pydantic_ai_checkout:PydanticAiCheckoutAgent"
FIXED = "examples.agents.pydantic_ai_checkout:StableKeyPydanticAiCheckoutAgent"
BARE = "examples.agents.pydantic_ai_checkout:make_agent"


def phases(session: Session) -> list[Any]:
    return [e.get("phase") for e in session.run.world.journals["orchestrator-1"]]


# -- what the model is told ----------------------------------------------------------------


def test_a_tool_result_becomes_the_models_feedback() -> None:
    """pydantic-ai 2.68 reports a tool's ``ModelRetry`` as a ``ToolReturnPart`` with
    ``outcome='retried'`` (not a ``RetryPromptPart``): only ``success`` is ok, and the
    error is the status of the body the tool raised with."""
    call = ToolCall(id="call_3", name="charge_payment", arguments={}, attempt=2)
    assert adapter.tool_call_id(call) == "call_3-try2"
    assert adapter.call_id_of("call_3-try2") == "call_3" == adapter.call_id_of("call_3")

    def told(**fields: Any) -> Any:
        part = ToolReturnPart("charge_payment", tool_call_id="call_3-try2", **fields)
        return adapter._feedback(call, [ModelRequest(parts=[part])])

    assert told(content={"status": "ok"}).ok
    retried = told(content=json.dumps({"status": "timeout"}), outcome="retried")
    assert not retried.ok and retried.error == "timeout"
    assert told(content="boom", outcome="failed").error == "error"
    other = ToolReturnPart("charge_payment", content="x", tool_call_id="call_3")
    assert adapter._feedback(call, [ModelRequest(parts=[other])]).error == "no_answer"


# -- the pydantic-ai agent under a late commit ---------------------------------------------


def test_the_default_schedule_completes_with_pydantic_ai() -> None:
    for agent in (example.PydanticAiCheckoutAgent, example.StableKeyPydanticAiCheckoutAgent):
        session = Session(target(AsyncPolicy(agent)), SINGLE)
        execution = session.finish()
        assert execution.ok, [f.name for f in execution.failures]
        tools = [s.request["tool"] for s in execution.steps if s.choice.action is Action.COMPLETE]
        assert tools == [c.name for c in SINGLE[0].calls]
        assert phases(session)[-1] == "RECONCILED"


def test_one_agent_serves_two_interleaved_runs() -> None:
    """``--agent`` makes one ``Agent``; two submissions run it at once, step by step in
    turn, each on its own simulated loop. ``Agent.override`` is per task (context
    variables): each run's calls reach its own orchestrator's tools."""
    _, double = representative_plans(CONTRACT, FIXTURE)
    entry = adapter.agent_policy(example.make_agent)
    tgt = Target(
        policy=AsyncPolicy(entry),
        contract=CONTRACT,
        fixture=FIXTURE,
        plans=(double,),
        invariants=DEFAULT_INVARIANTS,
        bounds=Bounds(max_faults=2, max_states=10**6),
    )
    session = Session(tgt, double, stop_at_first=False)
    turn = 0
    while session.choices() and not session.done:
        options = session.choices()
        ours = [
            o
            for o in options
            if o.actor.startswith("orchestrator") and o.outcome is Outcome.OK
            if o.action in (Action.STEP, Action.COMPLETE)
        ]
        session.apply(ours[turn % len(ours)] if ours else options[0])
        turn += 1
    execution = session.finish()
    assert execution.error is None, execution.error
    done = [
        (s.choice.actor, s.request["tool"])
        for s in execution.steps
        if s.request.get("kind") == "Invoke" and s.choice.action is Action.COMPLETE
    ]
    first = [tool for actor, tool in done if actor == "orchestrator-1"]
    assert first == [c.name for c in double[0].calls]
    assert [tool for actor, tool in done if actor == "orchestrator-2"]  # interleaved
    assert done[: len(first)] != [("orchestrator-1", t) for t in first]


def test_pydantic_ais_retry_limit_does_not_end_the_run_before_the_model() -> None:
    """Every charge attempt fails (a transient error): the model tries ``max_attempts``
    times and stops on its own, the agent hands over. With pydantic-ai's default budget of
    one retry per tool the framework itself would end the run at the second failure."""

    def failing(session: Session) -> Session:
        while session.choices() and not session.done:
            options = session.choices()
            choice = next(
                (
                    o
                    for o in options
                    if o.outcome is Outcome.TRANSIENT_ERROR
                    and getattr(session.run.request_of(o.actor), "tool", "") == "charge_payment"
                ),
                options[0],
            )
            session.apply(choice)
        return session

    policy = AsyncPolicy(example.PydanticAiCheckoutAgent)
    session = failing(Session(target(policy, faults=3), SINGLE, stop_at_first=False))
    execution = session.finish()
    assert execution.error is None, execution.error
    tries = [
        s
        for s in execution.steps
        if s.request.get("tool") == "charge_payment" and s.choice.action is Action.COMPLETE
    ]
    assert len(tries) == example.PydanticAiCheckoutAgent.max_attempts
    assert phases(session)[-1] == "MANUAL"

    class OneRetry(example.PydanticAiCheckoutAgent):  # the framework's default budget
        def __init__(self) -> None:
            super().__init__()
            for tool in self.agent._function_toolset.tools.values():
                tool.max_retries = 1

    broken = failing(
        Session(target(AsyncPolicy(OneRetry), faults=3), SINGLE, stop_at_first=False)
    ).finish()
    assert broken.error is not None and "exceeded max retries" in str(broken.error)


# -- what the simulated loop cannot control ------------------------------------------------


def test_the_agent_runs_on_the_simulated_loop_without_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No thread is started (the model and tools are async; a sync callback of the user's
    agent runs inline under ``disable_threads``), and timeouts are virtual. Positive
    control: without ``disable_threads`` the same agent's sync instructions are sent to a
    worker thread, and the simulated loop reports the deadlock."""
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    def make() -> Agent[None, str]:
        return Agent(name="bare", instructions=lambda: "check out")  # a sync callback

    started: list[str] = []
    original = threading.Thread.start

    def record(thread: threading.Thread) -> None:
        started.append(thread.name)
        original(thread)

    monkeypatch.setattr(threading.Thread, "start", record)
    wall = time.monotonic()
    session = late_commit_on_first_charge(AsyncPolicy(example.PydanticAiCheckoutAgent))
    session.finish()
    bare = Session(target(AsyncPolicy(adapter.agent_policy(make))), SINGLE).finish()
    wall = time.monotonic() - wall
    assert started == [] and bare.error is None and bare.ok
    assert wall < 60  # the agent's 10 s timeout was never waited for in real time
    # the control: a thread is only recorded, never started (it would outlive the test)
    monkeypatch.setattr(threading.Thread, "start", lambda thread: started.append(thread.name))
    monkeypatch.setattr(adapter, "disable_threads", contextlib.nullcontext)
    threaded = Session(target(AsyncPolicy(adapter.agent_policy(make))), SINGLE).finish()
    assert threaded.error is not None and "deadlock" in str(threaded.error)
    assert len(started) == 1  # anyio's worker thread for the sync instructions


def test_an_instrumented_or_foreign_agent_is_refused_naming_the_setting() -> None:
    from pydantic_ai.capabilities.instrumentation import Instrumentation  # noqa: PLC0415

    def instrumented() -> Agent[None, str]:
        agent: Agent[None, str] = Agent(name="traced")
        agent.instrument = True
        return agent

    with pytest.raises(PolicyError, match=r"'traced' is instrumented \(agent.instrument"):
        adapter.agent_policy(instrumented)
    with pytest.raises(PolicyError, match="is instrumented"):
        adapter.agent_policy(lambda: Agent(capabilities=[Instrumentation()]))
    Agent.instrument_all()
    try:
        with pytest.raises(PolicyError, match="is instrumented"):
            adapter.agent_policy(lambda: Agent(name="plain"))
    finally:
        Agent.instrument_all(False)
    assert adapter.agent_policy(lambda: Agent(name="plain")).model_turns


def test_an_agent_whose_output_is_not_text_is_refused_naming_the_setting() -> None:
    """The scripted model ends a run with text; a structured ``output_type`` would make
    pydantic-ai ask again, which must not be taken for a failed tool call."""
    entry = adapter.agent_policy(lambda: Agent(name="typed", output_type=int))
    execution = Session(target(AsyncPolicy(entry)), SINGLE).finish()
    assert execution.error is not None and "output_type does not accept text" in str(
        execution.error
    )
    assert not [s for s in execution.steps if s.request.get("kind") == "ModelTurn"]
    with pytest.raises(PolicyError, match=r"must be a pydantic_ai\.Agent"):
        adapter.agent_policy(lambda: "not an agent")


# -- the search, with default settings -----------------------------------------------------


@pytest.mark.parametrize(
    "seed",
    ["1", pytest.param("2", marks=pytest.mark.slow), pytest.param("3", marks=pytest.mark.slow)],
)  # seeds 2 and 3 in the slow tier: the default suite keeps under ten minutes
def test_default_explore_catches_the_usual_agent(seed: str, tmp_path: Path) -> None:
    """Default settings: the search finds the double charge (a harm invariant) one
    deviation deep, the model's fresh key after a lost response; the hygiene rule
    ``retries_reuse_key`` fires on the same run."""
    out = tmp_path / "naive.json"
    caught = explore(NAIVE, seed, out)
    assert caught.returncode == 1, caught.stderr[-2000:]
    found = json.loads(caught.stdout)["counterexample"]
    assert found["invariant"] == "no_double_charge" and found["deviations"] == 1
    assert "retries_reuse_key" in {v["invariant"] for v in found["violations"]}
    trace = out.read_text("utf-8")
    assert '"kind": "ModelTurn"' in trace and '"decision": "fresh_key"' in trace


def test_a_bare_agent_factory_is_explored_end_to_end(tmp_path: Path) -> None:
    """``--agent MODULE:make_agent --framework pydantic-ai``: the example's factory, bare
    (no validation, no journal), with its model and tools replaced; the trace names the
    spec and replays with ``--policy SPEC``."""
    out = tmp_path / "bare.json"
    caught = txcheck(
        "explore", "--agent", BARE, "--framework", "pydantic-ai", "--seed", "1",
        "--trace-out", str(out), "--json",
    )  # fmt: skip
    assert caught.returncode == 1, caught.stderr[-2000:]
    spec = f"pydantic-ai:{BARE}"
    assert json.loads(out.read_text("utf-8"))["policy"] == spec
    assert load_policy(spec, timeout=None).policy.model_turns
    again = txcheck("replay", str(out), "--policy", spec)
    assert again.returncode == 1, again.stderr[-2000:]
    assert "reproduced" in again.stdout.lower()


@pytest.mark.slow
@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_default_explore_passes_the_fixed_agent(seed: str, tmp_path: Path) -> None:
    passed = explore(FIXED, seed, tmp_path / "fixed.json")
    assert_default_explore_passed(passed.returncode, json.loads(passed.stdout))
