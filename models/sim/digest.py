"""Digests of run state, for engines that deduplicate states (fingerprints).

``serial`` gives bytes that determine a value (equal bytes mean equal values); ``digest``
hashes them to 128 bits with BLAKE2b. A fingerprint is a digest, so two different states
merge only on a hash collision: with 128 bits and n states, the probability of any
collision is about n^2 / 2^129 (3e-28 for a million states).
"""

from __future__ import annotations

import hashlib
import io
import json
import marshal
import pickle
from collections.abc import Callable, Mapping
from enum import Enum
from operator import attrgetter
from typing import Any

import attrs

__all__ = ["DIGEST_BITS", "chain", "digest", "plain_json", "serial"]

DIGEST_BITS = 128


def plain_json(value: Any) -> Any:
    """``json.dumps(default=...)`` for fingerprints: attrs values as their fields, mappings
    as dicts, sets sorted; anything else by its repr (a finer key, never a wrong merge)."""
    if attrs.has(type(value)):
        return {f.name: getattr(value, f.name) for f in attrs.fields(type(value))}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


_PLAIN = frozenset({tuple, list, dict, str, bytes, int, float, bool, type(None)})
"""Types ``serial`` meets most (fingerprints are tuples of them): never attrs classes."""


_FIELDS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
"""Per attrs class, what reads its field values in order (``attrs.astuple`` without
recursion, at less cost: ``serial`` meets a tool result at every step)."""


def _fields_of(kind: type) -> Callable[[Any], tuple[Any, ...]]:
    read = _FIELDS.get(kind)
    if read is None:
        names = [a.name for a in attrs.fields(kind)]
        if len(names) == 1:
            one = names[0]

            def read(value: Any) -> tuple[Any, ...]:
                return (getattr(value, one),)
        else:
            read = attrgetter(*names)
        _FIELDS[kind] = read
    return read


def serial(value: Any) -> bytes:
    """Bytes that determine ``value``: equal bytes mean equal values, whether or not they
    share objects (``marshal`` version 2 writes no references); an attrs value (a tool
    result) by its class and fields, an enum field (its status) by its value; a pickle
    without memo, or canonical JSON, for anything else. Equal values built differently
    (dict insertion order) may give different bytes: a finer key, never a wrong merge."""
    kind = type(value)
    if kind not in _PLAIN and attrs.has(kind):
        fields = _fields_of(kind)(value)
        value = (kind.__name__, tuple([f._value_ if isinstance(f, Enum) else f for f in fields]))
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        pass
    try:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=5)
        pickler.fast = True  # no memo: shared and copied objects serialise alike
        pickler.dump(value)
        return b"pickle:" + out.getvalue()
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=plain_json)
        return b"json:" + text.encode("utf-8")


def digest(data: bytes) -> bytes:
    """128-bit BLAKE2b of ``data``."""
    return hashlib.blake2b(data, digest_size=DIGEST_BITS // 8).digest()


def chain(previous: bytes, value: Any) -> bytes:
    """A running digest: ``previous`` extended by ``value`` (for append-only logs)."""
    return digest(previous + serial(value))
