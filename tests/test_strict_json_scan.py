"""Strict JSON's direct scan reads every text as ``JSONDecoder.decode`` does: the same value,
or the same error, whatever the whitespace around the value and whatever is wrong."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import json_values
from txcheck.models.strict_json import _DECODER, _decode


def _outcome(read: Any, text: str) -> Any:
    try:
        return "value", read(text)
    except Exception as error:  # the error itself is what is compared
        return "error", type(error).__name__, str(error)


_SPACE = st.sampled_from(["", " ", "\n", "\t \r\n", "\u00a0", "\ufeff", "x", ",", "}"])


@settings(max_examples=400, deadline=None)
@given(json_values(), _SPACE, _SPACE, st.booleans())
def test_the_scan_reads_as_decode(value: Any, before: str, after: str, cut: bool) -> None:
    text = before + json.dumps(value) + after
    if cut:
        text = text[: len(text) // 2]
    assert _outcome(_decode, text) == _outcome(_DECODER.decode, text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "{}",
        " {} ",
        '{"a": 1, "a": 2}',
        '{"a": NaN}',
        "1e400",
        "[1,]",
        '"\\ud800"',
        "[[[]]]",
    ],
)
def test_the_scan_reads_odd_texts_as_decode(text: str) -> None:
    assert _outcome(_decode, text) == _outcome(_DECODER.decode, text)


@pytest.mark.parametrize(
    "text", ["9" * 4300, "[" + "9" * 4301 + "]", "-" + "1" * 700, '{"n": ' + "7" * 5000 + "}"]
)
@pytest.mark.parametrize("limit", [0, 640, 4300])
def test_long_integers_read_as_decode_under_any_interpreter_limit(text: str, limit: int) -> None:
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        assert _outcome(_decode, text) == _outcome(_DECODER.decode, text)
    finally:
        sys.set_int_max_str_digits(saved)
