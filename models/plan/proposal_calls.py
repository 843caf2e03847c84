"""One call as a proposal holds it, and the common call shapes read in one step.

``txcheck.models.plan.proposal_parser`` reads every vendor format with a JSON path ready for
every possible mistake. Most calls are well formed, and building those paths costs more
than reading such a call, so each vendor's common call shape is first read here in one
step (``chat_call``, ``responses_call``, ``anthropic_call``, ``gemini_call``): an item of
exactly that shape (plain ``dict`` and ``str`` values, no ``depends_on``) gives its
``Call`` (or, without a vendor id, a ``Found`` to give an id later); anything else gives
``None`` and the parser's full reading, which says what is wrong and where, takes over.
Both roads give the same call.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from txcheck.models.json_path import describe
from txcheck.models.plan.proposal import Call
from txcheck.models.strict_json import StrictJsonError, loads_strict

__all__ = [
    "MISSING",
    "Found",
    "anthropic_call",
    "arguments_object",
    "arguments_string",
    "chat_call",
    "gemini_call",
    "responses_call",
]

MISSING: Any = object()


class Found(NamedTuple):
    """A call as found in the document, before ids are assigned (a tuple: one is built
    per proposed call, so it is kept cheap)."""

    id: str | None
    name: str
    raw_arguments: Any
    arguments: dict[str, Any] | None
    json_error: str | None
    depends_on: tuple[str, ...]

    @classmethod
    def of(
        cls,
        call_id: str | None,
        name: str,
        raw: Any,
        parsed: tuple[dict[str, Any] | None, str | None],
        depends_on: tuple[str, ...] = (),
    ) -> Found:
        """The call as every vendor reading builds it: ``raw`` is the arguments as given
        (``MISSING`` when left out, kept as None), ``parsed`` their object and error."""
        arguments, error = parsed
        return cls(call_id, name, None if raw is MISSING else raw, arguments, error, depends_on)


def arguments_string(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """OpenAI ``arguments``: a string holding a strict-JSON object."""
    if raw is MISSING:
        return None, "the call has no 'arguments'"
    if not isinstance(raw, str):
        return None, f"'arguments' must be a string of JSON (got {describe(raw)})"
    try:
        value = loads_strict(raw)
    except StrictJsonError as error:
        return None, f"'arguments' is not valid JSON: {error}"
    if not isinstance(value, dict):
        return None, f"'arguments' must hold a JSON object (got {describe(value)})"
    return value, None


def arguments_object(raw: Any, what: str) -> tuple[dict[str, Any] | None, str | None]:
    """Anthropic ``input`` / Gemini ``args``: already a parsed object."""
    if raw is MISSING:
        return None, f"the call has no {what}"
    if not isinstance(raw, dict):
        return None, f"{what} must be a JSON object (got {describe(raw)})"
    return raw, None


def chat_call(item: Any, index: int) -> Call | Found | None:
    """An OpenAI Chat ``tool_calls`` item ``{"id", "type": "function", "function":
    {"name", "arguments"}}``, or ``None``."""
    if type(item) is not dict or "depends_on" in item:
        return None
    if item.get("type", "function") != "function":
        return None
    function = item.get("function")
    if type(function) is not dict or type(name := function.get("name")) is not str:
        return None
    raw = function.get("arguments", MISSING)
    return _found(item.get("id"), name, raw, arguments_string(raw), index)


def responses_call(item: Any, index: int) -> Call | Found | None:
    """An OpenAI Responses ``function_call`` output item, or ``None``."""
    if type(item) is not dict or "depends_on" in item or item.get("type") != "function_call":
        return None
    if type(name := item.get("name")) is not str:
        return None
    raw = item.get("arguments", MISSING)
    return _found(item.get("call_id"), name, raw, arguments_string(raw), index)


def anthropic_call(block: Any, index: int) -> Call | Found | None:
    """An Anthropic ``tool_use`` content block, or ``None``."""
    if type(block) is not dict or "depends_on" in block or block.get("type") != "tool_use":
        return None
    if type(name := block.get("name")) is not str:
        return None
    raw = block.get("input", MISSING)
    return _found(block.get("id"), name, raw, arguments_object(raw, "'input'"), index)


def gemini_call(part: Any, index: int) -> Call | Found | None:
    """A Gemini ``{"functionCall": {"name", "args"}}`` part, or ``None``."""
    if type(part) is not dict or "depends_on" in part or "function_call" in part:
        return None
    call = part.get("functionCall")
    if type(call) is not dict or "depends_on" in call:
        return None
    if type(name := call.get("name")) is not str:
        return None
    raw = call.get("args", MISSING)
    # Gemini leaves out 'args' when a call has none
    parsed = ({}, None) if raw is MISSING else arguments_object(raw, "'args'")
    return _found(call.get("id"), name, raw, parsed, index)


def _found(
    call_id: Any,
    name: str,
    raw: Any,
    parsed: tuple[dict[str, Any] | None, str | None],
    index: int,
) -> Call | Found | None:
    """The ``Call`` at ``index`` when the vendor gave its id; else a ``Found`` whose id the
    parser invents once it has seen every call (never reusing a vendor's); None when the
    id is neither absent, null nor text (not a call of this shape). ``raw`` is the
    arguments as given (``MISSING`` when left out), ``parsed`` their object and error."""
    if call_id is not None and type(call_id) is not str:
        return None
    if call_id is None:
        return Found.of(None, name, raw, parsed)
    arguments, error = parsed
    return Call(
        id=call_id,
        name=name,
        index=index,
        raw_arguments=None if raw is MISSING else raw,
        arguments=arguments,
        json_error=error,
    )
