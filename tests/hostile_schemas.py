"""Hostile inputs for schema evaluation: model output (and a few schemas) built to make a
backtracking regex engine or a quadratic ``uniqueItems`` take exponential or quadratic
time, and the cases where floating point or a regex dialect gave the wrong verdict.

Each entry is a tool schema, the arguments a model proposes, and the violation codes (at
their JSON paths) the right verdict has. tests/test_schema_evaluation.py runs each through
the first-call path (jsonschema) and the later-call path (jsonschema-rs where it is used).
"""

from __future__ import annotations

from typing import Any

import attrs

from txcheck.models.json_path import format_path

__all__ = ["CORPUS", "Hostile"]


@attrs.frozen(kw_only=True)
class Hostile:
    name: str
    schema: dict[str, Any]
    arguments: dict[str, Any]
    expected: tuple[tuple[str, str], ...]  # (code, JSON path) of each violation, in order


def _one(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: schema}}


NESTED = "^(a+)+$"  # 2**n ways to split n letters: a backtracking engine tries them all
ALTERNATIVES = "^(a|a?)+$"
EVIL_KEY = "a" * 40 + "!"
DISTINCT = [{"sku": f"s{i}", "n": i} for i in range(5000)]
COLLIDING = [k * (2**61 - 1) for k in range(1, 5001)]  # Python's int hash: all equal to 0

CORPUS = (
    Hostile(
        name="pattern-nested-quantifier-no-match",
        schema=_one("s", {"type": "string", "pattern": NESTED}),
        arguments={"s": "a" * 26 + "!"},
        expected=(("out_of_range", "$.s"),),
    ),
    Hostile(
        name="pattern-nested-quantifier-long",
        schema=_one("s", {"type": "string", "pattern": NESTED}),
        arguments={"s": "a" * 50_000 + "!"},
        expected=(("out_of_range", "$.s"),),
    ),
    Hostile(
        name="pattern-nested-quantifier-match",
        schema=_one("s", {"type": "string", "pattern": NESTED}),
        arguments={"s": "a" * 26},
        expected=(),
    ),
    Hostile(
        name="pattern-overlapping-alternatives",
        schema=_one("s", {"pattern": ALTERNATIVES}),
        arguments={"s": "a" * 40 + "b"},
        expected=(("out_of_range", "$.s"),),
    ),
    Hostile(
        name="pattern-properties-key-closed",
        schema={
            "type": "object",
            "patternProperties": {NESTED: {"type": "integer"}},
            "additionalProperties": False,
        },
        arguments={EVIL_KEY: 1},
        expected=(("unknown_argument", format_path([EVIL_KEY])),),
    ),
    Hostile(
        name="pattern-properties-key-matches",
        schema={"type": "object", "patternProperties": {NESTED: {"type": "integer"}}},
        arguments={"a" * 40: "x"},
        expected=(("type_mismatch", "$." + "a" * 40),),
    ),
    Hostile(
        name="pattern-properties-many-keys",
        schema={"type": "object", "patternProperties": {NESTED: {}}, "additionalProperties": False},
        arguments={"a" * i + "!": i for i in range(20, 60)},
        expected=tuple(("unknown_argument", format_path(["a" * i + "!"])) for i in range(20, 60)),
    ),
    Hostile(
        name="pattern-properties-unevaluated",
        schema={
            "type": "object",
            "allOf": [{"patternProperties": {NESTED: {}}}],
            "unevaluatedProperties": False,
        },
        arguments={EVIL_KEY: 1, "a" * 30: 2},
        expected=(("unknown_argument", format_path([EVIL_KEY])),),
    ),
    Hostile(
        name="property-names-pattern",
        schema={"type": "object", "propertyNames": {"pattern": NESTED}},
        arguments={EVIL_KEY: 1},
        expected=(("out_of_range", "$"),),
    ),
    Hostile(
        name="unique-items-5000-distinct-objects",
        schema=_one("items", {"type": "array", "uniqueItems": True}),
        arguments={"items": DISTINCT},
        expected=(),
    ),
    Hostile(
        name="unique-items-5000-objects-one-repeat",
        schema=_one("items", {"type": "array", "uniqueItems": True}),
        arguments={"items": [*DISTINCT, {"n": 4999.0, "sku": "s4999"}]},
        expected=(("out_of_range", "$.items"),),
    ),
    Hostile(
        name="unique-items-hash-collisions",
        schema=_one("items", {"type": "array", "uniqueItems": True}),
        arguments={"items": COLLIDING},
        expected=(),
    ),
    Hostile(
        name="unique-items-booleans-are-not-numbers",
        schema=_one("items", {"uniqueItems": True}),
        arguments={"items": [1, True, 0, False, [1], [True], {"a": 0}, {"a": False}]},
        expected=(),
    ),
    Hostile(
        name="unique-items-one-and-one-point-zero",
        schema=_one("items", {"uniqueItems": True}),
        arguments={"items": [[{"a": 1}], [{"a": 1.0}]]},
        expected=(("out_of_range", "$.items"),),
    ),
    Hostile(
        name="multiple-of-cents",
        schema=_one("price", {"type": "number", "multipleOf": 0.01}),
        arguments={"price": 19.99},
        expected=(),
    ),
    Hostile(
        name="multiple-of-tenths",
        schema=_one("x", {"multipleOf": 0.1}),
        arguments={"x": 0.3},
        expected=(),
    ),
    Hostile(
        name="multiple-of-cents-not",
        schema=_one("price", {"type": "number", "multipleOf": 0.01}),
        arguments={"price": 19.999},
        expected=(("out_of_range", "$.price"),),
    ),
    Hostile(
        name="multiple-of-huge",
        schema=_one("x", {"multipleOf": 0.01}),
        arguments={"x": 1e308},
        expected=(),
    ),
    Hostile(
        name="posix-class-reads-as-ecma-262",
        schema=_one("s", {"type": "string", "pattern": "^[[:digit:]]$"}),
        arguments={"s": "5"},
        expected=(("out_of_range", "$.s"),),
    ),
    Hostile(
        name="posix-class-literal",
        schema=_one("s", {"type": "string", "pattern": "^[[:digit:]]$"}),
        arguments={"s": "d]"},
        expected=(),
    ),
    Hostile(
        name="dollar-before-a-trailing-newline",
        schema=_one("s", {"type": "string", "pattern": "^[a-z]+$"}),
        arguments={"s": "abc\n"},
        expected=(("out_of_range", "$.s"),),
    ),
    Hostile(
        name="lone-surrogate",
        schema=_one("s", {"type": "string", "pattern": "^.$"}),
        arguments={"s": "\ud800"},
        expected=(),
    ),
)
