"""Checking a policy from your own test suite, in one line.

``txcheck_testcase`` builds the Hypothesis state machine for a policy, a contract and
invariants, and returns its ``unittest.TestCase``; pytest and unittest collect it like
any other test class::

    from txcheck import txcheck_testcase
    from mypolicies import MyPolicy

    TestMyPolicy = txcheck_testcase(MyPolicy(), max_examples=200)

A failure is an ``AssertionError`` naming the invariant; the report of the shrunk example
carries the numbered steps, the state diff, the trace file it wrote (under
``.txcheck/traces/``, one per test class, replaced by the next failure) and a Python
reproduction that runs as printed: the policy is named by its import path. Services and
invariants given as import paths (``"module:NAME"``) are named in it too; ones given as
objects are listed for you to pass. Failures are kept in txcheck's example database
(``.txcheck/examples``, as ``txcheck explore`` keeps them) unless you pass ``database=...``.
"""

from __future__ import annotations

import unittest
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from txcheck.cli.render_trace import counterexample_report, render_text
from txcheck.cli.store_options import load_stores
from txcheck.exploration.engines.hypothesis_engine import PHASES
from txcheck.exploration.engines.machine import machine_class
from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.session import Execution
from txcheck.exploration.kernel.target import DEFAULT_DATABASE, Bounds, Budget, Target
from txcheck.exploration.plansets.readiness import check_ready
from txcheck.exploration.spread.example_db import open_database
from txcheck.exploration.spread.shipping import build_target
from txcheck.exploration.usercode.loading import load_invariants, load_policy, load_services
from txcheck.exploration.usercode.watchdog import DEFAULT_POLICY_TIMEOUT
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.errors import InputError, TxcheckError
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.fixture import WorldFixture, default_fixture
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.services import ServiceSet
from txcheck.traces.destination import planted_link
from txcheck.traces.document import trace_of, write_trace
from txcheck.traces.repro import python_reproduction

__all__ = ["TRACE_DIR", "txcheck_testcase"]

TRACE_DIR = ".txcheck/traces"
"""Where a failing test class writes its counterexample's trace (``<class name>.json``)."""


def _split(items: Sequence[Any], load: Any) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """Objects and ``module:NAME`` strings, as loaded objects and the strings."""
    specs = tuple(i for i in items if isinstance(i, str))
    loaded = load(specs) if specs else ()
    return (*(i for i in items if not isinstance(i, str)), *loaded), specs


_CHECKOUT_ONLY: tuple[ServiceSet, ...] = (CHECKOUT,)
"""``txcheck_testcase``'s services when none are given."""


