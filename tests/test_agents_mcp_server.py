"""``--framework mcp`` and a user's own MCP server (issue 25, item 2): the user's client
loop runs against the server ``make_server(ports)`` returns, whose handlers reach the world
through the ports; the spec names both and replays; the usual gateway of
examples/agents/mcp_server_checkout.py double-charges (its own fresh key per charge) where
the fixed one does not; bad server factories are one-line errors."""

from __future__ import annotations

import json
import pickle
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, types
from mcp.server import MCPServer, Server

from tests.agent_runs import (
    CONTRACT,
    FIXTURE,
    ROOT,
    SINGLE,
    assert_default_explore_passed,
    charges,
    late_commit_on_first_charge,
    model_repeats_after,
    search_at_one_deviation,
    target,
)
from txcheck import dumps_trace, load_trace, replay, trace_of
from txcheck.adapters.mcp import agent_policy, user_server
from txcheck.adapters.model import Feedback, ScriptedModel
from txcheck.cli import main
from txcheck.exploration.kernel.session import Session
from txcheck.exploration.usercode.loading import load_policy
from txcheck.models.errors import PolicyError
from txcheck.models.sim.choices import Outcome
from txcheck.sim import AsyncPolicy

sys.path.insert(0, str(ROOT))

from examples.agents import mcp_server_checkout as gateway

EXAMPLE = "examples.agents.mcp_server_checkout"
AGENT = f"{EXAMPLE}:make_agent"
USUAL = f"mcp:{AGENT}@{EXAMPLE}:make_server"
FIXED = f"mcp:{AGENT}@{EXAMPLE}:make_fixed_server"
HERE = "tests.test_agents_mcp_server"
LOST = Outcome.LOST_RESPONSE_AFTER_COMMIT
VALID_PLAN = ROOT / "examples" / "proposals" / "valid_openai_chat.json"


# -- servers and agents of this module's own ------------------------------------------------

SEEN: list[dict[str, Any]] = []
"""What ``recording_agent`` saw of each committed call (one run per test)."""


async def recording_agent(client: Client, model: ScriptedModel) -> None:
    """The bare loop, keeping each result's structured content."""
    call = await model.turn(None)
    while call is not None:
        result = await client.call_tool(call.name, dict(call.arguments))
        SEEN.append(
            {"tool": call.name, "error": result.is_error, **(result.structured_content or {})}
        )
        call = await model.turn(Feedback(call=call, ok=not result.is_error, error="error"))


def make_recording_agent() -> Any:
    return recording_agent


def make_sync_agent() -> Any:
    return lambda client, model: None


def make_stamping_server(ports: Any) -> Server[Any]:
    """A low-level server of the user's: it forwards every call, adds ``served_by`` to each
    receipt and refuses ``confirm_order`` (the contract's server does neither)."""

    listed = types.ListToolsResult(
        tools=[
            types.Tool(name=t.name, input_schema=dict(t.parameters) or {"type": "object"})
            for t in CONTRACT.tools.values()
        ]
    )

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return listed

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "confirm_order":
            text = types.TextContent(type="text", text="refused: confirmations are manual")
            return types.CallToolResult(content=[text], is_error=True)
        result = await ports.tools.call(params.name, dict(params.arguments or {}))
        receipt = {**dict(result.receipt or {}), "served_by": "stamping"}
        text = types.TextContent(type="text", text=json.dumps(receipt, sort_keys=True))
        return types.CallToolResult(
            content=[text], structured_content=receipt, is_error=result.status != "ok"
        )

    return Server("stamping", on_list_tools=list_tools, on_call_tool=call_tool)


NOT_A_FACTORY = 42


def make_no_server(ports: Any) -> dict[str, str]:
    return {"name": "not a server"}


def make_failing_server(ports: Any) -> Server[Any]:
    raise RuntimeError("no payment credentials")


def make_sync_tool_server(ports: Any) -> MCPServer[Any]:
    app: MCPServer[Any] = MCPServer("sync", log_level="WARNING")

    @app.tool()
    async def get_order(order_id: str) -> str:
        return order_id

    @app.tool()
    def charge_payment(order_id: str) -> str:  # the SDK would run it in a thread
        return order_id

    return app


def make_hostile_server(ports: Any) -> Server[Any]:
    raise RuntimeError("\x1b[2J\x1b]8;;http://x\x07[bold]gone[/bold]\nsecond line")


