"""Expected argument values that say what is acceptable: ``$any`` and ``$optional``.

An expected value is plain JSON, compared with the typed rules of ``typed_equal``, except:

- ``{"$any": [v1, v2, ...]}``: any one of the values is right (each compared with the same
  typed rules, and each may itself hold markers);
- ``{"$optional": V}``, only as the value of an object member (an argument or a nested
  property): leaving the member out is right; when present it must match ``V``.

An object whose only key is ``$any`` or ``$optional`` is always such a marker. Strings are
compared exactly unless the case declares a normalisation (``NORMALIZATIONS``): that is
opt-in, and the per-case output says so. Markers are parsed once, when the case is read,
into ``AnyOf`` and ``OptionalMember`` values, so a malformed marker is a bad line, never a case
that quietly matches everything.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from txcheck.models.json_path import describe

__all__ = [
    "NORMALIZATIONS",
    "AnyOf",
    "OptionalMember",
    "describe_expected",
    "has_markers",
    "is_plain",
    "matches",
    "normalizer",
    "parse_expected",
    "representative",
    "to_json",
]

NORMALIZATIONS = ("case", "whitespace", "punctuation")
"""String normalisations a case may declare: ``case`` compares case-insensitively
(``str.casefold``), ``whitespace`` ignores every whitespace character, ``punctuation``
ignores ASCII punctuation and Unicode punctuation (categories P*)."""

_MARKERS = ("$any", "$optional")


@attrs.frozen(kw_only=True)
class AnyOf:
    """Any one of ``options`` is an acceptable value."""

    options: tuple[Any, ...]


@attrs.frozen(kw_only=True)
class OptionalMember:
    """An object member that may be left out; when present it must match ``value``."""

    value: Any


Normalizer = Callable[[str], str] | None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_expected(value: Any, where: str, *, member: bool = False) -> Any:
    """``value`` with its markers parsed; ``ValueError`` naming ``where`` when one is wrong.

    ``member`` says ``value`` is the value of an object member, the only place
    ``$optional`` may stand.
    """
    return _parse(value, where, member, 0)


def is_plain(value: Any, depth: int = 0) -> bool:
    """True when ``value`` holds no marker and nests at most 256 levels below ``depth``:
    then ``parse_expected`` returns an equal copy of it, and it has no marker. JSON types
    only; anything else is left to ``parse_expected``."""
    if depth > 256:
        return False
    kind = type(value)
    if kind is dict:
        if len(value) == 1 and next(iter(value)) in _MARKERS:
            return False
        items = value.values()
    elif kind is list:
        items = value
    else:
        return kind is str or kind is int or kind is float or kind is bool or value is None
    for item in items:  # noqa: SIM110 (a loop, not all(): no generator per node)
        if not is_plain(item, depth + 1):
            return False
    return True


def _parse(value: Any, where: str, member: bool, depth: int) -> Any:
    if depth > 256:
        raise ValueError(f"'{where}' nests more than 256 levels")
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in _MARKERS:
            return _marker(value, where, member, depth)
        return {k: _parse(v, f"{where}.{k}", True, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_parse(v, f"{where}[{i}]", False, depth + 1) for i, v in enumerate(value)]
    return value


def _marker(value: dict[str, Any], where: str, member: bool, depth: int) -> Any:
    if "$optional" in value:
        if not member:
            raise ValueError(
                f"'{where}': $optional may only be the value of an argument or an object "
                "property (in an array or inside $any it has no meaning)"
            )
        inner = value["$optional"]
        if isinstance(inner, dict) and list(inner) == ["$optional"]:
            raise ValueError(f"'{where}': $optional inside $optional")
        return OptionalMember(value=_parse(inner, f"{where}.$optional", False, depth + 1))
    options = value["$any"]
    if not isinstance(options, list) or not options:
        raise ValueError(
            f"'{where}.$any' must be a non-empty list of acceptable values (got {_short(options)})"
        )
    parsed = tuple(_parse(v, f"{where}.$any[{i}]", False, depth + 1) for i, v in enumerate(options))
    return AnyOf(options=parsed)


def has_markers(value: Any) -> bool:
    """Whether ``value`` holds any ``AnyOf`` or ``OptionalMember``."""
    if isinstance(value, (AnyOf, OptionalMember)):
        return True
    if isinstance(value, Mapping):
        return any(has_markers(v) for v in value.values())
    if isinstance(value, list):
        return any(has_markers(v) for v in value)
    return False


def to_json(value: Any) -> Any:
    """The pattern written back as JSON (``{"$any": [...]}``, ``{"$optional": ...}``)."""
    if isinstance(value, AnyOf):
        return {"$any": [to_json(o) for o in value.options]}
    if isinstance(value, OptionalMember):
        return {"$optional": to_json(value.value)}
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


def representative(value: Any) -> Any:
    """One concrete value the pattern accepts: the first ``$any`` option, optional members
    left out (the least the expectation asks for). Used where a real call is needed
    (validating the expectation, the legacy scorer, stage-two runs)."""
    if isinstance(value, AnyOf):
        return representative(value.options[0])
    if isinstance(value, OptionalMember):
        return representative(value.value)
    if isinstance(value, Mapping):
        return {k: representative(v) for k, v in value.items() if not isinstance(v, OptionalMember)}
    if isinstance(value, list):
        return [representative(v) for v in value]
    return value


def describe_expected(value: Any) -> str:
    """A short phrase for an expected value in messages: ``one of the string "a", ...``."""
    if isinstance(value, AnyOf):
        shown = [describe_expected(o) for o in value.options[:5]]
        more = ", ..." if len(value.options) > 5 else ""
        return "one of " + ", ".join(shown) + more
    if isinstance(value, OptionalMember):
        return describe_expected(value.value) + " (optional)"
    return describe(to_json(value))


def _drop_punctuation(text: str) -> str:
    return "".join(
        c
        for c in text
        if c not in string.punctuation and not unicodedata.category(c).startswith("P")
    )


def normalizer(names: tuple[str, ...]) -> Normalizer:
    """The string normalisation for the declared ``names``; ``None`` when none is declared."""
    if not names:
        return None
    fold = "case" in names
    spaces = "whitespace" in names
    punct = "punctuation" in names

    def norm(text: str) -> str:
        if punct:
            text = _drop_punctuation(text)
        if spaces:
            text = "".join(text.split())
        return text.casefold() if fold else text

    return norm


def _typed_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    return False


def matches(expected: Any, got: Any, norm: Normalizer = None) -> bool:
    """Whether ``got`` is acceptable for the pattern ``expected`` (typed rules, markers,
    and the case's string normalisation)."""
    # Plain JSON values of one type first (most values; the same answers as the rules in
    # ``_matches``, without the chain of isinstance checks).
    kind = type(expected)
    if kind is type(got):
        if kind is str:
            return expected == got or (norm is not None and norm(expected) == norm(got))
        if kind is int or kind is float or kind is bool or expected is None:
            return bool(expected == got)
        if kind is dict:
            return _members_match(expected, got, norm)
        if kind is list:
            if len(expected) != len(got):
                return False
            for x, y in zip(expected, got, strict=True):  # noqa: SIM110 (no generator)
                if not matches(x, y, norm):
                    return False
            return True
    elif (kind is int and type(got) is float) or (kind is float and type(got) is int):
        return bool(expected == got)
    return _matches(expected, got, norm)


def _members_match(expected: Mapping[str, Any], got: Mapping[str, Any], norm: Normalizer) -> bool:
    for key, want in expected.items():
        if key not in got:
            if not isinstance(want, OptionalMember):
                return False
        elif not matches(want, got[key], norm):
            return False
    for key in got:  # noqa: SIM110 (no generator)
        if key not in expected:
            return False
    return True


def _matches(expected: Any, got: Any, norm: Normalizer) -> bool:
    if isinstance(expected, AnyOf):
        return any(matches(o, got, norm) for o in expected.options)
    if isinstance(expected, OptionalMember):
        return matches(expected.value, got, norm)
    if isinstance(expected, Mapping):
        return isinstance(got, Mapping) and _members_match(expected, got, norm)
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(got, (list, tuple))
            and len(expected) == len(got)
            and all(matches(x, y, norm) for x, y in zip(expected, got, strict=True))
        )
    if norm is not None and isinstance(expected, str) and isinstance(got, str):
        return expected == got or norm(expected) == norm(got)
    return _typed_equal(expected, got)
