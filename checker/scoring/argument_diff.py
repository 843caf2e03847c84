"""How a proposed call's arguments compare with an expected call's: typed equality, each
difference by argument path, and how similar the two are.

Values compare with types (``1 == 1.0``, ``1 != "1"``, ``True != 1``); expected values may hold
``$any`` and ``$optional`` markers (``txcheck.scoring.patterns``) and a case may declare a
string normalisation (``norm``). The idempotency-key argument matches by presence only: its
value is the model's to choose. ``txcheck.scoring.matching`` pairs calls with these.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal

import attrs

from txcheck.models.json_path import PathPart, describe, format_path
from txcheck.scoring.patterns import AnyOf, Normalizer, OptionalMember, describe_expected, matches

__all__ = [
    "ArgDiff",
    "DiffKind",
    "argument_similarity",
    "diff_arguments",
    "fully_similar",
    "identical",
    "typed_equal",
]

DiffKind = Literal["value", "missing", "extra", "unparsed", "key_reused", "key_split"]


def typed_equal(a: Any, b: Any) -> bool:
    """JSON equality with types: ``1 == 1.0``, but ``1 != "1"``, ``True != 1``, ``None`` only
    equals ``None``; objects compare key by key and arrays element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(typed_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(typed_equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    return False


@attrs.frozen(kw_only=True)
class ArgDiff:
    """One way a proposed call's arguments differ from the expected call's.

    ``path`` names the argument (``$.amount``, ``$.items[0].quantity``); ``kind`` says how it
    differs: a different value, missing, extra (not expected), the whole argument object did
    not parse, or an idempotency key shared where distinct keys were expected
    (``key_reused``) or split where one key was expected (``key_split``).
    """

    path: str
    kind: DiffKind
    expected: Any = None
    got: Any = None

    def describe(self) -> str:
        """One clause for a ``wrong_arguments`` message, types spelled out."""
        if self.kind == "value":
            return (
                f"{self.path} expected {describe_expected(self.expected)}, got {describe(self.got)}"
            )
        if self.kind == "missing":
            return f"{self.path} expected {describe_expected(self.expected)}, got nothing"
        if self.kind == "extra":
            return f"{self.path} not expected, got {describe(self.got)}"
        if self.kind == "unparsed":
            return "the arguments did not parse, so no argument can match"
        if self.kind == "key_reused":
            return (
                f"{self.path} idempotency key {describe(self.got)} is reused, but the expected "
                "calls are distinct operations that need distinct keys"
            )
        return (
            f"{self.path} idempotency key {describe(self.got)} differs from the key of a call "
            "that the expectation treats as the same operation"
        )


def _diff_values(
    expected: Any, got: Any, parts: tuple[PathPart, ...], out: list[ArgDiff], norm: Normalizer
) -> None:
    if type(expected) in _SCALARS or type(expected) is float:  # a plain value: compare it
        if not matches(expected, got, norm):
            out.append(ArgDiff(path=format_path(parts), kind="value", expected=expected, got=got))
        return
    if isinstance(expected, OptionalMember):
        expected = expected.value
    if (
        isinstance(expected, AnyOf)
        and len(expected.options) == 1
        and not matches(expected, got, norm)
    ):
        expected = expected.options[0]  # one option: say precisely where it differs
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        for key in sorted(set(expected) | set(got)):
            sub = (*parts, key)
            if key not in got:
                if not isinstance(expected[key], OptionalMember):
                    out.append(
                        ArgDiff(path=format_path(sub), kind="missing", expected=expected[key])
                    )
            elif key not in expected:
                out.append(ArgDiff(path=format_path(sub), kind="extra", got=got[key]))
            else:
                _diff_values(expected[key], got[key], sub, out, norm)
    elif (
        isinstance(expected, (list, tuple))
        and isinstance(got, (list, tuple))
        and len(expected) == len(got)
    ):
        for i, (x, y) in enumerate(zip(expected, got, strict=True)):
            _diff_values(x, y, (*parts, i), out, norm)
    elif not matches(expected, got, norm):
        out.append(ArgDiff(path=format_path(parts), kind="value", expected=expected, got=got))


def diff_arguments(
    expected: Mapping[str, Any],
    got: Mapping[str, Any] | None,
    *,
    key_arg: str | None,
    norm: Normalizer = None,
) -> tuple[ArgDiff, ...]:
    """Every difference between expected and proposed arguments, by argument path.

    The idempotency-key argument ``key_arg`` matches by presence only: its value is the
    model's to choose (uniqueness across calls is checked by ``align``).
    """
    if got is None:
        return (ArgDiff(path="$", kind="unparsed", expected=dict(expected)),)
    out: list[ArgDiff] = []
    if key_arg is not None:
        required_key = key_arg in expected and not isinstance(expected[key_arg], OptionalMember)
        if required_key and key_arg not in got:
            path = format_path((key_arg,))
            out.append(ArgDiff(path=path, kind="missing", expected=expected[key_arg]))
        elif key_arg in got and key_arg not in expected:
            path = format_path((key_arg,))
            out.append(ArgDiff(path=path, kind="extra", got=got[key_arg]))
        expected = {k: v for k, v in expected.items() if k != key_arg}
        got = {k: v for k, v in got.items() if k != key_arg}
    _diff_values(expected, got, (), out, norm)
    return tuple(sorted(out, key=lambda d: d.path))


def argument_similarity(
    expected: Mapping[str, Any],
    got: Mapping[str, Any] | None,
    *,
    key_arg: str | None,
    norm: Normalizer = None,
) -> Fraction:
    """The share of top-level argument names (union of both sides) whose values are
    acceptable (an optional argument left out counts as acceptable); 1 when neither side
    has arguments, 0 when the proposed arguments did not parse."""
    if got is None:
        return Fraction(0)
    names = set(expected) | set(got)
    if not names:
        return Fraction(1)
    same = 0
    for n in names:
        if n not in expected:
            continue
        if n not in got:
            same += isinstance(expected[n], OptionalMember)
        elif n == key_arg or matches(expected[n], got[n], norm):
            same += 1
    return Fraction(same, len(names))


def identical(a: Any, b: Any) -> bool:
    """The same JSON value with the same types throughout (``1`` is not ``1.0``, ``0.0`` is
    not ``-0.0``, NaN is not even itself): anything that judges a value, a schema or a
    comparison, judges both alike."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) != len(b):
            return False
        for key, value in a.items():  # noqa: SIM110 (no generator)
            if key not in b or not identical(value, b[key]):
                return False
        return True
    if kind is list:
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):  # noqa: SIM110 (no generator)
            if not identical(x, y):
                return False
        return True
    if kind is float:
        return bool(a == b and a.hex() == b.hex())  # 0.0 is not -0.0; nan is not nan
    return kind in _SCALARS and bool(a == b)


_SCALARS = (str, int, bool, type(None))


def fully_similar(
    expected: Mapping[str, Any],
    got: Mapping[str, Any] | None,
    *,
    key_arg: str | None,
    norm: Normalizer = None,
) -> bool:
    """``argument_similarity(...) == 1``, without fractions: every argument on either side
    is expected, and each is acceptable (an optional one may be left out). Such a pair has
    no difference either: ``diff_arguments`` finds none."""
    if got is None:
        return False
    for name in got:
        if name not in expected:
            return False
    for name, want in expected.items():
        if name not in got:
            if not isinstance(want, OptionalMember):
                return False
        elif name != key_arg:
            value = got[name]
            kind = type(want)
            if kind is type(value) and (kind is int or (kind is str and norm is None)):
                if want != value:  # what matches() says for these, without the call
                    return False
            elif not matches(want, value, norm):
                return False
    return True