async def make_async_server(ports: Any) -> Server[Any]:
    return make_stamping_server(ports)


# -- --framework mcp end to end ------------------------------------------------------------


@pytest.fixture
def importable() -> Iterator[None]:
    sys.path.insert(0, str(ROOT))
    yield
    sys.path.remove(str(ROOT))


def test_framework_mcp_with_a_user_server_is_explored_traced_and_replayed(
    importable: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One valid proposal: the double charge at one deviation, the gateway's own keys in
    the trace, the spec naming the agent and the server, ``txcheck replay`` reproducing
    it under that spec with the same bytes."""
    trace = tmp_path / "usual.json"
    argv = ["explore", "--agent", AGENT, "--framework", "mcp"]
    argv += ["--mcp-server", f"{EXAMPLE}:make_server", "--plan", str(VALID_PLAN), "--seed", "1"]
    argv += ["--engine", "systematic", "--max-faults", "1", "--trace-out", str(trace), "--json"]
    assert main(argv) == 1
    found = json.loads(capsys.readouterr().out)["counterexample"]
    assert found["deviations"] == 1
    assert {"no_double_charge", "no_double_effect"} <= {v["invariant"] for v in found["violations"]}
    text = trace.read_text("utf-8")
    document = json.loads(text)
    assert document["policy"] == USUAL
    keys = {
        s["request"]["arguments"]["idempotency_key"]
        for s in document["steps"]
        if s["request"].get("tool") == "charge_payment" and s["request"].get("kind") == "Invoke"
    }
    assert keys == {"gw-1-000001", "gw-1-000002"}  # the server's keys, not the model's
    assert main(["replay", str(trace), "--policy", USUAL]) == 1
    assert "reproduced" in capsys.readouterr().out.lower()


def test_a_worker_rebuilds_the_agent_and_its_server_from_the_spec() -> None:
    """What workers receive is a pickled description: the spec alone rebuilds both."""
    from txcheck.exploration.kernel.description import TargetDescription  # noqa: PLC0415
    from txcheck.exploration.spread.shipping import build_target  # noqa: PLC0415

    description = pickle.loads(pickle.dumps(TargetDescription(policy=USUAL)))
    rebuilt = build_target(description, policy_timeout=None)
    assert getattr(rebuilt.policy, "import_path", None) == USUAL
    session, execution = model_repeats_after(rebuilt.policy, LOST)
    assert execution.failed("no_double_charge") and len(charges(session)) == 2


def test_without_a_server_the_agent_talks_to_the_contracts_server() -> None:
    loaded = load_policy(f"mcp:{AGENT}", timeout=None)
    assert loaded.spec == f"mcp:{AGENT}" and loaded.policy.model_turns
    session = Session(target(loaded.policy), SINGLE)
    execution = session.finish()
    assert execution.ok, [f.name for f in execution.failures]
    keys = [op["key"] for op in charges(session)]
    assert keys == ["key-checkout-1-3"]  # the model's key, passed through by txcheck's server


def test_the_users_server_is_the_one_that_answers() -> None:
    """Its receipts carry its own field and it refuses a tool: neither could come from
    txcheck's contract server."""
    SEEN.clear()
    policy = AsyncPolicy(agent_policy(make_recording_agent, make_stamping_server))
    session = Session(target(policy), SINGLE)
    session.finish()
    committed = [s for s in SEEN if not s["error"]]
    assert [s["tool"] for s in committed] == ["create_order", "reserve_inventory", "charge_payment"]
    assert all(s["served_by"] == "stamping" for s in committed)
    tools = {op["tool"] for op in session.run.world.operations}
    assert "confirm_order" not in tools and "charge_payment" in tools


def test_the_direct_transport_serves_the_same_run() -> None:
    async def direct(client: Client, model: ScriptedModel) -> None:
        await gateway.agent(client, model)

    direct.mode = "auto"  # type: ignore[attr-defined]
    policy = AsyncPolicy(agent_policy(lambda: direct, gateway.make_server))
    session = Session(target(policy), SINGLE)
    assert session.finish().ok
    assert [op["key"] for op in charges(session)] == ["gw-1-000001"]
    direct.mode = "stdio"  # type: ignore[attr-defined]
    with pytest.raises(PolicyError, match=r"MCP mode 'stdio' \(known: legacy, auto\)"):
        agent_policy(lambda: direct, gateway.make_server)


# -- the gateway under a late commit and a model's repeat ------------------------------------


def test_the_usual_gateway_charges_twice_through_a_late_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[str] = []
    monkeypatch.setattr(threading.Thread, "start", lambda thread: started.append(thread.name))
    session = late_commit_on_first_charge(AsyncPolicy(gateway.GatewayCheckoutAgent))
    execution = session.finish()
    assert started == []  # the SDK's MCPServer and Client ran on the simulated loop alone
    assert execution.failed("no_double_charge") and execution.failed("no_double_effect")
    assert sorted(op["key"] for op in charges(session)) == ["gw-1-000001", "gw-1-000002"]


def test_the_fixed_gateway_survives_the_same_late_commit() -> None:
    session = late_commit_on_first_charge(AsyncPolicy(gateway.FixedGatewayCheckoutAgent))
    execution = session.finish()
    assert execution.ok, [f.name for f in execution.failures]
    assert len(charges(session)) == 1
    # the retry found the intent's key in flight and refused: no second charge went out
    records = [s.observed for s in execution.steps if s.request.get("kind") == "KeyLookup"]
    assert {"record": "in_flight"} in records
    phases = [e.get("phase") for e in session.run.world.journals["orchestrator-1"]]
    assert phases[-1] == "MANUAL"


def test_the_agents_own_fix_does_not_survive_the_usual_gateway() -> None:
    """Stable keys from the agent and a timeout resolved by asking: the gateway still
    mints its own key for the retried charge, so the late commit charges twice."""
    session = late_commit_on_first_charge(AsyncPolicy(gateway.StableKeyGatewayCheckoutAgent))
    assert session.finish().failed("no_double_charge")
    assert sorted(op["key"] for op in charges(session)) == ["gw-1-000001", "gw-1-000002"]


def test_the_systematic_search_proves_the_fixed_composition_at_one_deviation() -> None:
    fixed = search_at_one_deviation(gateway.FixedGatewayCheckoutAgent)
    assert fixed.counterexample is None and fixed.complete and fixed.states > 100
    assert search_at_one_deviation(gateway.GatewayCheckoutAgent).counterexample is not None


def test_a_model_that_repeats_its_key_is_charged_twice_by_the_usual_gateway() -> None:
    """The model repeats the charge unchanged (its key too): through the contract's server
    that commits once; through the usual gateway, which mints its own key per request,
    twice. The trace shows the gateway's keys."""
    usual = load_policy(USUAL, timeout=None).policy
    session, execution = model_repeats_after(usual, LOST)
    assert execution.failed("no_double_charge")
    assert [op["key"] for op in charges(session)] == ["gw-1-000001", "gw-1-000002"]
    contract_server = load_policy(f"mcp:{AGENT}", timeout=None).policy
    session, execution = model_repeats_after(contract_server, LOST)
    assert not execution.failed("no_double_charge") and len(charges(session)) == 1
    fixed = load_policy(FIXED, timeout=None).policy
    session, execution = model_repeats_after(fixed, LOST)
    assert not execution.failed("no_double_charge") and len(charges(session)) == 1


def test_the_same_choices_give_the_same_trace_bytes(tmp_path: Path) -> None:
    usual = load_policy(USUAL, timeout=None).policy
    texts = []
    for _ in range(2):
        _session, execution = model_repeats_after(usual, LOST)
        document = trace_of(
            execution, policy=USUAL, contract=CONTRACT, fixture=FIXTURE, plans=SINGLE
        )
        texts.append(dumps_trace(document))
    assert texts[0] == texts[1]
    path = tmp_path / "trace.json"
    path.write_text(texts[0], "utf-8")
    # a replay runs to the recorded run's first harm: the same steps up to there
    again = replay(load_trace(path), target(usual))
    assert again.failed("no_double_charge")
    recorded = json.loads(texts[0])["steps"]
    assert [s.to_json() for s in again.steps] == recorded[: len(again.steps)]


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mcp-server", "tests.no_such_module:make_server"], "cannot import MCP server module"),
        (["--mcp-server", f"{HERE}:NOT_A_FACTORY"], "must be a function 'make_server(ports)'"),
        (["--mcp-server", f"{HERE}:make_no_server"], "must return an mcp.server.Server"),
        (["--mcp-server", f"{HERE}:make_async_server"], "(got coroutine)"),
        (["--mcp-server", f"{HERE}:make_failing_server"], "raised RuntimeError: no payment"),
        (["--mcp-server", f"{HERE}:make_sync_tool_server"], "tool 'charge_payment' is a sync"),
        (["--mcp-server", "not a spec"], "import path"),
    ],
)
def test_a_bad_server_factory_is_a_one_line_error(
    importable: None, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explore", "--agent", f"{HERE}:make_recording_agent", "--framework", "mcp", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_factorys_message_is_shown_as_text(
    importable: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user's exception text is data: no escape sequence reaches the terminal, markup
    stays literal, and its newline does not split the one-line error."""
    argv = ["explore", "--agent", f"{HERE}:make_recording_agent", "--framework", "mcp"]
    assert main([*argv, "--mcp-server", f"{HERE}:make_hostile_server"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and len(err.strip().splitlines()) == 1
    assert "[bold]gone[/bold]" in err and "second line" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--agent", AGENT, "--framework", "langgraph", "--mcp-server", f"{HERE}:x"],
            "--mcp-server needs --framework mcp",
        ),
        (["--mcp-server", f"{HERE}:make_stamping_server"], "--mcp-server needs --agent"),
        (["--agent", f"{HERE}:make_sync_agent", "--framework", "mcp"], "async function"),
    ],
)
def test_misplaced_mcp_options_are_one_line_errors(
    importable: None, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_user_server_checks_the_factory_once_and_builds_per_generation() -> None:
    with pytest.raises(PolicyError, match="must be a function"):
        user_server(NOT_A_FACTORY)  # type: ignore[arg-type]
    made: list[Any] = []

    def factory(ports: Any) -> Server[Any]:
        made.append(ports)
        return make_stamping_server(ports)

    serve = user_server(factory)
    assert len(made) == 1  # the probe, on unconnected ports
    with pytest.raises(PolicyError, match="used a port"):
        made[0].tools.call("charge_payment", {}).send(None)
    policy = AsyncPolicy(agent_policy(make_recording_agent, factory))
    Session(target(policy), SINGLE).finish()
    assert len(made) == 3  # the probe of agent_policy, then one server for the one generation
    assert repr(made[-1]) == "<server ports of generation 1>"
    assert serve is not None


# -- default explore -------------------------------------------------------------------------


def explore(policy: str, seed: str, out: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    code = main(["explore", "--policy", policy, "--seed", seed, "--trace-out", str(out), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_default_explore_finds_the_gateways_double_charge(
    importable: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The usual gateway inside the checkout discipline, default settings, seed 1: the
    double charge, the gateway's keys in the trace."""
    out = tmp_path / "gateway.json"
    code, verdict = explore(f"{EXAMPLE}:GatewayCheckoutAgent", "1", out, capsys)
    assert code == 1
    found = verdict["counterexample"]
    assert found["invariant"] == "no_double_charge"
    assert '"gw-1-000002"' in out.read_text("utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("seed", ["2", "3"])
def test_default_explore_finds_the_gateways_double_charge_other_seeds(
    seed: str, importable: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, verdict = explore(f"{EXAMPLE}:GatewayCheckoutAgent", seed, tmp_path / "t.json", capsys)
    assert code == 1 and verdict["counterexample"]["invariant"] == "no_double_charge"


def test_default_explore_catches_the_bare_agent_on_an_invalid_proposal(
    importable: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bare loop has no validation: the first scenario seed (a charge without its
    amount, which the gateway's schema refuses) leaves its reservation behind, at no
    deviation, before any search (as every framework's bare agent, docs/agents.md)."""
    code, verdict = explore(USUAL, "1", tmp_path / "t.json", capsys)
    assert code == 1
    found = verdict["counterexample"]
    assert found["deviations"] == 0 and found["invariant"] == "no_leftover_reservation"


@pytest.mark.slow
@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_default_explore_passes_the_fixed_gateway(
    seed: str, importable: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seeds 1 to 3 passed when measured (1,080 to 1,350 s of CPU, about 50,600 runs
    each, docs/agents.md)."""
    code, verdict = explore(
        f"{EXAMPLE}:FixedGatewayCheckoutAgent", seed, tmp_path / "t.json", capsys
    )
    assert_default_explore_passed(code, verdict)
