"""Values derived once from immutable inputs (a contract, a plan, a fixture), by identity.

Engines build thousands of runs of the same plans, and invariants run after every step:
what they derive from a plan alone (its writes, whether the world refuses it, its
operation id) is computed once. Contracts, plans and fixtures are frozen values, so their
identity is a sound key; each entry keeps its inputs alive, so an id cannot be reused
while the entry exists. A memo holds at most ``limit`` entries (all are dropped at once
past it: the working set of a search is a handful of plans).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["IdentityMemo"]

T = TypeVar("T")


class IdentityMemo(Generic[T]):
    """``memo(inputs, compute)``: ``compute()`` the first time these very objects are
    seen, the same value afterwards."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._entries: dict[tuple[int, ...], tuple[tuple[object, ...], T]] = {}

    def __call__(self, inputs: tuple[object, ...], compute: Callable[[], T]) -> T:
        key = tuple(map(id, inputs))
        entry = self._entries.get(key)
        if entry is not None and all(a is b for a, b in zip(entry[0], inputs, strict=True)):
            return entry[1]
        value = compute()
        if len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[key] = (inputs, value)
        return value
