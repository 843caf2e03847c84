"""Strict RFC 8259 JSON: what Python's ``json`` accepts but an interchange format must not.

Python's ``json`` reads ``NaN`` and ``Infinity``, turns ``1e400`` into ``inf``, keeps the last
of two duplicate keys, and overflows the stack on deep nesting. Each of those makes the
verdict depend on one parser's quirks, so ``loads_strict`` rejects them all, using the stdlib
parser with hooks rather than a hand-written one. It also rejects escaped lone UTF-16
surrogates (``"\\ud800"``): RFC 8259 allows them in the grammar but leaves their meaning
undefined, I-JSON (RFC 7493) forbids them, and they cannot be printed as UTF-8.

The hooks get no positions, so once a document is known to be bad the error path finds the
offending token in the text (see ``_locate``) to give a line and column.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from itertools import accumulate
from typing import Any, cast

import attrs

from txcheck.models.errors import InputError, TxcheckError
from txcheck.models.input_files import read_regular
from txcheck.models.json_path import STRING_PATTERN, line_column, locate, parse_path

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "MAX_INT_DIGITS",
    "JsonDocument",
    "StrictJsonError",
    "decode_utf8",
    "load_json_document",
    "load_json_file",
    "loads_strict",
    "parse_json_document",
]

DEFAULT_MAX_DEPTH = 256
# Python's default int/str conversion limit (sys.get_int_max_str_digits); fixed here so the
# verdict does not depend on how the interpreter was configured.
MAX_INT_DIGITS = 4300


class StrictJsonError(TxcheckError, ValueError):
    """Text that is not strict JSON. ``line`` and ``column`` are 1-based, when known."""

    def __init__(
        self,
        problem: str,
        *,
        line: int | None = None,
        column: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.problem = problem
        self.line = line
        self.column = column
        self.offset = offset
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"{where}{problem}")


class _Rejected(Exception):
    """Raised by a decoder hook; ``token`` is what to look for in the text."""

    def __init__(self, problem: str, kind: str, token: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.kind = kind
        self.token = token


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Rejected(f"duplicate key {json.dumps(key)} in an object", "key", key)
            seen.add(key)
    return obj


def _constant(name: str) -> Any:
    raise _Rejected(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)", "constant", name)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Rejected(f"the number {_short(text)} overflows to infinity", "number", text)
    return value


def _int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    problem = f"an integer with {digits} digits is too long (at most {MAX_INT_DIGITS})"
    if digits > MAX_INT_DIGITS:
        raise _Rejected(problem, "number", text)
    try:
        return int(text)
    except ValueError:  # the interpreter's own limit was set lower than ours
        raise _Rejected(problem, "number", text) from None


def _decoder(object_pairs_hook: Any = _pairs) -> json.JSONDecoder:
    return json.JSONDecoder(
        object_pairs_hook=object_pairs_hook,
        parse_float=_float,
        parse_int=_int,
        parse_constant=_constant,
    )


_DECODER = _decoder()
_SCAN: Any = cast(Any, _DECODER).scan_once  # the C scanner, where available
# A text no longer than MAX_INT_DIGITS (and than the interpreter's own limit) cannot hold an
# integer too long for ``_int``, so the scanner may read its integers itself.
_SCAN_INTS: Any = cast(
    Any,
    json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_float, parse_constant=_constant),
).scan_once
_WHITESPACE = " \t\n\r"  # JSON's whitespace, as the decoder skips it
_BRACKETS_ONLY = re.compile(STRING_PATTERN + r'|[^\[\]{}"]+', re.S)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1, '"': 0}
_NESTING = re.compile(STRING_PATTERN + r"|([\[\]{}])", re.S)
_CONSTANT = re.compile(STRING_PATTERN + r"|(NaN|-?Infinity)", re.S)
_NUMBER = re.compile(STRING_PATTERN + r"|(-?\d[\d.eE+-]*)", re.S)
_KEY_OR_BRACKET = re.compile(STRING_PATTERN + r"(\s*:)?|[{}\[\]]", re.S)
_SURROGATE_HINT = re.compile(r"\\u[dD][89abcdefABCDEF]")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)
_FRIENDLY = {
    "Extra data": "unexpected data after the JSON value",
    "Expecting value": "expected a JSON value",
}


def decode_utf8(data: bytes | bytearray | memoryview) -> str:
    """``data`` as text: UTF-8, with a leading byte-order mark dropped."""
    raw = bytes(data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        start = error.start
        line_start = raw.rfind(b"\n", 0, start) + 1
        column = len(raw[line_start:start].decode("utf-8", "replace")) + 1
        raise StrictJsonError(
            f"invalid UTF-8: byte 0x{raw[start]:02x} at byte offset {start} ({error.reason})",
            line=raw.count(b"\n", 0, start) + 1,
            column=column,
            offset=start,
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def loads_strict(data: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse one strict JSON document, or raise ``StrictJsonError`` saying where and why."""
    if isinstance(data, str):
        text = data[1:] if data.startswith("\ufeff") else data
    else:
        text = decode_utf8(data)
    if len(text) > max_depth:  # a shorter text cannot nest deeper
        _check_depth(text, max_depth)
    try:
        value = _decode(text)
    except json.JSONDecodeError as error:
        problem = _FRIENDLY.get(error.msg, error.msg)
        if not text.strip():
            problem = "the document is empty"
        raise StrictJsonError(
            problem, line=error.lineno, column=error.colno, offset=error.pos
        ) from None
    except _Rejected as rejected:
        raise _locate(text, rejected) from None
    except RecursionError:
        raise StrictJsonError(f"nesting too deep (more than {max_depth} levels)") from None
    if "\\" in text and _SURROGATE_HINT.search(text):  # no backslash: no escape at all
        _check_surrogates(text)
    return value


