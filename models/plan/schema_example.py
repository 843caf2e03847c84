"""Deterministic example values that satisfy a JSON Schema: patterns, formats, lengths,
enums and ranges.

Representative plans need arguments a contract accepts (``transfer_id`` must match
``^tr_[0-9]+$``), and generic receipts need fields a compensation's schema accepts (a
``hold_id`` for ``release_hold``). Both must be the same on every run and every machine,
so they cannot come from a random draw: ``candidates`` yields, in order of preference, the
values worth trying for a schema, and ``SchemaValues.first`` keeps the first one the schema
really accepts (checked by jsonschema, Draft 2020-12, formats included). ``index`` makes
the n-th distinct value, so that two resources get two ids.

A ``pattern`` is turned into a matching string by walking Python's own parse of the
regular expression (``re._parser``): literals, classes, repeats, groups, alternatives
and back-references. A pattern with look-arounds yields nothing of its own; a value is then
looked for among the other candidates, and the caller says when none fits.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from txcheck.models.errors import ContractError
from txcheck.models.plan.schema_limits import GENERATED_SIZE_LIMIT, resolve_ref
from txcheck.models.plan.schema_validator import reference_validator

if sys.version_info >= (3, 11):  # the parser is re._parser (sre_parse warns on import there)
    from re import _constants as sre
    from re import _parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants as sre
    import sre_parse

__all__ = ["NO_VALUE", "SchemaValues", "candidates", "pattern_example"]

NO_VALUE: Any = object()
"""What ``SchemaValues.first`` answers when no candidate fits."""

_ALPHABET = (
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-.@:/+= "
    "!#$%&'()*,;<>?[]^`{|}~\"\\"
)
_MAX_EXTRA = 12
"""How many rounds of longer repeats ``pattern_example`` tries for a distinct value."""
_MAX_INDEX_TRIES = 64
"""How many indexes past the asked one ``SchemaValues.first`` tries for a fresh value."""

_FORMATS: dict[str, Any] = {
    "email": lambda n: f"user{n + 1}@example.com",
    "idn-email": lambda n: f"user{n + 1}@example.com",
    "date": lambda n: f"2026-01-{1 + n % 28:02d}",
    "date-time": lambda n: f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
    "time": lambda n: f"00:{n // 60 % 60:02d}:{n % 60:02d}Z",
    "duration": lambda n: f"P{n + 1}D",
    "ipv4": lambda n: f"192.0.2.{1 + n % 254}",
    "ipv6": lambda n: f"2001:db8::{n + 1:x}",
    "hostname": lambda n: f"host{n + 1}.example.com",
    "idn-hostname": lambda n: f"host{n + 1}.example.com",
    "uri": lambda n: f"https://example.com/{n + 1}",
    "iri": lambda n: f"https://example.com/{n + 1}",
    "uri-reference": lambda n: f"/items/{n + 1}",
    "iri-reference": lambda n: f"/items/{n + 1}",
    "uri-template": lambda n: f"https://example.com/{n + 1}/{{id}}",
    "uuid": lambda n: f"00000000-0000-4000-8000-{n + 1:012x}",
    "json-pointer": lambda n: f"/items/{n}",
    "relative-json-pointer": lambda n: f"{n}",
    "regex": lambda n: "^[a-z]+$",
}


class _Unsupported(Exception):
    """A regular expression construct no example is made for (a look-around)."""


def pattern_example(pattern: str, index: int = 0) -> str | None:
    """A string that matches ``pattern`` whole (the ``index``-th of the simple ones), or
    None when the pattern cannot be read or uses a construct no example is made for."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # re.error, or an overflow in a huge repeat count
        return None
    for extra in range(_MAX_EXTRA + 1):
        walk = _Walk(index, extra)
        try:
            text = walk.pattern(parsed)
        except _Unsupported:
            return None
        if walk.left == 0:
            return text
    return None


