"""The one-step readers of common call shapes read a call as the full reader does.

Proposals are drawn in every vendor format with call items that are right, slightly off
(odd ids, types, names, arguments, ``depends_on``) or wrong; each is parsed with and
without the one-step readers, and the plans (or the errors) must be the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txcheck.models.errors import ProposalFormatError
from txcheck.models.plan import proposal_parser
from txcheck.models.plan.proposal import plan_to_json
from txcheck.models.plan.proposal_calls import MISSING, Found
from txcheck.models.plan.proposal_parser import parse_proposal

ROOT = Path(__file__).resolve().parent.parent
PROPOSALS = sorted((ROOT / "examples/proposals").glob("*.json"))
READERS = ("chat_call", "responses_call", "anthropic_call", "gemini_call")

# Mostly well formed, so that whole plans come out as often as errors do.
_IDS = st.sampled_from([None, "c1", "c2", "c1", "c2", 7, ""])
_NAMES = st.sampled_from(["get_order", "get_order", "get_order", "", 3])
_ARGUMENTS = st.sampled_from([{"order_id": "o1"}, {"order_id": "o1"}, {}, [1], None])
_TEXTS = st.sampled_from(['{"order_id": "o1"}', '{"order_id": "o1"}', "{}", "[1]", "{", 5])
_EXTRA = st.sampled_from([{}, {}, {}, {}, {"depends_on": ["c1"]}, {"depends_on": "c"}, {"x": 1}])


@st.composite
def _item(draw: st.DrawFn, fmt: str) -> Any:
    extra = draw(_EXTRA)
    drop = draw(st.sampled_from([None] * 9 + ["name", "arguments", "id", "type"]))
    if fmt == "chat":
        function = {"name": draw(_NAMES), "arguments": draw(_TEXTS)}
        item: dict[str, Any] = {"id": draw(_IDS), "type": "function", "function": function}
        if drop in ("name", "arguments"):
            function.pop(drop)
        if draw(st.integers(0, 9)) == 0:
            item["type"] = draw(st.sampled_from(["tool", None]))
    elif fmt == "responses":
        item = {"type": "function_call", "call_id": draw(_IDS), "name": draw(_NAMES)}
        item["arguments"] = draw(_TEXTS)
    elif fmt == "anthropic":
        item = {"type": "tool_use", "id": draw(_IDS), "name": draw(_NAMES)}
        item["input"] = draw(_ARGUMENTS)
    else:
        call = {"name": draw(_NAMES), "args": draw(_ARGUMENTS), "id": draw(_IDS)}
        if drop == "arguments":
            call.pop("args")
        key = draw(st.sampled_from(["functionCall"] * 4 + ["function_call"]))
        item = {key: call, **({"depends_on": ["c1"]} if draw(st.integers(0, 4)) == 0 else {})}
        if draw(st.integers(0, 4)) == 0:
            call.update(extra)
        return item if draw(st.integers(0, 19)) else "not a part"
    if drop in item:
        item.pop(drop)
    item.update(extra)
    return item if draw(st.integers(0, 19)) else [item]


@st.composite
def _proposals(draw: st.DrawFn) -> Any:
    fmt = draw(st.sampled_from(["chat", "completion", "responses", "anthropic", "gemini"]))
    items = draw(st.lists(_item("chat" if fmt == "completion" else fmt), max_size=3))
    if fmt in ("chat", "completion"):
        message = {"role": "assistant", "content": None, "tool_calls": items}
        return message if fmt == "chat" else {"choices": [{"message": message}]}
    if fmt == "responses":
        return {"output": items}
    if fmt == "anthropic":
        return {"role": "assistant", "content": items}
    return {"candidates": [{"content": {"role": "model", "parts": items}}]}


def _outcome(doc: Any) -> Any:
    try:
        plan = parse_proposal(doc, source="p")
    except ProposalFormatError as error:
        return str(error)
    parsed = [(c.arguments, c.json_error, c.raw_arguments) for c in plan.calls]
    return plan_to_json(plan), plan.text, parsed


def _without_readers(doc: Any) -> Any:
    """The outcome with every one-step reader declining: the full reading alone."""
    saved = {name: getattr(proposal_parser, name) for name in READERS}
    try:
        for name in READERS:
            setattr(proposal_parser, name, lambda item, index: None)
        return _outcome(doc)
    finally:
        for name, reader in saved.items():
            setattr(proposal_parser, name, reader)


@pytest.mark.parametrize("path", PROPOSALS, ids=lambda p: p.stem)
def test_example_proposals_read_alike(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert _outcome(doc) == _without_readers(doc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_proposals())
def test_generated_proposals_read_alike(doc: Any) -> None:
    assert _outcome(doc) == _without_readers(doc)


def test_a_found_call_keeps_left_out_arguments_as_none() -> None:
    found = Found.of(None, "get_order", MISSING, (None, "the call has no 'arguments'"))
    assert found == (None, "get_order", None, None, "the call has no 'arguments'", ())
    given_ = Found.of("c1", "get_order", "{}", ({}, None), ("c0",))
    assert given_ == ("c1", "get_order", "{}", {}, None, ("c0",))


@pytest.mark.parametrize(
    ("call", "where"),
    [
        ({"id": 7, "depends_on": "c"}, "$.tool_calls[0].id"),
        ({"id": "c1", "depends_on": "c"}, "$.tool_calls[0].depends_on"),
    ],
)
def test_a_call_read_the_long_way_reports_its_id_before_its_depends_on(
    call: dict[str, Any], where: str
) -> None:
    item = {"type": "function", "function": {"name": "get_order", "arguments": "{}"}, **call}
    with pytest.raises(ProposalFormatError) as caught:
        parse_proposal({"role": "assistant", "tool_calls": [item]})
    assert where in str(caught.value)
