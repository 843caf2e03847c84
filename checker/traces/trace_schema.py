"""The structure of a ``txcheck-trace/1`` document, as a JSON Schema checked before replay.

A trace's digest is unkeyed: anyone can edit a trace and compute its digest again. So the
digest proves a trace was not damaged by accident, never that its structure is sound, and
a replay must not trust it: a step that is a list, an action that is a number or a plan
whose calls are a string would otherwise end in a traceback (exit 1, which on replay reads
as "reproduced"). ``check_structure`` validates the whole document first and names the
first problem by its JSON path. The embedded contract and world are checked by their own
parsers (``parse_contract``, ``parse_world``); unknown top-level fields are allowed, so a
later version may add some.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from txcheck.models.errors import InputError
from txcheck.models.json_path import format_path
from txcheck.models.sim.choices import Action

__all__ = ["TRACE_SCHEMA", "check_structure"]

_NAME = {"type": "string", "minLength": 1}
_NAMES = {"type": "array", "items": {"type": "string"}}
_TEXT = {"type": ["string", "null"]}
"""A field replay reads to place a recorded fault under another policy."""

TRACE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "txcheck-trace/1",
    "type": "object",
    "required": ["format", "policy", "contract", "world", "plans", "steps", "violations"],
    "properties": {
        "format": {"const": "txcheck-trace/1"},
        "policy": _NAME,
        "contract": {"type": ["object", "array"]},
        "world": {"type": "object"},
        "plan": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/plan"}]},
        "plans": {"type": "array", "items": {"$ref": "#/$defs/plan"}},
        "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
        "violations": {"type": "array", "items": {"$ref": "#/$defs/violation"}},
        "error": {"type": "string"},
        "engine": {"type": "string"},
        "services": _NAMES,
        "invariants": _NAMES,
        "invariants_only": _NAMES,
        "skip_invariants": _NAMES,
        "stores": {
            "type": "object",
            "properties": {"journal": _NAME, "idempotency": _NAME},
            "additionalProperties": False,
        },
        "stops_at": {"enum": ["harm"]},
        "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    },
    "$defs": {
        "plan": {
            "type": "object",
            "required": ["calls"],
            "properties": {
                "format": {"type": "string"},
                "calls": {"type": "array", "items": {"$ref": "#/$defs/call"}},
            },
            "additionalProperties": False,
        },
        "call": {
            "type": "object",
            "required": ["id", "name", "arguments"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "arguments": True,
                "depends_on": _NAMES,
            },
            "additionalProperties": False,
        },
        "step": {
            "type": "object",
            "required": ["actor", "action"],
            "properties": {
                "i": {"type": "integer", "minimum": 0},
                "actor": _NAME,
                "action": {"enum": [str(a) for a in Action]},
                "outcome": _NAME,
                "deviation": {"type": "boolean"},
                "request": {
                    "type": "object",
                    "properties": {"kind": _TEXT, "tool": _TEXT, "call": _TEXT},
                },
                "observed": {"type": "object", "properties": {"lost": _TEXT}},
            },
            "additionalProperties": False,
        },
        "violation": {
            "type": "object",
            "required": ["invariant"],
            "properties": {
                "invariant": _NAME,
                "kind": {"type": "string"},
                "step": {"type": ["integer", "null"], "minimum": 0},
                "messages": _NAMES,
            },
            "additionalProperties": False,
        },
    },
}
"""What ``trace_of`` writes; a field replay does without (a step's outcome, request or
observation, a violation's step) may be left out, but never be of another type."""

_VALIDATOR = Draft202012Validator(TRACE_SCHEMA)


def _first(errors: list[ValidationError]) -> ValidationError | None:
    """The error earliest in the document (then the deepest), so the message is stable."""
    if not errors:
        return None
    return min(errors, key=lambda e: (list(map(str, e.absolute_path)), -len(e.absolute_path)))


def check_structure(document: Any, *, source: str, error: type[InputError]) -> None:
    """Raise ``error`` naming ``source`` and the JSON path of the first place where
    ``document`` is not a ``txcheck-trace/1`` document."""
    found = _first(list(_VALIDATOR.iter_errors(document)))
    if found is not None:
        message = " ".join(found.message.split())
        if len(message) > 200:
            message = message[:197] + "..."
        raise error(
            f"not a valid txcheck-trace/1 document: {message}",
            source=source,
            path=format_path(found.absolute_path),
        )
