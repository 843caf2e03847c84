"""CPU per run of framework agents against the plain asyncio guarded orchestrator, same plan.

    python benchmarks/bench_agents.py [--rounds N] [--runs R]

One run is one execution of the bundled checkout's single-order plan on the default
schedule (every call answered ok; relay and consumer included), through the kernel's
``execute``, under each of:

- ``guarded``: ``examples.async_orchestrators.guarded.InFlightAware``, plain asyncio on the
  ports (the baseline);
- ``mcp-legacy``: ``examples.agents.mcp_checkout.StableKeyMcpCheckoutAgent``, its calls
  through ``mcp.Client`` and the SDK's in-memory transport (memory streams, JSON-RPC
  session) to ``txcheck.adapters.mcp``'s server, driven by the scripted model;
- ``mcp-direct``: the same agent with ``mode="auto"`` (the SDK's direct in-process
  dispatcher: no streams, no JSON-RPC framing);
- ``openai-agents``: ``examples.agents.openai_agents_checkout.StableKeyOpenAIAgentsCheckoutAgent``,
  the OpenAI Agents SDK's ``Runner.run`` with ``txcheck.adapters.openai_agents``'s scripted
  model and function tools.
- ``langgraph``: ``examples.agents.langgraph_checkout.StableKeyLangGraphCheckoutAgent``,
  LangGraph's tool-calling graph (``StateGraph``, ``ToolNode``, ``tools_condition``) on
  ``txcheck.adapters.langgraph``'s scripted chat model and tools.
- ``pydantic-ai``: ``examples.agents.pydantic_ai_checkout.StableKeyPydanticAiCheckoutAgent``,
  pydantic-ai's own agent loop (``Agent.run``) with ``txcheck.adapters.pydantic_ai``'s
  scripted ``FunctionModel`` and its tools sending through the agent's desk.

Each round times ``R`` runs (default 20) of every variant, in an order that rotates per
round, in CPU time (``time.process_time``); the medians per run and the ratios against
``guarded`` measured in the same rounds are printed. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from txcheck import execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.sim import AsyncPolicy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.agents.langgraph_checkout import StableKeyLangGraphCheckoutAgent
from examples.agents.mcp_checkout import StableKeyMcpCheckoutAgent
from examples.agents.openai_agents_checkout import StableKeyOpenAIAgentsCheckoutAgent
from examples.agents.pydantic_ai_checkout import StableKeyPydanticAiCheckoutAgent
from examples.async_orchestrators.guarded import InFlightAware


class DirectMcpAgent(StableKeyMcpCheckoutAgent):
    """The fixed agent over the SDK's direct in-process dispatcher."""

    name = "mcp-checkout-direct"
    transport = "auto"


def variants() -> dict[str, Target]:
    contract, fixture = default_contract(), default_fixture()
    single, _ = representative_plans(contract, fixture)
    entries: dict[str, Any] = {
        "guarded": InFlightAware,
        "mcp-legacy": StableKeyMcpCheckoutAgent,
        "mcp-direct": DirectMcpAgent,
        "openai-agents": StableKeyOpenAIAgentsCheckoutAgent,
        "langgraph": StableKeyLangGraphCheckoutAgent,
        "pydantic-ai": StableKeyPydanticAiCheckoutAgent,
    }
    return {
        name: Target(
            policy=AsyncPolicy(entry),
            contract=contract,
            fixture=fixture,
            plans=(single,),
            invariants=DEFAULT_INVARIANTS,
        )
        for name, entry in entries.items()
    }


def one_round(targets: dict[str, Target], order: list[str], runs: int) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for name in order:
        target = targets[name]
        plans = target.plans[0]
        start = time.process_time()
        for _ in range(runs):
            execution = execute(target, plans)
            if not execution.ok:
                raise SystemExit(f"{name}: the default schedule failed: {execution.failures}")
        seconds[name] = (time.process_time() - start) / runs
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    targets = variants()
    names = list(targets)
    one_round(targets, names, 2)  # warm-up: imports, caches
    per: dict[str, list[float]] = {n: [] for n in names}
    ratios: dict[str, list[float]] = {n: [] for n in names}
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        seconds = one_round(targets, order, args.runs)
        for name in names:
            per[name].append(seconds[name])
            ratios[name].append(seconds[name] / seconds["guarded"])
    print(f"{args.rounds} rounds x {args.runs} runs, CPU ms per run (median), ratio to guarded")
    for name in names:
        ms = statistics.median(per[name]) * 1000
        print(f"  {name:<13} {ms:8.2f} ms   x{statistics.median(ratios[name]):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
