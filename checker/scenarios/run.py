"""Run the named scenarios and controls through the one execution path, and judge them.

Every run goes through ``txcheck.exploration.kernel.session`` with a
``txcheck.exploration.kernel.schedule`` chooser, all ``DEFAULT_INVARIANTS`` checked, and
``stop_at_first=False``: a control keeps
running after its first violation so the final state shows the concrete damage (a second
charge that really committed, not only the retry that would cause it). The state before
is the world of a fresh session before any step. The trace is ``trace_of``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import ErrorKind, Execution, Session
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.errors import UserCodeError, user_code_error
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.fixture import WorldFixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.services import ServiceSet
from txcheck.scenarios.assertions import (
    Assertion,
    AssertionResult,
    Evidence,
    compensations,
    deviations_applied,
    invariant_fired,
    quiesced,
)
from txcheck.scenarios.catalog import CONTROLS, SCENARIOS, Control, Scenario, scenario
from txcheck.traces.document import trace_of
from txcheck.traces.json_diff import json_diff

__all__ = ["GUARDED", "ScenarioRun", "run_all", "run_control", "run_scenario"]

GUARDED = "guarded"


@attrs.frozen(kw_only=True)
class ScenarioRun:
    """One finished run of a scenario under a policy, with its judged assertions."""

    scenario: Scenario
    policy: str
    control: Control | None
    execution: Execution
    before: dict[str, Any] = attrs.field(eq=False)
    unused: tuple[Deviation, ...]
    results: tuple[AssertionResult, ...]
    contract: Contract = attrs.field(eq=False, repr=False)
    fixture: WorldFixture = attrs.field(eq=False, repr=False)

    @property
    def kind(self) -> str:
        return "scenario" if self.control is None else "control"

    @property
    def expectation(self) -> str:
        """``pass`` for a scenario; the failure a control must show."""
        return "pass" if self.control is None else self.control.expected_failure

    @property
    def met(self) -> bool:
        """Every assertion held: the scenario passed, or the control failed as expected."""
        return all(r.passed for r in self.results)

    @property
    def outcome(self) -> str:
        if self.control is None:
            return "pass" if self.met else "fail"
        return self.control.expected_failure if self.met else "not_seen"

    @property
    def fired(self) -> list[str]:
        return sorted({f.name for f in self.execution.failures})

    def journals(self) -> dict[str, dict[str, Any]]:
        """Each instance's last phase entry: where its journal ended."""
        ended: dict[str, dict[str, Any]] = {}
        for instance, entries in sorted(self.execution.run.world.journals.items()):
            phases = [e for e in entries if "phase" in e]
            ended[instance] = dict(phases[-1]) if phases else {}
        return ended

    def record(self) -> dict[str, Any]:
        """The ``raw_results.jsonl`` line of this run."""
        after = self.execution.run.world.snapshot()
        trace = trace_of(
            self.execution,
            policy=self.policy,
            contract=self.contract,
            fixture=self.fixture,
            plans=self.scenario.plans,
        )
        data: dict[str, Any] = {
            "run": f"{self.scenario.id}/{self.policy}",
            "kind": self.kind,
            "scenario": self.scenario.id,
            "dimension": self.scenario.dimension,
            "purpose": self.scenario.purpose,
            "policy": self.policy,
            "expectation": self.expectation,
            "outcome": self.outcome,
            "met": self.met,
            "plans": trace["plans"],
            "deviations": [d.describe() for d in self.scenario.deviations],
            "unused_deviations": [d.describe() for d in self.unused],
            "journals": self.journals(),
            "invariants_fired": self.fired,
            "violations": trace["violations"],
            "state_before": self.before,
            "state_after": after,
            "state_diff": json_diff(self.before, after),
            "trace": trace["steps"],
            "compensation_order": compensations(self._evidence()),
            "assertions": [r.to_json() for r in self.results],
        }
        if self.execution.error:
            data["error"] = self.execution.error
        if self.control is not None:
            data["designated"] = self.control.designated
        return data

    def _evidence(self) -> Evidence:
        return Evidence(
            execution=self.execution, before=self.before, unused_deviations=len(self.unused)
        )


def _policy(name: str, substitutes: Mapping[str, Policy]) -> Policy:
    if name in substitutes:
        return substitutes[name]
    policy = builtin_policy(name)
    if policy is None:  # pragma: no cover - scenarios.py checks its policies at import
        raise KeyError(f"no built-in policy {name!r}")
    return policy


