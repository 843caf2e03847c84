"""Drawing deviations for Hypothesis: swarms of fault kinds, a kind, then a choice.

Every choice the runner offers besides the default is a deviation of one
``txcheck.models.sim.choices.FaultKind`` (``fault_kind`` classifies it). Exploration draws a
swarm (a random subset of kinds enabled for one example) and then, at each fault point, a
kind among those enabled *and available right now*, with weights, so a kind that is rarely
available (an ACK, a second pending delivery) still gets its turn when it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from hypothesis import strategies as st

from txcheck.models.sim.choices import Choice, FaultKind, fault_kind

__all__ = [
    "FAULT_KINDS",
    "FAULT_WEIGHTS",
    "deviations_by_kind",
    "draw_deviation",
    "draw_kind",
    "swarms",
]

FAULT_KINDS: tuple[FaultKind, ...] = tuple(FaultKind)
"""Every deviation kind, in the order shrinking prefers (earlier is simpler)."""

FAULT_WEIGHTS: dict[FaultKind, int] = {
    FaultKind.TIMEOUT_BEFORE_COMMIT: 3,
    FaultKind.LOST_RESPONSE_AFTER_COMMIT: 3,
    FaultKind.TRANSIENT_ERROR: 2,
    FaultKind.PERMANENT_ERROR: 2,
    FaultKind.CRASH: 3,
    FaultKind.DUPLICATE: 2,
    FaultKind.ACK_LOST: 2,
    FaultKind.REORDER: 2,
    FaultKind.INTERLEAVE: 2,
    FaultKind.JUMP: 1,
    FaultKind.LATE_COMMIT: 3,
    FaultKind.RETRY_SAME_ARGUMENTS: 2,
    FaultKind.MODEL_STOPS: 2,
}
"""Relative weight of each kind among those available at one point."""


def deviations_by_kind(
    options: Sequence[Choice], enabled: frozenset[FaultKind]
) -> dict[FaultKind, list[Choice]]:
    """The non-default options whose kind is enabled, grouped by kind."""
    grouped: dict[FaultKind, list[Choice]] = {}
    for choice in options[1:]:
        kind = fault_kind(choice, options)
        if kind is not None and kind in enabled:
            grouped.setdefault(kind, []).append(choice)
    return grouped


@lru_cache(maxsize=256)
def _below(n: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=n - 1)


def draw_kind(data: st.DataObject, kinds: Sequence[FaultKind]) -> FaultKind:
    """One of ``kinds``, weighted by ``FAULT_WEIGHTS`` (shrinks towards the first)."""
    ordered = [k for k in FAULT_KINDS if k in kinds]
    total = sum(FAULT_WEIGHTS[k] for k in ordered)
    ticket = data.draw(_below(total)) if total > 1 else 0
    for kind in ordered:
        ticket -= FAULT_WEIGHTS[kind]
        if ticket < 0:
            return kind
    return ordered[-1]


def draw_deviation(
    data: st.DataObject, grouped: dict[FaultKind, list[Choice]]
) -> tuple[FaultKind, Choice]:
    """Draw a kind (weighted, among ``grouped``), then one choice of that kind."""
    kind = draw_kind(data, list(grouped))
    candidates = grouped[kind]
    index = data.draw(_below(len(candidates))) if len(candidates) > 1 else 0
    return kind, candidates[index]


def swarms(
    kinds: Sequence[FaultKind] = FAULT_KINDS,
) -> st.SearchStrategy[frozenset[FaultKind]]:
    """Swarm testing: each kind is on or off for a whole example (shrinks towards off)."""
    return st.tuples(*[st.booleans() for _ in kinds]).map(
        lambda flags: frozenset(k for k, on in zip(kinds, flags, strict=True) if on)
    )
