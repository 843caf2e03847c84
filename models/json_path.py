"""JSON paths for error messages: format them, and map one back to a line of the source text.

Loaders report *where* a document is wrong as a JSON path such as
``$.tool_calls[2].function.name``. Parsing yields plain Python values with no positions, so
when the source text is at hand ``locate`` walks the text's tokens (strings, brackets,
commas and colons; the document has already been parsed strictly) to find the offset of the
value a path names. This is a locator for valid JSON, not a parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, TypeAlias

__all__ = [
    "STRING_PATTERN",
    "PathPart",
    "describe",
    "format_path",
    "line_column",
    "locate",
    "parse_path",
]

PathPart: TypeAlias = "str | int"

# One JSON string literal, escapes included (the "unrolled loop" form: linear, no backtracking).
STRING_PATTERN = r'"[^"\\]*(?:\\.[^"\\]*)*"'

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")
_PART = re.compile(r"\.([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[(" + STRING_PATTERN + r")\]", re.S)
_TOKEN = re.compile(STRING_PATTERN + r"(\s*:)?|[{}\[\],]", re.S)
_SHORT = 40


def format_path(parts: Iterable[PathPart]) -> str:
    """``$`` plus ``.key`` for plain keys, ``["odd key"]`` for others, ``[i]`` for indexes."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part)}]")
    return "".join(out)


def parse_path(path: str) -> tuple[PathPart, ...] | None:
    """The parts of a path made by ``format_path``, or ``None`` if it is not one."""
    if not path.startswith("$"):
        return None
    parts: list[PathPart] = []
    pos = 1
    while pos < len(path):
        match = _PART.match(path, pos)
        if match is None:
            return None
        key, index, quoted = match.groups()
        if key is not None:
            parts.append(key)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(json.loads(quoted))
        pos = match.end()
    return tuple(parts)


def locate(text: str, parts: Iterable[PathPart]) -> int | None:
    """Offset in ``text`` of the value at ``parts``, or of its deepest existing ancestor.

    ``text`` must be valid JSON. Returns ``None`` only for an empty document.
    """
    pos = _skip_ws(text, 1 if text.startswith("\ufeff") else 0)
    if pos >= len(text):
        return None
    for part in parts:
        child = _child(text, pos, part)
        if child is None:
            break
        pos = child
    return pos


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _child(text: str, start: int, part: PathPart) -> int | None:
    opener = text[start]
    if opener != ("[" if isinstance(part, int) else "{"):
        return None
    if part == 0:
        first = _skip_ws(text, start + 1)
        return first if first < len(text) and text[first] != "]" else None
    depth = 0
    commas = 0
    for match in _TOKEN.finditer(text, start + 1):
        char = match.group()[0]
        if char in "{[":
            depth += 1
        elif char in "}]":
            if depth == 0:
                return None
            depth -= 1
        elif depth:
            continue
        elif char == "," and isinstance(part, int):
            commas += 1
            if commas == part:
                return _skip_ws(text, match.end())
        elif char == '"' and isinstance(part, str) and match.group(1) is not None:
            key = text[match.start() : match.start(1)]
            if json.loads(key) == part:
                return _skip_ws(text, match.end())
    return None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def describe(value: Any) -> str:
    """A short phrase for a JSON value in messages: ``null``, ``the number 5``, ``an array
    of 3 items``, ``an object with keys "a", "b"``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {_shorten(repr(value) if isinstance(value, float) else str(value))}"
    if isinstance(value, str):
        return f"the string {_shorten(json.dumps(value))}"
    if isinstance(value, list):
        count = len(value)
        return (
            "an empty array"
            if not count
            else f"an array of {count} item{'' if count == 1 else 's'}"
        )
    if isinstance(value, dict):
        if not value:
            return "an empty object"
        keys = ", ".join(_shorten(json.dumps(k)) for k in list(value)[:5])
        more = ", ..." if len(value) > 5 else ""
        return f"an object with keys {keys}{more}"
    return type(value).__name__


def _shorten(text: str) -> str:
    return text if len(text) <= _SHORT else f"{text[: _SHORT - 3]}..."
