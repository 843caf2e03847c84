"""The five positive controls: ``guarded`` with exactly one mechanism removed.

Each must show one failure, which proves the checker can see what it claims to check.
``DESIGNATED`` names, for each, the invariants its missing mechanism exists to protect.
"""

from __future__ import annotations

from typing import Any

from txcheck.models.plan.contract import Tool
from txcheck.models.sim.policies.base import ActorGen, OrchestratorContext
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.requests import Ack, ApplyEffect, Delivery

__all__ = [
    "DESIGNATED",
    "DualWrite",
    "FreshKeyRetry",
    "LazyValidation",
    "NoCompensation",
    "NoDedupe",
]


class FreshKeyRetry(Guarded):
    """Treats a timeout as a failure and retries it under a new key: a double charge."""

    name = "control-fresh-key"
    resolve_unknown = False

    def arguments_for_attempt(
        self, ctx: OrchestratorContext, tool: Tool, arguments: dict[str, Any], attempt: int
    ) -> dict[str, Any]:
        key = tool.idempotency_key
        if attempt == 1 or key is None or key not in arguments:
            return arguments
        return {**arguments, key: f"{arguments[key]}-retry{attempt}"}


class NoCompensation(Guarded):
    """Stops at a failed step without a saga: the reservation is left behind."""

    name = "control-no-saga"
    compensate = False


class DualWrite(Guarded):
    """Publishes events itself after the call returns: a crash in between loses them."""

    name = "control-dual-write"
    uses_outbox = False


class NoDedupe(Guarded):
    """Its consumer applies every delivery: a redelivered message is consumed twice."""

    name = "control-no-dedupe"

    def consume(self, delivery: Delivery) -> ActorGen:
        yield ApplyEffect(event=delivery.event, record_seen=False)
        yield Ack(delivery_id=delivery.delivery_id)


class LazyValidation(Guarded):
    """Lets each call be checked as it runs: an invalid plan leaves side effects."""

    name = "control-lazy-validation"
    validate_first = False


DESIGNATED: dict[str, tuple[str, ...]] = {
    # a fresh key on an unknown outcome: the hygiene failure, and the harm it leads to
    FreshKeyRetry.name: (
        "no_double_charge",
        "retries_reuse_key",
        "no_double_effect",
        "acceptable_outcome",
        "no_orphaned_effect",
        "no_compensation_past_pivot",  # a confirm that committed, taken as failed, undone
    ),
    NoCompensation.name: ("no_leftover_reservation", "acceptable_outcome"),
    DualWrite.name: ("consumer_effect_exactly_once",),
    NoDedupe.name: ("consumer_effect_at_most_once",),
    LazyValidation.name: ("rejected_plan_unchanged",),
}
