"""Proposals in every vendor format become plans; anything else is a format error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txcheck.models.errors import ProposalFormatError
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.proposal_parser import load_proposal, parse_proposal

ARGS = {"order_id": "o-1", "amount": 1250}


def chat_call(call_id: str, name: str, arguments: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        **extra,
    }


def chat(*calls: dict[str, Any], content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def format_error(doc: Any) -> ProposalFormatError:
    with pytest.raises(ProposalFormatError) as info:
        parse_proposal(doc, source="p.json")
    return info.value


def summary(plan: Plan) -> list[tuple[str, str, Any, tuple[str, ...]]]:
    return [(c.id, c.name, c.arguments, c.depends_on) for c in plan.calls]


# -- every vendor format ------------------------------------------------------------------


def test_openai_chat_message() -> None:
    plan = parse_proposal(
        chat(
            chat_call("call_a", "get_order", '{"order_id": "o-1"}'),
            chat_call("call_b", "charge_payment", json.dumps(ARGS)),
        )
    )
    assert plan.format == "openai_chat"
    assert summary(plan) == [
        ("call_a", "get_order", {"order_id": "o-1"}, ()),
        ("call_b", "charge_payment", ARGS, ()),
    ]
    assert [c.index for c in plan.calls] == [0, 1]
    assert plan.calls[1].raw_arguments == json.dumps(ARGS)
    assert plan.calls[1].json_error is None
    assert plan.text is None


def test_openai_completion_reads_the_first_choice() -> None:
    other = {"message": chat(chat_call("x", "cancel_order", "{}"))}
    doc = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": chat(chat_call("c1", "get_order", "{}")), **{}}, other],
    }
    plan = parse_proposal(doc)
    assert plan.format == "openai_completion"
    assert summary(plan) == [("c1", "get_order", {}, ())]


def test_openai_responses_output() -> None:
    doc = {
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Charging now."}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_9",
                "name": "charge_payment",
                "arguments": json.dumps(ARGS),
            },
        ]
    }
    plan = parse_proposal(doc)
    assert plan.format == "openai_responses"
    assert summary(plan) == [("call_9", "charge_payment", ARGS, ())]
    assert plan.text == "Charging now."


def test_anthropic_message() -> None:
    doc = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "...", "signature": "s"},
            {"type": "text", "text": "I'll check "},
            {"type": "text", "text": "the order."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": "o"}},
            {"type": "tool_use", "id": "toolu_2", "name": "charge_payment", "input": ARGS},
        ],
        "stop_reason": "tool_use",
    }
    plan = parse_proposal(doc)
    assert plan.format == "anthropic"
    assert summary(plan) == [
        ("toolu_1", "get_order", {"order_id": "o"}, ()),
        ("toolu_2", "charge_payment", ARGS, ()),
    ]
    assert plan.calls[1].raw_arguments == ARGS
    assert plan.text == "I'll check the order."


def test_gemini_response_generates_ids_by_position() -> None:
    doc = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Let me look.", "thought": True},
                        {"text": "Sure."},
                        {"functionCall": {"name": "get_order", "args": {"order_id": "o"}}},
                        {"functionCall": {"name": "list_orders"}},
                        {"function_call": {"name": "charge_payment", "args": ARGS, "id": "g3"}},
                    ],
                },
                "finishReason": "STOP",
            }
        ]
    }
    plan = parse_proposal(doc)
    assert plan.format == "gemini"
    assert summary(plan) == [
        ("call_1", "get_order", {"order_id": "o"}, ()),
        ("call_2", "list_orders", {}, ()),
        ("g3", "charge_payment", ARGS, ()),
    ]
    assert plan.calls[1].raw_arguments is None
    assert plan.text == "Sure."


def test_generated_ids_never_reuse_a_vendor_id() -> None:
    doc = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"functionCall": {"name": "a", "args": {}, "id": "call_2"}},
                        {"functionCall": {"name": "b", "args": {}}},
                    ]
                }
            }
        ]
    }
    assert [c.id for c in parse_proposal(doc).calls] == ["call_2", "call_2_2"]


def test_missing_or_null_openai_ids_are_generated() -> None:
    first = chat_call("x", "a", "{}")
    del first["id"]
    plan = parse_proposal(chat(first, chat_call(None, "b", "{}")))
    assert [c.id for c in plan.calls] == ["call_1", "call_2"]


def test_duplicate_ids_are_kept_for_validation_to_report() -> None:
    plan = parse_proposal(chat(chat_call("same", "a", "{}"), chat_call("same", "b", "{}")))
    assert [(c.id, c.name) for c in plan.calls] == [("same", "a"), ("same", "b")]


# -- text-only answers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "fmt", "text"),
    [
        ({"role": "assistant", "content": "No call needed."}, "openai_chat", "No call needed."),
        ({"role": "assistant", "content": None}, "openai_chat", None),
        ({"role": "assistant", "content": None, "tool_calls": None}, "openai_chat", None),
        ({"role": "assistant", "content": None, "tool_calls": []}, "openai_chat", None),
        (
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]},
            "openai_chat",
            "No.",
        ),
        (
            {"choices": [{"message": {"role": "assistant", "content": "Hi"}}]},
            "openai_completion",
            "Hi",
        ),
        (
            {"output": [{"type": "message", "content": [{"type": "output_text", "text": "Hi"}]}]},
            "openai_responses",
            "Hi",
        ),
        ({"output": []}, "openai_responses", None),
        ({"role": "assistant", "content": [{"type": "text", "text": "Hi"}]}, "anthropic", "Hi"),
        ({"content": []}, "anthropic", None),
        ({"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}, "gemini", "Hi"),
        ({"candidates": [{"finishReason": "SAFETY"}]}, "gemini", None),
    ],
)
def test_text_only_answers_are_plans_with_zero_calls(doc: Any, fmt: str, text: str | None) -> None:
    plan = parse_proposal(doc)
    assert plan.calls == ()
    assert plan.format == fmt
    assert plan.text == text


# -- depends_on ---------------------------------------------------------------------------


def test_depends_on_in_every_format() -> None:
    openai = chat(chat_call("a", "x", "{}"), chat_call("b", "y", "{}", depends_on=["a"]))
    responses = {
        "output": [
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
            {
                "type": "function_call",
                "call_id": "b",
                "name": "y",
                "arguments": "{}",
                "depends_on": ["a"],
            },
        ]
    }
    anthropic = {
        "content": [
            {"type": "tool_use", "id": "a", "name": "x", "input": {}},
            {"type": "tool_use", "id": "b", "name": "y", "input": {}, "depends_on": ["a"]},
        ]
    }
    gemini_call = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"functionCall": {"name": "x", "args": {}, "id": "a"}},
                        {"functionCall": {"name": "y", "args": {}, "id": "b", "depends_on": ["a"]}},
                    ]
                }
            }
        ]
    }
    gemini_part = json.loads(json.dumps(gemini_call))
    part = gemini_part["candidates"][0]["content"]["parts"][1]
    part["depends_on"] = part["functionCall"].pop("depends_on")
    for doc in (openai, responses, anthropic, gemini_call, gemini_part):
        plan = parse_proposal(doc)
        assert [(c.id, c.depends_on) for c in plan.calls] == [("a", ()), ("b", ("a",))]


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("a", "$.tool_calls[0].depends_on"),
        ({"a": 1}, "$.tool_calls[0].depends_on"),
        (None, "$.tool_calls[0].depends_on"),
        (["a", 2], "$.tool_calls[0].depends_on[1]"),
    ],
)
def test_depends_on_must_be_a_list_of_call_ids(value: Any, path: str) -> None:
    error = format_error(chat(chat_call("b", "y", "{}", depends_on=value)))
    assert error.path == path
    assert "'depends_on'" in str(error)


def test_depends_on_on_both_gemini_part_and_call_is_an_error() -> None:
    part = {"functionCall": {"name": "y", "depends_on": ["a"]}, "depends_on": ["a"]}
    error = format_error({"candidates": [{"content": {"parts": [part]}}]})
    assert error.path == "$.candidates[0].content.parts[0]"


# -- arguments that cannot be used --------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"order_id": "o-1"', "not valid JSON"),
        ("", "the document is empty"),
        ('{"a": 1, "a": 2}', 'duplicate key "a"'),
        ('{"amount": NaN}', "NaN is not JSON"),
        ('{"amount": 1e400}', "overflows to infinity"),
        ("[1, 2]", "must hold a JSON object (got an array of 2 items)"),
        ('"{}"', "must hold a JSON object"),
        ("null", "must hold a JSON object (got null)"),
        ({"order_id": "o-1"}, "must be a string of JSON"),
    ],
)
def test_unparseable_openai_arguments_are_still_a_call(raw: Any, reason: str) -> None:
    plan = parse_proposal(
        chat(chat_call("c", "charge_payment", "{}"), chat_call("d", "get_order", raw))
    )
    call = plan.calls[1]
    assert (call.id, call.name, call.index) == ("d", "get_order", 1)
    assert call.arguments is None
    assert call.raw_arguments == raw
    assert call.json_error is not None
    assert reason in call.json_error
    assert plan.calls[0].arguments == {}


def test_missing_openai_arguments_is_a_json_error() -> None:
    call = chat_call("c", "get_order", "{}")
    del call["function"]["arguments"]
    (parsed,) = parse_proposal(chat(call)).calls
    assert parsed.arguments is None
    assert parsed.json_error == "the call has no 'arguments'"


def test_responses_arguments_are_parsed_strictly() -> None:
    doc = {"output": [{"type": "function_call", "name": "x", "arguments": '{"a":1,"a":1}'}]}
    (call,) = parse_proposal(doc).calls
    assert call.arguments is None
    assert call.json_error is not None
    assert "duplicate key" in call.json_error


@pytest.mark.parametrize("bad", [[1], "x", None, 3])
def test_anthropic_and_gemini_non_object_arguments_are_json_errors(bad: Any) -> None:
    anthropic = {"content": [{"type": "tool_use", "id": "t", "name": "x", "input": bad}]}
    gemini = {
        "candidates": [{"content": {"parts": [{"functionCall": {"name": "x", "args": bad}}]}}]
    }
    for doc in (anthropic, gemini):
        (call,) = parse_proposal(doc).calls
        assert call.arguments is None
        assert call.raw_arguments == bad
        assert call.json_error is not None
        assert "must be a JSON object" in call.json_error


# -- documents that are no proposal -------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "path", "words"),
    [
        (None, "$", "must be a JSON object"),
        ([], "$", "(got an empty array)"),
        ("x", "$", 'got the string "x"'),
        (5, "$", "got the number 5"),
        ({}, "$", "not a recognised proposal"),
        ({"role": "assistant"}, "$", "not a recognised proposal"),
        ({"tool_calls": {"id": "a"}}, "$.tool_calls", "'tool_calls' must be a list"),
        ({"tool_calls": [5]}, "$.tool_calls[0]", "a tool call must be a JSON object"),
        ({"tool_calls": [{"id": "a"}]}, "$.tool_calls[0]", "has no 'function'"),
        (
            chat(chat_call("a", "x", "{}"), chat_call("b", "x", "{}"), {"function": {}}),
            "$.tool_calls[2].function.name",
            "'name' is missing",
        ),
        (
            chat({"function": {"name": 7, "arguments": "{}"}}),
            "$.tool_calls[0].function.name",
            "'name' must be a string (got the number 7)",
        ),
        (chat({"type": "custom", "custom": {}}), "$.tool_calls[0].type", "only 'function'"),
        (chat(chat_call(5, "x", "{}")), "$.tool_calls[0].id", "'id' must be a string"),
        ({"role": "user", "content": "hi"}, "$.role", "'role' must be 'assistant'"),
        ({"content": 5}, "$.content", "'content' must be a string, a list or null"),
        ({"role": "assistant", "function_call": {"name": "x"}}, "$.function_call", "deprecated"),
        ({"choices": []}, "$.choices", "must not be empty"),
        ({"choices": [{}]}, "$.choices[0]", "no 'message'"),
        ({"choices": [{"message": "hi"}]}, "$.choices[0].message", "must be a JSON object"),
        ({"choices": 1, "output": []}, "$", "ambiguous"),
        ({"output": {}}, "$.output", "'output' must be a list"),
        ({"output": [{"type": "web_search_call"}]}, "$.output[0].type", "unsupported output item"),
        ({"output": [{"name": "x"}]}, "$.output[0].type", "'type' is missing"),
        (
            {"output": [{"type": "function_call", "arguments": "{}"}]},
            "$.output[0].name",
            "'name' is missing",
        ),
        ({"content": [{"type": "tool_call", "name": "x"}]}, "$.content[0].type", "unsupported"),
        ({"content": [{"type": "tool_use", "input": {}}]}, "$.content[0].name", "is missing"),
        ({"content": ["hi"]}, "$.content[0]", "a content block must be a JSON object"),
        ({"candidates": []}, "$.candidates", "must not be empty"),
        ({"candidates": [{}]}, "$.candidates[0]", "neither 'content' nor 'finishReason'"),
        ({"candidates": [{"content": {"parts": {}}}]}, "$.candidates[0].content.parts", "list"),
        (
            {"candidates": [{"content": {"parts": [{"fnCall": {}}]}}]},
            "$.candidates[0].content.parts[0]",
            "unrecognised part",
        ),
        (
            {"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]},
            "$.candidates[0].content.parts[0].functionCall.name",
            "'name' is missing",
        ),
    ],
)
def test_unrecognised_documents_are_format_errors_with_a_path(
    doc: Any, path: str, words: str
) -> None:
    error = format_error(doc)
    assert error.path == path
    assert error.source == "p.json"
    assert words in str(error)
    assert str(error).startswith(f"p.json: at {path} ")


# -- files and hostile input --------------------------------------------------------------


def write(tmp_path: Path, data: str | bytes) -> Path:
    path = tmp_path / "proposal.json"
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_load_proposal_reads_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps(chat(chat_call("a", "get_order", "{}")), indent=2))
    assert summary(load_proposal(path)) == [("a", "get_order", {}, ())]


def test_format_errors_from_a_file_carry_the_line(tmp_path: Path) -> None:
    doc = chat(chat_call("a", "x", "{}"), {"id": "b", "function": {"name": ["x"]}})
    text = json.dumps(doc, indent=2)
    path = write(tmp_path, text)
    with pytest.raises(ProposalFormatError) as info:
        load_proposal(path)
    expected_line = text[: text.index('"name": [')].count("\n") + 1
    assert info.value.line == expected_line
    assert str(info.value).startswith(f"{path}:{expected_line}: at $.tool_calls[1].function.name")


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"role": "assistant",\n "content": "\xff"}', "invalid UTF-8"),
        ("[" * 100_000, "nesting deeper than 256 levels"),
        ('{"tool_calls": [' + "1" * 50_000 + "]}", "50000 digits"),
        ('{"content": [{"type": "tool_use", "input": {"a": 1e400}}]}', "overflows to infinity"),
        ('{"content": [{"type": "tool_use", "input": {"a": NaN}}]}', "NaN is not JSON"),
        ('{"content": [{"type": "tool_use", "input": {"a": Infinity}}]}', "Infinity is not JSON"),
        ('{"content": [{"type": "tool_use", "input": {"a": 1, "a": 2}}]}', "duplicate key"),
        ('{"content": []} trailing', "unexpected data"),
    ],
)
def test_documents_that_are_not_strict_json_are_format_errors(
    tmp_path: Path, data: str | bytes, words: str
) -> None:
    # The calls cannot even be found, so this is bad input (exit 2), not a json_error call.
    with pytest.raises(ProposalFormatError) as info:
        load_proposal(write(tmp_path, data))
    assert words in str(info.value)
    assert "invalid JSON" in str(info.value)
    assert info.value.line is not None


def test_a_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(ProposalFormatError, match="file not found"):
        load_proposal(tmp_path / "none.json")


def test_a_20000_call_document_parses_every_call(tmp_path: Path) -> None:
    calls = [
        chat_call(f"c{i}", "charge_payment", json.dumps({**ARGS, "idempotency_key": f"k-{i}"}))
        for i in range(20_000)
    ]
    plan = load_proposal(write(tmp_path, json.dumps(chat(*calls))))
    assert len(plan.calls) == 20_000
    assert plan.calls[-1].id == "c19999"
    assert plan.calls[-1].arguments == {**ARGS, "idempotency_key": "k-19999"}
    assert all(c.json_error is None for c in plan.calls)


# -- property: any JSON value is a plan or a format error ---------------------------------

VOCABULARY = [
    "role", "content", "tool_calls", "function", "name", "arguments", "id", "type", "choices",
    "message", "output", "call_id", "candidates", "parts", "functionCall", "function_call",
    "args", "input", "depends_on", "text", "thought", "refusal", "finishReason",
]  # fmt: skip
WORDS = ["assistant", "function", "tool_use", "text", "function_call", "message", "reasoning",
         "output_text", "refusal", "thinking", "{}", '{"a": 1}', "[", "a"]  # fmt: skip

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.sampled_from(WORDS)
)
json_values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(VOCABULARY) | st.text(max_size=3), children, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=200)
@given(json_values)
def test_any_json_value_is_a_plan_or_a_format_error(doc: Any) -> None:
    try:
        plan = parse_proposal(doc)
    except ProposalFormatError as error:
        assert error.path is not None
        assert error.path.startswith("$")
        return
    assert isinstance(plan, Plan)
    assert len({c.index for c in plan.calls}) == len(plan.calls)
    for call in plan.calls:
        assert isinstance(call.id, str)
        assert isinstance(call.name, str)
        assert (call.arguments is None) == (call.json_error is not None)
