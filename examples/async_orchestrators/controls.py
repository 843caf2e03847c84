"""The five positive controls, asyncio twins of ``txcheck.models.sim.policies.controls``:
``Guarded`` with exactly one mechanism removed, each of which the checker must catch."""

from __future__ import annotations

from typing import Any

from examples.async_orchestrators.guarded import Guarded


class FreshKeyRetry(Guarded):
    """Treats a timeout as a failure and retries it under a new key: a double charge."""

    name = "control-fresh-key-async"
    resolve_unknown = False

    def arguments_for_attempt(
        self, tool: Any, arguments: dict[str, Any], attempt: int
    ) -> dict[str, Any]:
        key = tool.idempotency_key
        if attempt == 1 or key is None or key not in arguments:
            return arguments
        return {**arguments, key: f"{arguments[key]}-retry{attempt}"}


class NoCompensation(Guarded):
    """Stops at a failed step without a saga: the reservation is left behind."""

    name = "control-no-saga-async"
    compensate = False


class DualWrite(Guarded):
    """Publishes events itself after the call returns: a crash in between loses them."""

    name = "control-dual-write-async"
    uses_outbox = False


class NoDedupe(Guarded):
    """Its consumer applies every delivery: a redelivered message is consumed twice."""

    name = "control-no-dedupe-async"

    async def consume(self, delivery: Any, ports: Any) -> None:
        await ports.inbox.apply(delivery.event, record_seen=False)
        await ports.broker.ack(delivery.delivery_id)


class LazyValidation(Guarded):
    """Lets each call be checked as it runs: an invalid plan leaves side effects."""

    name = "control-lazy-validation-async"
    validate_first = False
