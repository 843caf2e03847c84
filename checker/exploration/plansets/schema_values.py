"""Hypothesis strategies for argument values, from a tool's JSON Schema.

Leaf values (strings with patterns and formats, numbers with bounds, enums, consts) come
from hypothesis-jsonschema's ``from_schema``. Objects, arrays, local ``$ref``,
``allOf`` (merged) and ``anyOf``/``oneOf`` are built here, for two reasons:

- hypothesis-jsonschema 0.23.1 (the latest release) draws objects through a Hypothesis
  internal that newer Hypothesis releases removed (``many.more``), so any object-valued
  argument crashed the search with an ``AttributeError``;
- a property's schema is drawn on its own, so a ``$ref`` into the tool's root schema
  (``#/$defs/...``) must be resolved against that root, and a recursive one must stop
  (at ``MAX_DEPTH``, where the recursion has to be optional).

Only declared properties are generated (the values stay valid under
``additionalProperties: false``); callers re-validate every value under Draft 2020-12.

hypothesis-jsonschema draws strings for a ``pattern`` with Python's ``re``, which warns
(a ``FutureWarning``) on ECMA-262 classes such as ``[[:digit:]]`` while reading them as
ECMA-262 does (a class of ``[:digt``, then ``]``); such draws are made with that warning
silenced, so it never reaches the user. Schemas reach here only after the contract
checks (``txcheck.models.plan.schema_rules``): every reference is inside the tool's schema,
and hypothesis-jsonschema's own resolver fetches nothing either.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from txcheck.models.canonical import canonical_json
from txcheck.models.plan.schema_limits import GENERATED_SIZE_LIMIT, resolve_ref
from txcheck.models.plan.schema_walk import walk

__all__ = ["MAX_DEPTH", "schema_values"]

MAX_DEPTH = 6
"""How many ``$ref`` hops one value may take: a recursive schema stops here."""
_EXTRA_ITEMS = 4
"""Arrays get at most this many items beyond their ``minItems``."""

_ANY_JSON: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=12)
)
_STRUCTURE = frozenset({"$ref", "anyOf", "oneOf", "properties", "items", "prefixItems"})


def schema_values(schema: Any, root: Any) -> st.SearchStrategy[Any]:
    """Values for ``schema`` (part of ``root``, which ``$ref`` resolves against)."""
    return _values(schema, root, 0)


def _values(schema: Any, root: Any, depth: int) -> st.SearchStrategy[Any]:
    if schema is False:
        return st.nothing()
    if not isinstance(schema, Mapping) or not schema:
        return _ANY_JSON
    if "$ref" in schema:
        return _ref(schema, root, depth)
    parts = schema.get("allOf")
    if isinstance(parts, list) and parts:
        merged: Any = {k: v for k, v in schema.items() if k != "allOf"}
        for part in parts:
            merged = _merged(merged, part)
        return _values(merged, root, depth)
    for word in ("anyOf", "oneOf"):
        branches = schema.get(word)
        if isinstance(branches, list) and branches:
            base = {k: v for k, v in schema.items() if k != word}
            return st.one_of(*(_values(_merged(base, b), root, depth) for b in branches))
    kinds = schema.get("type")
    if isinstance(kinds, list) and len(kinds) > 1 and _STRUCTURE & set(schema):
        return st.one_of(*(_values({**schema, "type": k}, root, depth) for k in kinds))
    kind = kinds[0] if isinstance(kinds, list) and kinds else kinds
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, root, depth)
    if kind == "array" or (kind is None and ("items" in schema or "prefixItems" in schema)):
        return _array(schema, root, depth)
    return _leaf(schema)


def _ref(schema: Mapping[str, Any], root: Any, depth: int) -> st.SearchStrategy[Any]:
    target = resolve_ref(root, str(schema["$ref"]))
    if target is None or depth >= MAX_DEPTH:
        return st.nothing()
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return _values(_merged(target, rest) if rest else target, root, depth + 1)


def _merged(base: Any, extra: Any) -> Any:
    """``extra``'s keywords over ``base``'s (a branch refines its parent); the caller
    re-validates, so an imperfect merge costs a filtered draw, never a wrong value."""
    if not isinstance(base, Mapping) or not isinstance(extra, Mapping):
        return extra if base is True or not isinstance(base, Mapping) else base
    return {**base, **extra}


def _object(schema: Mapping[str, Any], root: Any, depth: int) -> st.SearchStrategy[Any]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    names = schema.get("required")
    required = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    extra = schema.get("additionalProperties", True)
    needed = {
        name: _values(properties.get(name, extra if extra is not False else False), root, depth)
        for name in required
    }
    optional = {
        name: _values(sub, root, depth)
        for name, sub in properties.items()
        if name not in needed and sub is not False
    }
    if any(strategy.is_empty for strategy in needed.values()):
        return st.nothing()
    optional = {name: s for name, s in optional.items() if not s.is_empty}  # left out
    return st.fixed_dictionaries(needed, optional=optional)


def _array(schema: Mapping[str, Any], root: Any, depth: int) -> st.SearchStrategy[Any]:
    low = _size(schema.get("minItems"), 0)
    high = min(_size(schema.get("maxItems"), low + _EXTRA_ITEMS), low + _EXTRA_ITEMS)
    prefix = schema.get("prefixItems")
    items = schema.get("items", True)
    if isinstance(prefix, list) and prefix:
        head = st.tuples(*(_values(p, root, depth) for p in prefix)).map(list)
        if items is False or high <= len(prefix):
            return head
        more = _values(items, root, depth)
        if more.is_empty:
            return head
        tail = st.lists(more, max_size=max(0, high - len(prefix)))
        return st.tuples(head, tail).map(lambda pair: pair[0] + pair[1])
    element = _values(items, root, depth)
    if element.is_empty:  # nothing fits an item (a recursion cut at MAX_DEPTH): no items
        return st.just([]) if low == 0 else st.nothing()
    if schema.get("uniqueItems") is True:
        return st.lists(element, min_size=low, max_size=high, unique_by=canonical_json)
    return st.lists(element, min_size=low, max_size=high)


def _size(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return default
    return min(value, GENERATED_SIZE_LIMIT)


def _leaf(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Scalars through hypothesis-jsonschema (annotations dropped: they change nothing)."""
    if not _has_pattern(schema):
        return from_schema(dict(schema))
    with _quiet():  # hypothesis-jsonschema compiles the pattern when it builds the strategy
        strategy = from_schema(dict(schema))
        strategy.validate()
    return _quietly(strategy)  # and Hypothesis parses it again when it draws


def _has_pattern(schema: Any) -> bool:
    return any(
        isinstance(node, Mapping) and ("pattern" in node or "patternProperties" in node)
        for node in walk(schema).positions.values()
    )


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Python's ``re`` warnings about ECMA-262 classes (``Possible nested set ...``) off."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, message="Possible ")
        yield


@st.composite
def _quietly(draw: st.DrawFn, strategy: st.SearchStrategy[Any]) -> Any:
    with _quiet():
        return draw(strategy)
