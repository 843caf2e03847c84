"""Checks on a tool's argument schema, kept apart from the contract file's shape.

``schema_problem`` says why a schema cannot serve as a tool's arguments schema (not valid
JSON Schema draft 2020-12, not an object schema, or a ``$ref`` that would not resolve and so
crash validation later); ``literal_problem`` says why a literal does not fit one argument.
Both return the problem (with its path inside the schema) instead of raising, so the caller
can report it at the right place in its own file.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from txcheck.models.json_path import PathPart

__all__ = ["check_schema", "clip", "literal_problem", "schema_problem"]

# Keywords whose values are data, not subschemas: a "$ref" key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def check_schema(schema: Any) -> None:
    """``Draft202012Validator.check_schema(schema)``: ``SchemaError`` when ``schema`` is not
    valid JSON Schema. A schema that passed is remembered (by its canonical JSON), since
    one is checked when its contract is read and again when the contract is compiled."""
    key = _key(schema)
    if key is not None and key in _PASSED:
        return
    Draft202012Validator.check_schema(schema)
    if key is not None:
        if len(_PASSED) >= _PASSED_LIMIT:
            _PASSED.clear()
        _PASSED.add(key)


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
    return _ref_problem(schema, schema, ())


def literal_problem(schema: dict[str, Any], argument: str, value: Any) -> str | None:
    """Why ``value`` does not fit ``schema``'s property ``argument``, or ``None``."""
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    error = best_match(validator.descend(value, schema["properties"][argument]))
    return None if error is None else clip(error.message)


def _ref_problem(
    node: Any, root: dict[str, Any], path: tuple[PathPart, ...]
) -> tuple[tuple[PathPart, ...], str] | None:
    """The first ``$ref`` that is not local (``#`` or ``#/...``) or points at nothing.

    Subschemas with their own ``$id`` (their own base URI) are left to jsonschema.
    """
    if isinstance(node, dict):
        if node is not root and "$id" in node:
            return None
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                if not _resolves(root, value):
                    return (*path, key), (
                        f"'$ref' {value!r} does not resolve: txcheck supports references "
                        "inside the same schema ('#/$defs/...')"
                    )
            elif key not in _DATA_KEYWORDS:
                found = _ref_problem(value, root, (*path, key))
                if found:
                    return found
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found = _ref_problem(value, root, (*path, i))
            if found:
                return found
    return None


def _resolves(root: dict[str, Any], ref: str) -> bool:
    if not ref.startswith("#"):
        return False
    pointer = ref[1:]
    if pointer and not pointer.startswith("/"):
        return False
    node: Any = root
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def clip(text: str, limit: int = 200) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
