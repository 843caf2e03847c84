"""Stage two of ``txcheck evaluate``: one proposal, one policy, every run of the fault schedule.

Each run goes through ``txcheck.exploration.kernel.session`` with every default invariant and
``stop_at_first=False``, and is judged on four things:

- its **outcome**: ``completed`` (every call answered, nothing undone), ``compensated``
  (rolled back: every committed write undone by a compensation), ``nothing_committed``
  (stopped before any write committed), ``manual`` (a journal ends in MANUAL),
  ``incomplete`` (some write committed and was never undone) or ``error`` (the policy
  raised);
- the invariants that **failed**;
- its **side effects** against the reference (the expected calls run under ``guarded``
  with no fault): a committed write the expected calls did not make is unexpected, unless
  it is a compensation (a saga step, or a plan call that ``compensated_by`` authorises);
- its **vetoes**. State consistency: ``double_charge`` (``no_double_charge`` failed),
  ``unauthorised_write`` (``rejected_plan_unchanged`` failed, or an unexpected write of a
  tool or with arguments the expected calls never used) and ``wrong_resource``
  (``writes_within_plan`` failed, or an expected tool written on a resource the expected
  calls never touched). A write the expected calls did make, committed once more, is
  unexpected ("committed again") but no veto of its own: for money, ``no_double_charge``
  already vetoes it. Fault recovery: ``new_key_on_retry`` (``retries_reuse_key`` failed)
  and ``compensation_not_escalated`` (a compensation was attempted, a write stayed
  committed and not undone, and the run did not end in MANUAL).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.evaluate.fault_schedule import FaultPoint, fault_schedule
from txcheck.exploration.kernel.session import ErrorKind, Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.canonical import canonical_json, normalize
from txcheck.models.errors import user_code_error
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.fixture import WorldFixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.policies.journal import Phase
from txcheck.models.sim.requests import ResultStatus
from txcheck.models.sim.services import ServiceSet
from txcheck.scoring.expectations import compensated_call

__all__ = [
    "RECOVERY_VETOES",
    "RUN_OUTCOMES",
    "STATE_VETOES",
    "VETOES",
    "Reference",
    "RunResult",
    "ScheduleResult",
    "SideEffect",
    "judge_run",
    "reference_of",
    "run_schedule",
]

RUN_OUTCOMES = ("completed", "compensated", "nothing_committed", "manual", "incomplete", "error")
STATE_VETOES = ("double_charge", "unauthorised_write", "wrong_resource")
RECOVERY_VETOES = ("new_key_on_retry", "compensation_not_escalated")
VETOES = STATE_VETOES + RECOVERY_VETOES
_VETO_OF = {
    "no_double_charge": "double_charge",
    "rejected_plan_unchanged": "unauthorised_write",
    "writes_within_plan": "wrong_resource",
    "retries_reuse_key": "new_key_on_retry",
}
REFERENCE_POLICY = "guarded"


@attrs.frozen(kw_only=True)
class Reference:
    """The expected calls' fault-free run under ``guarded``: the final business state, the
    writes it committed (tool, intent) and the resources each expected tool names.
    ``problem`` says why there is no usable reference (the state is then not compared)."""

    state: Any = attrs.field(eq=False)
    writes: tuple[tuple[str, str], ...]
    resources: Mapping[str, frozenset[str]]
    problem: str | None = None


def reference_of(
    contract: Contract,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    fixture: WorldFixture,
    services: Sequence[ServiceSet] = (CHECKOUT,),
) -> Reference:
    """Run the expected calls under ``guarded`` with no fault."""
    plan = Plan.of(*calls)
    policy = builtin_policy(REFERENCE_POLICY)
    assert policy is not None
    target = Target(
        policy=policy, contract=contract, fixture=fixture, services=services, invariants=()
    )
    execution = _users_code_held(execute(target, [plan]))
    world = execution.run.world
    resources: dict[str, set[str]] = {}
    for name, arguments in calls:
        tool = contract.tool(name)
        if tool is not None and tool.has_side_effect and tool.resource:
            resources.setdefault(name, set()).add(str(arguments.get(tool.resource, "")))
    problem = None
    phase = _last_phase(execution, "orchestrator-1")
    if phase == Phase.REJECTED:
        problem = "the expected calls are rejected by validation (expect_invalid)"
    elif not execution.quiesced or execution.error is not None:
        problem = "the expected calls' run did not finish"
    return Reference(
        state=_plain(world.business_state()),
        writes=tuple(
            sorted((op["tool"], op["intent"]) for op in world.operations if not op["compensates"])
        ),
        resources={k: frozenset(v) for k, v in sorted(resources.items())},
        problem=problem,
    )


def _users_code_held(execution: Execution) -> Execution:
    """``execution``, unless the user's service or invariant raised, broke its protocol or
    ran past its time limit: that is a mistake to fix, not a result to tabulate, so the
    evaluation stops there (``UserCodeError``; the command reports the cases done)."""
    if execution.error is not None and execution.error_kind in (
        ErrorKind.SERVICE,
        ErrorKind.INVARIANT,
    ):
        raise user_code_error(execution.error_kind, execution.error)
    return execution


def _plain(value: Any) -> Any:
    """A detached copy as plain JSON data, numbers normalised (``1.0`` is ``1``)."""
    return json.loads(canonical_json(normalize(value)))


def _last_phase(execution: Execution, instance: str) -> str | None:
    for entry in reversed(execution.run.world.journals.get(instance, [])):
        if "phase" in entry:
            return str(entry["phase"])
    return None


@attrs.frozen(kw_only=True)
class SideEffect:
    """A committed write the expected calls did not make, and why it is unexpected."""

    tool: str
    resource: str
    call: str
    why: str

    def describe(self) -> str:
        return f"{self.tool} on {self.resource!r} ({self.call}): {self.why}"

    def to_json(self) -> dict[str, str]:
        return {"tool": self.tool, "resource": self.resource, "call": self.call, "why": self.why}


@attrs.frozen(kw_only=True)
class RunResult:
    """One judged run: the fault (None for the fault-free run) and what came of it."""

    fault: FaultPoint | None
    outcome: str
    failed: tuple[str, ...]
    vetoes: tuple[str, ...]
    unexpected: tuple[SideEffect, ...] | None
    clock: int
    steps: int
    tool_calls: int
    retries: int

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_json(self) -> dict[str, Any]:
        return {
            "fault": None if self.fault is None else self.fault.to_json(),
            "outcome": self.outcome,
            "failed": list(self.failed),
            "vetoes": list(self.vetoes),
            "unexpected_side_effects": (
                None if self.unexpected is None else [e.to_json() for e in self.unexpected]
            ),
        }


def _outcome(execution: Execution, plan: Plan) -> str:
    run = execution.run
    if execution.error is not None or execution.divergence is not None:
        return "error"
    if any(_last_phase(execution, i) == Phase.MANUAL for i in run.instances):
        return "manual"
    ops = run.world.operations
    committed = {op["call_id"] for op in ops if not op["compensates"]}
    undone = {op["compensates"] for op in ops if op["compensates"]}
    answered = set(committed)
    for step in run.steps:
        request = step.request
        if request.get("kind") == "Invoke" and step.observed.get("status") == ResultStatus.OK:
            answered.add(str(request.get("call")))
    calls = [c.id for c in plan.calls]
    if all(c in answered for c in calls) and not undone & set(calls):
        return "completed"
    kept = [c for c in calls if c in committed and c not in undone]
    if kept:
        return "incomplete"
    return "compensated" if undone & set(calls) else "nothing_committed"


def _side_effects(
    execution: Execution, plan: Plan, contract: Contract, reference: Reference
) -> tuple[list[SideEffect], set[str]]:
    """Unexpected committed writes and the vetoes they raise."""
    remaining = Counter(reference.writes)
    calls = plan.by_id()
    unexpected: list[SideEffect] = []
    vetoes: set[str] = set()
    for op in execution.run.world.operations:
        if op["compensates"]:
            continue  # a saga step: authorised by compensated_by
        call = calls.get(op["call_id"])
        if call is not None and compensated_call(call, plan, contract) is not None:
            continue  # the plan undoes one of its own calls, as the contract authorises
        key = (op["tool"], op["intent"])
        if remaining[key] > 0:
            remaining[key] -= 1
            continue
        if key in remaining:
            why = "committed again"
        elif op["resource"] not in reference.resources.get(op["tool"], {op["resource"]}):
            why = f"the expected calls write {op['tool']} on another resource"
            vetoes.add("wrong_resource")
        else:
            why = "not among the expected writes"
            vetoes.add("unauthorised_write")
        unexpected.append(
            SideEffect(tool=op["tool"], resource=op["resource"], call=op["call_id"], why=why)
        )
    return unexpected, vetoes


def judge_run(
    execution: Execution,
    plan: Plan,
    contract: Contract,
    reference: Reference,
    fault: FaultPoint | None,
) -> RunResult:
    """Judge one finished execution of ``plan``."""
    failed = {f.name for f in execution.failures}
    if execution.error is not None:
        failed.add("policy_error")
    if execution.divergence is not None:
        failed.add("divergence")
    vetoes = {_VETO_OF[name] for name in failed if name in _VETO_OF}
    unexpected: list[SideEffect] | None = None
    if reference.problem is None:
        unexpected, more = _side_effects(execution, plan, contract, reference)
        vetoes |= more
    run = execution.run
    outcome = _outcome(execution, plan)
    if outcome == "incomplete" and any(a.compensates for a in run.history.attempts):
        vetoes.add("compensation_not_escalated")
    per_call = Counter((a.instance, a.call_id) for a in run.history.attempts)
    return RunResult(
        fault=fault,
        outcome=outcome,
        failed=tuple(sorted(failed)),
        vetoes=tuple(v for v in VETOES if v in vetoes),
        unexpected=None if unexpected is None else tuple(unexpected),
        clock=run.world.clock,
        steps=len(run.steps),
        tool_calls=len(run.history.attempts),
        retries=sum(n - 1 for n in per_call.values()),
    )


@attrs.frozen(kw_only=True)
class ScheduleResult:
    """Every judged run of one policy (the fault-free run first), the schedule's shape and
    the fault-free run's final business state."""

    policy: str
    default_steps: int
    faults: Mapping[str, int]
    runs: tuple[RunResult, ...]
    final_state: Any = attrs.field(eq=False)


def run_schedule(
    policy_name: str,
    *,
    contract: Contract,
    plan: Plan,
    fixture: WorldFixture,
    reference: Reference,
    services: Sequence[ServiceSet] = (CHECKOUT,),
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
) -> ScheduleResult:
    """Run ``plan`` under the built-in policy ``policy_name``: fault-free, then once per
    fault point of its schedule."""
    policy = builtin_policy(policy_name)
    assert policy is not None, policy_name
    target = Target(
        policy=policy,
        contract=contract,
        fixture=fixture,
        services=services,
        invariants=tuple(invariants),
    )
    schedule = fault_schedule(target, [plan])

    def one(point: FaultPoint | None) -> Execution:
        return _users_code_held(
            execute(
                target,
                [plan],
                choices=() if point is None else schedule.choices(point),
                stop_at_first=False,
            )
        )

    clean = one(None)
    runs = [judge_run(clean, plan, contract, reference, None)]
    runs.extend(judge_run(one(p), plan, contract, reference, p) for p in schedule.points)
    return ScheduleResult(
        policy=policy_name,
        default_steps=len(schedule.default),
        faults=schedule.counts(),
        runs=tuple(runs),
        final_state=_plain(clean.run.world.business_state()),
    )
