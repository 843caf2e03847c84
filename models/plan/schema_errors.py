"""Level 2's messages: jsonschema's errors on a call, mapped onto stable violation codes.

jsonschema is the reference for every schema violation txcheck reports
(docs/decisions/007-jsonschema-rs-fast-path.md); this module turns its errors into
``Violation``s: ``missing_required``, ``type_mismatch``, ``unknown_argument``,
``enum_violation``, ``out_of_range`` and, for anything else, ``schema_violation``, each with
the JSON path of the argument and a one-line message.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from txcheck.models.json_path import PathPart, describe, format_path
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.schema_validator import additional_properties
from txcheck.models.plan.verdict import Violation

__all__ = ["describe_value", "map_errors", "schema_violation"]

_OUT_OF_RANGE = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "multipleOf",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)
_UNEXPECTED = re.compile(r"\((.*) (?:was|were) (?:unexpected|unevaluated and invalid)\)\Z", re.S)


def schema_violation(code: str, call: Call, path: Sequence[PathPart], text: str) -> Violation:
    return Violation(
        code=code, level="schema", call=call.id, message=f"{format_path(path)}: {text}"
    )


def map_errors(errors: Iterator[ValidationError], call: Call) -> Iterator[Violation]:
    seen: set[tuple[str, str]] = set()  # (path, name) already reported for required/unknown
    for top in errors:
        error = best_match([top]) if top.context else top
        path = list(error.absolute_path)
        keyword = error.validator
        if keyword == "required":
            for name in error.validator_value:
                if isinstance(error.instance, Mapping) and name not in error.instance:
                    here = [*path, name]
                    if (format_path(here), "required") not in seen:
                        seen.add((format_path(here), "required"))
                        what = "argument" if not path else "property"
                        yield schema_violation(
                            "missing_required", call, here, f"required {what} is missing"
                        )
        elif keyword == "type":
            yield schema_violation(
                "type_mismatch",
                call,
                path,
                f"expected {_types(error.validator_value)}, got {describe_value(error.instance)}",
            )
        elif keyword in ("additionalProperties", "unevaluatedProperties"):
            yield from _unknown(error, call, path, seen)
        elif keyword == "enum":
            options = ", ".join(_literal(v) for v in error.validator_value)
            yield schema_violation(
                "enum_violation",
                call,
                path,
                f"expected one of {options}, got {describe_value(error.instance)}",
            )
        elif keyword == "const":
            yield schema_violation(
                "enum_violation",
                call,
                path,
                f"expected {_literal(error.validator_value)}, got {describe_value(error.instance)}",
            )
        elif keyword in _OUT_OF_RANGE:
            yield schema_violation("out_of_range", call, path, _range_text(error))
        else:
            yield schema_violation("schema_violation", call, path, _one_line(error.message))


def _unknown(
    error: ValidationError, call: Call, path: list[PathPart], seen: set[tuple[str, str]]
) -> Iterator[Violation]:
    names = _unknown_names(error)
    if names is None:
        yield schema_violation("unknown_argument", call, path, _one_line(error.message))
        return
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    known = sorted(str(k) for k in schema.get("properties", {}))
    allowed = f" (expected only {', '.join(known)})" if known else " (expected none)"
    what = "argument" if not path else "property"
    for name in names:
        here = [*path, name]
        if (format_path(here), "unknown") in seen:
            continue
        seen.add((format_path(here), "unknown"))
        yield schema_violation("unknown_argument", call, here, f"unknown {what}{allowed}")


def _unknown_names(error: ValidationError) -> list[str] | None:
    """The property names an additional/unevaluated-properties error is about."""
    instance, schema = error.instance, error.schema
    if not isinstance(instance, Mapping) or not isinstance(schema, Mapping):
        return None
    if error.validator == "additionalProperties":
        # The validator's own rule: not a declared property, matching no pattern.
        return additional_properties(instance, schema)
    # unevaluatedProperties needs jsonschema's annotation bookkeeping, so read its own list.
    match = _UNEXPECTED.search(error.message)
    if match is None:
        return None
    try:
        names = ast.literal_eval(f"[{match.group(1)}]")
    except (ValueError, SyntaxError):
        return None
    return [n for n in names if isinstance(n, str)] or None


def _types(expected: Any) -> str:
    if isinstance(expected, list):
        return " or ".join(str(t) for t in expected)
    return str(expected)


def describe_value(value: Any) -> str:
    """``describe`` that survives integers too long to print."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
        return f"a number of about {int(value.bit_length() * 0.30103)} digits"
    return describe(value)


def _literal(value: Any) -> str:
    """A schema's limit as written: ``5``, ``"^[a-z]+$"``."""
    if isinstance(value, str):
        text = json.dumps(value)
        return text if len(text) <= 60 else f"{text[:57]}..."
    return describe_value(value).removeprefix("the number ")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, Mapping)) else 0


_BOUNDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}
_COUNTS = {
    "minLength": ("at least", "characters"),
    "maxLength": ("at most", "characters"),
    "minItems": ("at least", "items"),
    "maxItems": ("at most", "items"),
    "minProperties": ("at least", "properties"),
    "maxProperties": ("at most", "properties"),
}


def _range_text(error: ValidationError) -> str:
    keyword, limit, got = error.validator, error.validator_value, error.instance
    if keyword in _BOUNDS:
        return f"expected a number {_BOUNDS[keyword]} {_literal(limit)}, got {describe_value(got)}"
    if keyword in _COUNTS:
        bound, unit = _COUNTS[keyword]
        return f"expected {bound} {limit} {unit}, got {_size(got)} ({describe_value(got)})"
    if keyword == "pattern":
        return f"expected a string matching {_literal(limit)}, got {describe_value(got)}"
    if keyword == "format":
        return f"expected a valid '{limit}', got {describe_value(got)}"
    if keyword == "multipleOf":
        return f"expected a multiple of {_literal(limit)}, got {describe_value(got)}"
    if keyword == "uniqueItems":
        return f"expected unique items, got {describe_value(got)} with repeats"
    return _one_line(error.message)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else f"{text[:197]}..."
