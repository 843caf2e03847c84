"""Checking a policy from your own test suite, in one line.

``txcheck_testcase`` builds the Hypothesis state machine for a policy, a contract and
invariants, and returns its ``unittest.TestCase``; pytest and unittest collect it like
any other test class::

    from txcheck import txcheck_testcase
    from mypolicies import MyPolicy

    TestMyPolicy = txcheck_testcase(MyPolicy(), max_examples=200)

A failure is an ``AssertionError`` naming the invariant; the report of the shrunk example
carries the numbered steps, the state diff and a Python reproduction. Failures go to the
Hypothesis example database of your settings profile, as for any Hypothesis test.
"""

from __future__ import annotations

import unittest
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, settings

from txcheck.cli.render_trace import counterexample_report, render_text
from txcheck.exploration.hypothesis_engine import PHASES
from txcheck.exploration.loading import DEFAULT_POLICY_TIMEOUT, load_policy
from txcheck.exploration.machine import machine_class
from txcheck.exploration.session import Execution
from txcheck.exploration.target import Bounds, Budget, Target
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.checkout import CHECKOUT
from txcheck.models.contract import Contract
from txcheck.models.contract_loader import default_contract
from txcheck.models.fixture import WorldFixture, default_fixture
from txcheck.models.policies.base import Policy
from txcheck.models.proposal import Plan
from txcheck.models.services import ServiceSet
from txcheck.traces.repro import python_reproduction

__all__ = ["txcheck_testcase"]


def txcheck_testcase(
    policy: str | Policy | type[Policy],
    *,
    contract: Contract | None = None,
    fixture: WorldFixture | None = None,
    services: Sequence[ServiceSet] = (CHECKOUT,),
    invariants: Sequence[Invariant] = DEFAULT_INVARIANTS,
    plans: Sequence[Sequence[Plan]] = (),
    max_examples: int = 100,
    max_faults: int = 3,
    step_count: int = 16,
    policy_timeout: float | None = DEFAULT_POLICY_TIMEOUT,
    **hypothesis_settings: Any,
) -> type[unittest.TestCase]:
    """A TestCase that model-checks ``policy`` (an instance, a class, a built-in name or
    ``package.module:Name``) over ``services`` (checkout, plus your own ``ServiceSet``s).
    ``plans`` fixes the plans (each entry: the plans of one run); by default they are
    generated from the contract. Extra keyword arguments are Hypothesis settings
    (``database=...``, ``derandomize=True``, ...)."""
    loaded = load_policy(policy, timeout=policy_timeout)
    target = Target(
        policy_name=loaded.spec,
        policy=loaded.policy,
        contract=contract or default_contract(),
        fixture=fixture or default_fixture(),
        services=services,
        invariants=tuple(invariants),
        plans=plans,
        bounds=Bounds(max_faults=max_faults),
        budget=Budget(max_examples=max_examples, step_count=step_count, database=None),
    )

    def explain(execution: Execution) -> str:
        report = counterexample_report(
            execution,
            target=target,
            reproduction=python_reproduction(
                execution, policy=loaded.spec, contract=target.contract, fixture=target.fixture
            ),
        )
        return render_text(report)

    machine = machine_class(target, explain=explain)
    testcase = machine.TestCase
    chosen: dict[str, Any] = {
        "max_examples": max_examples,
        "stateful_step_count": step_count,
        "deadline": None,
        "suppress_health_check": list(HealthCheck),
        "report_multiple_bugs": False,
        "phases": PHASES,
    }
    testcase.settings = settings(**{**chosen, **hypothesis_settings})
    testcase.__name__ = f"Test_{loaded.spec}".replace("-", "_").replace(".", "_").replace(":", "_")
    return testcase