class _Walk:
    """One walk of a parsed pattern: ``left`` is the part of the index not yet spent on a
    choice (a class member, a branch), least significant first; ``extra`` lengthens each
    open repeat, for room to spend a large index."""

    def __init__(self, index: int, extra: int) -> None:
        self.left = index
        self.extra = extra
        self.groups: dict[int, str] = {}

    def choose(self, options: int) -> int:
        if options <= 1:
            return 0
        picked, self.left = self.left % options, self.left // options
        return picked

    def pattern(self, items: Any) -> str:
        """The text for a parsed (sub)pattern: a sequence of (operator, argument)."""
        return "".join(self.item(op, av) for op, av in items)

    def item(self, op: Any, av: Any) -> str:
        if op is sre.LITERAL:
            return chr(av)
        if op is sre.NOT_LITERAL:
            return self.pick([c for c in _ALPHABET if ord(c) != av])
        if op is sre.ANY:
            return self.pick([c for c in _ALPHABET if c != "\n"])
        if op is sre.IN:
            return self.pick(_members(av))
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
            low, high, body = av
            high = GENERATED_SIZE_LIMIT if high is sre.MAXREPEAT else high
            count = min(max(low, 1 if low == 0 and self.extra else low) + self.extra, high)
            parts = [self.pattern(body) for _ in range(count)]
            return "".join(reversed(parts))  # the least significant choice last: tr_100
        if op is sre.SUBPATTERN:
            group, _, _, body = av
            text = self.pattern(body)
            if group is not None:
                self.groups[group] = text
            return text
        if op is getattr(sre, "ATOMIC_GROUP", None):
            return self.pattern(av)
        if op is sre.BRANCH:
            branches = av[1]
            return self.pattern(branches[self.choose(len(branches))])
        if op is sre.GROUPREF:
            return self.groups.get(av, "")
        if op is sre.AT:
            return ""  # anchors and boundaries take no characters
        raise _Unsupported(str(op))

    def pick(self, options: list[str]) -> str:
        if not options:
            raise _Unsupported("an empty class")
        return options[self.choose(len(options))]


def _members(items: list[tuple[Any, Any]]) -> list[str]:
    """The characters of a class (``[...]``, ``\\d``), in ``_ALPHABET`` order first."""
    negate = any(op is sre.NEGATE for op, _ in items)
    found = [c for c in _ALPHABET if _in_class(c, items) != negate]
    if found or negate:
        return found
    extra: list[str] = []  # a class of characters outside the alphabet (Greek letters, say)
    for op, av in items:
        if op is sre.LITERAL:
            extra.append(chr(av))
        elif op is sre.RANGE:
            extra.append(chr(av[0]))
    return extra


def _in_class(char: str, items: list[tuple[Any, Any]]) -> bool:
    code = ord(char)
    for op, av in items:
        if op is sre.LITERAL and code == av:
            return True
        if op is sre.RANGE and av[0] <= code <= av[1]:
            return True
        if op is sre.CATEGORY and _category(char, av):
            return True
    return False


def _category(char: str, category: Any) -> bool:
    name = str(category).upper()
    if "DIGIT" in name:
        hit = char.isdigit()
    elif "SPACE" in name:
        hit = char.isspace()
    elif "WORD" in name:
        hit = char.isalnum() or char == "_"
    else:
        return False
    return hit != ("NOT" in name)


def candidates(schema: Any, root: Any, *, index: int = 0, hint: str = "") -> Iterator[Any]:
    """Values worth trying for ``schema`` (part of ``root``, which ``$ref`` resolves
    against), simplest and most readable first; not yet checked against the schema."""
    yield from _candidates(schema, root, index, hint, 0)


def _candidates(schema: Any, root: Any, index: int, hint: str, depth: int) -> Iterator[Any]:
    if depth > 16 or schema is False:
        return
    if schema is True or not isinstance(schema, Mapping):
        yield hint or f"x{index}"
        return
    if "$ref" in schema:
        target = resolve_ref(root, str(schema["$ref"]))
        if target is not None:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            merged = {**target, **rest} if isinstance(target, Mapping) else target
            yield from _candidates(merged, root, index, hint, depth + 1)
        return
    if "const" in schema:
        yield schema["const"]
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        yield enum[index % len(enum)]
        yield from enum
        return
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        yield examples[index % len(examples)]
    for word in ("allOf", "anyOf", "oneOf"):
        parts = schema.get(word)
        if isinstance(parts, list) and parts:
            base = {k: v for k, v in schema.items() if k != word}
            if word == "allOf":
                combined: dict[str, Any] = dict(base)
                for part in parts:
                    if isinstance(part, Mapping):
                        combined.update(part)
                yield from _candidates(combined, root, index, hint, depth + 1)
            else:
                for part in parts:
                    if isinstance(part, Mapping):
                        yield from _candidates({**base, **part}, root, index, hint, depth + 1)
            return
    kind = schema.get("type", "string" if "properties" not in schema else "object")
    kinds = kind if isinstance(kind, list) else [kind]
    for one in kinds or ["string"]:
        yield from _typed(schema, root, str(one), index=index, hint=hint, depth=depth)


def _typed(
    schema: Mapping[str, Any], root: Any, kind: str, *, index: int, hint: str, depth: int
) -> Iterator[Any]:
    if kind == "string":
        yield from _strings(schema, index, hint)
    elif kind in ("integer", "number"):
        yield from _numbers(schema, index, integer=kind == "integer")
    elif kind == "boolean":
        yield bool(index % 2)
    elif kind == "null":
        yield None
    elif kind == "array":
        items = schema.get("items", {})
        low = _size(schema.get("minItems"), 0)
        prefix = schema.get("prefixItems")
        head = [
            next(_candidates(p, root, index, hint, depth + 1), None)
            for p in (prefix if isinstance(prefix, list) else [])
        ]
        rest = max(0, low - len(head))
        if rest and items is not False:
            values = [
                next(_candidates(items, root, index + n, hint, depth + 1), None)
                for n in range(rest)
            ]
            yield head + values
        else:
            yield head
    elif kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, Mapping) or not isinstance(required, list):
            yield {}
            return
        value: dict[str, Any] = {}
        for name in required:
            if isinstance(name, str):
                sub = properties.get(name, {})
                value[name] = next(_candidates(sub, root, index, name, depth + 1), None)
        yield value


