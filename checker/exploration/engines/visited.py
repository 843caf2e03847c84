"""The systematic engine's visited set: 64-bit fingerprints in flat arrays.

A state's fingerprint is a 128-bit BLAKE2b digest (``Run.fingerprint``); the table keeps
its first 64 bits. A Python ``dict`` of digests to ``(deviations, steps)`` tuples cost
about 200 bytes a state (1.4 million states: over a gigabyte with the frontier); this
open-addressing table costs 12 bytes a slot and keeps at least half its slots empty, so
at most 24 bytes a state.

Two distinct states with the same 64 bits would be taken for one, and the second never
explored. As TLC reports for its own fingerprints, the chance of that happening at all in
a search of ``n`` states is at most about ``n * n / 2**65`` (``collision_odds``): about
one in 18 million for a million states.
"""

from __future__ import annotations

from array import array

__all__ = ["FingerprintTable", "Overlay", "collision_odds"]

_EMPTY = 0
_MAX_LOAD = 0.5


def _zeros(size: int) -> tuple[array[int], array[int]]:
    """Empty key and value arrays of ``size`` slots, allocated directly: building them from
    ``bytes(n)`` held a zeroed copy of each beside it, which at a million states made the
    table's growth the search's peak memory."""
    return array("Q", [_EMPTY]) * size, array("I", [0]) * size


def collision_odds(states: int) -> float:
    """An upper bound on the probability that two of ``states`` distinct states share a
    64-bit fingerprint (the birthday bound, ``n(n-1)/2 / 2**64``)."""
    return states * (states - 1) / 2 / 2.0**64


class FingerprintTable:
    """Fingerprint -> (deviations, steps), the fewest deviations and steps it was reached
    with. ``get`` and ``put`` take the 16-byte digest; values are packed in 32 bits
    (deviations below 256, steps below 2**24)."""

    def __init__(self, capacity: int = 1024) -> None:
        size = 1
        while size < capacity:
            size *= 2
        self._keys, self._values = _zeros(size)
        self._mask = size - 1
        self.count = 0

    def __len__(self) -> int:
        return self.count

    @staticmethod
    def _key(digest: bytes) -> int:
        key = int.from_bytes(digest[:8], "little")
        return key if key != _EMPTY else 1

    def _slot(self, key: int) -> int:
        """The slot holding ``key``, or the empty slot where it would go."""
        keys = self._keys
        mask = self._mask
        slot = key & mask
        while True:
            held = keys[slot]
            if held in (key, _EMPTY):
                return slot
            slot = (slot + 1) & mask

    def get(self, digest: bytes) -> tuple[int, int] | None:
        """``(deviations, steps)`` the state was first reached with, or None."""
        key = self._key(digest)
        slot = self._slot(key)
        if self._keys[slot] == _EMPTY:
            return None
        packed = self._values[slot]
        return packed >> 24, packed & 0xFFFFFF

    def put(self, digest: bytes, deviations: int, steps: int) -> None:
        """Record (or lower) how the state was reached."""
        if not 0 <= deviations < 256 or not 0 <= steps < 1 << 24:
            raise ValueError(f"cannot pack ({deviations}, {steps})")
        key = self._key(digest)
        slot = self._slot(key)
        if self._keys[slot] == _EMPTY:
            self._keys[slot] = key
            self.count += 1
        self._values[slot] = deviations << 24 | steps
        if self.count > _MAX_LOAD * len(self._keys):
            self._grow()

    def _grow(self) -> None:
        keys, values = self._keys, self._values
        size = 2 * len(keys)
        self._keys, self._values = _zeros(size)
        self._mask = size - 1
        for key, value in zip(keys, values, strict=True):
            if key != _EMPTY:
                slot = self._slot(key)
                self._keys[slot] = key
                self._values[slot] = value

    def nbytes(self) -> int:
        """Memory held by the two arrays."""
        return len(self._keys) * 12

    def merge(self, other: FingerprintTable) -> int:
        """Take in ``other``'s states, keeping the lower ``(deviations, steps)`` of a state
        both hold; how many of them were new here."""
        added = 0
        for key, value in zip(other._keys, other._values, strict=True):
            if key == _EMPTY:
                continue
            slot = self._slot(key)
            if self._keys[slot] == _EMPTY:
                self._keys[slot] = key
                self._values[slot] = value
                self.count += 1
                added += 1
                if self.count > _MAX_LOAD * len(self._keys):
                    self._grow()
            elif value < self._values[slot]:  # packed: fewer deviations, then fewer steps
                self._values[slot] = value
        return added


class Overlay:
    """A read-only ``base`` table (shared, e.g. by every chunk of a level) with this
    search's own states on top: ``get`` looks in both, ``put`` writes only ``own``."""

    def __init__(self, base: FingerprintTable) -> None:
        self.base = base
        self.own = FingerprintTable()

    def get(self, digest: bytes) -> tuple[int, int] | None:
        """The lower of what ``own`` and ``base`` hold for the state, or None."""
        mine = self.own.get(digest)
        shared = self.base.get(digest)
        if mine is None or shared is None:
            return mine if shared is None else shared
        return min(mine, shared)

    def put(self, digest: bytes, deviations: int, steps: int) -> None:
        self.own.put(digest, deviations, steps)

    def nbytes(self) -> int:
        """Memory held by this search's own table (the base is counted once, apart)."""
        return self.own.nbytes()
