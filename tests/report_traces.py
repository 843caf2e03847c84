"""Three counterexample traces for the HTML report's tests, made from examples/.

- ``naive``: the README's counterexample, ``naive`` on
  examples/proposals/valid_openai_chat.json (a lost response, a retry under a new key);
- ``crash``: ``naive`` on the same plan with the consumer crashing before its ACK, so the
  broker redelivers and the effect is applied twice (a crash, a restart, a redelivery);
- ``double-click``: ``control-fresh-key`` on the plan submitted twice (two orchestrator
  instances, a lost response, the relay, the consumer and the clock).

Each is built deterministically (a seeded systematic search or a fixed fault) and written
as the ``txcheck-trace/1`` document ``explore --trace-out`` writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.search import explore
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.traces.document import dumps_trace, trace_of
from txcheck.traces.replaying import shared_plans

__all__ = ["KINDS", "PLAN_FILE", "make", "write"]

ROOT = Path(__file__).resolve().parent.parent
PLAN_FILE = ROOT / "examples" / "proposals" / "valid_openai_chat.json"
KINDS = ("crash", "double-click", "naive")


def _plan() -> Plan:
    return load_proposal(PLAN_FILE)


def _search(policy: str, plans: tuple[Plan, ...], seed: int) -> tuple[Execution, str]:
    target = Target(
        policy=builtin_policy(policy),
        policy_name=policy,
        plans=(plans,),
        bounds=Bounds(max_faults=1),
        budget=Budget(seed=seed, database=None),
    )
    found = explore(target, engine="systematic", seeds=False).counterexample
    assert found is not None
    return found.execution, found.found_by


def make(kind: str) -> dict[str, Any]:
    """The trace document of ``kind`` (one of ``KINDS``)."""
    plan = _plan()
    if kind == "naive":
        policy = "naive"
        execution, engine = _search(policy, (plan,), seed=1)
    elif kind == "double-click":
        policy = "control-fresh-key"
        execution, engine = _search(policy, shared_plans([plan, plan]), seed=0)
    else:
        policy = "naive"
        lost_ack = Deviation(action="crash", actor="consumer", kind="Ack")
        target = Target(policy=builtin_policy(policy), policy_name=policy)
        execution, engine = execute(target, [plan], chooser=Deviations([lost_ack])), "fixed"
    assert execution.failures, kind
    return trace_of(
        execution,
        policy=policy,
        contract=default_contract(),
        fixture=default_fixture(),
        plans=execution.plans,
        extra={"engine": engine},
    )


def write(kind: str, folder: Path) -> Path:
    """Write the trace of ``kind`` to ``folder/<kind>.json`` and return its path."""
    path = folder / f"{kind}.json"
    path.write_text(dumps_trace(make(kind)), encoding="utf-8")
    return path
