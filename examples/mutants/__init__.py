"""The mutant library: ``guarded`` with one realistic bug each, and what should catch it.

Put ``examples`` on ``sys.path`` (``PYTHONPATH=examples``) to name a mutant on the command
line, e.g. ``txcheck explore --policy mutants.policies:KeyPerAttempt``.
"""

from __future__ import annotations

import attrs

from mutants import policies
from txcheck import Guarded

__all__ = ["MUTANTS", "Mutant"]


@attrs.frozen(kw_only=True)
class Mutant:
    """One mutant: its class, the invariants that should catch it and its known minimum.

    ``min_deviations`` is the fewest deviations from the default schedule of a failing run
    on ``plan`` (``checkout``, or an invalid variant), found by the systematic engine.
    """

    policy: type[Guarded]
    catches: tuple[str, ...]
    min_deviations: int
    plan: str = "checkout"

    @property
    def name(self) -> str:
        return self.policy.name


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        policy=policies.CompensateForward,
        catches=("compensation_reverse_order",),
        min_deviations=1,
    ),
    Mutant(
        policy=policies.SkipTimedOutCompensation,
        catches=("acceptable_outcome",),
        min_deviations=2,
    ),
    Mutant(policy=policies.TimeoutAsFailure, catches=("acceptable_outcome",), min_deviations=1),
    Mutant(policy=policies.RetryRejections, catches=("retry_budget",), min_deviations=1),
    Mutant(
        policy=policies.KeyPerAttempt,
        catches=("no_double_charge", "retries_reuse_key", "acceptable_outcome"),
        min_deviations=1,
    ),
    Mutant(
        policy=policies.LookupByKeyOnly,
        catches=("no_double_charge", "acceptable_outcome"),
        min_deviations=2,
    ),
    Mutant(
        policy=policies.MarkSeenBeforeApply,
        catches=("consumer_effect_exactly_once",),
        min_deviations=1,
    ),
    Mutant(
        policy=policies.DedupeNotAtomic, catches=("consumer_effect_at_most_once",), min_deviations=1
    ),
    Mutant(
        policy=policies.AckBeforeApply, catches=("consumer_effect_exactly_once",), min_deviations=1
    ),
    Mutant(
        policy=policies.DedupeByDelivery,
        catches=("consumer_effect_at_most_once",),
        min_deviations=1,
    ),
    Mutant(
        policy=policies.RelayMarkBeforeSend,
        catches=("consumer_effect_exactly_once",),
        min_deviations=1,
    ),
    Mutant(policy=policies.ManualNeverEscalated, catches=("acceptable_outcome",), min_deviations=2),
    Mutant(
        policy=policies.ValidateFirstCallOnly,
        catches=("rejected_plan_unchanged",),
        min_deviations=0,
        plan="second_call_invalid",
    ),
    Mutant(
        policy=policies.ValidateListOrder,
        catches=("rejected_plan_unchanged",),
        min_deviations=0,
        plan="dependency_too_early",
    ),
    Mutant(policy=policies.DropDuplicateWithoutAck, catches=("quiescence",), min_deviations=1),
    Mutant(
        policy=policies.CompensationFromMemory,
        catches=("no_leftover_reservation", "acceptable_outcome"),
        min_deviations=2,
    ),
)
