"""A fast yes/no for the common valid call, with jsonschema staying the reference.

``jsonschema-rs`` (docs/decisions/007-jsonschema-rs-fast-path.md) answers ``is_valid``
roughly a hundred times faster than ``jsonschema``. txcheck uses it only to say *valid*: a
call it accepts has no violation; every other call is checked by jsonschema (through
``schema_validator``), which alone produces violations (codes, paths, messages). So the two
must never disagree on a valid verdict, and wherever their semantics can differ the fast
path is not used. That is decided on the schema's structure (``schema_walk``): a keyword
counts where a keyword stands, never because a property or a piece of data has its name.
It is not used for

- a schema with ``format`` (the two check different sets of formats), ``multipleOf``
  (jsonschema-rs divides in floating point; txcheck's reference is exact), a number beyond
  +-2**53, ``$dynamicRef`` or ``$dynamicAnchor``, ``$id`` below the root, ``$schema`` other
  than draft 2020-12's, a reference that does not resolve inside the schema, a loop of
  in-place applications, or a pattern the linear-time engine refuses;
- a schema jsonschema-rs cannot compile;
- a value holding a number beyond +-2**53 or a float that is not finite (checked by the
  caller's scan), or anything jsonschema-rs refuses to convert (lone surrogates).

``pattern`` and ``patternProperties`` are fine: the reference runs every pattern on this
same engine (``schema_regex``), compiled the same way. The compiled validator fetches
nothing: its retriever refuses every URI.

When jsonschema-rs is not installed, ``fast_validator`` returns ``None`` and every call
goes to jsonschema, with identical verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from txcheck.models.memo import IdentityMemo
from txcheck.models.plan.rust_engine import engine
from txcheck.models.plan.schema_regex import pattern_problem
from txcheck.models.plan.schema_walk import APPLICATORS, walk

__all__ = ["SAFE_INTEGER", "FastCheck", "fast_validator", "schema_is_safe"]


def __getattr__(name: str) -> Any:
    if name == "_rs":  # the module, or None: loaded on first use
        return engine()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SAFE_INTEGER = 2**53
"""Numbers beyond +-2**53 are not exact as doubles; such values take the reference path."""

FastCheck = Callable[[Any], bool]

_UNSAFE_KEYWORDS = frozenset(
    {
        "format",
        "multipleOf",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
    }
)
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def schema_is_safe(schema: Any) -> bool:
    """Whether both validators read ``schema`` the same way (see the module docstring).
    The answer for a schema object asked about lately is remembered (by identity: a tool's
    schema is asked about when its contract is read and again when its check is built)."""
    return _SAFE_SEEN.one(schema, _is_safe)


_SAFE_SEEN: IdentityMemo[bool] = IdentityMemo(limit=256)


def _is_safe(schema: Any) -> bool:
    found = walk(schema)
    if found.unresolved or found.cycle() is not None:
        return False
    for path, node in found.positions.items():
        if not isinstance(node, Mapping):
            continue
        if (path and "$id" in node) or node.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
            return False
        for key, value in node.items():
            if key in _UNSAFE_KEYWORDS:
                return False
            if key == "pattern" and isinstance(value, str) and pattern_problem(value):
                return False
            if (
                key == "patternProperties"
                and isinstance(value, Mapping)
                and any(pattern_problem(p) for p in value)
            ):
                return False
            if key == "$ref" and isinstance(value, str) and "%" in value:
                return False  # percent-decoding: the two might read the pointer apart
            if key not in APPLICATORS and not _exact_numbers(value):
                return False
    return True


def _exact_numbers(value: Any) -> bool:
    """Whether every number in ``value`` (a keyword's data) is within +-2**53."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, bool) or node is None or isinstance(node, str):
            continue
        if isinstance(node, (int, float)):
            if not -SAFE_INTEGER <= node <= SAFE_INTEGER:  # also false for nan
                return False
        elif isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True


def _refuse(uri: str) -> Any:
    raise ValueError(f"txcheck fetches no schema ({uri!r})")


def fast_validator(schema: Any) -> FastCheck | None:
    """``is_valid`` of a jsonschema-rs Draft 2020-12 validator for ``schema``, or ``None``
    when jsonschema-rs is absent, cannot compile it, or might read it differently."""
    rs = engine()
    if rs is None or not schema_is_safe(schema):
        return None
    try:
        validator = rs.Draft202012Validator(
            schema, retriever=_refuse, pattern_options=rs.RegexOptions()
        )
    except Exception:
        return None
    check: FastCheck = validator.is_valid
    return check
