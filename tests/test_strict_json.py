"""Strict JSON: what the stdlib accepts but txcheck must reject, with lines and columns."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from txcheck.models.errors import ContractError, InputError, ProposalFormatError, TxcheckError
from txcheck.models.strict_json import (
    MAX_INT_DIGITS,
    StrictJsonError,
    load_json_document,
    load_json_file,
    loads_strict,
    parse_json_document,
)


def reject(data: str | bytes, **kwargs: int) -> StrictJsonError:
    with pytest.raises(StrictJsonError) as info:
        loads_strict(data, **kwargs)
    return info.value


def test_valid_documents_parse_to_plain_values() -> None:
    text = '{"a": [1, 2.5, -0, true, false, null], "b": {"c": "\\u00e9\\ud83d\\ude00"}}'
    assert loads_strict(text) == {
        "a": [1, 2.5, 0, True, False, None],
        "b": {"c": "\u00e9\U0001f600"},
    }
    assert loads_strict(text.encode()) == loads_strict(text)


def test_byte_order_mark_is_dropped_from_bytes_and_text() -> None:
    assert loads_strict(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert loads_strict('\ufeff{"a": 1}') == {"a": 1}


@pytest.mark.parametrize(
    ("text", "name", "column"),
    [("[NaN]", "NaN", 2), ('{"x": Infinity}', "Infinity", 7), ("[1, -Infinity]", "-Infinity", 5)],
)
def test_nan_and_infinity_are_rejected_where_they_are(text: str, name: str, column: int) -> None:
    error = reject(text)
    assert error.problem.startswith(f"{name} is not JSON")
    assert (error.line, error.column) == (1, column)


def test_constant_inside_a_string_is_not_blamed() -> None:
    error = reject('{"s": "NaN", "v": NaN}')
    assert (error.line, error.column) == (1, 19)


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5E+999"])
def test_numbers_overflowing_to_infinity_are_rejected(number: str) -> None:
    error = reject(f'{{\n  "amount": {number}\n}}')
    assert "overflows to infinity" in error.problem
    assert number in error.problem
    assert (error.line, error.column) == (2, 13)


def test_tiny_numbers_underflow_to_zero_and_are_fine() -> None:
    assert loads_strict("[1e-400]") == [0.0]


def test_a_50000_digit_integer_is_a_clean_error() -> None:
    error = reject("[" + "9" * 50_000 + "]")
    assert isinstance(error, StrictJsonError)
    assert "50000 digits" in error.problem
    assert (error.line, error.column) == (1, 2)


def test_integers_up_to_the_digit_limit_parse() -> None:
    digits = "7" * MAX_INT_DIGITS
    assert loads_strict(f"[{digits}, -{digits}]") == [int(digits), -int(digits)]
    assert "4301 digits" in reject(f"[-{digits}7]").problem


def test_long_floats_are_numbers_not_errors() -> None:
    value = loads_strict("[1." + "0" * 50_000 + "]")
    assert value == [1.0]
    assert not math.isinf(value[0])


def test_duplicate_keys_are_rejected_at_the_second_key() -> None:
    error = reject('{"a": 1,\n "a": 2}')
    assert error.problem == 'duplicate key "a" in an object'
    assert (error.line, error.column) == (2, 2)


def test_nested_duplicate_keys_are_found_in_the_right_object() -> None:
    text = '[{"b": 1}, {"b": 1, "c": {"b": 2, "x": "\\"b\\": {", "b": 3}}]'
    error = reject(text)
    assert error.problem == 'duplicate key "b" in an object'
    assert error.offset == text.rindex('"b": 3')


def test_duplicate_escaped_keys_are_the_same_key() -> None:
    error = reject('{"\\u0061": 1, "a": 2}')
    assert error.problem == 'duplicate key "a" in an object'
    assert error.column == 15


def test_invalid_utf8_reports_the_byte_and_its_line() -> None:
    error = reject(b'{"a":\n "x\xff"}')
    assert "invalid UTF-8" in error.problem
    assert "0xff" in error.problem
    assert "byte offset 9" in error.problem
    assert (error.line, error.column) == (2, 4)


def test_a_utf16_document_is_invalid_utf8() -> None:
    assert "invalid UTF-8" in reject('{"a": 1}'.encode("utf-16")).problem


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_100000_deep_nesting_is_a_clean_error(opener: str) -> None:
    error = reject(opener * 100_000)
    assert error.problem == "nesting deeper than 256 levels"
    assert error.line == 1
    assert error.column == 256 * len(opener) + 1


def test_depth_limit_is_exact_and_configurable() -> None:
    assert loads_strict("[" * 256 + "]" * 256) is not None
    assert reject("[" * 257 + "]" * 257).column == 257
    assert loads_strict('[[{"a": [1]}]]', max_depth=4) == [[{"a": [1]}]]
    assert reject('[[{"a": [1]}]]', max_depth=3).column == 9


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = '["' + "[{" * 1000 + '\\"' + "]" * 10 + '"]'
    assert loads_strict(text) == ["[{" * 1000 + '"' + "]" * 10]


def test_recursion_in_the_stdlib_parser_is_a_clean_error() -> None:
    # With the pre-check switched off by a huge limit, the stdlib parser's RecursionError
    # must still come out as a StrictJsonError.
    error = reject("[" * 100_000 + "]" * 100_000, max_depth=10**9)
    assert "nesting too deep" in error.problem


@pytest.mark.parametrize(
    ("text", "problem", "column"),
    [
        ("[1] x", "unexpected data after the JSON value", 5),
        ("{} {}", "unexpected data after the JSON value", 4),
        ("", "the document is empty", 1),
        ("   \n", "the document is empty", 1),
        ("[1,]", "expected a JSON value", 4),
        ('{"a" 1}', "Expecting ':' delimiter", 6),
        ("'a'", "expected a JSON value", 1),
    ],
)
def test_syntax_errors_say_what_and_where(text: str, problem: str, column: int) -> None:
    error = reject(text)
    assert error.problem == problem
    assert error.column == column


@pytest.mark.parametrize(
    ("text", "column"),
    [('["\\ud800"]', 3), ('["\\udc00"]', 3), ('["ok", "\\ud800\\u0041"]', 9), ('"\\ud83d x"', 2)],
)
def test_unpaired_surrogate_escapes_are_rejected(text: str, column: int) -> None:
    error = reject(text)
    assert error.problem.startswith("unpaired UTF-16 surrogate escape")
    assert error.column == column


def test_escaped_backslash_before_u_is_not_a_surrogate() -> None:
    assert loads_strict('["\\\\ud800"]') == ["\\ud800"]


def test_error_is_txcheck_and_value_error_with_a_readable_message() -> None:
    error = reject('{"a": 1, "a": 1}')
    assert isinstance(error, TxcheckError)
    assert isinstance(error, ValueError)
    assert str(error) == 'line 1, column 10: duplicate key "a" in an object'


def test_load_json_file_reads_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text('{"a": [1]}', encoding="utf-8")
    assert load_json_file(path) == {"a": [1]}


def test_load_json_file_raises_the_callers_error_class_with_file_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "a": 1,\n  "a": 2\n}', encoding="utf-8")
    with pytest.raises(ContractError) as info:
        load_json_file(path, error=ContractError)
    assert info.value.source == str(path)
    assert info.value.line == 3
    assert str(info.value) == f'{path}:3: invalid JSON: duplicate key "a" in an object (column 3)'


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(ProposalFormatError, match="file not found"):
        load_json_file(tmp_path / "nope.json", error=ProposalFormatError)


def test_a_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        load_json_file(tmp_path)


def test_invalid_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bytes.json"
    path.write_bytes(b'[\n1,\n"\xc3\x28"]')
    with pytest.raises(InputError) as info:
        load_json_file(path)
    assert info.value.line == 3
    assert "invalid UTF-8: byte 0xc3" in str(info.value)


def test_document_maps_json_paths_to_lines() -> None:
    document = parse_json_document(
        '{\n  "tools": [\n    {"name": "a"},\n    {\n      "name": "b"\n    }\n  ]\n}',
        source="c.json",
    )
    assert document.line_of("$.tools[1].name") == 5
    assert document.line_of("$.tools[0]") == 3
    assert document.line_of("$.tools[7].name") == 2  # deepest existing ancestor
    assert document.line_of(None) is None


def test_load_json_document_keeps_text_for_locating(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b'\xef\xbb\xbf[\n 1,\n {"k": 2}\n]')
    document = load_json_document(path)
    assert document.value == [1, {"k": 2}]
    assert document.line_of("$[1].k") == 3
