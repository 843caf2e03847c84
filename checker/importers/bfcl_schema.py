"""BFCL's function documents and possible answers as JSON Schema and expected values.

BFCL writes parameter types in its own names, per language: Python's (``dict``, ``float``,
``tuple``, ``any``), Java's (``HashMap``, ``ArrayList``, ``long``, ``String``...) and
JavaScript's (``String``, ``Boolean``, ``Bigint``...). ``convert_schema`` maps each to its
JSON Schema type, the way BFCL's own checker reads the value it expects
(``JAVA_TYPE_CONVERSION``, ``JS_TYPE_CONVERSION`` in bfcl-eval): ``HashMap`` is an object,
``long`` an integer, ``any`` any value. A type name it does not know leaves the parameter
open (no ``type``), and is reported so the import can say so.

A possible answer lists, per parameter, every acceptable value; ``""`` among them marks the
parameter optional, and an object parameter's members list their own values (one level
deep, as BFCL's checker reads them). ``expected_calls`` turns that into ``expect.calls``
(``$any`` for several values, ``$optional`` for ``""``) and into the ground truth's own
calls (its first listed values), used as the proposal when no model result is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NoAnswer", "convert_parameters", "convert_schema", "expected_calls", "language_of"]

_PYTHON = {"dict": "object", "float": "number", "tuple": "array"}
_JAVA = {
    "byte": "integer",
    "short": "integer",
    "int": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "String": "string",
    "Array": "array",
    "ArrayList": "array",
    "Set": "array",
    "Queue": "array",
    "Stack": "array",
    "HashMap": "object",
    "Hashtable": "object",
}
_JAVASCRIPT = {"String": "string", "Boolean": "boolean", "Bigint": "integer"}
_JSON = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})
_LANGUAGES = {
    "python": _PYTHON,
    "java": {**_PYTHON, **_JAVA},
    "javascript": {**_PYTHON, **_JAVASCRIPT},
}
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def language_of(category: str) -> str:
    """The language of a category's functions: ``java``, ``javascript`` or ``python``."""
    if category.endswith("_javascript"):
        return "javascript"
    if category.endswith("_java"):
        return "java"
    return "python"


def _json_type(name: Any, language: str, unknown: set[str] | None) -> str | None:
    """The JSON Schema type of a BFCL type name; ``None`` for ``any`` and unknown names."""
    if not isinstance(name, str) or name == "any":
        return None
    mapped = _LANGUAGES[language].get(name, name)
    if mapped in _JSON:
        return mapped
    if unknown is not None:
        unknown.add(name)
    return None


def convert_schema(node: Any, language: str = "python", unknown: set[str] | None = None) -> Any:
    """A BFCL parameter schema as JSON Schema: its type names mapped (those it cannot map
    are left open and added to ``unknown``), everything else kept."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    kind = out.get("type")
    if isinstance(kind, str):
        mapped = _json_type(kind, language, unknown)
        if mapped is None:
            del out["type"]
        else:
            out["type"] = mapped
    elif isinstance(kind, list):
        types = [_json_type(k, language, unknown) for k in kind]
        if None in types:
            del out["type"]
        else:
            out["type"] = types
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: convert_schema(v, language, unknown) for k, v in out[key].items()}
    for key in _SUBSCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = convert_schema(out[key], language, unknown)
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [convert_schema(s, language, unknown) for s in out[key]]
    return out


def convert_parameters(parameters: Any, language: str, unknown: set[str]) -> Any:
    """A function's ``parameters`` as JSON Schema. In Java and JavaScript an argument is
    source text (a variable name, ``new HashMap<>()``), which is what BFCL's
    function-calling runs send as a string: there each parameter that is not a string
    takes its JSON value or a string."""
    converted = convert_schema(parameters, language, unknown)
    props = converted.get("properties") if isinstance(converted, dict) else None
    if language == "python" or not isinstance(props, dict):
        return converted
    for name, schema in props.items():
        kind = schema.get("type") if isinstance(schema, dict) else None
        if isinstance(kind, str) and kind != "string":
            props[name] = {**schema, "type": [kind, "string"]}
    return converted


# -- possible answers ---------------------------------------------------------------------


class NoAnswer(Exception):
    """A parameter whose list of acceptable values is empty: nothing can pass (BFCL's own
    checker fails every answer too), so the case is skipped and counted."""


_SKIP: Any = object()


def _properties(schema: Any) -> Mapping[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _kind(schema: Any) -> str:
    """The (converted) JSON type of a schema, the first of a list that is not a string
    (Java and JavaScript parameters also take their source text), or ``""``."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "string"), "")
    return kind if isinstance(kind, str) else ""


