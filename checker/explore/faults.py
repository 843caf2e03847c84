"""The nondeterministic choices as fault kinds: how a deviation is classified and drawn.

Every choice the runner offers besides the default is a deviation of one kind: a tool
outcome (``timeout_before_commit``, ``lost_response_after_commit``, ``transient_error``,
``permanent_error``), a ``crash`` of some actor, a broker ``duplicate``, an ``ack_lost``, a
``reorder`` of deliveries, an ``interleave`` (another actor moves first) or a clock
``jump``. Exploration draws a swarm (a random subset of kinds enabled for one example) and
then, at each fault point, a kind among those enabled *and available right now*, with
weights, so a kind that is rarely available (an ACK, a second pending delivery) still gets
its turn when it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from hypothesis import strategies as st

from txcheck.models.runner import Choice

__all__ = [
    "FAULT_KINDS",
    "FAULT_WEIGHTS",
    "deviations_by_kind",
    "draw_deviation",
    "draw_kind",
    "kind_of",
    "swarms",
]

FAULT_KINDS: tuple[str, ...] = (
    "timeout_before_commit",
    "lost_response_after_commit",
    "transient_error",
    "permanent_error",
    "crash",
    "duplicate",
    "ack_lost",
    "reorder",
    "interleave",
    "jump",
)
"""Every deviation kind, in the order shrinking prefers (earlier is simpler)."""

FAULT_WEIGHTS: dict[str, int] = {
    "timeout_before_commit": 3,
    "lost_response_after_commit": 3,
    "transient_error": 2,
    "permanent_error": 2,
    "crash": 3,
    "duplicate": 2,
    "ack_lost": 2,
    "reorder": 2,
    "interleave": 2,
    "jump": 1,
}
"""Relative weight of each kind among those available at one point."""

_OUTCOME_KINDS = frozenset(FAULT_KINDS[:4]) | {"duplicate", "ack_lost"}


def kind_of(choice: Choice, options: Sequence[Choice]) -> str | None:
    """The fault kind of ``choice`` among ``options`` (default first); None for the default."""
    if choice == options[0]:
        return None
    if choice.action in ("crash", "jump"):
        return choice.action
    if choice.outcome in _OUTCOME_KINDS:
        return choice.outcome
    if choice.action == "deliver":
        oldest = next(c for c in options if c.action == "deliver")
        if choice != oldest:
            return "reorder"
    return "interleave"


def deviations_by_kind(
    options: Sequence[Choice], enabled: frozenset[str]
) -> dict[str, list[Choice]]:
    """The non-default options whose kind is enabled, grouped by kind."""
    grouped: dict[str, list[Choice]] = {}
    for choice in options[1:]:
        kind = kind_of(choice, options)
        if kind is not None and kind in enabled:
            grouped.setdefault(kind, []).append(choice)
    return grouped


@lru_cache(maxsize=256)
def _below(n: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=n - 1)


def draw_kind(data: st.DataObject, kinds: Sequence[str]) -> str:
    """One of ``kinds``, weighted by ``FAULT_WEIGHTS`` (shrinks towards the first)."""
    ordered = [k for k in FAULT_KINDS if k in kinds]
    total = sum(FAULT_WEIGHTS[k] for k in ordered)
    ticket = data.draw(_below(total)) if total > 1 else 0
    for kind in ordered:
        ticket -= FAULT_WEIGHTS[kind]
        if ticket < 0:
            return kind
    return ordered[-1]


def draw_deviation(data: st.DataObject, grouped: dict[str, list[Choice]]) -> tuple[str, Choice]:
    """Draw a kind (weighted, among ``grouped``), then one choice of that kind."""
    kind = draw_kind(data, list(grouped))
    candidates = grouped[kind]
    index = data.draw(_below(len(candidates))) if len(candidates) > 1 else 0
    return kind, candidates[index]


def swarms(kinds: Sequence[str] = FAULT_KINDS) -> st.SearchStrategy[frozenset[str]]:
    """Swarm testing: each kind is on or off for a whole example (shrinks towards off)."""
    return st.tuples(*[st.booleans() for _ in kinds]).map(
        lambda flags: frozenset(k for k, on in zip(kinds, flags, strict=True) if on)
    )
