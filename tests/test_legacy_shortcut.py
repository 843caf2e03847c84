"""The legacy score reuses a call's strictly parsed arguments: the same as reading the raw
text again with ``json.loads``, for any text (a byte-order mark, NaN, duplicate keys or
broken JSON included)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import json_objects
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.scoring.legacy import _seen_arguments, legacy_arguments


def _call(text: str) -> Call:
    function = {"name": "get_order", "arguments": text}
    message = {"role": "assistant", "tool_calls": [{"id": "c1", "function": function}]}
    (call,) = parse_proposal(message).calls
    return call


@pytest.mark.parametrize(
    "text",
    [
        '{"order_id": "o1"}',
        '\ufeff{"order_id": "o1"}',
        '{"a": NaN}',
        '{"a": 1, "a": 2}',
        '{"a": 1e400}',
        "[1]",
        "{",
        '  {"a": [1.5, true, null]}  ',
    ],
)
def test_the_legacy_reading_of_each_text(text: str) -> None:
    call = _call(text)
    assert _seen_arguments(call) == legacy_arguments(text)


@settings(max_examples=200, deadline=None)
@given(json_objects(), st.booleans())
def test_the_legacy_reading_of_generated_objects(value: dict[str, object], bom: bool) -> None:
    text = ("\ufeff" if bom else "") + json.dumps(value)
    call = _call(text)
    assert _seen_arguments(call) == legacy_arguments(text)
