"""Canonical JSON: the one byte form txcheck hashes, compares and writes."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

__all__ = ["canonical_json", "normalize", "printable_json", "stable_hash"]


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


_NON_ASCII = re.compile(r"[^\x00-\x7e]")
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})
"""Controls, format characters, lone surrogates, line separators and unassigned code points
(some, such as U+2065, are default-ignorable: an editor would hide them)."""


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char) not in _INVISIBLE:
        return char
    code = ord(char)
    if code > 0xFFFF:  # a surrogate pair, as JSON writes astral characters
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def printable_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with every character a terminal
    or an editor would act on or hide written as a ``\\uXXXX`` escape: DEL and the C1
    controls (``json`` escapes only the C0 ones), bidirectional overrides and other format
    characters, line and paragraph separators, unassigned code points. The text stays
    readable (letters of any script stay as they are) and decodes to the same value: such
    characters only occur inside strings. For what txcheck writes from untrusted data:
    traces, cases, reports."""
    return _NON_ASCII.sub(_escape, text)
