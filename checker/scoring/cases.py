"""Reading a scorer cases file: one JSON case per line, bad lines reported by line number.

A case is ``{"id", "proposal", "expect": {"calls", "ordered"?, "forbidden"?, "normalize"?,
"any_call"?},
"world"?, "tools"?, "meta"?}`` (docs/scoring.md). Expected arguments may hold ``$any`` and
``$optional`` markers (``txcheck.scoring.patterns``). ``tools`` is the case's own contract
(any contract form); ``meta`` is free-form data about the case, carried along and never
interpreted. Cases are read one line at a time (``iter_cases``), so a file of any length
is scored in bounded memory. A line that is not a valid case becomes a ``LineError`` and
the other lines are still read. JSON that strict parsing rejects (NaN, Infinity, numbers that
overflow, duplicate keys) is a bad line when it sits in the case's own fields; inside the
``proposal`` it is the model's output, so the case is kept and scored as ``invalid_json``:
unparseable output stays in the denominator.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import attrs

from txcheck.models.errors import InputError
from txcheck.models.input_files import open_regular
from txcheck.models.json_path import PathPart, format_path
from txcheck.models.strict_json import StrictJsonError, loads_strict
from txcheck.scoring.patterns import (
    NORMALIZATIONS,
    has_markers,
    is_plain,
    parse_expected,
    representative,
)
from txcheck.scoring.reading import LineError, iter_lines

__all__ = [
    "Case",
    "CaseFile",
    "Expectation",
    "ExpectedCall",
    "LineError",
    "iter_cases",
    "parse_cases",
    "read_cases",
]

_CASE_KEYS = ("id", "proposal", "expect", "world", "tools", "meta")
_EXPECT_KEYS = ("calls", "ordered", "forbidden", "normalize", "any_call")
_CALL_KEYS = ("name", "arguments")
_KEY_SETS: dict[tuple[str, ...], frozenset[str]] = {
    keys: frozenset(keys) for keys in (_CASE_KEYS, _EXPECT_KEYS, _CALL_KEYS)
}
_EXPECT_KEY_SET = _KEY_SETS[_EXPECT_KEYS]
_CASE_KEY_SET = _KEY_SETS[_CASE_KEYS]


@attrs.frozen(kw_only=True)
class ExpectedCall:
    """One call the case expects: a tool name and its arguments, which may hold ``$any``
    and ``$optional`` markers (``txcheck.scoring.patterns``)."""

    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    example: Mapping[str, Any] = attrs.field(eq=False, repr=False)
    """One concrete set of arguments the expectation accepts (first ``$any`` option,
    optional arguments left out), computed once."""

    @example.default
    def _example(self) -> Mapping[str, Any]:
        value: Mapping[str, Any] = (
            representative(self.arguments) if has_markers(self.arguments) else self.arguments
        )
        return value

    @property
    def exact(self) -> bool:
        """True when the arguments hold no marker: one value is right."""
        return self.example is self.arguments


@attrs.frozen(kw_only=True)
class Expectation:
    """What the right answer is. ``calls == ()`` means making no call is right, unless
    ``any_call``: then at least one call, to any tool with any arguments, is right (a
    relevance question, where the benchmark asks only that the model call something).
    ``normalize`` lists the string normalisations the case declares (sorted; none by
    default: strings compare exactly)."""

    calls: tuple[ExpectedCall, ...]
    ordered: bool = False
    forbidden: tuple[str, ...] = ()
    normalize: tuple[str, ...] = ()
    any_call: bool = False
    writes_only: bool = False
    """With ``ordered``: only the calls of tools with a side effect must keep the expected
    order (``"ordered": "writes"``); reads may come anywhere."""


@attrs.frozen(kw_only=True)
class Case:
    """One scorer case. ``json_problems`` lists strict-JSON problems found inside the
    proposal (``path: problem``); ``world`` is the fixture document, when given; ``tools``
    the case's own contract document (a contract object or a bare list of tools), when
    given; ``meta`` free-form data about the case."""

    id: str
    line: int
    proposal: Any
    expect: Expectation
    world: Mapping[str, Any] | None = None
    tools: Any = attrs.field(default=None, eq=False, repr=False)
    meta: Any = attrs.field(default=None, eq=False, repr=False)
    json_problems: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class CaseFile:
    """The valid cases of a file, in file order, and the bad lines."""

    source: str
    cases: tuple[Case, ...]
    errors: tuple[LineError, ...]


class _Flagged(dict[str, Any]):
    """An object parsed with duplicate keys (the last value kept, as Python does)."""

    problem = ""


class _BadNumber(float):
    """NaN, an infinity, or a number that overflowed to one."""

    problem = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    counts = Counter(k for k, _ in pairs)
    dups = sorted(k for k, n in counts.items() if n > 1)
    flagged = _Flagged(pairs)
    flagged.problem = "duplicate key " + ", ".join(json.dumps(k) for k in dups) + " in an object"
    return flagged


def _bad_number(text: str) -> float:
    value = _BadNumber(float(text))
    if math.isfinite(value):
        return float(value)
    value.problem = (
        f"{text} is not JSON (RFC 8259 has no NaN or Infinity)"
        if text[-1].isalpha()
        else f"the number {text} overflows to infinity"
    )
    return value


Problems = list[tuple[tuple[PathPart, ...], str]]


def _plain(value: Any, parts: tuple[PathPart, ...], problems: Problems) -> Any:
    """A copy of ``value`` with plain types, collecting the flagged spots with their paths."""
    if isinstance(value, (_Flagged, _BadNumber)):
        problems.append((parts, value.problem))
    if isinstance(value, dict):
        return {k: _plain(v, (*parts, k), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, (*parts, i), problems) for i, v in enumerate(value)]
    return float(value) if isinstance(value, float) else value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_keys(obj: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    if obj.keys() <= _KEY_SETS[allowed]:
        return
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise ValueError(
            f"{where} has unknown key {unknown[0]!r} (expected only {', '.join(allowed)})"
        )


def _expected_call(value: Any, index: int, markerless: bool) -> ExpectedCall:
    """The ``index``-th expected call; ``markerless`` says the case holds no ``$any`` or
    ``$optional`` key anywhere (and nests within the limit), so arguments need no look."""
    if type(value) is dict:
        name = value.get("name")
        arguments = value.get("arguments", {})
        if (
            type(name) is str
            and name
            and type(arguments) is dict
            and len(value) == ("name" in value) + ("arguments" in value)  # no other key
            and (markerless or is_plain(arguments, -1))  # no marker (values at depth 0)
        ):
            return ExpectedCall(name=name, arguments=arguments, example=arguments)
    return _checked_call(value, f"expect.calls[{index}]")


def _checked_call(value: Any, where: str) -> ExpectedCall:
    if not isinstance(value, dict):
        raise ValueError(f"'{where}' must be an object {{name, arguments}} (got {_short(value)})")
    _check_keys(value, _CALL_KEYS, f"'{where}'")
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"'{where}.name' must be a non-empty string (got {_short(name)})")
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ValueError(f"'{where}.arguments' must be an object (got {_short(arguments)})")
    parsed = {
        k: parse_expected(v, f"{where}.arguments.{k}", member=True) for k, v in arguments.items()
    }
    return ExpectedCall(name=name, arguments=parsed)


def _normalize(value: Any) -> tuple[str, ...]:
    if value == []:
        return ()
    if not isinstance(value, list) or not all(v in NORMALIZATIONS for v in value):
        raise ValueError(
            f"'expect.normalize' must be a list of {', '.join(map(repr, NORMALIZATIONS))} "
            f"(got {_short(value)})"
        )
    return tuple(sorted(set(value), key=NORMALIZATIONS.index))


def _expectation(value: Any, markerless: bool = False) -> Expectation:
    if not isinstance(value, dict):
        raise ValueError(f"'expect' must be an object (got {_short(value)})")
    if not value.keys() <= _EXPECT_KEY_SET:
        _check_keys(value, _EXPECT_KEYS, "'expect'")
    if "calls" not in value:
        raise ValueError("'expect' must have 'calls' (a list; [] when no call is right)")
    calls = value["calls"]
    if not isinstance(calls, list):
        raise ValueError(f"'expect.calls' must be a list (got {_short(calls)})")
    ordered = value.get("ordered", False)
    writes_only = ordered == "writes"
    if not isinstance(ordered, bool) and not writes_only:
        raise ValueError(
            f"'expect.ordered' must be true, false or \"writes\" (got {_short(ordered)})"
        )
    forbidden = value.get("forbidden", [])
    if not isinstance(forbidden, list) or (
        forbidden and not all(isinstance(t, str) and t for t in forbidden)
    ):
        raise ValueError(
            f"'expect.forbidden' must be a list of tool names (got {_short(forbidden)})"
        )
    any_call = value.get("any_call", False)
    if not isinstance(any_call, bool):
        raise ValueError(f"'expect.any_call' must be true or false (got {_short(any_call)})")
    if any_call and calls:
        raise ValueError("'expect.any_call' needs 'calls': [] (it means any call is right)")
    expected = tuple([_expected_call(c, i, markerless) for i, c in enumerate(calls)])
    if forbidden:
        both = sorted({c.name for c in expected} & set(forbidden))
        if both:
            raise ValueError(f"'{both[0]}' is both expected and forbidden")
    return Expectation(
        calls=expected,
        ordered=bool(ordered),
        writes_only=writes_only,
        forbidden=tuple(forbidden),
        normalize=_normalize(value["normalize"]) if "normalize" in value else (),
        any_call=any_call,
    )


def _parse_line(text: str) -> tuple[Any, list[str]]:
    """The line's value and the strict-JSON problems inside its ``proposal``.

    Strict parsing (``txcheck.models.strict_json``) decides; only when it fails is the line re-read
    leniently to see whether every problem sits inside the proposal.
    """
    try:
        return loads_strict(text), []
    except StrictJsonError as strict:
        column = f"column {strict.column}: " if strict.column is not None else ""
        bad_line = ValueError(f"not valid JSON: {column}{strict.problem}")
    try:
        raw = json.loads(
            text, object_pairs_hook=_pairs, parse_float=_bad_number, parse_constant=_bad_number
        )
    except (ValueError, RecursionError):
        raise bad_line from None
    problems: Problems = []
    value = _plain(raw, (), problems)
    if not problems or any(parts[:1] != ("proposal",) for parts, _ in problems):
        raise bad_line
    return value, [f"{format_path(parts)}: {why}" for parts, why in problems]


def _markerless(text: str) -> bool:
    """Whether no JSON string in ``text`` can read ``$any`` or ``$optional``: no ``$``, and
    no ``\\u`` escape (a regular expression finds one faster than ``in`` when the text
    holds many other escapes, as OpenAI argument strings do)."""
    return "$" not in text and ("\\" not in text or _UNICODE_ESCAPE.search(text) is None)


_UNICODE_ESCAPE = re.compile(r"\\u")


def _case(text: str, line: int) -> Case:
    value, problems = _parse_line(text)
    if not isinstance(value, dict):
        raise ValueError(f"a case must be a JSON object (got {_short(value)})")
    if not value.keys() <= _CASE_KEY_SET:
        _check_keys(value, _CASE_KEYS, "the case")
    case_id = value.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise ValueError(f"'id' must be a non-empty string (got {_short(case_id)})")
    if "proposal" not in value:
        raise ValueError("the case has no 'proposal'")
    if "expect" not in value:
        raise ValueError("the case has no 'expect'")
    world = value.get("world")
    if "world" in value and not isinstance(world, dict):
        raise ValueError(f"'world' must be a world fixture object (got {_short(world)})")
    tools = value.get("tools")
    if "tools" in value and not isinstance(tools, (dict, list)):
        raise ValueError(
            f"'tools' must be a contract object or a list of tools (got {_short(tools)})"
        )
    meta = value.get("meta")
    if "meta" in value and not isinstance(meta, dict):
        raise ValueError(f"'meta' must be an object (got {_short(meta)})")
    return Case(
        id=case_id,
        line=line,
        proposal=value["proposal"],
        # Strictly parsed text nests within the limit; without a "$" or a \u escape in it,
        # no key can be a marker.
        expect=_expectation(value["expect"], not problems and _markerless(text)),
        world=world,
        tools=tools,
        meta=meta,
        json_problems=tuple(problems),
    )


def iter_cases(lines: Iterable[tuple[int, str | LineError]]) -> Iterator[Case | LineError]:
    """Each case, or the ``LineError`` of a bad line, in file order (ids must be unique)."""
    seen: dict[str, int] = {}
    for number, line in lines:
        if isinstance(line, LineError):
            yield line
            continue
        try:
            case = _case(line, number)
        except (ValueError, RecursionError) as error:
            yield LineError(line=number, message=" ".join(str(error).split()))
            continue
        if case.id in seen:
            yield LineError(
                line=number,
                message=f"duplicate case id {case.id!r} (first on line {seen[case.id]})",
            )
            continue
        seen[case.id] = number
        yield case


def text_lines(text: str) -> Iterator[tuple[int, str | LineError]]:
    """The non-blank lines of an in-memory text, numbered, split on ``\\n`` only."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def parse_cases(text: str, *, source: str) -> CaseFile:
    """Every case of a ``.jsonl`` text; blank lines are skipped, bad lines collected."""
    return _collect(iter_cases(text_lines(text)), source)


def _collect(items: Iterable[Case | LineError], source: str) -> CaseFile:
    cases: list[Case] = []
    errors: list[LineError] = []
    for item in items:
        (errors if isinstance(item, LineError) else cases).append(item)  # type: ignore[arg-type]
    return CaseFile(source=source, cases=tuple(cases), errors=tuple(errors))


def open_cases(path: str | Path) -> IO[bytes]:
    """Open a cases file for ``iter_lines``; an unreadable file is an ``InputError``, and so
    is a pipe or a device (``txcheck.models.input_files``)."""
    try:
        return open_regular(path)
    except OSError as error:
        raise InputError(
            f"cannot read the cases file: {error.strerror or error}", source=str(path)
        ) from None


def read_cases(path: str | Path) -> CaseFile:
    """Read a whole cases file (each line decoded on its own: a line that is not UTF-8 is
    a bad line); an unreadable file is an ``InputError`` (exit 2)."""
    with open_cases(path) as stream:
        try:
            return _collect(iter_cases(iter_lines(stream)), str(path))
        except OSError as error:
            raise InputError(
                f"cannot read the cases file: {error.strerror or error}", source=str(path)
            ) from None
