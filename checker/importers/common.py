"""Pieces both importers share: reading JSON and JSON Lines files as data, valid tool
names, OpenAI-format tools and proposals, and writing cases deterministically."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from txcheck.models.canonical import printable_json
from txcheck.models.errors import InputError
from txcheck.models.input_files import open_regular, read_regular
from txcheck.models.strict_json import StrictJsonError, loads_strict
from txcheck.scoring.reading import LineError, iter_lines

__all__ = [
    "IMPORT_SOURCES",
    "ImportStats",
    "chat_proposal",
    "is_imported_cases",
    "read_json",
    "read_jsonl",
    "tool_names",
    "write_case",
]

_INVALID = re.compile(r"[^A-Za-z0-9_-]")
NAME_LIMIT = 64
"""The longest tool name OpenAI accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""

IMPORT_SOURCES = frozenset({"bfcl", "tau2"})
"""The ``meta.source`` of every case an importer writes."""


def read_json(path: Path) -> Any:
    """A whole JSON file; unreadable or invalid JSON is an ``InputError`` with its place, and
    so is a pipe, a device or a file over ``MAX_DOCUMENT_BYTES``
    (``txcheck.models.input_files``)."""
    try:
        text = read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the file: {error}", source=str(path)) from None
    try:
        return loads_strict(text)
    except StrictJsonError as error:
        raise InputError(
            f"not valid JSON: {error.problem}", source=str(path), line=error.line
        ) from None


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line; a bad line is an ``InputError``.
    Lines are read as cases files are (``txcheck.scoring.reading``): one at a time, each
    at most ``MAX_LINE_BYTES``; a pipe or a device is refused."""
    try:
        handle = open_regular(path)
    except OSError as error:
        raise InputError(
            f"cannot read the file: {error.strerror or error}", source=str(path)
        ) from None
    with handle:
        for number, text in iter_lines(handle):
            if isinstance(text, LineError):
                raise InputError(text.message, source=str(path), line=number)
            try:
                yield number, loads_strict(text)
            except StrictJsonError as error:
                raise InputError(
                    f"not valid JSON: {error.problem}", source=str(path), line=number
                ) from None


def is_imported_cases(path: str | Path) -> bool:
    """Whether ``path`` is a cases file ``txcheck import`` wrote (its first line is a case
    whose ``meta.source`` is an importer's), or empty: the one kind of file ``import
    --out`` replaces without ``--force`` (a file of blank lines holds nothing to lose).
    Reads the first line only (at most 16 MiB)."""
    try:
        with open_regular(path) as handle:
            first = next(iter_lines(handle), None)
    except (OSError, ValueError):  # InputError: a pipe or a device
        return False
    if first is None:
        return True
    text = first[1]
    try:
        case = loads_strict(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # StrictJsonError
        return False
    meta = case.get("meta") if isinstance(case, dict) else None
    return (
        isinstance(case, dict)
        and {"id", "proposal", "expect"} <= case.keys()
        and isinstance(meta, dict)
        and meta.get("source") in IMPORT_SOURCES
    )


def tool_names(names: Sequence[str]) -> dict[str, str]:
    """A valid, unique tool name (``[A-Za-z0-9_-]{1,64}``, what OpenAI accepts) for each
    original name: ``math.factorial`` becomes ``math_factorial`` (as BFCL itself does for
    such models); a name is kept whole up to 64 characters (as BFCL sends it), longer ones
    are cut at 64; a clash gets ``_2``, ``_3``... (the base cut to leave room for it)."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        base = _INVALID.sub("_", name) or "tool"
        candidate, n = base[:NAME_LIMIT], 2
        while candidate in taken:
            suffix = f"_{n}"
            candidate, n = base[: NAME_LIMIT - len(suffix)] + suffix, n + 1
        taken.add(candidate)
        out[name] = candidate
    return out


def chat_proposal(calls: Sequence[tuple[str, Any]], text: str | None = None) -> dict[str, Any]:
    """An OpenAI chat assistant message; ``arguments`` that is not a string is sent as
    JSON text, a string as it is (it may be broken JSON: that is the model's answer)."""
    tool_calls = [
        {
            "id": f"call_{i + 1}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args
                if isinstance(args, str)
                else json.dumps(args, ensure_ascii=False),
            },
        }
        for i, (name, args) in enumerate(calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def write_case(out: IO[str], case: Mapping[str, Any]) -> None:
    """One case line: sorted keys, UTF-8 kept, no spaces; the same input gives the same bytes."""
    text = json.dumps(case, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    out.write(printable_json(text) + "\n")


class ImportStats:
    """What an import wrote and skipped, for the one-line report on stderr."""

    def __init__(self) -> None:
        self.cases = 0
        self.skipped: dict[str, int] = {}
        self.warnings: dict[str, int] = {}

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def warn(self, what: str) -> None:
        """Something imported that the user should know about (counted, said once)."""
        self.warnings[what] = self.warnings.get(what, 0) + 1

    def warning_lines(self) -> list[str]:
        """One line per distinct warning, with how many cases it concerns, sorted."""
        return [f"{what} ({n} case(s))" for what, n in sorted(self.warnings.items())]

    def describe(self) -> str:
        text = f"{self.cases} case(s) written"
        if self.skipped:
            text += "; skipped: " + ", ".join(
                f"{n} {why}" for why, n in sorted(self.skipped.items())
            )
        return text