_INTERPRETER_LIMIT = getattr(sys, "get_int_max_str_digits", None)  # Python 3.10.7+


def _decode(text: str) -> Any:
    """``_DECODER.decode(text)``, with the value scanned directly and the surrounding
    whitespace skipped by ``str`` methods instead of ``decode``'s regular expressions; any
    failure goes through ``decode`` itself, which gives the error to report."""
    start = 0
    if text[:1] in _WHITESPACE:
        start = len(text) - len(text.lstrip(_WHITESPACE))
    scan = _SCAN
    if len(text) <= MAX_INT_DIGITS:  # and within the interpreter's own limit (0: none)
        limit = _INTERPRETER_LIMIT() if _INTERPRETER_LIMIT is not None else 0
        if not limit or len(text) <= limit:
            scan = _SCAN_INTS
    try:
        value, end = scan(text, start)
    except Exception:  # decode, below, raises the error to report
        return _DECODER.decode(text)
    if end == len(text) or not text[end:].strip(_WHITESPACE):
        return value
    return _DECODER.decode(text)


def _error_at(text: str, offset: int | None, problem: str) -> StrictJsonError:
    if offset is None:
        return StrictJsonError(problem)
    line, column = line_column(text, offset)
    return StrictJsonError(problem, line=line, column=column, offset=offset)


def _check_depth(text: str, max_depth: int) -> None:
    """Reject nesting deeper than ``max_depth`` before the recursive parser sees it.

    Counting brackets is C-speed (``str.count``, one regex pass, ``accumulate``); the slower
    walk that finds the offending bracket runs only when the limit is exceeded.
    """
    if len(text) <= max_depth or text.count("[") + text.count("{") <= max_depth:
        return
    skeleton = _BRACKETS_ONLY.sub("", text)
    if max(accumulate(map(_STEP.__getitem__, skeleton)), default=0) <= max_depth:
        return
    depth = 0
    for match in _NESTING.finditer(text):
        bracket = match.group(1)
        if bracket is None:
            continue
        depth += 1 if bracket in "[{" else -1
        if depth > max_depth:
            problem = f"nesting deeper than {max_depth} levels"
            raise _error_at(text, match.start(), problem)
    raise StrictJsonError(f"nesting deeper than {max_depth} levels")  # pragma: no cover


def _locate(text: str, rejected: _Rejected) -> StrictJsonError:
    """The error for a hook's rejection, at the token in ``text`` that caused it."""
    if rejected.kind == "key":
        offset = _duplicate_key_offset(text, rejected.token)
    else:
        pattern = _CONSTANT if rejected.kind == "constant" else _NUMBER
        offset = next(
            (m.start(1) for m in pattern.finditer(text) if m.group(1) == rejected.token), None
        )
    return _error_at(text, offset, rejected.problem)


