"""Read a model's proposal, in any documented vendor format, into a ``Plan``.

Formats (docs/scoring.md and the README list them), told apart by their top-level keys:

- ``choices``: a whole OpenAI completion; ``choices[0].message`` is read as below.
- ``output``: OpenAI Responses output; ``function_call`` items are calls, ``message`` items
  are text, ``reasoning`` items are skipped.
- ``candidates``: a Gemini response; in ``candidates[0].content.parts``, ``functionCall``
  (or the SDKs' ``function_call``) parts are calls and ``text`` parts are text (``thought``
  parts are skipped). Gemini omits ``args`` for a call without arguments: that is ``{}``.
- ``tool_calls``, or ``content`` that is a string or null (or a list with a ``refusal``
  part): an OpenAI Chat assistant message.
- otherwise ``content`` that is a list: an Anthropic message; ``tool_use`` blocks are calls,
  ``text`` blocks are text, ``thinking`` blocks are skipped.

Anything else, and any part of a recognised format with the wrong shape, is a
``ProposalFormatError`` (exit 2) naming the JSON path, never a plan with zero calls. Unknown
item or block types are errors too, because skipping one could hide a call. Extra keys are
ignored: vendor responses carry many.

A call whose arguments cannot be used (OpenAI ``arguments`` that is not a strict-JSON object,
or an Anthropic/Gemini input that is not an object) is still a call, with
``arguments=None`` and ``json_error`` set; it fails level ``json`` in validation. A document
that is not strict JSON at all is bad input (``load_proposal`` raises), since its calls
cannot even be found. Duplicate call ids are kept: validation reports ``duplicate_call_id``.

Each call item is first offered to the one-step reader of its vendor's common shape
(``txcheck.models.plan.proposal_calls``); only an item that is not of that shape is read here,
path by path, so that its problem can be named where it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import attrs

from txcheck.models.errors import ProposalFormatError
from txcheck.models.json_path import PathPart, describe, format_path
from txcheck.models.plan.proposal import Call, Plan, ProposalFormat
from txcheck.models.plan.proposal_calls import (
    MISSING,
    Found,
    anthropic_call,
    arguments_object,
    arguments_string,
    chat_call,
    gemini_call,
    responses_call,
)
from txcheck.models.strict_json import load_json_document

__all__ = ["load_proposal", "parse_proposal"]

_Path = tuple[PathPart, ...]
_GEMINI_PART_KEYS = frozenset(
    {
        "text",
        "thought",
        "thoughtSignature",
        "thought_signature",
        "inlineData",
        "inline_data",
        "fileData",
        "file_data",
        "executableCode",
        "executable_code",
        "codeExecutionResult",
        "code_execution_result",
        "functionResponse",
        "function_response",
        "videoMetadata",
        "video_metadata",
    }
)


@attrs.define
class _Reading:
    calls: list[Call | Found] = attrs.field(factory=list)
    texts: list[str] = attrs.field(factory=list)


def load_proposal(path: str | os.PathLike[str]) -> Plan:
    """Read a proposal file; bad JSON or an unrecognised document is ``ProposalFormatError``."""
    document = load_json_document(path, error=ProposalFormatError)
    try:
        return parse_proposal(document.value, source=document.source)
    except ProposalFormatError as error:
        raise error.located(line=document.line_of(error.path)) from None


def parse_proposal(doc: Any, *, source: str = "<proposal>") -> Plan:
    """The plan in ``doc`` (a parsed JSON value), or ``ProposalFormatError``."""
    try:
        return _parse(doc)
    except ProposalFormatError as error:
        raise error.located(source=source) from None


def _fail(path: _Path, problem: str) -> ProposalFormatError:
    return ProposalFormatError(problem, path=format_path(path))


def _parse(doc: Any) -> Plan:
    if not isinstance(doc, dict):
        raise _fail(
            (),
            "a proposal must be a JSON object: an OpenAI, Anthropic or Gemini message "
            f"(got {describe(doc)})",
        )
    tops = [key for key in ("choices", "output", "candidates") if key in doc]
    if len(tops) > 1:
        raise _fail((), f"ambiguous proposal: it has both {tops[0]!r} and {tops[1]!r}")
    reading = _Reading()
    fmt: ProposalFormat
    if "choices" in doc:
        fmt = "openai_completion"
        choices = _list(doc["choices"], ("choices",), "'choices'")
        if not choices:
            raise _fail(("choices",), "'choices' must not be empty")
        choice = _object(choices[0], ("choices", 0), "a choice")
        message_path: _Path = ("choices", 0, "message")
        if "message" not in choice:
            raise _fail(message_path[:-1], "the choice has no 'message'")
        _chat(_object(choice["message"], message_path, "'message'"), message_path, reading)
    elif "output" in doc:
        fmt = "openai_responses"
        _responses(doc["output"], reading)
    elif "candidates" in doc:
        fmt = "gemini"
        _gemini(doc["candidates"], reading)
    elif _is_chat(doc):
        fmt = "openai_chat"
        _chat(doc, (), reading)
    elif "content" in doc:
        fmt = "anthropic"
        _anthropic(doc, reading)
    else:
        raise _fail(
            (),
            "not a recognised proposal: expected an OpenAI chat message ('tool_calls' or "
            "'content'), an OpenAI completion ('choices'), OpenAI Responses output "
            "('output'), an Anthropic message ('content' list) or a Gemini response "
            f"('candidates') (got {describe(doc)})",
        )
    return Plan(
        calls=_with_ids(reading.calls),
        format=fmt,
        text="".join(reading.texts) if reading.texts else None,
    )


def _is_chat(doc: dict[str, Any]) -> bool:
    """A chat message has tool calls, or content that is text, null or has a refusal part
    (a content list is otherwise an Anthropic message)."""
    if "tool_calls" in doc or "function_call" in doc:
        return True
    if "content" not in doc:
        return False
    content = doc["content"]
    if not isinstance(content, list):
        return True
    return any(isinstance(part, dict) and part.get("type") == "refusal" for part in content)


def _with_ids(found: list[Call | Found]) -> tuple[Call, ...]:
    """Calls with ids: the vendor's, else ``call_<position>`` (never reusing a vendor id).
    A call read with its vendor id is a ``Call`` already."""
    calls = []
    for index, f in enumerate(found):
        if isinstance(f, Call):
            calls.append(f)
            continue
        if f.id is None:  # an id to invent, not clashing with the vendor's
            return tuple(_invented_ids(found))
        calls.append(
            Call(
                id=f.id,
                name=f.name,
                index=index,
                raw_arguments=f.raw_arguments,
                arguments=f.arguments,
                json_error=f.json_error,
                depends_on=f.depends_on,
            )
        )
    return tuple(calls)


def _invented_ids(found: list[Call | Found]) -> Iterator[Call]:
    explicit: set[str] | None = None  # the vendor's ids, gathered once one is missing
    for index, f in enumerate(found):
        if isinstance(f, Call):
            yield f
            continue
        call_id = f.id
        if call_id is None:
            if explicit is None:
                explicit = {other.id for other in found if other.id is not None}
            base = call_id = f"call_{index + 1}"
            suffix = 2
            while call_id in explicit:
                call_id = f"{base}_{suffix}"
                suffix += 1
        yield Call(
            id=call_id,
            name=f.name,
            index=index,
            raw_arguments=f.raw_arguments,
            arguments=f.arguments,
            json_error=f.json_error,
            depends_on=f.depends_on,
        )


# -- OpenAI Chat -------------------------------------------------------------------------


def _chat(message: dict[str, Any], path: _Path, reading: _Reading) -> None:
    _role(message, path)
    if "function_call" in message and message["function_call"] is not None:
        raise _fail(
            (*path, "function_call"),
            "the deprecated 'function_call' field is not supported: use 'tool_calls'",
        )
    content = message.get("content")
    content_path = (*path, "content")
    if isinstance(content, str):
        reading.texts.append(content)
    elif isinstance(content, list):
        for i, part in enumerate(content):
            part_path = (*content_path, i)
            kind = _kind(part, part_path, "a content part")
            if kind not in ("text", "refusal"):
                raise _fail(
                    (*part_path, "type"),
                    f"unsupported content part type {json.dumps(kind)} (expected "
                    "'text' or 'refusal')",
                )
            reading.texts.append(_str(part.get(kind, MISSING), (*part_path, kind), f"'{kind}'"))
    elif content is not None:
        raise _fail(
            content_path, f"'content' must be a string, a list or null (got {describe(content)})"
        )
    calls = message.get("tool_calls")
    if calls is None:
        return
    for i, item in enumerate(_list(calls, (*path, "tool_calls"), "'tool_calls'")):
        found = chat_call(item, len(reading.calls))
        if found is not None:
            reading.calls.append(found)
            continue
        call_path = (*path, "tool_calls", i)
        call = _object(item, call_path, "a tool call")
        kind = call.get("type", "function")
        if kind != "function":
            raise _fail(
                (*call_path, "type"),
                f"only 'function' tool calls are supported (got {describe(kind)})",
            )
        function_path = (*call_path, "function")
        if "function" not in call:
            raise _fail(call_path, "the tool call has no 'function'")
        function = _object(call["function"], function_path, "'function'")
        name = _str(function.get("name", MISSING), (*function_path, "name"), "'name'")
        raw = function.get("arguments", MISSING)
        reading.calls.append(
            _found(call, "id", call_path, name=name, raw=raw, parsed=arguments_string(raw))
        )


# -- OpenAI Responses --------------------------------------------------------------------


def _responses(output: Any, reading: _Reading) -> None:
    for i, item in enumerate(_list(output, ("output",), "'output'")):
        found = responses_call(item, len(reading.calls))
        if found is not None:
            reading.calls.append(found)
            continue
        path: _Path = ("output", i)
        kind = _kind(item, path, "an output item")
        if kind == "function_call":
            name = _str(item.get("name", MISSING), (*path, "name"), "'name'")
            raw = item.get("arguments", MISSING)
            reading.calls.append(
                _found(item, "call_id", path, name=name, raw=raw, parsed=arguments_string(raw))
            )
        elif kind == "message":
            content = _list(item.get("content", MISSING), (*path, "content"), "'content'")
            for j, part in enumerate(content):
                part_path = (*path, "content", j)
                part_kind = _kind(part, part_path, "a content part")
                key = {"output_text": "text", "refusal": "refusal"}.get(part_kind)
                if key is None:
                    raise _fail(
                        (*part_path, "type"),
                        f"unsupported content part type {json.dumps(part_kind)} (expected "
                        "'output_text' or 'refusal')",
                    )
                reading.texts.append(_str(part.get(key, MISSING), (*part_path, key), f"'{key}'"))
        elif kind != "reasoning":
            raise _fail(
                (*path, "type"),
                f"unsupported output item type {json.dumps(kind)} (txcheck reads "
                "'function_call', 'message' and 'reasoning' items)",
            )


# -- Anthropic ---------------------------------------------------------------------------


def _anthropic(message: dict[str, Any], reading: _Reading) -> None:
    _role(message, ())
    for i, block in enumerate(message["content"]):
        found = anthropic_call(block, len(reading.calls))
        if found is not None:
            reading.calls.append(found)
            continue
        path: _Path = ("content", i)
        kind = _kind(block, path, "a content block")
        if kind == "tool_use":
            name = _str(block.get("name", MISSING), (*path, "name"), "'name'")
            raw = block.get("input", MISSING)
            parsed = arguments_object(raw, "'input'")
            reading.calls.append(_found(block, "id", path, name=name, raw=raw, parsed=parsed))
        elif kind == "text":
            reading.texts.append(_str(block.get("text", MISSING), (*path, "text"), "'text'"))
        elif kind not in ("thinking", "redacted_thinking"):
            raise _fail(
                (*path, "type"),
                f"unsupported content block type {json.dumps(kind)} (txcheck reads "
                "'tool_use', 'text', 'thinking' and 'redacted_thinking' blocks)",
            )


# -- Gemini ------------------------------------------------------------------------------


def _gemini(candidates_value: Any, reading: _Reading) -> None:
    candidates = _list(candidates_value, ("candidates",), "'candidates'")
    if not candidates:
        raise _fail(("candidates",), "'candidates' must not be empty")
    candidate = _object(candidates[0], ("candidates", 0), "a candidate")
    content_path: _Path = ("candidates", 0, "content")
    if "content" not in candidate:
        if "finishReason" in candidate or "finish_reason" in candidate:
            return  # e.g. a blocked answer: no content, no calls
        raise _fail(content_path[:-1], "the candidate has neither 'content' nor 'finishReason'")
    content = _object(candidate["content"], content_path, "'content'")
    parts = _list(content.get("parts", []), (*content_path, "parts"), "'parts'")
    for i, part_value in enumerate(parts):
        found = gemini_call(part_value, len(reading.calls))
        if found is not None:
            reading.calls.append(found)
            continue
        path = (*content_path, "parts", i)
        part = _object(part_value, path, "a part")
        keys = [k for k in ("functionCall", "function_call") if k in part]
        if len(keys) > 1:
            raise _fail(path, "the part has both 'functionCall' and 'function_call'")
        if keys:
            _gemini_call(part, keys[0], path, reading)
        elif "text" in part:
            text = _str(part["text"], (*path, "text"), "'text'")
            if part.get("thought") is not True:
                reading.texts.append(text)
        elif not _GEMINI_PART_KEYS.intersection(part):
            raise _fail(
                path,
                f"unrecognised part: expected 'functionCall' or 'text' (got {describe(part)})",
            )


def _gemini_call(part: dict[str, Any], key: str, part_path: _Path, reading: _Reading) -> None:
    path = (*part_path, key)
    call = _object(part[key], path, f"'{key}'")
    name = _str(call.get("name", MISSING), (*path, "name"), "'name'")
    raw = call.get("args", MISSING)
    # Gemini leaves out 'args' when a call has none
    parsed = ({}, None) if raw is MISSING else arguments_object(raw, "'args'")
    if "depends_on" in call and "depends_on" in part:
        raise _fail(part_path, "'depends_on' is given on both the part and its call")
    depends_on = _depends_on(call, path) if "depends_on" in call else _depends_on(part, part_path)
    reading.calls.append(
        _found(call, "id", path, name=name, raw=raw, parsed=parsed, depends_on=depends_on)
    )


# -- shared pieces -----------------------------------------------------------------------


def _found(
    holder: dict[str, Any],
    id_key: str,
    path: _Path,
    *,
    name: str,
    raw: Any,
    parsed: tuple[dict[str, Any] | None, str | None],
    depends_on: tuple[str, ...] | None = None,
) -> Found:
    """A call read the long way (after its name and arguments): its id from
    ``holder[id_key]``, then its ``depends_on`` from ``holder`` unless given (the order
    the errors of a call with two mistakes are found in)."""
    call_id = _optional_str(holder, id_key, path)
    if depends_on is None:
        depends_on = _depends_on(holder, path)
    return Found.of(call_id, name, raw, parsed, depends_on)


def _depends_on(call: dict[str, Any], path: _Path) -> tuple[str, ...]:
    if "depends_on" not in call:
        return ()
    value = call["depends_on"]
    items = _list(value, (*path, "depends_on"), "'depends_on'")
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise _fail(
                (*path, "depends_on", i),
                f"'depends_on' must list call ids as strings (got {describe(item)})",
            )
    return tuple(items)


def _role(message: dict[str, Any], path: _Path) -> None:
    if "role" in message and message["role"] != "assistant":
        raise _fail(
            (*path, "role"), f"'role' must be 'assistant' (got {describe(message['role'])})"
        )


def _kind(value: Any, path: _Path, what: str) -> str:
    item = _object(value, path, what)
    return _str(item.get("type", MISSING), (*path, "type"), "'type'")


def _object(value: Any, path: _Path, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"{what} must be a JSON object (got {describe(value)})")
    return value


def _list(value: Any, path: _Path, what: str) -> list[Any]:
    if value is MISSING:
        raise _fail(path, f"{what} is missing")
    if not isinstance(value, list):
        raise _fail(path, f"{what} must be a list (got {describe(value)})")
    return value


def _str(value: Any, path: _Path, what: str) -> str:
    if value is MISSING:
        raise _fail(path, f"{what} is missing")
    if not isinstance(value, str):
        raise _fail(path, f"{what} must be a string (got {describe(value)})")
    return value


def _optional_str(obj: dict[str, Any], key: str, path: _Path) -> str | None:
    """A call id: absent or null means none was given."""
    value = obj.get(key)
    return None if value is None else _str(value, (*path, key), f"'{key}'")
