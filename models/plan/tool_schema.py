"""Checks on a tool's argument schema, kept apart from the contract file's shape.

``schema_problem`` says why a schema cannot serve as a tool's arguments schema (not valid
JSON Schema draft 2020-12, not an object schema, or breaking one of ``schema_rules``: a
reference outside the schema, a reference loop, a pattern the linear-time engine cannot
run); ``literal_problem`` says why a literal does not fit one argument.
Both return the problem (with its path inside the schema) instead of raising, so the caller
can report it at the right place in its own file.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from txcheck.models.json_path import PathPart
from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.fast_schema import DRAFT_2020_12, schema_is_safe
from txcheck.models.plan.rust_engine import engine
from txcheck.models.plan.schema_rules import rule_problem
from txcheck.models.plan.schema_validator import SCHEMA_FORMAT_CHECKER, reference_validator

__all__ = ["check_schema", "clip", "literal_problem", "schema_problem"]


def check_schema(schema: Any) -> None:
    """``Draft202012Validator.check_schema(schema)``: ``SchemaError`` when ``schema`` is not
    valid JSON Schema (its patterns are left to ``schema_rules``, never compiled with
    Python's ``re``). jsonschema-rs answers first where both read the schema alike (plain
    JSON types, ``schema_is_safe``): a schema it finds valid against the metaschema is
    valid (jsonschema's check costs milliseconds, and a benchmark brings thousands of
    schemas); anything else is judged, and its error worded, by jsonschema. A schema that
    passed is remembered (by identity, and by its canonical JSON), since one is checked
    when its contract is read and again when the contract is compiled."""
    _SEEN.one(schema, _check_schema)


def _check_schema(schema: Any) -> None:
    if _meta_accepts(schema):
        return
    key = _key(schema)
    if key is not None and key in _PASSED:
        return
    Draft202012Validator.check_schema(schema, format_checker=SCHEMA_FORMAT_CHECKER)
    if key is not None:
        if len(_PASSED) >= _PASSED_LIMIT:
            _PASSED.clear()
        _PASSED.add(key)


def _meta_accepts(schema: Any) -> bool:
    """Whether jsonschema-rs shows ``schema`` valid against the draft 2020-12 metaschema
    (``False`` means only "not shown": jsonschema decides)."""
    if not isinstance(schema, dict) or schema.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
        return False
    rs = engine()
    if rs is None or not _plain(schema) or not schema_is_safe(schema):
        return False
    try:
        return bool(rs.meta.is_valid(schema))
    except Exception:  # a value jsonschema-rs cannot take: ask jsonschema
        return False


def _plain(schema: Any) -> bool:
    """Whether ``schema`` holds only plain JSON types (a tuple reads as an array to
    jsonschema-rs, and jsonschema refuses it)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            if not all(type(k) is str for k in node):
                return False
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind not in _NATIVE:
            return False
    return True


_SEEN: IdentityMemo[None] = IdentityMemo(limit=256)
"""The schema objects that passed lately, by identity (a check that fails stores
nothing): a tool's schema is checked when read and again when compiled."""
_PASSED: set[str] = set()
_PASSED_LIMIT = 4096
_NATIVE = (str, int, float, bool, type(None))


def _key(schema: Any) -> str | None:
    """The canonical JSON of ``schema``, or ``None`` when it holds anything but plain JSON
    types (a tuple or a subclass would read as JSON yet be judged differently)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            if not all(type(k) is str for k in node):
                return None
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind not in _NATIVE:
            return None
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):
        return None


def schema_problem(schema: dict[str, Any]) -> tuple[tuple[PathPart, ...], str] | None:
    """``(path inside the schema, problem)`` if ``schema`` is unusable, else ``None``."""
    try:
        check_schema(schema)
    except SchemaError as error:
        problem = f"is not a valid JSON Schema (draft 2020-12): {clip(error.message)}"
        return tuple(error.absolute_path), problem
    kind = schema.get("type", "object")
    if kind != "object":
        return (
            "type",
        ), f"must describe the arguments object: 'type' must be 'object' (got {kind!r})"
    return rule_problem(schema)


def literal_problem(schema: dict[str, Any], argument: str, value: Any) -> str | None:
    """Why ``value`` does not fit ``schema``'s property ``argument``, or ``None``."""
    validator = reference_validator(schema)
    error = best_match(validator.descend(value, schema["properties"][argument]))
    return None if error is None else clip(error.message)


def clip(text: str, limit: int = 200) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