def _strings(schema: Mapping[str, Any], index: int, hint: str) -> Iterator[str]:
    low = _size(schema.get("minLength"), 0)
    high = schema.get("maxLength")
    top = _size(high, GENERATED_SIZE_LIMIT) if high is not None else None

    def sized(text: str) -> str:
        text = text + "x" * max(0, low - len(text))
        return text[:top] if top is not None else text

    if hint:
        yield sized(hint)
    make = _FORMATS.get(str(schema.get("format", "")))
    if make is not None:
        yield make(index)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        text = pattern_example(pattern, index)
        if text is not None:
            yield text
            if len(text) < low:  # a pattern that says nothing of the length: pad inside it
                for extra in range(1, _MAX_EXTRA + 1):
                    longer = _longer(pattern, index, extra)
                    if longer is not None and len(longer) >= low:
                        yield longer
                        break
    yield sized(f"{hint or 'x'}{index}" if index else hint or "x")


def _longer(pattern: str, index: int, extra: int) -> str | None:
    try:
        parsed = sre_parse.parse(pattern)
        walk = _Walk(index, extra)
        return walk.pattern(parsed)
    except Exception:
        return None


def _numbers(schema: Mapping[str, Any], index: int, *, integer: bool) -> Iterator[Any]:
    """The ``index``-th number at or above the lower bound (1 without one) that is a
    multiple of ``multipleOf``, exactly (``0.01`` steps stay exact); then the maximum."""
    step = _exact(schema.get("multipleOf"))
    if step is not None and step <= 0:
        step = None
    low, above = _exact(schema.get("minimum")), _exact(schema.get("exclusiveMinimum"))
    start = (
        Fraction(1)
        if low is None and above is None
        else max(b for b in (low, above) if b is not None)
    )
    unit = step if step is not None else Fraction(1)
    if step is not None:
        start = math.ceil(start / step) * step
    if above is not None and start <= above:
        start += unit
    value = start + index * unit
    if integer:
        value = Fraction(math.ceil(value))
    yield _plain(value, integer)
    high = _exact(schema.get("maximum"))
    if low is None and above is None and high is not None:
        yield _plain(high, integer)


def _exact(value: Any) -> Fraction | None:
    if not _is_number(value) or not math.isfinite(value):
        return None
    return Fraction(str(value))


def _plain(value: Fraction, integer: bool) -> int | float:
    if integer or value.denominator == 1:
        return math.ceil(value)
    return float(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _size(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return default
    return min(value, GENERATED_SIZE_LIMIT)


class SchemaValues:
    """Example values for the argument schemas of one root schema (a tool's parameters),
    each checked by jsonschema before it is given out."""

    def __init__(self, root: Any) -> None:
        self.root = root
        try:  # the one reference validator: nothing fetched, patterns in linear time
            self._validator: Any = reference_validator(
                root if isinstance(root, (Mapping, bool)) else {}
            )
        except ContractError:  # a schema the loader refuses: no value is ever accepted
            self._validator = None

    def accepts(self, schema: Any, value: Any) -> bool:
        """Whether ``value`` is valid under ``schema`` (part of the root)."""
        if self._validator is None:
            return False
        try:
            return next(iter(self._validator.descend(value, schema)), None) is None
        except Exception:  # a schema jsonschema cannot evaluate: nothing is accepted
            return False

    def first(
        self,
        schema: Any,
        *,
        hint: str = "",
        preferred: Iterable[Any] = (),
        index: int = 0,
        avoid: frozenset[Any] | set[Any] = frozenset(),
    ) -> Any:
        """The first value ``schema`` accepts and ``avoid`` does not hold: from
        ``preferred`` (values the fixture or the contract offer), then the simple ones
        (``candidates``), trying later indexes for a value not yet taken; ``NO_VALUE``
        when none fits."""
        for value in preferred:
            if _hashable(value) not in avoid and self.accepts(schema, value):
                return value
        for offset in range(_MAX_INDEX_TRIES):
            first_hint = hint if not offset else ""
            tried = candidates(schema, self.root, index=index + offset, hint=first_hint)
            for value in itertools.islice(tried, 32):
                if _hashable(value) not in avoid and self.accepts(schema, value):
                    return value
        return NO_VALUE


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
