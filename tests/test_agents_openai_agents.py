"""Agents checked unmodified (issue 25), the OpenAI Agents SDK: the SDK's own ``Runner`` loop
runs on the simulated loop with ``txcheck.adapters.openai_agents``'s scripted model and the
contract's tools served by the world, without threads; what the loop cannot control is off
or refused; default explore catches the usual agent and passes the fixed one; ``--agent
... --framework openai-agents`` runs a bare ``Agent`` end to end. What every framework
shares (late commit, the decision in the trace and its replay) is in
test_agents_common.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents")

from tests.agent_runs import (
    CONTRACT,
    ROOT,
    SINGLE,
    assert_default_explore_passed,
    explore,
    late_commit_on_first_charge,
    target,
    txcheck,
)
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.usercode.loading import load_policy
from txcheck.models.errors import PolicyError
from txcheck.models.sim.requests import ToolResult
from txcheck.sim import AsyncPolicy

sys.path.insert(0, str(ROOT))

from examples.agents import openai_agents_checkout as example

NAIVE = "examples.agents.openai_agents_checkout:OpenAIAgentsCheckoutAgent"
FIXED = "examples.agents.openai_agents_checkout:StableKeyOpenAIAgentsCheckoutAgent"
FACTORY = "examples.agents.openai_agents_checkout:make_agent"
SPEC = f"openai-agents:{FACTORY}"


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


def test_the_models_fresh_key_maps_back_to_its_plan_call() -> None:
    """The SDK gives the retried call a new wire id ("call_3~2"): the world still records
    it under the plan's call, with the model's fresh key (the shared late-commit test in
    test_agents_common.py shows the double charge it leads to)."""
    session = late_commit_on_first_charge(AsyncPolicy(example.OpenAIAgentsCheckoutAgent))
    execution = session.finish()
    assert execution.failed("no_double_charge")
    sent = [s.request for s in execution.steps if s.request.get("kind") == "Invoke"]
    retry = [r for r in sent if r["arguments"].get("idempotency_key", "").endswith("-retry2")]
    assert retry and {r["call"] for r in retry} == {"call_3"}  # "call_3~2" maps back


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


# -- the search, with default settings ------------------------------------------------------


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
    assert_default_explore_passed(passed.returncode, json.loads(passed.stdout))
