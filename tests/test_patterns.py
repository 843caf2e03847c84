"""Expectations that say what is acceptable: ``$any``, ``$optional`` and declared string
normalisation, matched strictly everywhere else."""

from __future__ import annotations

import json
from typing import Any

import pytest

from txcheck.models.plan.contract_loader import parse_contract
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.patterns import (
    AnyOf,
    OptionalMember,
    matches,
    normalizer,
    parse_expected,
    representative,
    to_json,
)
from txcheck.scoring.scorer import CaseResult, score_case, score_file

TOOLS = parse_contract(
    {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "city": {"type": "string"},
                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                            "days": {"type": "integer"},
                            "prefs": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "string"},
                                    "milk": {"type": "string"},
                                },
                            },
                            "points": {"type": "array", "items": {"type": "number"}},
                        },
                        "required": ["city"],
                    },
                },
            }
        ]
    }
)


def _chat(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": "weather", "arguments": json.dumps(a)},
            }
            for i, a in enumerate(calls)
        ],
    }


def _score(expected: list[dict[str, Any]], *proposed: dict[str, Any], **expect: Any) -> CaseResult:
    doc = {
        "id": "w",
        "proposal": _chat(*proposed),
        "expect": {"calls": [{"name": "weather", "arguments": a} for a in expected], **expect},
    }
    cases = parse_cases(json.dumps(doc), source="t")
    assert cases.errors == ()
    return score_case(TOOLS, cases.cases[0])


def _codes(result: CaseResult) -> list[str]:
    return [v.code for v in result.strict.violations]


BOSTON = {"city": {"$any": ["Boston, MA", "Boston"]}, "unit": {"$optional": "fahrenheit"}}


@pytest.mark.parametrize(
    "proposed",
    [
        {"city": "Boston, MA", "unit": "fahrenheit"},
        {"city": "Boston"},  # the other acceptable value, the optional argument left out
        {"city": "Boston", "unit": "fahrenheit"},
    ],
)
def test_any_acceptable_value_and_a_left_out_optional_pass(proposed: dict[str, Any]) -> None:
    result = _score([BOSTON], proposed)
    assert result.strict.passed, result.strict.violations
    assert result.strict.exact_arguments == 1.0


@pytest.mark.parametrize(
    ("proposed", "code", "text"),
    [
        ({"city": "boston"}, "wrong_arguments", 'one of the string "Boston, MA", the string'),
        ({"city": "Boston", "unit": "celsius"}, "wrong_arguments", "$.unit expected the string"),
        ({"city": 7}, "type_mismatch", "expected string"),
        ({"unit": "fahrenheit"}, "missing_required", "$.city"),
        ({"city": "Boston", "days": 3}, "wrong_arguments", "$.days not expected"),
    ],
)
def test_everything_else_stays_strict(proposed: dict[str, Any], code: str, text: str) -> None:
    result = _score([BOSTON], proposed)
    assert not result.strict.passed
    assert code in _codes(result)
    assert any(text in v.message for v in result.strict.violations)


def test_nested_objects_and_arrays_hold_markers() -> None:
    expected = {
        "city": "Paris",
        "prefs": {"size": {"$any": ["large", "big"]}, "milk": {"$optional": "oat"}},
        "points": [1, {"$any": [2, 2.5]}],
    }
    assert _score(
        [expected], {"city": "Paris", "prefs": {"size": "big"}, "points": [1, 2.5]}
    ).strict.passed
    ok = _score([expected], {"city": "Paris", "prefs": {"size": "big"}, "points": [1.0, 2]})
    assert ok.strict.passed
    bad = _score(
        [expected], {"city": "Paris", "prefs": {"size": "big", "milk": "soy"}, "points": [1, 2]}
    )
    assert not bad.strict.passed
    assert '$.prefs.milk expected the string "oat", got the string "soy"' in (
        bad.strict.violations[0].message
    )
    wrong_points = _score([expected], {"city": "Paris", "prefs": {"size": "big"}, "points": [1, 3]})
    assert "$.points[1] expected one of the number 2, the number 2.5" in (
        wrong_points.strict.violations[0].message
    )


def test_a_single_option_any_reports_the_inner_difference() -> None:
    expected = {
        "city": "Rome",
        "prefs": {"$any": [{"size": "large", "milk": {"$optional": "oat"}}]},
    }
    result = _score([expected], {"city": "Rome", "prefs": {"size": "small"}})
    assert '$.prefs.size expected the string "large", got the string "small"' in (
        result.strict.violations[0].message
    )
    assert _score([expected], {"city": "Rome", "prefs": {"size": "large"}}).strict.passed


