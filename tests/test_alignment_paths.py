"""The alignment's in-order path gives the assignment's answer, and ``fully_similar`` is
``argument_similarity == 1`` with no argument difference.

Calls are drawn from small pools of names and values (with ``$any``, ``$optional``, keys
shared and split, normalisation), so that proposals often line up with the expectation
exactly, nearly, or in another order: where the in-order path must decide right.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txcheck.scoring.argument_diff import (
    argument_similarity,
    diff_arguments,
    fully_similar,
    identical,
)
from txcheck.scoring.matching import _assigned, _grouped, _matching, align, identical_alignment
from txcheck.scoring.patterns import AnyOf, OptionalMember, _matches, matches, normalizer

KEYS = {"create": "key", "charge": "key"}
_VALUES = st.sampled_from(["a", "A", "a ", 1, 1.0, "1", True, None, [1], {"x": 1}])
_PATTERNS = _VALUES | st.builds(lambda a, b: AnyOf(options=(a, b)), _VALUES, _VALUES)
_NAMES = st.sampled_from(["create", "charge", "read"])
_ARGS = st.sampled_from(["key", "id", "note"])


@st.composite
def _expected(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    arguments: dict[str, Any] = {}
    for name in draw(st.lists(_ARGS, max_size=3, unique=True)):
        value = draw(_PATTERNS)
        arguments[name] = OptionalMember(value=value) if draw(st.integers(0, 4)) == 0 else value
    return draw(_NAMES), arguments


def _concrete(value: Any) -> Any:
    if isinstance(value, OptionalMember):
        return _concrete(value.value)
    if isinstance(value, AnyOf):
        return _concrete(value.options[-1])
    return value


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[Any], list[Any], Any]:
    expected = draw(st.lists(_expected(), max_size=4))
    proposed: list[Any] = []
    for name, arguments in expected:
        got: dict[str, Any] | None = {k: _concrete(v) for k, v in arguments.items()}
        change = draw(st.integers(0, 5))
        if change == 0 and got:
            got[draw(st.sampled_from(sorted(got)))] = draw(_VALUES)
        elif change == 1 and got:
            got.pop(draw(st.sampled_from(sorted(got))))
        elif change == 2:
            got = None
        proposed.append((name if draw(st.integers(0, 9)) else "read", got))
    if draw(st.booleans()):
        proposed = draw(st.permutations(proposed))
    if draw(st.integers(0, 3)) == 0:
        proposed.append(draw(st.sampled_from(proposed))) if proposed else None
    norm = normalizer(tuple(draw(st.sampled_from([[], [], ["case"], ["whitespace", "case"]]))))
    return expected, proposed, norm


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_the_in_order_path_agrees_with_the_assignment(drawn: tuple[Any, Any, Any]) -> None:
    expected, proposed, norm = drawn
    assert align(expected, proposed, key_args=KEYS, norm=norm) == _assigned(
        expected, proposed, KEYS, norm
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_pairing_by_name_agrees_with_the_assignment(drawn: tuple[Any, Any, Any]) -> None:
    expected, proposed, norm = drawn
    assert _matching(expected, proposed, KEYS, norm) == _grouped(expected, proposed, KEYS, norm)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_fully_similar_means_similarity_one_and_no_difference(
    drawn: tuple[Any, Any, Any],
) -> None:
    expected, proposed, norm = drawn
    for (name, want), (_, got) in zip(expected, proposed, strict=False):
        key = KEYS.get(name)
        full = fully_similar(want, got, key_arg=key, norm=norm)
        assert full == (argument_similarity(want, got, key_arg=key, norm=norm) == 1)
        if full:
            assert diff_arguments(want, got, key_arg=key, norm=norm) == ()


_SCALARS = st.sampled_from([0, 1, 1.0, -0.0, 2.5, True, False, None, "", "a", "A", " a", "1"])
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=6,
)


@settings(max_examples=250, deadline=None)
@given(_JSON, _JSON, st.sampled_from([(), ("case",), ("whitespace", "punctuation")]))
def test_matches_takes_plain_values_as_the_general_rules_do(
    expected: Any, got: Any, names: tuple[str, ...]
) -> None:
    norm = normalizer(names)
    assert matches(expected, got, norm) == _matches(expected, got, norm)
    assert matches(expected, expected, norm)


@settings(max_examples=300, deadline=None)
@given(_JSON, _JSON)
def test_identical_values_are_equal_with_the_same_types(a: Any, b: Any) -> None:
    assert identical(a, a)
    if identical(a, b):
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    if json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True):
        assert identical(a, b)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(_NAMES, st.dictionaries(_ARGS, _JSON, max_size=3)),
        max_size=4,
    ),
    st.sampled_from([(), ("case",)]),
)
def test_identical_calls_align_as_identical_alignment_says(
    expected: list[tuple[str, dict[str, Any]]], names: tuple[str, ...]
) -> None:
    proposed = json.loads(json.dumps(expected))  # equal copies, as a proposal would hold
    proposed = [(name, arguments) for name, arguments in proposed]
    if all(identical(e[1], p[1]) for e, p in zip(expected, proposed, strict=True)):
        found = align(expected, proposed, key_args=KEYS, norm=normalizer(names))
        assert found == identical_alignment(len(expected))
