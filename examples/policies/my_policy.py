"""A complete orchestration policy in a page: docs/policies.md walks through it.

``Careful`` claims the plan's operation first (so the same plan submitted twice runs
once: the second submission attaches), validates the whole plan, runs the calls in order
with the model's key on every attempt, journals each attempt *before* sending it (so the
retry budget survives a crash), asks the service whether an unanswered call committed
before trying again, and hands anything it cannot finish to a person (MANUAL) instead of
compensating. It leaves the outbox relay and the deduplicating consumer to the ``Policy``
base class.

Check it from the repository root::

    python examples/policies/my_policy.py
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Mapping
from typing import Any

from txcheck import (
    DEFAULT_INVARIANTS,
    ActorGen,
    Call,
    Claim,
    Deviation,
    Deviations,
    Invoke,
    JournalAppend,
    JournalRead,
    Lookup,
    OrchestratorContext,
    Plan,
    Policy,
    Request,
    Sleep,
    Target,
    ToolResult,
    default_contract,
    default_fixture,
    execute,
    validate,
)

__all__ = ["Careful", "main"]

TERMINAL = ("RECONCILED", "REJECTED", "MANUAL", "ATTACHED")


class Careful(Policy):
    """Validate, run in order with one key per call, query when unsure, else MANUAL."""

    name = "careful"
    uses_outbox = True  # the tool's transaction writes its events; the base relays them
    max_attempts = 3  # per call, across restarts: the retry_budget invariant holds us to it

    def orchestrate(self, ctx: OrchestratorContext) -> ActorGen:
        # After a crash this generator starts again from here: only the journal survives.
        journal: tuple[Mapping[str, Any], ...] = yield JournalRead()
        phases = [entry["phase"] for entry in journal if "phase" in entry]
        if phases and phases[-1] in TERMINAL:
            return
        if not journal:
            # One plan, one operation: a second submission of it (a double click, the model
            # asked again) must not run it again, even once the first run's idempotency
            # records have expired. The claim and the journal's first entry are one write.
            operation = ctx.operation_id()
            owner = yield Claim(operation=operation, entry={"phase": "PROPOSED"})
            if owner != ctx.instance:
                yield JournalAppend(entry={"phase": "ATTACHED", "owner": owner})
                return
            phases = ["PROPOSED"]
        done = {e["call"]: e["receipt"] for e in journal if e.get("event") == "done"}
        tried: dict[str, int] = {}
        for entry in journal:
            if entry.get("event") == "attempt":
                tried[entry["call"]] = tried.get(entry["call"], 0) + 1
        if phases[-1] == "PROPOSED":
            verdict = validate(ctx.contract, ctx.plan)
            if not verdict.valid:  # judged as a whole, before any side effect
                codes = sorted(set(verdict.codes()))
                yield JournalAppend(entry={"phase": "REJECTED", "codes": codes})
                return
            yield JournalAppend(entry={"phase": "EXECUTING"})
        for call in ctx.plan.calls:
            if call.id in done:
                continue
            status, receipt = yield from self.run_call(call, tried.get(call.id, 0))
            if receipt is None:
                if status == "rejected" and not done:
                    # a definite no, and nothing of this plan has committed: nothing to
                    # look at, so no person is needed
                    yield JournalAppend(entry={"phase": "RECONCILED", "outcome": "failed"})
                    return
                diverging = [f"{call.id}: {call.name} {status}"]
                diverging += [f"{c}: committed {r}" for c, r in done.items()]
                yield JournalAppend(entry={"phase": "MANUAL", "diverging": diverging})
                return
            done[call.id] = receipt
            yield JournalAppend(entry={"call": call.id, "event": "done", "receipt": receipt})
        yield JournalAppend(entry={"phase": "RECONCILED", "outcome": "completed"})

    def run_call(
        self, call: Call, tried: int
    ) -> Generator[Request, Any, tuple[str, dict[str, Any] | None]]:
        """``("ok", receipt)``; ``("rejected", None)`` for a definite no; or
        ``("did not complete", None)`` when its outcome stays unknown or the budget ran out."""
        arguments = dict(call.arguments or {})
        unsure = tried > 0  # we crashed after journaling an attempt: did it commit?
        while True:
            if unsure:
                found: ToolResult = yield Lookup(
                    tool=call.name, arguments=arguments, call_id=call.id
                )
                if found.status != "ok":
                    return "did not complete", None  # cannot even ask: a person must look
                if found.receipt is not None:
                    return "ok", dict(found.receipt)
            if tried >= (self.max_attempts or 1):
                return "did not complete", None
            tried += 1
            yield JournalAppend(entry={"call": call.id, "event": "attempt", "n": tried})
            result: ToolResult = yield Invoke(tool=call.name, arguments=arguments, call_id=call.id)
            if result.status == "ok":
                return "ok", dict(result.receipt or {})
            if result.status == "rejected":
                return "rejected", None
            unsure = result.status == "timeout"  # committed or not: query before replaying
            yield Sleep(ticks=2**tried)  # conflict, transient error or timeout: back off


def main() -> int:
    """Run ``Careful`` through ``execute`` on the checkout plan, with and without faults."""
    plan = Plan.of(
        (
            "create_order",
            {
                "order_id": "ord_1",
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": 2}],
                "currency": "USD",
                "idempotency_key": "key-create-1",
            },
        ),
        ("reserve_inventory", {"order_id": "ord_1", "idempotency_key": "key-reserve-1"}),
        (
            "charge_payment",
            {"order_id": "ord_1", "amount": 2500, "currency": "USD", "idempotency_key": "key-ch-1"},
        ),
        ("confirm_order", {"order_id": "ord_1", "idempotency_key": "key-confirm-1"}),
    )
    scenarios = {
        "no fault": [],
        "charge response lost": [
            Deviation(
                action="complete", outcome="lost_response_after_commit", tool="charge_payment"
            )
        ],
        "crash while charging": [
            Deviation(action="crash", actor="orchestrator-1", tool="charge_payment")
        ],
        "charge declined": [
            Deviation(action="complete", outcome="permanent_error", tool="charge_payment")
        ],
    }
    failed = False
    for label, deviations in scenarios.items():
        execution = execute(
            Target(
                policy=Careful(),
                contract=default_contract(),
                fixture=default_fixture(),
                invariants=DEFAULT_INVARIANTS,
            ),
            [plan],
            chooser=Deviations(deviations),
            stop_at_first=False,
        )
        journal = execution.run.world.journals["orchestrator-1"]
        names = ", ".join(f.name for f in execution.failures) or "every invariant holds"
        print(f"{label:<22} ends {journal[-1]['phase']:<10} {names}")
        failed = failed or not execution.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
