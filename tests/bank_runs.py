"""The bank-transfer example (examples/bank): its contract, world, ledger service and plan,
for the tests of sagas with pivots, receipts and amounts on a domain txcheck has no code for."""

from __future__ import annotations

from pathlib import Path

from examples.bank.ledger import LEDGER
from txcheck.exploration.kernel.session import Chooser, Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.plan.contract_loader import load_contract
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.sim.fixture import load_world
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.services import ServiceSet

__all__ = ["BANK", "CONTRACT", "FIXTURE", "PLAN", "run_bank", "target"]

BANK = Path(__file__).resolve().parent.parent / "examples" / "bank"
CONTRACT = load_contract(BANK / "contract.json")
FIXTURE = load_world(BANK / "world.json")
PLAN = load_proposal(BANK / "transfer.json")


def target(
    policy: str | Policy = "guarded",
    *,
    ledger: bool = False,
    invariants: tuple[Invariant, ...] = DEFAULT_INVARIANTS,
) -> Target:
    """A target on the bank contract: generic behaviour, or (``ledger``) the ledger
    service with its own money invariant."""
    found = builtin_policy(policy) if isinstance(policy, str) else policy
    assert found is not None
    services: tuple[ServiceSet, ...] = (LEDGER,) if ledger else ()
    return Target(
        policy=found, contract=CONTRACT, fixture=FIXTURE, services=services, invariants=invariants
    )


def run_bank(
    policy: str | Policy = "guarded",
    *,
    chooser: Chooser | None = None,
    ledger: bool = False,
    stop_at_first: bool = False,
) -> Execution:
    """One run of the transfer plan."""
    return execute(
        target(policy, ledger=ledger), [PLAN], chooser=chooser, stop_at_first=stop_at_first
    )
