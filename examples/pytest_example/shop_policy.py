"""A custom policy with a deliberate bug, for the pytest example.

``KeepsTheMoney`` is ``guarded`` except for its saga: when a checkout fails after the
payment, it releases the stock and cancels the order, but it treats the charge as already
undone, so the customer is never refunded. No positive control and no fault-free run shows
this; txcheck finds it with one deviation (a permanent failure of the step after the
charge) and names the invariant it breaks: ``acceptable_outcome`` (the plan is neither
completed nor cleanly rolled back).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from txcheck import Call, Guarded, JournalState, OrchestratorContext, Request

__all__ = ["KeepsTheMoney"]


class KeepsTheMoney(Guarded):
    """Bug: compensation skips the refund (the charge is marked undone without a call)."""

    name = "shop-keeps-the-money"

    def compensate_all(
        self, ctx: OrchestratorContext, calls: Mapping[str, Call], state: JournalState
    ) -> Generator[Request, Any, list[str]]:
        for call_id in state.completed:
            if calls[call_id].name == "charge_payment":
                state.compensated[call_id] = {}  # the bug: "already refunded"
        return (yield from super().compensate_all(ctx, calls, state))