def _object_items(schema: Any) -> Any:
    """The item schema of an array of objects, or ``None``."""
    items = schema.get("items") if isinstance(schema, dict) else None
    return items if _kind(schema) == "array" and _kind(items) == "object" else None


def _members(option: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    props = _properties(schema)
    return {
        key: _acceptable(values, props.get(key), nested=False)
        if isinstance(values, list)
        else values
        for key, values in option.items()
    }


def _option(option: Any, schema: Any, *, nested: bool) -> Any:
    if nested and _kind(schema) == "object" and isinstance(option, dict):
        return _members(option, schema)
    items = _object_items(schema) if nested else None
    if items is not None and isinstance(option, list) and all(isinstance(o, dict) for o in option):
        return [_members(o, items) for o in option]
    return option


def _acceptable(values: list[Any], schema: Any, *, nested: bool = True) -> Any:
    """The expected value for BFCL's list of acceptable values: one value, ``$any`` of
    several, wrapped in ``$optional`` when ``""`` is among them."""
    optional = "" in values
    options = [_option(v, schema, nested=nested) for v in values if v != ""]
    if not options:
        pattern: Any = ""  # only "" listed: absent, or present as ""
    elif len(options) == 1:
        pattern = options[0]
    else:
        pattern = {"$any": options}
    return {"$optional": pattern} if optional else pattern


def _first(values: list[Any], schema: Any, *, nested: bool = True) -> Any:
    """The ground truth's own answer for a parameter: its first listed value (``_SKIP``
    when that is ``""``, the optional parameter left out)."""
    if not values or values[0] == "":
        return _SKIP
    value = values[0]
    if nested and _kind(schema) == "object" and isinstance(value, dict):
        return _first_members(value, schema)
    items = _object_items(schema) if nested else None
    if items is not None and isinstance(value, list):
        return [_first_members(v, items) if isinstance(v, dict) else v for v in value]
    return value


def _first_members(value: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    props = _properties(schema)
    out = {}
    for key, values in value.items():
        chosen = (
            _first(values, props.get(key), nested=False) if isinstance(values, list) else values
        )
        if chosen is not _SKIP:
            out[key] = chosen
    return out


def expected_calls(
    truth: Sequence[Any],
    parameters: Mapping[str, Any],
    names: Mapping[str, str],
    where: str,
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """``expect.calls`` and the ground truth's own calls (for a proposal), from BFCL's
    ``ground_truth`` list; ``parameters`` are each function's converted schema by its
    BFCL name. ``ValueError`` for a malformed entry, ``NoAnswer`` for an empty list."""
    calls: list[dict[str, Any]] = []
    own: list[tuple[str, dict[str, Any]]] = []
    for i, entry in enumerate(truth):
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ValueError(
                f"{where}: ground_truth[{i}] must be {{function: {{param: [values]}}}}"
            )
        ((function, params),) = entry.items()
        if not isinstance(params, dict):
            raise ValueError(f"{where}: ground_truth[{i}].{function} must be an object")
        props = _properties(parameters.get(function))
        name = names.get(function, function)
        arguments, mine = {}, {}
        for param, values in params.items():
            if not isinstance(values, list):
                raise ValueError(f"{where}: ground_truth[{i}].{function}.{param} must list values")
            if not values:
                raise NoAnswer
            arguments[param] = _acceptable(values, props.get(param))
            chosen = _first(values, props.get(param))
            if chosen is not _SKIP:
                mine[param] = chosen
        calls.append({"name": name, "arguments": arguments})
        own.append((name, mine))
    return calls, own