def test_order_free_parallel_calls_with_alternatives() -> None:
    expected = [{"city": {"$any": ["Boston", "Boston, MA"]}}, {"city": "Austin"}]
    result = _score(expected, {"city": "Austin"}, {"city": "Boston, MA"})
    assert result.strict.passed
    assert result.strict.alignment == ((0, "c1"), (1, "c0"))


def test_normalisation_is_off_by_default_and_reported_when_declared() -> None:
    expected = [{"city": "New York, NY"}]
    loose = {"city": "new york ny"}
    strict = _score(expected, loose)
    assert not strict.strict.passed and strict.normalize == ()
    declared = _score(expected, loose, normalize=["punctuation", "case", "whitespace"])
    assert declared.strict.passed
    assert declared.normalize == ("case", "whitespace", "punctuation")
    assert declared.to_json()["normalize"] == ["case", "whitespace", "punctuation"]
    only_case = _score(expected, loose, normalize=["case"])
    assert not only_case.strict.passed  # punctuation and spaces still count


def test_normalizer_rules() -> None:
    norm = normalizer(("case", "whitespace", "punctuation"))
    assert norm is not None
    assert norm("April 1, 2024") == norm("april 1 2024") == "april12024"
    assert norm("«Hola»!") == "hola"
    assert normalizer(()) is None
    assert not matches("a", "A") and matches("a", "A", normalizer(("case",)))
    assert not matches("1", 1, norm)  # normalisation never crosses types


def test_markers_parse_print_and_represent() -> None:
    parsed = parse_expected({"a": {"$any": [1, {"b": {"$optional": 2}}]}}, "x")
    assert parsed == {"a": AnyOf(options=(1, {"b": OptionalMember(value=2)}))}
    value = parse_expected({"u": {"$optional": {"$any": ["f", "c"]}}}, "x")
    assert value == {"u": OptionalMember(value=AnyOf(options=("f", "c")))}
    assert to_json(value) == {"u": {"$optional": {"$any": ["f", "c"]}}}
    assert representative(value) == {}
    assert representative({"a": {"b": AnyOf(options=(1, 2))}, "c": [AnyOf(options=(3,))]}) == {
        "a": {"b": 1},
        "c": [3],
    }


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"a": {"$any": []}}, "'expect.calls[0].arguments.a.$any' must be a non-empty list"),
        ({"a": {"$any": "x"}}, "must be a non-empty list of acceptable values (got 'x')"),
        ({"a": [{"$optional": 1}]}, "$optional may only be the value of an argument"),
        ({"a": {"$any": [{"$optional": 1}]}}, "$optional may only be the value of an argument"),
        ({"a": {"$optional": {"$optional": 1}}}, "$optional inside $optional"),
    ],
)
def test_malformed_markers_are_bad_lines(arguments: dict[str, Any], problem: str) -> None:
    doc = {
        "id": "x",
        "proposal": _chat(),
        "expect": {"calls": [{"name": "weather", "arguments": arguments}]},
    }
    [error] = parse_cases(json.dumps(doc), source="t").errors
    assert problem in error.message


def test_unknown_normalisation_is_a_bad_line() -> None:
    doc = {"id": "x", "proposal": _chat(), "expect": {"calls": [], "normalize": ["accents"]}}
    [error] = parse_cases(json.dumps(doc), source="t").errors
    assert (
        "'expect.normalize' must be a list of 'case', 'whitespace', 'punctuation'" in error.message
    )


def test_expectations_with_markers_are_validated_by_their_representative() -> None:
    """The first acceptable value is validated; optional arguments are left out of it."""
    doc = {
        "id": "x",
        "proposal": _chat({"city": "Oslo", "days": 2}),
        "expect": {
            "calls": [
                {
                    "name": "weather",
                    "arguments": {
                        "city": "Oslo",
                        "days": {"$any": ["two", 2]},
                        "unit": {"$optional": "kelvin"},
                    },
                }
            ]
        },
    }
    report = score_file(TOOLS, parse_cases(json.dumps(doc), source="t"))
    [result] = report.cases
    assert result.strict.passed  # 2 is acceptable, and the optional unit was left out
    assert [w.code for w in result.warnings] == ["expect_invalid"]
    assert '$.days: expected integer, got the string "two"' in result.warnings[0].message
    assert "kelvin" not in result.warnings[0].message
