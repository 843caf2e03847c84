"""Orchestration policies: the interface, ``naive``, ``guarded`` and the five controls."""

from __future__ import annotations

from txcheck.models.sim.policies.base import OrchestratorContext, Policy
from txcheck.models.sim.policies.controls import (
    DESIGNATED,
    DualWrite,
    FreshKeyRetry,
    LazyValidation,
    NoCompensation,
    NoDedupe,
)
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.policies.naive import Naive

__all__ = [
    "BUILTIN_POLICIES",
    "CONTROL_POLICIES",
    "DESIGNATED",
    "Guarded",
    "Naive",
    "OrchestratorContext",
    "Policy",
    "builtin_policy",
]

CONTROL_POLICIES: tuple[type[Policy], ...] = (
    FreshKeyRetry,
    NoCompensation,
    DualWrite,
    NoDedupe,
    LazyValidation,
)
_ALL: tuple[type[Policy], ...] = (Naive, Guarded, *CONTROL_POLICIES)
BUILTIN_POLICIES: dict[str, type[Policy]] = {p.name: p for p in _ALL}


def builtin_policy(name: str) -> Policy | None:
    """A fresh instance of the built-in policy ``name``, or None."""
    factory = BUILTIN_POLICIES.get(name)
    return factory() if factory is not None else None
