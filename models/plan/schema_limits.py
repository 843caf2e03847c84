"""Can argument values be generated from a tool's schema at all?

A schema can be valid JSON Schema and still admit no value (``minLength`` above
``maxLength``, a required property whose schema is ``false``, an empty ``enum``), point
a ``$ref`` at nothing, or ask for values far larger than a test run should build
(``minLength: 100000000``). Validation copes with all of these (every call is simply
invalid), but exploration must generate arguments, so it asks here first and reports
the first problem with its JSON path instead of crashing halfway through a search.
Plain, deterministic Python: the Hypothesis side is in ``txcheck.exploration``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from txcheck.models.json_path import PathPart
from txcheck.models.plan.schema_walk import pointer_target

__all__ = ["GENERATED_SIZE_LIMIT", "SchemaProblem", "generation_problem", "resolve_ref"]

GENERATED_SIZE_LIMIT = 10_000
"""The longest string and the most items or properties txcheck generates for one value."""

SchemaProblem = tuple[tuple[PathPart, ...], str]
"""Where in the schema (a path relative to it) and what is wrong."""

_SIZES = (
    ("minLength", "maxLength", "characters"),
    ("minItems", "maxItems", "items"),
    ("minProperties", "maxProperties", "properties"),
)
_MAX_REF_HOPS = 32


def resolve_ref(root: Any, ref: str) -> Any:
    """The schema a local ``$ref`` (``#``, or ``#/...``, a JSON pointer into ``root``) points
    at; ``None`` when it points at nothing or is not local. The contract checks
    (``schema_rules``) resolve references the same way."""
    target = pointer_target(root, ref)
    return None if target is None else target[1]


def generation_problem(schema: Any) -> SchemaProblem | None:
    """The first reason no value can be generated from ``schema`` (a tool's argument
    schema, the root ``$ref`` resolves against), or None."""
    return _Walk(schema).check(schema, (), required=True, refs=())


class _Walk:
    def __init__(self, root: Any) -> None:
        self.root = root

    def check(
        self, schema: Any, path: tuple[PathPart, ...], *, required: bool, refs: tuple[str, ...]
    ) -> SchemaProblem | None:
        if schema is False:
            return (path, "the schema is false: no value satisfies it") if required else None
        if not isinstance(schema, Mapping):
            return None
        return (
            self._ref(schema, path, required, refs)
            or _bounds(schema, path)
            or _enum(schema, path)
            or self._object(schema, path, required, refs)
            or self._array(schema, path, required, refs)
            or self._branches(schema, path, required, refs)
        )

    def _ref(
        self,
        schema: Mapping[str, Any],
        path: tuple[PathPart, ...],
        required: bool,
        refs: tuple[str, ...],
    ) -> SchemaProblem | None:
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return None
        if ref in refs or len(refs) >= _MAX_REF_HOPS:
            return None  # recursion: generation stops at a depth, where it is optional
        target = resolve_ref(self.root, ref)
        if target is None:
            return ((*path, "$ref"), f"'$ref' {ref!r} points at nothing in this schema")
        return self.check(target, (*path, "$ref"), required=required, refs=(*refs, ref))

    def _object(
        self,
        schema: Mapping[str, Any],
        path: tuple[PathPart, ...],
        required: bool,
        refs: tuple[str, ...],
    ) -> SchemaProblem | None:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            properties = {}
        names = schema.get("required")
        wanted = {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()
        closed = schema.get("additionalProperties") is False
        for name in sorted(wanted - set(properties)):
            if closed:
                return (
                    (*path, "required"),
                    f"required property {name!r} is not among 'properties' and "
                    "'additionalProperties' is false: no object satisfies it",
                )
        for name, sub in properties.items():
            needed = required and name in wanted
            problem = self.check(sub, (*path, "properties", name), required=needed, refs=refs)
            if problem is not None:
                return problem
        return None

    def _array(
        self,
        schema: Mapping[str, Any],
        path: tuple[PathPart, ...],
        required: bool,
        refs: tuple[str, ...],
    ) -> SchemaProblem | None:
        low = schema.get("minItems", 0)
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            for i, sub in enumerate(prefix):
                needed = required and _number(low) > i
                problem = self.check(sub, (*path, "prefixItems", i), required=needed, refs=refs)
                if problem is not None:
                    return problem
        if "items" in schema:
            shown = len(prefix) if isinstance(prefix, list) else 0
            needed = required and _number(low) > shown
            return self.check(schema["items"], (*path, "items"), required=needed, refs=refs)
        return None

    def _branches(
        self,
        schema: Mapping[str, Any],
        path: tuple[PathPart, ...],
        required: bool,
        refs: tuple[str, ...],
    ) -> SchemaProblem | None:
        for word in ("allOf",):
            branches = schema.get(word)
            if isinstance(branches, list):
                for i, sub in enumerate(branches):
                    problem = self.check(sub, (*path, word, i), required=required, refs=refs)
                    if problem is not None:
                        return problem
        for word in ("anyOf", "oneOf"):
            branches = schema.get(word)
            if isinstance(branches, list) and branches:
                found = [
                    self.check(sub, (*path, word, i), required=required, refs=refs)
                    for i, sub in enumerate(branches)
                ]
                if all(p is not None for p in found):
                    return found[0]
        return None


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        return float(value)
    except OverflowError:  # an integer beyond a float's range
        return math.inf if value > 0 else -math.inf


def _bounds(schema: Mapping[str, Any], path: tuple[PathPart, ...]) -> SchemaProblem | None:
    for low_word, high_word, unit in _SIZES:
        low, high = schema.get(low_word), schema.get(high_word)
        if low is not None and high is not None and _number(low) > _number(high):
            return (
                (*path, low_word),
                f"{low_word} {low} is more than {high_word} {high}: no value satisfies it",
            )
        if low is not None and _number(low) > GENERATED_SIZE_LIMIT:
            return (
                (*path, low_word),
                f"{low_word} {low} asks for values of more than {GENERATED_SIZE_LIMIT:,} "
                f"{unit}, more than txcheck generates for a test run",
            )
    return _range(schema, path)


def _range(schema: Mapping[str, Any], path: tuple[PathPart, ...]) -> SchemaProblem | None:
    """Numeric bounds that leave no number (or, for integers, no integer)."""
    low, low_open, low_word = -math.inf, False, ""
    high, high_open, high_word = math.inf, False, ""
    for word, is_open in (("minimum", False), ("exclusiveMinimum", True)):
        value = schema.get(word)
        if value is not None and (_number(value) > low or (_number(value) == low and is_open)):
            low, low_open, low_word = _number(value), is_open, word
    for word, is_open in (("maximum", False), ("exclusiveMaximum", True)):
        value = schema.get(word)
        if value is not None and (_number(value) < high or (_number(value) == high and is_open)):
            high, high_open, high_word = _number(value), is_open, word
    if not low_word or not high_word:
        return None
    empty = low > high or (low == high and (low_open or high_open))
    finite = math.isfinite(low) and math.isfinite(high)
    if not empty and finite and _types(schema) == {"integer"}:
        first = math.floor(low) + 1 if low_open else math.ceil(low)
        last = math.ceil(high) - 1 if high_open else math.floor(high)
        empty = first > last
    if empty:
        return (
            (*path, low_word),
            f"{low_word} {schema[low_word]} and {high_word} {schema[high_word]} leave no "
            f"{'integer' if _types(schema) == {'integer'} else 'number'}: no value satisfies it",
        )
    return None


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, Sequence):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _enum(schema: Mapping[str, Any], path: tuple[PathPart, ...]) -> SchemaProblem | None:
    if schema.get("enum") == []:
        return ((*path, "enum"), "an empty 'enum': no value satisfies it")
    return None
