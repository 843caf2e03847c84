"""The reference validator: jsonschema's Draft 2020-12, fetching nothing, bounded on any value.

Every place txcheck compiles a tool's schema (the level-2 check, a compensation's literal
arguments, the world's admission of a call, exploration's argument filter) builds it here,
so they all read a schema the same way:

- **Nothing is fetched.** The registry refuses every retrieval: a ``$ref`` resolves inside
  the schema or not at all. The contract checks (``schema_rules``) refuse any other
  reference when the contract loads; ``reference_validator`` runs them too, for schemas
  that did not come through the loader.
- **Patterns run in linear time** (``schema_regex``): ``pattern``, ``patternProperties``
  and the ``patternProperties`` part of ``additionalProperties`` and
  ``unevaluatedProperties``, and the ``regex`` format.
- **``uniqueItems`` is linear**: each item is reduced once to a canonical text (numbers
  by value, ``1`` and ``1.0`` alike; ``true`` never equal to ``1``) and looked up in a
  set, where jsonschema compares items pair by pair.
- **``multipleOf`` is exact**: numbers are taken by their decimal value (``19.99`` is a
  multiple of ``0.01``), not by binary floating point.

Messages are jsonschema's own, word for word, so violation texts do not change.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

import referencing
import referencing.exceptions
from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators

from txcheck.models.errors import ContractError
from txcheck.models.json_path import format_path
from txcheck.models.plan.schema_regex import is_regex, search
from txcheck.models.plan.schema_rules import rule_problem

__all__ = [
    "FORMAT_CHECKER",
    "NO_RETRIEVAL",
    "SCHEMA_FORMAT_CHECKER",
    "ReferenceValidator",
    "additional_properties",
    "canonical_item",
    "reference_validator",
]


def _refuse(uri: str) -> Any:
    raise referencing.exceptions.NoSuchResource(uri)


NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
"""A registry that fetches nothing: only references inside the schema resolve."""


def _format_checker(regex: Any) -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checkers = {**Draft202012Validator.FORMAT_CHECKER.checkers, "regex": (regex, ())}
    return checker


FORMAT_CHECKER = _format_checker(is_regex)
"""Draft 2020-12's format checks, with ``regex`` judged without Python's ``re``."""

SCHEMA_FORMAT_CHECKER = _format_checker(lambda _: True)
"""For the meta-schema check of a tool's schema: its patterns are judged by
``schema_rules`` (which says what the engine cannot run), never by Python's ``re``."""


# -- keywords ---------------------------------------------------------------------------


def _extras_msg(extras: list[Any]) -> tuple[str, str]:
    """jsonschema's wording for extra items or properties (``'a', 'b'``, ``were``)."""
    return ", ".join(repr(extra) for extra in extras), "was" if len(extras) == 1 else "were"


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def additional_properties(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """The keys of ``instance`` that neither ``properties`` nor ``patternProperties``
    of ``schema`` covers, in order (jsonschema's rule, with linear-time patterns)."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    if not patterns:
        return [key for key in instance if key not in properties]
    return [
        key
        for key in instance
        if key not in properties and not any(search(p, key) for p in patterns)
    ]


def _additional_properties(
    validator: Any, extra: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(additional_properties(instance, schema))
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            error = "Additional properties are not allowed (%s %s unexpected)"
            yield ValidationError(error % _extras_msg(sorted(extras, key=str)))


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """jsonschema's ``find_evaluated_property_keys_by_schema``, with linear-time patterns
    and a set (its list made ``unevaluatedProperties`` quadratic in the keys)."""
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is None:
            continue
        keys.update(
            key
            for key, value in instance.items()
            if next(validator.descend(value, subschema), None) is None
        )
    for pattern in schema.get("patternProperties", ()):
        keys.update(key for key in instance if search(pattern, key))
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, ()):
            if next(validator.descend(instance, subschema), None) is None:
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    bad = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key, schema_path=key), None)
        is not None
    ]
    if bad:
        if unevaluated is False:
            error = "Unevaluated properties are not allowed (%s %s unexpected)"
            yield ValidationError(error % _extras_msg(sorted(bad, key=str)))
        else:
            error = (
                "Unevaluated properties are not valid under "
                "the given schema (%s %s unevaluated and invalid)"
            )
            yield ValidationError(error % _extras_msg(bad))


def canonical_item(value: Any) -> str:
    """A text equal for two JSON values exactly when JSON Schema calls them equal: numbers
    by value (``1``, ``1.0`` and ``1e0`` alike), ``true`` and ``1`` apart, objects whatever
    their key order. Built in one pass over the value. Texts hash with a per-process random
    key, so no crafted set of items makes the lookups slow (integers would: Python hashes
    them by their value)."""
    if value is None or isinstance(value, bool):
        return "n" if value is None else "t" if value else "f"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "x" + repr(value)
        if not value.is_integer():
            return "r" + value.hex()  # exact, and never equal to an integer's text
        value = int(value)
    if isinstance(value, int):
        return "i" + format(value, "x")  # hexadecimal: no limit on the digits, linear
    if isinstance(value, str):
        return "s" + json.dumps(value)
    if isinstance(value, Mapping):
        items = sorted((str(k), canonical_item(v)) for k, v in value.items())
        return "{" + ",".join(json.dumps(k) + ":" + v for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_item(v) for v in value) + "]"
    return "?" + repr(value)


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        key = canonical_item(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _exact(number: int | float) -> Fraction:
    """A number's decimal value: a float by its shortest repr, the digits a JSON text had."""
    return Fraction(number) if isinstance(number, int) else Fraction(repr(number))


def _multiple_of(
    validator: Any, step: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "number"):
        return
    if isinstance(instance, float) and not math.isfinite(instance):
        multiple = False
    elif isinstance(instance, int) and isinstance(step, int):
        multiple = instance % step == 0
    else:
        multiple = (_exact(instance) / _exact(step)).denominator == 1
    if not multiple:
        yield ValidationError(f"{instance!r} is not a multiple of {step}")


ReferenceValidator: Any = validators.extend(
    Draft202012Validator,
    validators={
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "unevaluatedProperties": _unevaluated_properties,
        "uniqueItems": _unique_items,
        "multipleOf": _multiple_of,
    },
    format_checker=FORMAT_CHECKER,
)
"""Draft 2020-12 with the keywords above replaced; build one with ``reference_validator``."""


def reference_validator(schema: Any, *, formats: bool = True) -> Any:
    """A validator for ``schema`` that fetches nothing and is bounded on any value
    (``formats``: check ``format`` too). A schema with a reference outside itself, a
    reference loop or a pattern the engine cannot run is a ``ContractError``."""
    problem = rule_problem(schema)
    if problem is not None:
        path, text = problem
        raise ContractError(text, path=format_path(path))
    return ReferenceValidator(
        schema, registry=NO_RETRIEVAL, format_checker=FORMAT_CHECKER if formats else None
    )
