"""Canonical checkout plans and run helpers shared by the world, policy and invariant tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from txcheck.exploration.kernel.session import Chooser, Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.runner import Run

__all__ = [
    "CONTRACT",
    "FIXTURE",
    "PLAN",
    "cancel_plan",
    "checkout_plan",
    "default_choices",
    "fault_points",
    "journal_phase",
    "policy",
    "run_checked",
]

CONTRACT = default_contract()
FIXTURE = default_fixture()


def checkout_plan(order: str = "ord_1", *, quantity: int = 2, prefix: str = "") -> Plan:
    """The four checkout steps for ``order`` (2 books = 2500 cents), one key per step."""
    return Plan.of(
        (
            "create_order",
            {
                "order_id": order,
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": quantity}],
                "currency": "USD",
                "idempotency_key": f"{prefix}key-create-1",
            },
        ),
        ("reserve_inventory", {"order_id": order, "idempotency_key": f"{prefix}key-reserve-1"}),
        (
            "charge_payment",
            {
                "order_id": order,
                "amount": 1250 * quantity,
                "currency": "USD",
                "idempotency_key": f"{prefix}key-charge-1",
            },
        ),
        ("confirm_order", {"order_id": order, "idempotency_key": f"{prefix}key-confirm-1"}),
    )


def cancel_plan(order: str = "ord_1") -> Plan:
    """A one-call plan cancelling ``order``: races a checkout of the same order."""
    return Plan.of(
        (
            "cancel_order",
            {"order_id": order, "reason": "customer_request", "idempotency_key": "key-cancel-1"},
        )
    )


PLAN = checkout_plan()


def policy(name: str | Policy) -> Policy:
    """A fresh built-in policy by name, or ``name`` itself when it is a policy already."""
    if isinstance(name, Policy):
        return name
    found = builtin_policy(name)
    assert found is not None, name
    return found


def run_checked(
    name: str | Policy,
    plans: Sequence[Plan] = (PLAN,),
    *,
    choices: Sequence[Choice] = (),
    chooser: Chooser | None = None,
    stop_at_first: bool = False,
) -> Execution:
    """Execute policy ``name`` (built-in name or instance), every default invariant checked."""
    return execute(
        Target(
            policy=policy(name), contract=CONTRACT, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
        ),
        plans,
        choices=choices,
        chooser=chooser,
        stop_at_first=stop_at_first,
    )


def default_choices(name: str | Policy, plans: Sequence[Plan] = (PLAN,)) -> list[Choice]:
    """The choices of the default (fault-free, fixed-order) run."""
    target = Target(policy=policy(name), contract=CONTRACT, fixture=FIXTURE, invariants=())
    return [step.choice for step in execute(target, plans).steps]


def fault_points(name: str | Policy, plans: Sequence[Plan] = (PLAN,)) -> list[tuple[int, Choice]]:
    """Every single deviation from the default run: ``(step index, non-default choice)``."""
    default = default_choices(name, plans)
    run = Target(policy=policy(name), contract=CONTRACT, fixture=FIXTURE).run(plans)
    points: list[tuple[int, Choice]] = []
    for index, choice in enumerate(default):
        options = run.choices()
        assert options[0] == choice
        points.extend((index, option) for option in options[1:])
        run.apply(choice)
    return points


def journal_phase(run: Run, instance: str = "orchestrator-1") -> dict[str, Any] | None:
    """The last phase entry of ``instance``'s journal."""
    entries: list[dict[str, Any]] = run.world.journals.get(instance, [])
    return next((entry for entry in reversed(entries) if "phase" in entry), None)
