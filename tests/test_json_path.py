"""JSON paths in messages: formatting, parsing back, and finding the line of a path."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from txcheck.models.json_path import describe, format_path, line_column, locate, parse_path


def test_paths_use_dots_for_plain_keys_and_brackets_otherwise() -> None:
    assert format_path(()) == "$"
    assert format_path(("tool_calls", 2, "function", "name")) == "$.tool_calls[2].function.name"
    assert format_path(("tools", 0, "x-txcheck")) == "$.tools[0].x-txcheck"
    assert format_path(("a b", "$ref", "1")) == '$["a b"].$ref["1"]'


@given(st.lists(st.one_of(st.text(max_size=6), st.integers(min_value=0, max_value=10**6))))
def test_parse_path_inverts_format_path(parts: list[str | int]) -> None:
    assert parse_path(format_path(parts)) == tuple(parts)


def test_parse_path_rejects_other_text() -> None:
    assert parse_path("tools[0]") is None
    assert parse_path("$.tools[x]") is None


def test_locate_finds_nested_values_and_stops_at_the_deepest_ancestor() -> None:
    text = '{"a": [10, {"b": "[,]", "c": {"d": 1}}, 30],\n "e": {}}'
    assert text[locate(text, ("a", 1, "c", "d")) or 0] == "1"
    assert text[locate(text, ("a", 2)) or 0 :].startswith("30")
    assert text[locate(text, ("a", 1, "missing")) or 0] == "{"
    assert text[locate(text, ("e",)) or 0 :].startswith("{}")
    assert locate(text, ("a", 5)) == text.index("[")
    assert locate("", ("a",)) is None


def test_locate_matches_escaped_keys() -> None:
    text = '{"x\\u0041": 1, "xA2": 2}'
    assert locate(text, ("xA",)) == text.index(": 1") + 2


def test_line_column_is_one_based() -> None:
    text = "ab\ncd\n"
    assert line_column(text, 0) == (1, 1)
    assert line_column(text, 4) == (2, 2)


def test_describe_names_the_json_type_and_a_short_value() -> None:
    assert describe(None) == "null"
    assert describe(True) == "true"
    assert describe(5) == "the number 5"
    assert describe(2.5) == "the number 2.5"
    assert describe("x") == 'the string "x"'
    assert describe([1]) == "an array of 1 item"
    assert describe([]) == "an empty array"
    assert describe({}) == "an empty object"
    assert describe({"a": 1, "b": 2}) == 'an object with keys "a", "b"'
    assert describe("y" * 100) == 'the string "' + "y" * 36 + "..."
    assert describe({str(i): i for i in range(7)}).endswith('"3", "4", ...')
