"""A fast yes/no for the common valid call, with jsonschema staying the reference.

``jsonschema-rs`` (docs/decisions/007-jsonschema-rs-fast-path.md) answers ``is_valid``
roughly a hundred times faster than ``jsonschema``. txcheck uses it only to say *valid*: a
call it accepts has no violation; every other call is checked by ``jsonschema``, which
alone produces violations (codes, paths, messages). So the two must never disagree on a
valid verdict, and wherever their semantics can differ the fast path is not used:

- a schema with ``format`` (the two check different sets of formats), ``pattern`` or
  ``patternProperties`` (Python ``re`` vs a Rust regex dialect), a ``multipleOf`` that is
  not an integer (float division differs), a number beyond +-2**53, or dynamic references;
- a schema jsonschema-rs cannot compile;
- a value holding a number beyond +-2**53 or a float that is not finite (checked by the
  caller's scan), or anything jsonschema-rs refuses to convert (lone surrogates).

When jsonschema-rs is not installed, ``fast_validator`` returns ``None`` and every call
goes to jsonschema, with identical verdicts.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SAFE_INTEGER", "FastCheck", "fast_validator", "schema_is_safe"]


def _load() -> Any:
    """jsonschema-rs, or ``None``: a speed-up only, verdicts are the same without it."""
    try:
        return importlib.import_module("jsonschema_rs")
    except ImportError:  # pragma: no cover - exercised where jsonschema-rs is absent
        return None


_LOADED: list[Any] = []  # [jsonschema-rs or None], once asked for


def _module() -> Any:
    """jsonschema-rs, imported on first use (importing it costs more than checking a few
    calls with jsonschema, so a one-off check need not pay for it)."""
    if not _LOADED:
        _LOADED.append(_load())
    return _LOADED[0]


def __getattr__(name: str) -> Any:
    if name == "_rs":  # the module, or None: loaded on first use
        return _module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SAFE_INTEGER = 2**53
"""Numbers beyond +-2**53 are not exact as doubles; such values take the reference path."""

FastCheck = Callable[[Any], bool]

_UNSAFE_KEYWORDS = frozenset(
    {"format", "pattern", "patternProperties", "$dynamicRef", "$dynamicAnchor", "$recursiveRef"}
)
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def schema_is_safe(schema: Any) -> bool:
    """Whether both validators read ``schema`` the same way (see the module docstring)."""
    stack = [(schema, False)]
    while stack:
        node, is_data = stack.pop()
        if isinstance(node, bool) or node is None or isinstance(node, str):
            continue
        if isinstance(node, (int, float)):
            if not -SAFE_INTEGER <= node <= SAFE_INTEGER:  # also false for nan
                return False
            continue
        if isinstance(node, Mapping):
            for key, value in node.items():
                if not is_data:
                    if key in _UNSAFE_KEYWORDS:
                        return False
                    if key == "multipleOf" and not (
                        isinstance(value, int) or (isinstance(value, float) and value.is_integer())
                    ):
                        return False
                stack.append((value, is_data or key in _DATA_KEYWORDS))
        elif isinstance(node, list):
            stack.extend((item, is_data) for item in node)
    return True


def fast_validator(schema: Any) -> FastCheck | None:
    """``is_valid`` of a jsonschema-rs Draft 2020-12 validator for ``schema``, or ``None``
    when jsonschema-rs is absent, cannot compile it, or might read it differently."""
    rs = _module()
    if rs is None or not schema_is_safe(schema):
        return None
    try:
        validator = rs.Draft202012Validator(schema)
    except Exception:
        return None
    check: FastCheck = validator.is_valid
    return check