def _duplicate_key_offset(text: str, key: str) -> int | None:
    """Offset of the second ``key`` in the object whose pairs hook failed.

    Hooks run as objects close, in the order of their ``}``; re-parsing with a counting hook
    tells which ``}`` that is, and the walk finds the key at that object's top level.
    """
    closed = 0

    def counting(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal closed
        closed += 1
        return _pairs(pairs)

    with contextlib.suppress(_Rejected):
        _decoder(counting).decode(text)
    opens: list[int] = []
    start = end = None
    for match in _NESTING.finditer(text):
        if match.group(1) == "{":
            opens.append(match.start())
        elif match.group(1) == "}":
            closed -= 1
            start = opens.pop()
            if closed == 0:
                end = match.start()
                break
    if start is None or end is None:
        return None
    depth = 0
    seen = 0
    for match in _KEY_OR_BRACKET.finditer(text, start + 1, end):
        char = match.group()[0]
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif (
            depth == 0
            and match.group(1) is not None
            and json.loads(text[match.start() : match.start(1)]) == key
        ):
            seen += 1
            if seen == 2:
                return match.start()
    return start


def _check_surrogates(text: str) -> None:
    pending: int | None = None  # offset of a high surrogate awaiting its low half
    pending_end = -1
    for match in _ESCAPE.finditer(text):
        code = int(match.group(1), 16) if match.group(1) else -1
        if pending is not None:
            if 0xDC00 <= code <= 0xDFFF and match.start() == pending_end:
                pending = None
                continue
            break
        if 0xD800 <= code <= 0xDBFF:
            pending, pending_end = match.start(), match.end()
        elif 0xDC00 <= code <= 0xDFFF:
            pending = match.start()
            break
    if pending is not None:
        escape = text[pending : pending + 6]
        raise _error_at(text, pending, f"unpaired UTF-16 surrogate escape {escape} in a string")


def _short(text: str) -> str:
    return text if len(text) <= 30 else f"{text[:20]}...({len(text)} characters)"


@attrs.frozen(kw_only=True)
class JsonDocument:
    """A parsed document with its text, so an error at a JSON path can name its line."""

    value: Any = attrs.field(eq=False)
    text: str = attrs.field(repr=False)
    source: str

    def line_of(self, path: str | None) -> int | None:
        """The line of the value at ``path`` (or of its deepest existing ancestor)."""
        parts = parse_path(path) if path else None
        if parts is None:
            return None
        offset = locate(self.text, parts)
        return None if offset is None else line_column(self.text, offset)[0]


def parse_json_document(
    data: str | bytes,
    *,
    source: str,
    error: type[InputError] = InputError,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> JsonDocument:
    """Strictly parse ``data``; bad JSON raises ``error`` naming ``source`` and the line."""
    try:
        text = data if isinstance(data, str) else decode_utf8(data)
        value = loads_strict(text, max_depth=max_depth)
    except StrictJsonError as bad:
        column = f" (column {bad.column})" if bad.column is not None else ""
        raise error(f"invalid JSON: {bad.problem}{column}", source=source, line=bad.line) from None
    return JsonDocument(value=value, text=text, source=source)


def load_json_document(
    path: str | os.PathLike[str],
    *,
    error: type[InputError] = InputError,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> JsonDocument:
    """Read and strictly parse a JSON file. Every failure is ``error`` (an ``InputError``);
    a pipe, a device or a file over ``MAX_DOCUMENT_BYTES`` is refused unread
    (``txcheck.models.input_files``)."""
    source = os.fspath(path)
    try:
        data = read_regular(path, error=error)
    except FileNotFoundError:
        raise error("file not found", source=source) from None
    except IsADirectoryError:
        raise error("is a directory, not a JSON file", source=source) from None
    except PermissionError:
        raise error("permission denied: the file cannot be read", source=source) from None
    except OSError as failure:
        reason = failure.strerror or type(failure).__name__
        raise error(f"cannot read the file: {reason}", source=source) from None
    return parse_json_document(data, source=source, error=error, max_depth=max_depth)


def load_json_file(
    path: str | os.PathLike[str],
    *,
    error: type[InputError] = InputError,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """The value of a strict JSON file; every failure is ``error`` with file and line."""
    return load_json_document(path, error=error, max_depth=max_depth).value
