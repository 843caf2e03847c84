"""Canonical JSON: the one byte form txcheck hashes, compares and writes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "normalize", "stable_hash"]


def normalize(value: Any) -> Any:
    """A JSON value with numbers compared by value: ``1.0`` becomes ``1``; bools stay bools."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(value: Any) -> str:
    """SHA-256 of the canonical JSON of the normalised value; never Python's ``hash()``."""
    text = canonical_json(normalize(value))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