def _run(
    entry: Scenario,
    *,
    policy: str,
    extra: Sequence[Assertion],
    control: Control | None,
    contract: Contract,
    fixture: WorldFixture,
    services: Sequence[ServiceSet] = (CHECKOUT,),
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
    substitutes: Mapping[str, Policy],
) -> ScenarioRun:
    implementation = _policy(policy, substitutes)
    target = Target(
        policy=implementation,
        contract=contract,
        fixture=fixture,
        services=tuple(services),
        invariants=tuple(invariants),
    )
    session = Session(target, entry.plans, stop_at_first=False)
    before = session.run.world.snapshot()
    chooser = Deviations(entry.deviations)
    session.drive(chooser)
    execution = session.finish()
    unused = tuple(chooser.unused)
    evidence = Evidence(execution=execution, before=before, unused_deviations=len(unused))
    checks = (quiesced(), deviations_applied(len(entry.deviations)), *extra)
    return ScenarioRun(
        scenario=entry,
        policy=implementation.name,
        control=control,
        execution=execution,
        before=before,
        unused=unused,
        results=tuple(a.evaluate(evidence) for a in checks),
        contract=contract,
        fixture=fixture,
    )


def run_scenario(
    entry: Scenario,
    *,
    contract: Contract,
    fixture: WorldFixture,
    services: Sequence[ServiceSet] = (CHECKOUT,),
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
    substitutes: Mapping[str, Policy] | None = None,
) -> ScenarioRun:
    """``entry`` under ``guarded`` (or what ``substitutes`` gives for it), judged by its own
    assertions."""
    return _run(
        entry,
        policy=GUARDED,
        extra=entry.assertions,
        control=None,
        contract=contract,
        fixture=fixture,
        services=services,
        invariants=invariants,
        substitutes=substitutes or {},
    )


def run_control(
    entry: Control,
    *,
    contract: Contract,
    fixture: WorldFixture,
    services: Sequence[ServiceSet] = (CHECKOUT,),
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
    substitutes: Mapping[str, Policy] | None = None,
) -> ScenarioRun:
    """The control's policy (or what ``substitutes`` gives for it) on its scenario: the
    designated invariant must fire and the control's own assertions must hold."""
    checks = (invariant_fired(entry.designated), *entry.assertions)
    return _run(
        scenario(entry.scenario),
        policy=entry.policy,
        extra=checks,
        control=entry,
        contract=contract,
        fixture=fixture,
        services=services,
        invariants=invariants,
        substitutes=substitutes or {},
    )


def run_all(
    *,
    contract: Contract,
    fixture: WorldFixture,
    services: Sequence[ServiceSet] = (CHECKOUT,),
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
    substitutes: Mapping[str, Policy] | None = None,
) -> list[ScenarioRun]:
    """The 14 scenarios, then the 5 controls, in definition order, with ``services`` and
    held to ``invariants`` (the user's own, from the CLI, beside the defaults). The runs
    stop after the first in which a service or an invariant failed (``broken``): that is
    the user's mistake to fix, and the next runs would meet it again (or hang again).
    ``substitutes`` runs another policy in place of a built-in one, by name (``guarded``,
    a control's name): your own orchestrator, say its asyncio version."""
    runs: list[ScenarioRun] = []
    entries: list[Scenario | Control] = [*SCENARIOS, *CONTROLS]
    for entry in entries:
        if isinstance(entry, Control):
            run = run_control(
                entry,
                contract=contract,
                fixture=fixture,
                services=services,
                invariants=invariants,
                substitutes=substitutes,
            )
        else:
            run = run_scenario(
                entry,
                contract=contract,
                fixture=fixture,
                services=services,
                invariants=invariants,
                substitutes=substitutes,
            )
        runs.append(run)
        if broken(run) is not None:
            break
    return runs


def broken(run: ScenarioRun) -> UserCodeError | None:
    """The error of the user's service or invariant that ended ``run``, or None."""
    execution = run.execution
    if execution.error is None or execution.error_kind not in (
        ErrorKind.SERVICE,
        ErrorKind.INVARIANT,
    ):
        return None
    return user_code_error(execution.error_kind, execution.error)
