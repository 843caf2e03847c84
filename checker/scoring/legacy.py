"""A reconstruction of the audited scorer, kept to show what it got wrong.

The audited scorer (a naive local scorer an audit found wanting) looked only at
``tool_calls[0]``, never saw the tool's JSON Schema, and compared argument values after
turning them into strings. It was Python, so the strings are Python's ``str()`` of the
parsed JSON value (``str(True)`` is ``"True"``, ``str(10086)`` is ``"10086"``), and it
parsed argument text with Python's lenient ``json.loads`` (which accepts ``NaN`` and
duplicate keys). Its formula:

    0.5 * (first call's name == first expected call's name)
  + 0.5 * (argument names whose str() values are equal / argument names in either call)

Edge cases the audit does not fix, defined here: no proposed call and no expected call is
1.0; exactly one of them missing is 0.0; arguments that do not parse (or are not an object)
give 0 for the argument half; two empty argument objects give the full argument half.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from txcheck.models.plan.proposal import Call, Plan

__all__ = ["legacy_arguments", "legacy_score"]


def legacy_arguments(raw: Any) -> Mapping[str, Any] | None:
    """The arguments as the audited scorer saw them: ``json.loads`` of a string, an object as
    is; ``None`` when that fails or is not an object."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, Mapping) else None


def _seen_arguments(call: Call) -> Mapping[str, Any] | None:
    """``legacy_arguments`` of the call's raw arguments. Text that parsed strictly into
    ``call.arguments`` reads the same leniently (strict JSON is a subset), unless it starts
    with a byte-order mark, which only the strict reader skips: so the parsed value is
    used instead of parsing the text again."""
    raw = call.raw_arguments
    if type(raw) is dict:  # an object as is, as legacy_arguments gives it
        return raw
    if isinstance(raw, str) and call.arguments is not None and not raw.startswith("\ufeff"):
        return call.arguments
    return legacy_arguments(raw)


def legacy_score(plan: Plan | None, expected: Sequence[tuple[str, Mapping[str, Any]]]) -> float:
    """The audited score of ``plan`` against the expected ``(name, arguments)`` calls.

    ``plan`` is ``None`` when the proposal could not be read at all; that scores 0.
    """
    if plan is None:
        return 0.0
    if not plan.calls or not expected:
        return 1.0 if not plan.calls and not expected else 0.0
    call = plan.calls[0]
    want_name, want_args = expected[0]
    name = int(call.name == want_name)
    got_args = _seen_arguments(call)
    if got_args is None:
        return name / 2
    names = want_args.keys() | got_args.keys()
    same = 0
    for n in names:
        if n in want_args and n in got_args:
            want, got = want_args[n], got_args[n]
            kind = type(want)
            if kind is type(got) and (kind is str or kind is int):
                same += want == got  # str() of two strings, or of two integers, as equal
            elif str(want) == str(got):
                same += 1
    # 1/2 * name + 1/2 * same / len(names), as one exact ratio of integers (int / int is
    # correctly rounded, as float() of the equal Fraction would be)
    count = len(names) if names else 1
    return (name * count + (same if names else 1)) / (2 * count)
