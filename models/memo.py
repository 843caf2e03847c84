"""Values derived once from immutable inputs (a contract, a plan, a schema), by identity.

Engines build thousands of runs of the same plans, and invariants run after every step:
what they derive from a plan alone (its writes, whether the world refuses it, its
operation id) is computed once; a contract's index and compiled checks, a schema's walk
and verdicts likewise. Contracts, plans and fixtures compare by value, and a schema is a
plain ``dict``, so a memo is keyed by identity; this module is the one place that does
it, so that no cache elsewhere keys a dict by a bare ``id()``, which the next object may
be given once the first is collected, and would then be handed the first one's value.

- ``IdentityMemo`` holds each entry's objects, so their ids cannot be reused while the
  entry exists; it holds at most ``limit`` entries (all are dropped at once past it: a
  search's working set is a handful of plans, a contract's a few dozen schemas).
- ``WeakIdentityMemo`` keeps an entry while its object lives and drops it when the object
  is collected (for contracts: what is derived from one costs more than the contract).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["IdentityMemo", "WeakIdentityMemo"]

K = TypeVar("K")
T = TypeVar("T")


class IdentityMemo(Generic[T]):
    """``memo(inputs, compute)``: ``compute()`` the first time these very objects are
    seen, the same value afterwards. ``memo.one(obj, compute)`` is the same for one
    object (``compute(obj)``), optionally with a hashable ``detail`` (a value, not an
    identity) as part of the key; ``put``/``get`` record and read a value for an object."""

    def __init__(self, limit: int | None = 1024) -> None:
        self.limit = limit
        self._entries: dict[Hashable, tuple[Any, T]] = {}

    def __call__(self, inputs: tuple[object, ...], compute: Callable[[], T]) -> T:
        key = tuple(map(id, inputs))
        entry = self._entries.get(key)
        if entry is not None and all(a is b for a, b in zip(entry[0], inputs, strict=True)):
            return entry[1]
        value = compute()
        self._store(key, inputs, value)
        return value

    def one(self, obj: K, compute: Callable[[K], T], detail: Hashable = None) -> T:
        """``compute(obj)`` the first time this very object (with this ``detail``) is
        seen, the same value afterwards. A ``compute`` that raises stores nothing."""
        key = id(obj) if detail is None else (id(obj), detail)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is obj:
            return entry[1]
        value = compute(obj)
        self._store(key, obj, value)
        return value

    def put(self, obj: object, value: T) -> None:
        """Record ``value`` for this very object."""
        self._store(id(obj), obj, value)

    def get(self, obj: object) -> T | None:
        """The value recorded for this very object (``put`` or ``one``), or None."""
        entry = self._entries.get(id(obj))
        return entry[1] if entry is not None and entry[0] is obj else None

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def _store(self, key: Hashable, held: Any, value: T) -> None:
        if self.limit is not None and len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[key] = (held, value)


class WeakIdentityMemo(Generic[K, T]):
    """``memo.one(obj, compute)``: ``compute(obj)`` the first time this very object is
    seen, the same value while it lives; its entry goes when it is collected (``obj``
    must take weak references, as attrs classes do)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any], T]] = {}

    def one(self, obj: K, compute: Callable[[K], T]) -> T:
        key = id(obj)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is obj:
            return entry[1]
        value = compute(obj)
        entries = self._entries

        def forget(ref: weakref.ref[Any], key: int = key) -> None:
            found = entries.get(key)
            if found is not None and found[0] is ref:  # not a newer object's entry
                del entries[key]

        entries[key] = (weakref.ref(obj, forget), value)
        return value

    def __contains__(self, obj: object) -> bool:
        entry = self._entries.get(id(obj))
        return entry is not None and entry[0]() is obj

    def __len__(self) -> int:
        return len(self._entries)
