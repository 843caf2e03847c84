"""A deterministic diff of two JSON values: which paths were added, removed or changed.

Scenario results record the world's state before and after a run together with this diff,
so a reader sees at a glance what a run did (an order created, stock moved, a charge
written) without comparing two large snapshots by eye. Paths are JSON Pointers (RFC 6901);
object keys are walked in sorted order and arrays by index, so the same two values always
give the same list, whatever the insertion order or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["json_diff", "pointer"]


def pointer(parts: Sequence[str | int]) -> str:
    """The JSON Pointer of ``parts``: ``/`` + each part, ``~`` and ``/`` escaped."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _same(before: Any, after: Any) -> bool:
    # A boolean is never equal to a number here (True == 1 in Python, not in JSON).
    return type(before) is type(after) and before == after


def _walk(before: Any, after: Any, parts: list[str | int]) -> Iterator[dict[str, Any]]:
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in sorted(set(before) | set(after), key=str):
            here = [*parts, key]
            if key not in after:
                yield {"op": "remove", "path": pointer(here), "before": before[key]}
            elif key not in before:
                yield {"op": "add", "path": pointer(here), "after": after[key]}
            else:
                yield from _walk(before[key], after[key], here)
        return
    if isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            here = [*parts, index]
            if index >= len(after):
                yield {"op": "remove", "path": pointer(here), "before": before[index]}
            elif index >= len(before):
                yield {"op": "add", "path": pointer(here), "after": after[index]}
            else:
                yield from _walk(before[index], after[index], here)
        return
    if not _same(before, after):
        yield {"op": "change", "path": pointer(parts), "before": before, "after": after}


def json_diff(before: Any, after: Any) -> list[dict[str, Any]]:
    """Every difference from ``before`` to ``after``, in path order.

    Each entry is ``{"op": "add", "path", "after"}``, ``{"op": "remove", "path",
    "before"}`` or ``{"op": "change", "path", "before", "after"}``. An added or removed
    subtree is one entry holding the whole subtree.
    """
    return list(_walk(before, after, []))