def txcheck_testcase(
    policy: TargetDescription | str | Policy | type | Callable[..., Any],
    *,
    contract: Contract | None = None,
    fixture: WorldFixture | None = None,
    services: Sequence[ServiceSet | str] = _CHECKOUT_ONLY,
    invariants: Sequence[Invariant | str] = DEFAULT_INVARIANTS,
    plans: Sequence[Sequence[Plan]] = (),
    max_examples: int = 100,
    max_faults: int = 3,
    step_count: int = 16,
    policy_timeout: float | None = DEFAULT_POLICY_TIMEOUT,
    trace_dir: str | None = TRACE_DIR,
    **hypothesis_settings: Any,
) -> type[unittest.TestCase]:
    """A TestCase that model-checks ``policy`` (an instance, a class, a built-in name,
    ``package.module:Name``, or an asyncio orchestrator: ``txcheck.sim``) over
    ``services`` (checkout, plus your own ``ServiceSet``s, as objects or ``module:NAME``)
    and ``invariants`` (likewise); or the target a ``TargetDescription`` names (a trace's
    ``description``, say), whose contract, world, services, invariants and stores are
    its own (then give none of ``contract``, ``fixture``, ``services``, ``invariants``).
    ``plans`` fixes the plans (each entry: the plans of one run); by default they are
    generated from the contract.
    A failure's trace goes to ``trace_dir`` (None: none). Extra keyword arguments are
    Hypothesis settings (``database=...``, ``derandomize=True``, ...)."""
    bounds = Bounds(max_faults=max_faults)
    # no shrink budget: that is the search engine's stop (it reports the smallest failure
    # so far); in a TestCase Hypothesis shrinks to its own end, and the engine's stop would
    # escape as a BaseException and end the whole test session
    budget = Budget(
        max_examples=max_examples, step_count=step_count, database=None, max_shrinks=None
    )
    unnamed = ""
    if isinstance(policy, TargetDescription):
        _described_alone(contract, fixture, services, invariants)
        description = policy
        target = build_target(
            description,
            policy_timeout=policy_timeout,
            plans=plans,
            bounds=bounds,
            budget=budget,
            stores=load_stores(description.stores) if description.stores else None,
        )
    else:
        loaded = load_policy(policy, timeout=policy_timeout)
        service_sets, service_specs = _split(services, load_services)
        checks, invariant_specs = _split(invariants, load_invariants)
        description = TargetDescription(
            policy=loaded.spec,
            contract=contract or default_contract(),
            fixture=fixture or default_fixture(),
            services=service_specs,
            invariants=invariant_specs,
        )
        target = Target(
            policy_name=loaded.spec,
            policy=loaded.policy,
            contract=description.contract,
            fixture=description.fixture,
            services=tuple(service_sets),
            invariants=tuple(checks),
            plans=plans,
            bounds=bounds,
            budget=budget,
        )
        unnamed = _unnamed(services, invariants)
    name = f"Test_{target.policy_name}".replace("-", "_").replace(".", "_").replace(":", "_")
    trace_path = None if trace_dir is None else f"{trace_dir.rstrip('/')}/{name}.json"
    checked = tuple(i.name for i in target.invariants) if description.selects else None

    check_ready(target)  # tools without behaviour, nothing to plan: an error, not a pass

    def explain(execution: Execution) -> str:
        written = _write(execution, description, trace_path)
        reproduction = python_reproduction(
            description,
            execution,
            trace_path=written,  # the file it names exists, or it names none
            checked=checked,
        )
        if unnamed:
            reproduction += f"# also pass what you gave txcheck_testcase as objects: {unnamed}\n"
        report = counterexample_report(
            execution,
            target=target,
            trace_path=written,
            reproduction=reproduction,
            description=description,
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
    if "database" not in hypothesis_settings:  # beside the traces, not a .hypothesis/ of its own
        chosen["database"] = open_database(DEFAULT_DATABASE)
    testcase.settings = settings(**{**chosen, **hypothesis_settings})
    testcase.__name__ = name
    return testcase


def _described_alone(
    contract: Contract | None,
    fixture: WorldFixture | None,
    services: Sequence[Any],
    invariants: Sequence[Any],
) -> None:
    """A description names its contract, world, services and invariants: given again
    beside it, one of the two would be ignored, so that is bad usage."""
    given = [
        word
        for word, value, default in (
            ("contract", contract, None),
            ("fixture", fixture, None),
            ("services", services, _CHECKOUT_ONLY),
            ("invariants", invariants, DEFAULT_INVARIANTS),
        )
        if value is not default
    ]
    if given:
        raise InputError(
            f"the description names the target's {', '.join(given)}: pass "
            f"{', '.join(f'{w}=' for w in given)} in it, not beside it",
            source="txcheck_testcase",
        )


def _write(execution: Execution, description: TargetDescription, path: str | None) -> str | None:
    """Write the failure's trace to ``path``; the path, or None when it could not be (or
    when a symbolic link is planted in its folder's path: it is not written through)."""
    if path is None or planted_link(Path(path).parent) is not None:
        return None
    try:
        document = trace_of(
            execution, target=description, plans=execution.plans, extra={"engine": "hypothesis"}
        )
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_trace(document, path, force=True)
    except (OSError, TxcheckError):
        return None
    return path


def _unnamed(services: Sequence[Any], invariants: Sequence[Any]) -> str:
    """The user's services and invariants given as objects (not import paths)."""
    names = [
        f"services {s.name!r}" for s in services if not isinstance(s, str) and s is not CHECKOUT
    ]
    names += [
        f"invariant {i.name!r}"
        for i in invariants
        if not isinstance(i, str) and i not in DEFAULT_INVARIANTS
    ]
    return ", ".join(names)
