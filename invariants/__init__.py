"""Named properties over a run: safety (``always``) and liveness (``eventually``)."""

from __future__ import annotations

from txcheck.invariants.base import Applies, Check, Invariant, Kind, Severity, always, eventually
from txcheck.invariants.checkout import (
    no_double_charge,
    no_leftover_reservation,
    no_orphan_reservation,
    stock_and_money_conserved,
)
from txcheck.invariants.effects import fault_free_completion, no_double_effect, no_orphaned_effect
from txcheck.invariants.orchestration import (
    acceptable_outcome,
    compensation_reverse_order,
    consumed_effect_committed,
    consumer_effect_at_most_once,
    consumer_effect_exactly_once,
    journal_terminal,
    no_manual_without_fault,
    rejected_plan_unchanged,
    retries_reuse_key,
    retry_budget,
    state_and_event_together,
    writes_within_plan,
)
from txcheck.invariants.sagas import (
    amounts_conserved,
    compensation_matches_its_call,
    no_compensation_past_pivot,
)

__all__ = [
    "DEFAULT_INVARIANTS",
    "Applies",
    "Check",
    "Invariant",
    "Kind",
    "Severity",
    "always",
    "by_name",
    "eventually",
]

DEFAULT_INVARIANTS: tuple[Invariant, ...] = (
    no_double_charge,
    no_orphan_reservation,
    stock_and_money_conserved,
    consumer_effect_at_most_once,
    consumed_effect_committed,
    state_and_event_together,
    rejected_plan_unchanged,
    writes_within_plan,
    retries_reuse_key,
    retry_budget,
    compensation_reverse_order,
    no_double_effect,
    no_compensation_past_pivot,
    compensation_matches_its_call,
    consumer_effect_exactly_once,
    no_leftover_reservation,
    journal_terminal,
    no_manual_without_fault,
    acceptable_outcome,
    no_orphaned_effect,
    amounts_conserved,
    fault_free_completion,
)
"""Every built-in invariant: safety (``always``) first, then liveness (``eventually``)."""


def by_name(name: str) -> Invariant:
    """The built-in invariant called ``name``."""
    for invariant in DEFAULT_INVARIANTS:
        if invariant.name == name:
            return invariant
    known = ", ".join(sorted(i.name for i in DEFAULT_INVARIANTS))
    raise KeyError(f"no invariant named {name!r} (known: {known})")
